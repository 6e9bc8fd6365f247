//! The driver's stages without MLIR: sizes, the strategy within its budget,
//! `defaultLowering`, the payload, and each stage's text.

mod common;

use common::{example, sizes};
use elevate_bridge::{emit, translate, Emit, Error, Options, Stage};
use elevate_core::Budget;
use elevate_rise::{ErrorKind, Program};

fn dot() -> Program {
    Program::load(&example("dot.rise"), None).unwrap()
}

#[test]
fn each_stage_s_text() {
    let (program, nats, options) = (dot(), sizes(&[("n", 8)]), Options::default());
    let text = |stage| emit(&program, &nats, None, &options, stage);
    assert!(text(Emit::Rise).unwrap().contains("reduceSeq"));
    // The loop program needs no MLIR either.
    assert!(text(Emit::Loops)
        .unwrap()
        .contains("kernel 0: %out0[] = 0.0 + Σ(d0) (in0 * in1)"));
    assert!(text(Emit::Payload).unwrap().contains("func.func @dot("));
    assert!(text(Emit::Transform)
        .unwrap()
        .contains("transform.structured.match ops{[\"linalg.generic\"]}"));
    for stage in [Emit::Mlir, Emit::Llvm] {
        match text(stage) {
            Ok(t) if cfg!(feature = "mlir") => assert!(t.contains("@dot"), "{t}"),
            Err(e) if !cfg!(feature = "mlir") => {
                assert!(e.to_string().contains("built without MLIR"), "{e}")
            }
            other => panic!("{stage}: {other:?}"),
        }
    }
    for stage in Emit::ALL {
        assert_eq!(stage.to_string().parse::<Emit>(), Ok(stage));
    }
    let e = "scheduled".parse::<Emit>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown stage `scheduled` (rise, loops, payload, transform, mlir, llvm, ptx, launch)"
    );
    // A body of a thousand operations is one kernel with its script; a scan has no
    // payload, and says why, at the script as at every stage after the program.
    let long = format!(
        "def f(x: 2048.f32) = x |> mapSeq(fun(v => v * 2.0{}))",
        " + 0.0".repeat(1001)
    );
    let long = Program::load(&long, None).unwrap();
    let script = emit(&long, &sizes(&[]), None, &options, Emit::Transform).unwrap();
    assert!(script.contains("linalg.generic"), "{script}");
    let scan = Program::load(
        "def f(x: 4.f32) = x |> scanSeq(fun(a, y => a + y), 0.0)",
        None,
    )
    .unwrap();
    let e = emit(&scan, &sizes(&[]), None, &options, Emit::Transform).unwrap_err();
    assert!(e.to_string().contains("`scanSeq`"), "{e}");
}

#[test]
fn sizes_are_checked_and_located() {
    let (program, options) = (dot(), Options::default());
    for (nats, message) in [
        (sizes(&[]), "no size for `n`"),
        (sizes(&[("n", -3)]), "`n` = -3 is negative"),
    ] {
        match translate(&program, &nats, None, &options) {
            Err(Error::Rise(e)) => {
                assert_eq!(e.kind, ErrorKind::Input);
                assert!(e.message.contains(message), "{e}");
                assert!(e.span.is_some());
            }
            other => panic!("{other:?}"),
        }
    }
    // Sizes the program's constraints reject: the type checker says so.
    let split = Program::load("def f(x: n.f32) = x |> split(4) |> join", None).unwrap();
    let e = translate(&split, &sizes(&[("n", 6)]), None, &options).unwrap_err();
    assert_eq!(e.stage(), Stage::Rise, "{e}");
}

#[test]
fn the_strategy_runs_within_the_budget() {
    let program = dot();
    let nats = sizes(&[("n", 8)]);
    let forever = elevate_rise::registry()
        .parse("normalize(splitJoin(1))")
        .unwrap();
    // A rewrite that never ends stops at the budget (of steps, or of time, whichever
    // comes first: either is a budget failure).
    let options = Options {
        budget: Budget::unlimited()
            .steps(1000)
            .time(std::time::Duration::from_secs(5)),
        ..Options::default()
    };
    match translate(&program, &nats, Some(&forever), &options) {
        Err(Error::Strategy { failure, strategy }) => {
            assert!(failure.is_budget(), "{failure}");
            assert_eq!(strategy, "normalize(splitJoin(1))");
        }
        other => panic!("{other:?}"),
    }
    let fails = elevate_rise::registry().parse("mapFusion").unwrap();
    let e = translate(&program, &nats, Some(&fails), &Options::default()).unwrap_err();
    assert!(
        e.to_string().starts_with("the strategy mapFusion failed"),
        "{e}"
    );
    let payload = translate(&program, &nats, None, &Options::default()).unwrap();
    assert_eq!(payload.name, "dot");
}
