//! Budgets stop strategies that do not terminate, with a failure that says so.

use elevate_core::arith::{self, Term};
use elevate_core::{Budget, BudgetLimit, Context, FailureKind};
use elevate_strategies::*;
use std::time::Duration;

fn term() -> Term {
    "a * (b + 0)".parse().unwrap()
}

#[test]
fn repeat_id_stops_at_the_application_budget() {
    let mut cx = Context::new(Budget::unlimited().applications(10_000));
    let failure = repeat(id()).apply(&term(), &mut cx).unwrap_err();
    assert_eq!(
        failure.kind(),
        FailureKind::Budget(BudgetLimit::Applications(10_000))
    );
    assert!(failure
        .to_string()
        .contains("budget of 10000 strategy applications exhausted"));
    assert_eq!(cx.exhausted(), Some(BudgetLimit::Applications(10_000)));
}

#[test]
fn repeat_id_stops_at_the_deadline() {
    let mut cx = Context::new(Budget::unlimited().time(Duration::from_millis(30)));
    let failure = repeat(id()).apply(&term(), &mut cx).unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Budget(BudgetLimit::Time(30)));
}

#[test]
fn rewriting_forever_stops_at_the_step_budget() {
    let mut cx = Context::new(Budget::unlimited().steps(500));
    let failure = normalize(arith::add_comm())
        .apply(&term(), &mut cx)
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Budget(BudgetLimit::Steps(500)));
    assert_eq!(failure.strategy(), "addComm");
    assert_eq!(cx.stats().steps, 500);
}

#[test]
fn no_combinator_recovers_from_a_spent_budget() {
    let looping = || repeat(id::<Term>());
    let candidates = [
        try_(looping()),
        looping() | id(),
        not(looping()),
        if_then_else(looping(), id(), id()),
        top_down(looping()),
        bottom_up(looping()),
        alltd(looping()),
        sometd(looping()),
        somebu(looping()),
        try_all(looping()),
        one(looping()),
        some(looping()),
        all(looping()),
        repeat(looping()),
        skip(0, looping()),
        position(1, looping()),
    ];
    for s in candidates {
        let mut cx = Context::new(Budget::unlimited().applications(1_000));
        let failure = s.apply(&term(), &mut cx).unwrap_err();
        assert!(
            failure.is_budget(),
            "{s} recovered from a spent budget: {failure}"
        );
        // Once spent, a budget stays spent.
        assert!(id().apply(&term(), &mut cx).unwrap_err().is_budget());
    }
}

#[test]
fn counters_count_applications_and_steps() {
    let t: Term = "(a + 0) * (b + 0)".parse().unwrap();
    let mut cx = Context::default();
    let r = normalize(arith::add_zero()).apply(&t, &mut cx).unwrap();
    assert_eq!(r.to_string(), "a * b");
    assert_eq!(cx.stats().steps, 2);
    assert!(cx.stats().applications > 2);
}
