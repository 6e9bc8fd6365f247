//! The payload's text, without MLIR: what the RISE structure becomes as kernels and
//! their schedule, divisions guarded where they may trap, the flop count, the limits on
//! what is generated, and programs 100,000 levels deep. (That the payloads compile and compute
//! what the interpreter computes is checked, with MLIR, by the root package's
//! `tests/bridge/`.)

mod common;

use common::{example, lowered, payload, sizes};
use elevate_bridge::payload::loop_program_text;
use elevate_bridge::{Error, Payload, TRAP_ARGUMENT};
use elevate_rise::limits::Limits;
use elevate_rise::prim::Prim;
use elevate_rise::Program;

/// `source` (sizes all constant) lowered and translated.
fn translated(source: &str) -> Result<Payload, Error> {
    elevate_bridge::payload("f", &lowered(source, &sizes(&[]), "id"), &Limits::default())
}

#[test]
fn views_cost_no_kernels_and_low_level_maps_write_buffers() {
    // dot: zip and map are views, the reduction one kernel, writing no buffer of its
    // own.
    let program = Program::load(&example("dot.rise"), None).unwrap();
    let high = program.instantiate(&sizes(&[("n", 8)])).unwrap();
    let p = payload("dot", &high);
    assert_eq!(p.kernels, 1);
    assert!(!p.mlir().contains("memref.alloc"), "{}", p.mlir());
    // matmul after defaultLowering: the transpose is an index swap, no copy of b.
    let mm = lowered(
        &example("matmul.rise"),
        &sizes(&[("n", 4), ("k", 4), ("m", 4)]),
        "id",
    );
    let p = payload("mm", &mm);
    assert_eq!(p.kernels, 1);
    assert!(!p.mlir().contains("memref.alloc"), "{}", p.mlir());
}

#[test]
fn unsupported_constructs_are_errors_located_in_the_program() {
    let source = "def f(x: 4.f32) = x |> scanSeq(fun(a, y => a + y), 0.0)";
    let e = translated(source).unwrap_err();
    assert!(
        e.to_string().contains("unsupported construct: `scanSeq`"),
        "{e}"
    );
    assert!(e.span().is_some(), "the error points into the program");
}

#[test]
fn map_par_is_a_parallel_loop_and_vectors_are_vectorized() {
    let par = "def f(x: 8.4.f32) = x |> mapPar(fun(r => r |> reduceSeq(add, 0.0)))";
    let p = payload("f", &lowered(par, &sizes(&[]), "id"));
    let script = p.transform().unwrap();
    assert!(script.contains("tile_using_forall"), "{script}");
    let source = "def f(x: 64.f32) = x |> asVector(8) |> mapSeq(fun(v => v * vectorFromScalar(2.0))) |> asScalar";
    let p = payload("f", &lowered(source, &sizes(&[]), "id"));
    let script = p.transform().unwrap();
    assert!(script.contains("vectorize"), "{script}");
}

#[test]
fn the_payload_counts_its_floating_point_operations() {
    let mm = lowered(
        &example("matmul.rise"),
        &sizes(&[("n", 4), ("k", 5), ("m", 3)]),
        "id",
    );
    assert_eq!(payload("mm", &mm).flops, 2 * 4 * 5 * 3);
    let par = lowered(
        &example("matmul.rise"),
        &sizes(&[("n", 64), ("k", 64), ("m", 64)]),
        "par",
    );
    // Vector lanes count; the strategies do the same arithmetic (no redundant work).
    assert_eq!(payload("mm", &par).flops, 2 * 64 * 64 * 64);
}

#[test]
fn integer_divisions_that_may_trap_guard_their_divisor_and_record_the_trap() {
    // Checked in the kernel's body, which stays structured.
    let p = translated("def f(x: i64, y: i64) = x / y + x % y").unwrap();
    assert!(p.transform().is_some(), "{}", p.mlir());
    let ops: Vec<Prim> = p.traps.iter().map(|t| t.op).collect();
    assert_eq!(ops, [Prim::Div, Prim::Mod]);
    assert!(p.traps.iter().all(|t| t.span.is_some()));
    let text = &p.mlir();
    assert!(
        text.contains(&format!("{TRAP_ARGUMENT}: memref<i32>")),
        "{text}"
    );
    // The divisor is 1 where it would trap, and the trap's code is recorded.
    assert_eq!(text.matches("arith.select").count(), 4, "{text}");
    assert!(text.contains("-9223372036854775808 : i64"), "{text}");
    assert_eq!(text.matches("memref.atomic_rmw").count(), 2, "{text}");
    // Constants other than 0 and -1 never trap: no guard. A computed divisor is
    // checked, and its kernel is not vectorized.
    let p = translated("def f(x: 8.i32) = x |> mapSeq(fun(v => v / 3 + v % 7))").unwrap();
    assert!(
        p.traps.is_empty() && p.transform().is_some(),
        "{}",
        p.mlir()
    );
    let p = translated(
        "def f(x: 64.i32) = x |> asVectorAligned(8) |> mapSeq(fun(v => v / v)) |> asScalar",
    )
    .unwrap();
    assert_eq!(p.traps.len(), 1);
    let script = p.transform().unwrap_or_default();
    assert!(!script.contains("vectorize"), "{script}");
    // Floats never trap.
    let p = translated("def f(x: f32, y: f32) = x / y").unwrap();
    assert!(p.traps.is_empty());
}

