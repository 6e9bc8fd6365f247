//! The test IR itself: printing round-trips, and every rule preserves the value.

use crate::gen::{rules, AnyTerm};
use elevate_core::arith::Term;
use elevate_strategies::*;
use quickcheck::quickcheck;

fn env(name: &str) -> i64 {
    match name {
        "a" => 7,
        "b" => -3,
        _ => 11,
    }
}

quickcheck! {
    fn printing_round_trips(t: AnyTerm) -> bool {
        let text = t.0.to_string();
        text.parse::<Term>().is_ok_and(|u| u == t.0 && u.to_string() == text)
    }

    fn every_rule_preserves_the_value_wherever_it_applies(rule: u8, t: AnyTerm) -> bool {
        let s = rules()[rule as usize % rules().len()].clone();
        match top_down(s).run(&t.0) {
            Ok(r) => r.eval(&env) == t.0.eval(&env),
            Err(_) => true,
        }
    }
}

#[test]
fn bad_terms_are_errors_with_a_column() {
    let err = "a + * b".parse::<Term>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "expected a number, a variable, `-` or `(` at column 5"
    );
    let err = "(a + b".parse::<Term>().unwrap_err();
    assert_eq!(err.to_string(), "expected `)` at column 7");
    let err = "99999999999999999999".parse::<Term>().unwrap_err();
    assert_eq!(err.to_string(), "expected a 64-bit integer at column 1");
    assert!("a b".parse::<Term>().is_err());
}
