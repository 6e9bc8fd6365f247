//! The programs whose Transform scripts the bridge's translation tests check
//! (`bridge/tests/schedule.rs`) compute what the interpreter computes, once MLIR has
//! applied the scripts.

use super::{assert_same, lowered, sizes};

#[test]
fn scheduled_programs_compute_what_the_interpreter_computes() {
    let scale = "def f(x: 64.64.f32) = x |> map(map(fun(v => v * 2.0)))";
    for (x, y) in [(16, 8), (32, 4)] {
        let strategy = format!("DFNF ; body(tile({x}, {y}))");
        assert_same(&lowered(scale, &sizes(&[]), &strategy), &strategy);
    }
    for width in [8, 16] {
        let source = format!(
            "def f(x: 64.64.f32) = x |> mapPar(fun(r => r |> asVector({width}) |> mapSeqUnroll(fun(v => v * vectorFromScalar(2.0))) |> asScalar))"
        );
        assert_same(&lowered(&source, &sizes(&[]), "id"), &source);
    }
    for source in [
        "def f(x: 16.f32) = x |> slide(3, 1) |> mapSeq(fun(w => w |> reduceSeq(add, 0.0)))",
        "def f(x: 8.f32) = x |> padCst(1, 1, 0.0) |> mapSeq(fun(v => v * 2.0))",
        "def f(x: 8.f32) = x |> mapSeq(fun(v => makePair(v, v * 2.0)))",
        "def f(x: 4.0.f32) = x |> mapSeq(fun(r => r |> reduceSeq(add, 0.0)))",
    ] {
        assert_same(&lowered(source, &sizes(&[]), "id"), source);
    }
}

#[test]
fn a_scalar_broadcast_before_the_loop_that_reads_it_is_in_the_innermost_lanes() {
    // `mul(vectorFromScalar(alpha))` makes its vector (and its lanes) before `mapSeq`'s
    // loop: the lanes are still innermost, and the kernel structured (it was explicit
    // loops, "a loop order that tiling cannot express").
    let source = "def scal(alpha: f32, x: 1024.f32) = x |> map(fun(v => alpha * v))";
    let strategy =
        "DFNF ; try(fuseReduceMap @ topDown) ; vectorize(4) @ innermost(isFullyAppliedMap)";
    let term = lowered(source, &sizes(&[]), strategy);
    let p = super::payload("f", &term);
    let script = p.transform().unwrap_or_default();
    assert!(script.contains("vector"), "{script}");
    assert_same(&term, strategy);
}