#[test]
fn what_is_generated_is_bounded() {
    let lanes =
        translated("def f(x: 4096.f32) = x |> asVector(2048) |> mapSeq(fun(v => v)) |> asScalar")
            .unwrap_err();
    assert!(
        lanes.to_string().contains("a vector of 2048 lanes"),
        "{lanes}"
    );
    // 100,000 paddings around a value, with one constant: one guard of 100,000
    // conditions on one position, merged into one, the value padded once by 100,000
    // on each side, without overflowing the stack. With alternating constants the
    // guards nest, and 2,000 of them are more boxes than are worth compiling: an
    // error that says so.
    for (constants, n) in [(["0.0", "0.0"], 100_000), (["0.0", "1.0"], 2_000)] {
        let pads: String = (0..n)
            .map(|i| format!(" |> padCst(1, 1, {})", constants[i % 2]))
            .collect();
        let source = format!("def f(x: 1.f32) = x{pads} |> mapSeq(fun(v => v * 2.0))");
        match (translated(&source), constants[1]) {
            (Ok(p), "0.0") => assert!(p.kernels >= 1),
            (Err(e), "1.0") => assert!(e.to_string().contains("more than 1024 kernels"), "{e}"),
            (p, _) => panic!("{constants:?}: {:?}", p.map(|p| p.kernels)),
        }
        // The loop program prints as deep as it is.
        if constants[1] == "0.0" {
            let text = loop_program_text(&lowered(&source, &sizes(&[]), "id"), &Limits::default());
            assert!(text.unwrap().starts_with("// "));
        }
    }
    // Buffers over the limits, at the boundary.
    let term = lowered(
        "def f(x: n.f32) = x |> mapSeq(fun(v => v))",
        &sizes(&[("n", 1 << 20)]),
        "id",
    );
    let e = elevate_bridge::payload("f", &term, &Limits::with_max_bytes(1 << 20)).unwrap_err();
    assert!(
        matches!(&e, Error::Size { error, .. } if error.what == "parameter `x`"),
        "{e}"
    );
}

#[test]
fn programs_100000_levels_deep_translate() {
    let n = 100_000;
    // 100,000 additions in a row: one kernel's body.
    let source = format!("def f(x: i32) = x{}", " + x".repeat(n - 1));
    let p = translated(&source).unwrap();
    assert_eq!(p.mlir().matches("arith.addi").count(), n - 1);
    assert_eq!(p.kernels, 1);
    // 100,000 maps in a row: views of views, read through each other (translated as
    // written: `defaultLowering` has nothing to do).
    let source = format!(
        "def f(x: 4.f32) = x{} |> mapSeq(fun(v => v))",
        " |> map(fun(v => v + 1.0))".repeat(n)
    );
    let term = Program::load(&source, None)
        .and_then(|p| p.instantiate(&sizes(&[])))
        .unwrap();
    let p = payload("f", &term);
    assert_eq!(p.mlir().matches("arith.addf").count(), n);
    let text = loop_program_text(&term, &Limits::default()).unwrap();
    assert!(text.starts_with("// "), "{}", &text[..200.min(text.len())]);
}

#[test]
fn a_stored_array_is_written_before_the_stage_that_reads_it() {
    // A stored matrix product, then its elements doubled by a body a thousand
    // operations long: each kernels of their own, in the program's order, the
    // product's buffer freed.
    let long = format!("v * 2.0{}", " + 0.0".repeat(1001));
    let p = translated(&format!(
        "def f(a: 32.4.f32, b: 4.64.f32) : 2048.f32 =
          let c = toMem(a |> map(fun(r => transpose(b) |> map(fun(c =>
            zip(r, c) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))) in
          c |> join |> mapSeq(fun(v => {long}))"
    ))
    .unwrap();
    assert!(p.kernels >= 2, "{:?}", p.kernels);
    let last = p.kernels - 1;
    let (product, doubled) = (
        p.mlir().find("elevate.kernel = 0").unwrap(),
        p.mlir().find(&format!("elevate.kernel = {last}")).unwrap(),
    );
    assert!(
        product < doubled,
        "the product is written before it is read: {}",
        p.mlir()
    );
    let allocs = p.mlir().matches("\"memref.alloc\"").count();
    assert!(allocs >= 1, "{}", p.mlir());
    assert_eq!(p.mlir().matches("\"memref.dealloc\"").count(), allocs);
}

#[test]
fn a_chain_of_20000_stored_arrays_becomes_20000_kernels_in_linear_time() {
    // Written low-level (`defaultLowering` of so many maps is not what is tested); a
    // quadratic step would take minutes here.
    let n = 20_000;
    let source = format!(
        "def f(x: 4.f32) : 6.f32 = padClamp(1, 1)({}x{})",
        "toMem(mapSeq(fun(v => v + 1.0))(".repeat(n),
        "))".repeat(n)
    );
    let program = Program::load(&source, None).unwrap_or_else(|e| panic!("{e}"));
    let term = program.instantiate(&sizes(&[])).unwrap();
    let p = elevate_bridge::payload("f", &term, &Limits::default()).unwrap();
    // The chain's kernels, then the clamped copy's three boxes and the result.
    assert_eq!(p.kernels, n + 4);
    assert!(p
        .transform()
        .unwrap()
        .contains(&format!("elevate.kernel = {} ", n - 1)));
}
