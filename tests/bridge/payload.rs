//! The loop payload's shape: what the RISE structure becomes as explicit loops (the
//! translation for programs that are not structured, checked here on all).

use super::{example, limits, lowered, sizes};
use elevate::bridge::jit;
use elevate::rise::Term;

/// The loops payload of `term`.
fn payload(name: &str, term: &Term) -> Result<elevate::bridge::Payload, elevate::bridge::Error> {
    elevate::bridge::payload_loops(name, term, &limits())
}

#[test]
fn views_cost_no_loops_and_low_level_maps_write_buffers() {
    // dot: zip and map are views, the reduction one loop carrying its sum.
    let program = elevate::rise::Program::load(&example("dot.rise"), None).unwrap();
    let high = program.instantiate(&sizes(&[("n", 8)])).unwrap();
    let text = payload("dot", &high).unwrap().mlir;
    assert_eq!(text.matches("scf.for").count(), 1, "{text}");
    assert!(
        text.contains("iter_args") && !text.contains("memref.alloc"),
        "{text}"
    );
    // matmul after defaultLowering: the transpose is an index swap, no copy of b.
    let mm = lowered(
        &example("matmul.rise"),
        &sizes(&[("n", 4), ("k", 4), ("m", 4)]),
        "id",
    );
    let text = payload("mm", &mm).unwrap().mlir;
    assert!(text.contains("memref.load %arg1_0[%v"), "{text}");
    assert_eq!(
        text.matches("memref.alloc").count(),
        text.matches("memref.dealloc").count()
    );
    // It verifies and lowers to the LLVM dialect.
    let llvm = jit::lower(&text).unwrap();
    assert!(llvm.contains("llvm.func @mm"), "{llvm}");
}

#[test]
fn unsupported_constructs_and_bad_modules_are_errors_with_a_stage() {
    let source = "def f(x: 4.f32) = x |> scanSeq(fun(a, y => a + y), 0.0)";
    let term = lowered(source, &sizes(&[]), "id");
    let e = payload("f", &term).unwrap_err();
    assert!(
        e.to_string().contains("unsupported construct: `scanSeq`"),
        "{e}"
    );
    assert!(e.span().is_some(), "the error points into the program");
    let e = jit::lower("module { func.func @f() { return %x } }").unwrap_err();
    assert!(e.to_string().starts_with("mlir verification error"), "{e}");
}

#[test]
fn map_par_becomes_an_openmp_parallel_loop() {
    let source = "def f(x: 8.4.f32) = x |> mapPar(fun(r => r |> reduceSeq(add, 0.0)))";
    let term = lowered(source, &sizes(&[]), "id");
    let text = payload("f", &term).unwrap().mlir;
    assert!(text.contains("scf.parallel"), "{text}");
    let llvm = jit::lower(&text).unwrap();
    assert!(
        llvm.contains("omp.parallel") && llvm.contains("omp.wsloop"),
        "{llvm}"
    );
    super::assert_same(&term, "mapPar");
}

#[test]
fn vectors_of_contiguous_elements_are_loaded_at_once() {
    let source = "def f(x: 64.f32) = x |> asVector(8) |> mapSeq(fun(v => v * vectorFromScalar(2.0))) |> asScalar";
    let term = lowered(source, &sizes(&[]), "id");
    let text = payload("f", &term).unwrap().mlir;
    assert!(
        text.contains("vector.load") && !text.contains("vector.from_elements"),
        "{text}"
    );
    super::assert_same(&term, "contiguous");
    // A column is not contiguous: its lanes are gathered.
    let source = "def f(x: 8.8.f32) = x |> transpose |> mapSeq(fun(c => c |> asVector(8) |> mapSeq(fun(v => v + v)) |> asScalar))";
    let term = lowered(source, &sizes(&[]), "id");
    let text = payload("f", &term).unwrap().mlir;
    assert!(text.contains("vector.from_elements"), "{text}");
    super::assert_same(&term, "gathered");
}

#[test]
fn the_payload_counts_its_floating_point_operations() {
    let mm = lowered(
        &example("matmul.rise"),
        &sizes(&[("n", 4), ("k", 5), ("m", 3)]),
        "id",
    );
    assert_eq!(payload("mm", &mm).unwrap().flops, 2 * 4 * 5 * 3);
    let par = lowered(
        &example("matmul.rise"),
        &sizes(&[("n", 64), ("k", 64), ("m", 64)]),
        "par",
    );
    // Vector lanes count; the strategies do the same arithmetic (no redundant work).
    assert_eq!(payload("mm", &par).unwrap().flops, 2 * 64 * 64 * 64);
}
