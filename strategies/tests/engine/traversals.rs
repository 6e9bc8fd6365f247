//! The traversals against Elevate's literal definitions and independent references.

use crate::gen::trace_lines;
use crate::gen::{outcome, rules, same, AnyTerm};
use elevate_core::arith::{self, Term};
use elevate_core::{Context, Path, Strategy, Traversable};
use elevate_strategies::*;
use quickcheck::{quickcheck, TestResult};

/// The rule with index `i`, or a choice of two rules.
fn pick(i: u8) -> Strategy<Term> {
    let rules = rules();
    let n = rules.len();
    let i = i as usize % (n + 2);
    if i < n {
        rules[i].clone()
    } else {
        rules[i % 3].clone() | rules[(i + 1) % 3].clone()
    }
}

/// Each traversal beside its definition in spec/strategies.md, built literally.
fn definitions(s: Strategy<Term>) -> Vec<(Strategy<Term>, Strategy<Term>)> {
    let s2 = s.clone();
    vec![
        (
            top_down(s.clone()),
            recursive("td", |me| s2.clone() | one(me)),
        ),
        (
            bottom_up(s.clone()),
            recursive("bu", |me| one(me) | s.clone()),
        ),
        (
            all_top_down(s.clone()),
            recursive("atd", |me| s.clone() >> all(me)),
        ),
        (
            all_bottom_up(s.clone()),
            recursive("abu", |me| all(me) >> s.clone()),
        ),
        (try_all(s.clone()), {
            // tryAll(s) = all(tryAll(try(s))) ; try(s); try(try(s)) = try(s).
            let t = try_(s.clone());
            recursive("ta", |me| all(me) >> t.clone())
        }),
        (
            downup(s.clone()),
            recursive("du", |me| s.clone() >> all(me) >> s.clone()),
        ),
        (
            alltd(s.clone()),
            recursive("alltd", |me| s.clone() | all(me)),
        ),
        (
            sometd(s.clone()),
            recursive("sometd", |me| s.clone() | some(me)),
        ),
        (
            somebu(s.clone()),
            recursive("somebu", |me| some(me) | s.clone()),
        ),
        (normalize(s.clone()), repeat(top_down(s.clone()))),
    ]
}

quickcheck! {
    fn traversals_match_their_definitions(rule: u8, t: AnyTerm) -> TestResult {
        for (direct, literal) in definitions(pick(rule)) {
            let (a, b) = (outcome(&direct, &t.0), outcome(&literal, &t.0));
            if a.is_none() || b.is_none() {
                continue;
            }
            if !same(&a, &b) {
                println!("{direct} differs on {}: {a:?} vs {b:?}", t.0);
                return TestResult::failed();
            }
        }
        TestResult::passed()
    }

    fn all_fails_exactly_when_a_child_fails(rule: u8, t: AnyTerm) -> bool {
        let s = pick(rule);
        let t = t.0;
        let children: Vec<_> = (0..t.arity()).map(|i| s.run(t.child(i))).collect();
        match all(s).run(&t) {
            Ok(r) => children.iter().enumerate().all(|(i, c)| c.as_ref().is_ok_and(|c| c == r.child(i))),
            Err(_) => children.iter().any(Result::is_err),
        }
    }

    fn one_rewrites_exactly_the_first_child_that_succeeds(rule: u8, t: AnyTerm) -> bool {
        let s = pick(rule);
        let t = t.0;
        let first = (0..t.arity()).find_map(|i| s.run(t.child(i)).ok().map(|c| (i, c)));
        match (one(s).run(&t), first) {
            (Ok(r), Some((i, c))) => (0..t.arity()).all(|j| {
                if j == i { *r.child(j) == c } else { r.child(j).same_node(t.child(j)) }
            }),
            (Err(_), None) => true,
            _ => false,
        }
    }

    fn top_down_rewrites_the_first_preorder_match(rule: u8, t: AnyTerm) -> bool {
        let s = pick(rule);
        let t = t.0;
        let expected = preorder(&t).into_iter().find_map(|path| {
            s.run(subterm(&t, &path)).ok().map(|new| replace(&t, path.as_slice(), new))
        });
        match (top_down(s).run(&t), expected) {
            (Ok(r), Some(e)) => r == e,
            (Err(_), None) => true,
            _ => false,
        }
    }

    fn bottom_up_rewrites_the_first_postorder_match(rule: u8, t: AnyTerm) -> bool {
        let s = pick(rule);
        let t = t.0;
        let mut order = preorder(&t);
        // Post-order: children before parents, left to right.
        order.sort_by(postorder_cmp);
        let expected = order.into_iter().find_map(|path| {
            s.run(subterm(&t, &path)).ok().map(|new| replace(&t, path.as_slice(), new))
        });
        match (bottom_up(s).run(&t), expected) {
            (Ok(r), Some(e)) => r == e,
            (Err(_), None) => true,
            _ => false,
        }
    }

    fn position_applies_at_the_nth_preorder_location(rule: u8, n: u8, t: AnyTerm) -> bool {
        let s = pick(rule);
        let t = t.0;
        let n = n as usize % (t.size() + 2);
        let expected = preorder(&t).get(n).cloned().map(|path| {
            s.run(subterm(&t, &path)).map(|new| replace(&t, path.as_slice(), new))
        });
        match (position(n, s).run(&t), expected) {
            (Ok(r), Some(Ok(e))) => r == e,
            (Err(_), Some(Err(_)) | None) => true,
            _ => false,
        }
    }

    fn skip_applies_after_n_matches(rule: u8, n: u8, t: AnyTerm) -> bool {
        let s = pick(rule);
        let t = t.0;
        let n = n as usize % 4;
        let expected = preorder(&t)
            .into_iter()
            .filter_map(|path| s.run(subterm(&t, &path)).ok().map(|new| replace(&t, path.as_slice(), new)))
            .nth(n);
        match (skip(n, s).run(&t), expected) {
            (Ok(r), Some(e)) => r == e,
            (Err(_), None) => true,
            _ => false,
        }
    }

    fn a_failure_memo_across_applications_changes_no_result(rule: u8, t: AnyTerm) -> bool {
        // Apply topDown(s) repeatedly in one memoizing context, keeping every version.
        let s = top_down(pick(rule));
        let mut memo = Context::default().with_failure_memo();
        let mut plain = Context::default();
        let (mut a, mut b) = (t.0.clone(), t.0);
        for _ in 0..6 {
            match (s.apply(&a, &mut memo), s.apply(&b, &mut plain)) {
                (Ok(x), Ok(y)) if x == y => { a = x; b = y; }
                (Err(_), Err(_)) => return true,
                _ => return false,
            }
        }
        true
    }
}

