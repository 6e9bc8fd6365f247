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

/// Whether `applications` stopped within 10% above `limit`.
fn within_a_tenth(applications: u64, limit: u64) -> bool {
    (limit..=limit + limit / 10).contains(&applications)
}

#[test]
fn every_application_counts_so_repeat_n_of_id_stops_at_the_limit() {
    const LIMIT: u64 = 1_000_000;
    let rust = repeat_n(100_000_000_000, id());
    let text = crate::text::registry()
        .parse("repeatN(100000000000, id)")
        .unwrap();
    for s in [rust, text] {
        let mut cx = Context::new(Budget::unlimited().applications(LIMIT));
        let failure = s.apply(&term(), &mut cx).unwrap_err();
        assert_eq!(
            failure.kind(),
            FailureKind::Budget(BudgetLimit::Applications(LIMIT))
        );
        assert!(
            within_a_tenth(cx.stats().applications, LIMIT),
            "{:?}",
            cx.stats()
        );
        // `id` rewrites nothing: no rewrite steps, but every application counted.
        assert_eq!(cx.stats().steps, 0);
    }
}

#[test]
fn rewriting_forever_stops_within_a_tenth_of_the_application_limit() {
    const LIMIT: u64 = 50_000;
    let mut cx = Context::new(Budget::unlimited().applications(LIMIT));
    let failure = normalize(arith::add_comm())
        .apply(&term(), &mut cx)
        .unwrap_err();
    assert!(failure.is_budget(), "{failure}");
    assert!(
        within_a_tenth(cx.stats().applications, LIMIT),
        "{:?}",
        cx.stats()
    );
}

#[test]
fn doubling_definitions_are_shared_and_stop_at_the_limit() {
    // s_i = s_{i-1} ; s_{i-1}: 2^60 applications, but 60 definitions.
    let mut text = String::from("def s0 = id\n");
    for i in 1..=60 {
        text.push_str(&format!("def s{i} = s{0} ; s{0}\n", i - 1));
    }
    text.push_str("s60");
    let s = crate::text::registry().parse(&text).unwrap();
    // The definitions print in front, the main strategy as written.
    assert_eq!(s.to_string(), text);
    const LIMIT: u64 = 100_000;
    let mut cx = Context::new(Budget::unlimited().applications(LIMIT));
    let failure = s.apply(&term(), &mut cx).unwrap_err();
    assert_eq!(
        failure.kind(),
        FailureKind::Budget(BudgetLimit::Applications(LIMIT))
    );
    assert!(
        within_a_tenth(cx.stats().applications, LIMIT),
        "{:?}",
        cx.stats()
    );
}

#[test]
fn repeat_n_of_id_stops_at_the_deadline() {
    let mut cx = Context::new(Budget::unlimited().time(Duration::from_millis(50)));
    let failure = repeat_n(100_000_000_000, id())
        .apply(&term(), &mut cx)
        .unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Budget(BudgetLimit::Time(50)));
}

#[test]
fn slow_applications_read_the_clock_more_often() {
    // Each application takes at least 2 ms, so by the 50 ms deadline at most 25 have
    // finished: the budget must notice within a few more, not hundreds later.
    let slow = rule("slow", |t: &Term| {
        std::thread::sleep(Duration::from_millis(2));
        Some(t.clone())
    });
    let mut cx = Context::new(Budget::unlimited().time(Duration::from_millis(50)));
    let failure = repeat(slow).apply(&term(), &mut cx).unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Budget(BudgetLimit::Time(50)));
    assert!(cx.stats().applications < 64, "{:?}", cx.stats());
}
