//! The seven ELEVATE matmul strategies' programs compile and match the interpreter.

use super::{assert_same, example, lowered, sizes};
use elevate::rise::rules;

#[test]
fn the_seven_matmul_strategies_compile_and_match_the_interpreter() {
    let source = example("matmul.rise");
    // At 32, the strategies' outer 32-blocks run once: their scripts tile less.
    for n in [64, 32] {
        let nats = sizes(&[("n", n), ("k", n), ("m", n)]);
        for (name, _) in rules::matmul_strategies() {
            let term = lowered(&source, &nats, name);
            assert_same(&term, &format!("{name} at {n}"));
        }
    }
}

/// The programs sketch-guided equality saturation finds for the seven goals, lowered
/// (`defaultLowering`), compile through MLIR and compute the matmul: the e-graph's
/// results compose with the rest of the pipeline.
#[test]
fn the_seven_goals_found_by_equality_saturation_compile_and_match_the_interpreter() {
    use elevate::core::Context;
    use elevate::rise::egraph::goals::{matmul, matmul_goals, reach};
    let input = matmul(64);
    for goal in matmul_goals(64) {
        let found = reach(&goal, &input)
            .outcome
            .unwrap_or_else(|e| panic!("{}: {e}", goal.name))
            .program;
        let term = rules::default_lowering()
            .apply(&found, &mut Context::default())
            .unwrap_or_else(|e| panic!("{}: {e}", goal.name));
        let payload = elevate::bridge::payload("f", &term, &super::limits())
            .unwrap_or_else(|e| panic!("{}: {e}", goal.name));
        // A Transform script carries the goal's schedule; the code computes the matmul.
        assert!(payload.transform().is_some(), "{}", goal.name);
        assert_same(&term, goal.name);
    }
}
