//! Loop payloads through MLIR: they verify and lower, `mapPar` becomes OpenMP, and
//! they compute what the interpreter computes. (Their text is checked without MLIR by
//! `bridge/tests/payload.rs`.)

use super::{example, limits, lowered, sizes};
use elevate::bridge::{jit, payload_loops};

#[test]
fn the_loops_of_matmul_verify_and_lower() {
    let mm = lowered(
        &example("matmul.rise"),
        &sizes(&[("n", 4), ("k", 4), ("m", 4)]),
        "id",
    );
    let text = payload_loops("mm", &mm, &limits()).unwrap().mlir;
    let llvm = jit::lower(&text).unwrap();
    assert!(llvm.contains("llvm.func @mm"), "{llvm}");
}

#[test]
fn bad_modules_are_verification_errors() {
    let e = jit::lower("module { func.func @f() { return %x } }").unwrap_err();
    assert!(e.to_string().starts_with("mlir verification error"), "{e}");
}

#[test]
fn map_par_becomes_an_openmp_parallel_loop() {
    let source = "def f(x: 8.4.f32) = x |> mapPar(fun(r => r |> reduceSeq(add, 0.0)))";
    let term = lowered(source, &sizes(&[]), "id");
    let text = payload_loops("f", &term, &limits()).unwrap().mlir;
    let llvm = jit::lower(&text).unwrap();
    assert!(
        llvm.contains("omp.parallel") && llvm.contains("omp.wsloop"),
        "{llvm}"
    );
    super::assert_same(&term, "mapPar");
}

#[test]
fn vectors_loaded_at_once_or_gathered_compute_the_same() {
    for source in [
        "def f(x: 64.f32) = x |> asVector(8) |> mapSeq(fun(v => v * vectorFromScalar(2.0))) |> asScalar",
        "def f(x: 8.8.f32) = x |> transpose |> mapSeq(fun(c => c |> asVector(8) |> mapSeq(fun(v => v + v)) |> asScalar))",
    ] {
        super::assert_same(&lowered(source, &sizes(&[]), "id"), source);
    }
}