/// Every location of `t`, in pre-order.
pub fn preorder(t: &Term) -> Vec<Path> {
    let mut out = Vec::new();
    let mut pending = vec![(t.clone(), Path::root())];
    while let Some((node, path)) = pending.pop() {
        for i in (0..node.arity()).rev() {
            pending.push((node.child(i).clone(), path.child(i as u32)));
        }
        out.push(path);
    }
    out
}

fn postorder_cmp(a: &Path, b: &Path) -> std::cmp::Ordering {
    // A descendant comes first; otherwise pre-order (lexicographic) order.
    if a.starts_with(b) && a != b {
        std::cmp::Ordering::Less
    } else if b.starts_with(a) && a != b {
        std::cmp::Ordering::Greater
    } else {
        a.cmp(b)
    }
}

pub fn subterm<'t>(t: &'t Term, path: &Path) -> &'t Term {
    path.as_slice()
        .iter()
        .fold(t, |node, &i| node.child(i as usize))
}

/// `t` with the subterm at `path` replaced, rebuilt by hand (an independent reference
/// for the engine's rebuilds).
pub fn replace(t: &Term, path: &[u32], new: Term) -> Term {
    match path.split_first() {
        None => new,
        Some((&i, rest)) => t.with_child(i as usize, replace(t.child(i as usize), rest, new)),
    }
}

#[test]
fn traces_name_each_rule_and_its_path() {
    let t: Term = "a * (-(-b) + 0)".parse().unwrap();
    let mut cx = Context::default().with_trace();
    let r = normalize(arith::add_zero() | arith::neg_neg())
        .apply(&t, &mut cx)
        .unwrap();
    assert_eq!(r.to_string(), "a * b");
    let trace = trace_lines(&cx);
    assert_eq!(trace, ["addZero @ [1]", "negNeg @ [1]"]);
}

#[test]
fn failed_branches_leave_nothing_in_the_trace() {
    let t: Term = "a + 0".parse().unwrap();
    let mut cx = Context::default().with_trace();
    // addZero succeeds, then fail: the left branch is discarded.
    let s = (arith::add_zero() >> fail()) | id();
    assert_eq!(s.apply(&t, &mut cx).unwrap(), t);
    assert!(cx.trace().unwrap().is_empty());
    // Skipped matches are discarded too.
    let u: Term = "(a + 0) * (b + 0)".parse().unwrap();
    skip(1, arith::add_zero()).apply(&u, &mut cx).unwrap();
    let trace = trace_lines(&cx);
    assert_eq!(trace, ["addZero @ [1]"]);
}

#[test]
fn failures_say_which_strategy_failed_and_where() {
    let t: Term = "(a + 0) * (b * 2)".parse().unwrap();
    let failure = all(arith::add_zero()).run(&t).unwrap_err();
    assert_eq!(failure.strategy(), "addZero");
    assert_eq!(failure.path().to_string(), "[1]");
    let failure = at_path(Path::from(vec![1, 0]), arith::add_zero())
        .run(&t)
        .unwrap_err();
    assert_eq!(failure.to_string(), "strategy `addZero` failed at [1, 0]");
    let failure = top_down(arith::neg_neg()).run(&t).unwrap_err();
    assert_eq!(failure.to_string(), "strategy `topDown` failed at []");
    let failure = at_path(Path::from(vec![0, 5]), arith::add_zero())
        .run(&t)
        .unwrap_err();
    assert_eq!(failure.to_string(), "strategy `atPath` failed at [0]");
}

#[test]
fn recursive_definitions_do_not_leak_themselves() {
    let weak = {
        let s = recursive("td", |me| arith::add_zero() | one(me));
        let t: Term = "a * (b + 0)".parse().unwrap();
        assert_eq!(s.run(&t).unwrap().to_string(), "a * b");
        s
    };
    drop(weak);
}
