//! The seven ELEVATE matmul strategies' programs compile and match the interpreter.

use super::{assert_same, example, lowered, sizes};
use elevate::rise::rules;

#[test]
fn the_seven_matmul_strategies_compile_and_match_the_interpreter() {
    let source = example("matmul.rise");
    let nats = sizes(&[("n", 64), ("k", 64), ("m", 64)]);
    for (name, _) in rules::matmul_strategies() {
        let term = lowered(&source, &nats, name);
        assert_same(&term, name);
    }
}
