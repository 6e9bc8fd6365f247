//! Persistence: strategies never change their input, and share what they do not touch.

use crate::gen::{rules, AnyTerm, Desc};
use crate::traversals::subterm;
use elevate_core::arith::Term;
use elevate_core::{Budget, Context, Traversable};
use elevate_strategies::*;
use quickcheck::quickcheck;

/// An independent deep copy (no node shared with `t`).
fn deep_copy(t: &Term) -> Term {
    t.to_string().parse().unwrap()
}

quickcheck! {
    fn the_input_is_unchanged_after_any_strategy(s: Desc, t: AnyTerm) -> bool {
        let t = t.0;
        let copy = deep_copy(&t);
        let text = t.to_string();
        let mut cx = Context::new(Budget::unlimited().applications(20_000));
        let _ = s.build().apply(&t, &mut cx);
        t == copy && t.to_string() == text
    }

    fn untouched_subterms_are_shared(rule: u8, t: AnyTerm) -> bool {
        // A rewrite at path p rebuilds the nodes on p only: every sibling of a node on
        // p is the input's node itself.
        let s = rules()[rule as usize % rules().len()].clone();
        let t = t.0;
        let mut cx = Context::default().with_trace();
        let Ok(r) = top_down(s).apply(&t, &mut cx) else { return true };
        let path = cx.trace().unwrap()[0].path.clone();
        let (mut old, mut new) = (&t, &r);
        for &step in path.as_slice() {
            let step = step as usize;
            if old.arity() != new.arity() {
                return false;
            }
            for i in (0..old.arity()).filter(|&i| i != step) {
                if !old.child(i).same_node(new.child(i)) {
                    return false;
                }
            }
            old = old.child(step);
            new = new.child(step);
        }
        *subterm(&t, &path) == *old
    }

    fn a_traversal_that_changes_nothing_returns_the_input_itself(t: AnyTerm) -> bool {
        let t = t.0;
        [all(id()), try_all(fail()), alltd(fail()), all_top_down(id()), downup(id())]
            .iter()
            .all(|s| s.run(&t).is_ok_and(|r| r.same_node(&t)))
    }
}

#[test]
fn every_version_stays_valid_while_rewriting_continues() {
    let t: Term = "(a + 0) * (b + 0) + -(-(c * 1))".parse().unwrap();
    let step = top_down(
        elevate_core::arith::add_zero()
            | elevate_core::arith::mul_one()
            | elevate_core::arith::neg_neg(),
    );
    let mut versions = vec![t];
    while let Ok(next) = step.run(versions.last().unwrap()) {
        versions.push(next);
    }
    let texts: Vec<String> = versions.iter().map(ToString::to_string).collect();
    assert_eq!(
        texts,
        [
            "(a + 0) * (b + 0) + -(-(c * 1))",
            "a * (b + 0) + -(-(c * 1))",
            "a * b + -(-(c * 1))",
            "a * b + c * 1",
            "a * b + c",
        ]
    );
}
