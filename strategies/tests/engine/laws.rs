//! Algebraic laws of the basic combinators, on random strategies and terms.

use crate::gen::{outcome, same, AnyTerm, Desc};
use elevate_core::arith::Term;
use elevate_core::Strategy;
use elevate_strategies::*;
use quickcheck::{quickcheck, TestResult};

/// `lhs` and `rhs` agree on `t`, or the budget stopped one of them (not a verdict).
fn agree(lhs: Strategy<Term>, rhs: Strategy<Term>, t: &Term) -> TestResult {
    let (a, b) = (outcome(&lhs, t), outcome(&rhs, t));
    if a.is_none() || b.is_none() {
        return TestResult::discard();
    }
    TestResult::from_bool(same(&a, &b))
}

quickcheck! {
    fn id_is_a_left_unit(s: Desc, t: AnyTerm) -> TestResult {
        agree(id() >> s.build(), s.build(), &t.0)
    }

    fn id_is_a_right_unit(s: Desc, t: AnyTerm) -> TestResult {
        agree(s.build() >> id(), s.build(), &t.0)
    }

    fn sequence_is_associative(a: Desc, b: Desc, c: Desc, t: AnyTerm) -> TestResult {
        agree((a.build() >> b.build()) >> c.build(), a.build() >> (b.build() >> c.build()), &t.0)
    }

    fn choice_is_associative(a: Desc, b: Desc, c: Desc, t: AnyTerm) -> TestResult {
        agree((a.build() | b.build()) | c.build(), a.build() | (b.build() | c.build()), &t.0)
    }

    fn fail_is_a_unit_of_choice(s: Desc, t: AnyTerm) -> TestResult {
        agree(fail() | s.build(), s.build(), &t.0)
    }

    fn try_is_choice_with_id(s: Desc, t: AnyTerm) -> TestResult {
        agree(try_(s.build()), s.build() | id(), &t.0)
    }

    fn try_never_fails(s: Desc, t: AnyTerm) -> TestResult {
        match outcome(&try_(s.build()), &t.0) {
            None => TestResult::discard(),
            Some(result) => TestResult::from_bool(result.is_ok()),
        }
    }

    fn not_not_is_a_check(s: Desc, t: AnyTerm) -> TestResult {
        // not(not(s)) succeeds exactly where s does, without changing the program.
        let (a, b) = (outcome(&not(not(s.build())), &t.0), outcome(&s.build(), &t.0));
        match (a, b) {
            (Some(a), Some(b)) => TestResult::from_bool(
                a.is_ok() == b.is_ok() && a.map_or(true, |r| r == t.0),
            ),
            _ => TestResult::discard(),
        }
    }

    fn repeat_stops_where_its_strategy_fails(s: Desc, t: AnyTerm) -> TestResult {
        let s = s.build();
        match outcome(&repeat(s.clone()), &t.0) {
            None => TestResult::discard(),
            Some(Err(_)) => TestResult::failed(),
            Some(Ok(r)) => match outcome(&s, &r) {
                None => TestResult::discard(),
                Some(next) => TestResult::from_bool(next.is_err() || next.as_ref().is_ok_and(|n| *n == r)),
            },
        }
    }

    fn repeat_n_is_n_sequences(n: u8, s: Desc, t: AnyTerm) -> TestResult {
        let n = (n % 4) as usize;
        let unrolled = (0..n).fold(id(), |acc, _| acc >> s.build());
        agree(repeat_n(n, s.build()), unrolled, &t.0)
    }
}

#[test]
fn try_fail_is_id() {
    let t: Term = "a * (b + 0)".parse().unwrap();
    let r = try_(fail()).run(&t).unwrap();
    assert!(elevate_core::Traversable::same_node(&r, &t));
}

#[test]
fn strategies_print_as_strategy_text() {
    use elevate_core::arith::{add_zero, mul_one, neg_neg};
    let (a, b, c) = (add_zero(), mul_one(), neg_neg());
    assert_eq!(
        (a.clone() >> b.clone() | c.clone()).to_string(),
        "addZero ; mulOne <+ negNeg"
    );
    assert_eq!(
        (a.clone() >> (b.clone() | c.clone())).to_string(),
        "addZero ; (mulOne <+ negNeg)"
    );
    assert_eq!(
        ((a.clone() >> b.clone()) >> c.clone()).to_string(),
        "addZero ; mulOne ; negNeg"
    );
    assert_eq!(
        (a.clone() >> (b.clone() >> c.clone())).to_string(),
        "addZero ; (mulOne ; negNeg)"
    );
    assert_eq!(
        (a.clone() | (b.clone() | c.clone())).to_string(),
        "addZero <+ (mulOne <+ negNeg)"
    );
    assert_eq!(
        top_down(try_(a.clone() | b.clone())).to_string(),
        "topDown(try(addZero <+ mulOne))"
    );
    assert_eq!(repeat_n(3, c.clone()).to_string(), "repeatN(3, negNeg)");
    assert_eq!(position(2, a.clone()).to_string(), "position(2)(addZero)");
    assert_eq!(skip(1, a.clone()).to_string(), "skip(1)(addZero)");
    assert_eq!(debug::<Term>("here").to_string(), "debug(\"here\")");
    assert_eq!(
        if_then_else(not(a.clone()), b.clone(), id()).to_string(),
        "ifThenElse(not(addZero), mulOne, id)"
    );
    let t: Term = "a + 0".parse().unwrap();
    assert_eq!(is_equal_to(t.clone()).to_string(), "isEqualTo(a + 0)");
    assert_eq!(contains(t).to_string(), "contains(a + 0)");
    assert_eq!(a.name(), "addZero");
    assert_eq!(top_down(a).name(), "topDown");
}

#[test]
fn predicates_succeed_without_changing_the_program() {
    let t: Term = "a * (b + 0)".parse().unwrap();
    let sub: Term = "b + 0".parse().unwrap();
    assert_eq!(is_equal_to(t.clone()).run(&t).unwrap(), t);
    assert!(is_equal_to(sub.clone()).run(&t).is_err());
    assert_eq!(contains(sub).run(&t).unwrap(), t);
    assert!(contains("c".parse::<Term>().unwrap()).run(&t).is_err());
    let then = elevate_core::arith::add_zero();
    let check = contains("b".parse::<Term>().unwrap());
    let rewritten = if_then_else(check.clone(), top_down(then.clone()), id())
        .run(&t)
        .unwrap();
    assert_eq!(rewritten.to_string(), "a * b");
    let untouched = if_then_else(not(check), top_down(then), id())
        .run(&t)
        .unwrap();
    assert_eq!(untouched, t);
}

#[test]
fn debug_and_peek_log_and_succeed() {
    use elevate_core::{Context, Log};
    let t: Term = "a + 0".parse().unwrap();
    let mut cx = Context::default().with_log(Log::Collect(Vec::new()));
    let s = debug("before") >> peek() >> top_down(elevate_core::arith::add_zero()) >> peek();
    assert_eq!(s.apply(&t, &mut cx).unwrap().to_string(), "a");
    assert_eq!(cx.messages(), ["before", "a + 0", "a"]);
}
