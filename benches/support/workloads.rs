//! The engine's benchmark workloads, shared by `benches/engine.rs` (criterion) and
//! `examples/engine_bench.rs` (the JSON summary).

#![allow(dead_code)]

use elevate::core::arith::{self, Expr, Term};
use elevate::core::{Context, Strategy};
use elevate::strategies::{normalize, repeat, top_down};
use std::sync::Arc;

/// A balanced sum of `leaves` leaves, `redexes` of which (evenly spread) are
/// `-(-v)`: `2 * leaves - 1 + 2 * redexes` nodes.
pub fn balanced_with_redexes(leaves: usize, redexes: usize) -> Term {
    let every = leaves / redexes.max(1);
    let leaf = |i: usize| {
        let v = Term::var(if i.is_multiple_of(2) { "x" } else { "y" });
        if redexes > 0 && i % every == every / 2 && i / every < redexes {
            Term::negate(Term::negate(v))
        } else {
            v
        }
    };
    fn build(lo: usize, hi: usize, leaf: &dyn Fn(usize) -> Term) -> Term {
        if hi - lo == 1 {
            leaf(lo)
        } else {
            let mid = (lo + hi) / 2;
            Term::sum(build(lo, mid, leaf), build(mid, hi, leaf))
        }
    }
    build(0, leaves, &leaf)
}

/// The term of the given size (nodes) with `redexes` `negNeg` redexes.
pub fn workload(nodes: usize, redexes: usize) -> Term {
    let leaves = (nodes + 1 - 2 * redexes) / 2;
    balanced_with_redexes(leaves, redexes)
}

/// `normalize(negNeg)`, memoized by the engine.
pub fn normalize_memoized(t: &Term) -> Term {
    normalize(arith::neg_neg()).run(t).unwrap()
}

/// `repeat(topDown(negNeg))`: each round restarts from the root.
pub fn normalize_naive(t: &Term) -> Term {
    repeat(top_down(arith::neg_neg())).run(t).unwrap()
}

/// (a) The immutable, shared IR: each rewrite found by `topDown(negNeg)`, every
/// version kept. With `memo`, the context remembers where the traversal failed
/// on shared subterms of earlier versions.
pub fn persistent(t: &Term, rewrites: usize, memo: bool) -> Vec<Term> {
    let step: Strategy<Term> = top_down(arith::neg_neg());
    let mut cx = if memo {
        Context::default().with_failure_memo()
    } else {
        Context::default()
    };
    let mut versions = Vec::with_capacity(rewrites + 1);
    versions.push(t.clone());
    for _ in 0..rewrites {
        let next = step.apply(versions.last().unwrap(), &mut cx).unwrap();
        versions.push(next);
    }
    versions
}

/// A conventional mutable IR (owned boxes), the bench-only baseline.
#[derive(Clone, Debug, PartialEq)]
pub enum Mutable {
    Num(i64),
    Var(Arc<str>),
    Add(Box<Mutable>, Box<Mutable>),
    Mul(Box<Mutable>, Box<Mutable>),
    Neg(Box<Mutable>),
}

impl Mutable {
    pub fn from_term(t: &Term) -> Mutable {
        match t.expr() {
            Expr::Num(n) => Mutable::Num(*n),
            Expr::Var(x) => Mutable::Var(x.clone()),
            Expr::Add(a, b) => {
                Mutable::Add(Box::new(Self::from_term(a)), Box::new(Self::from_term(b)))
            }
            Expr::Mul(a, b) => {
                Mutable::Mul(Box::new(Self::from_term(a)), Box::new(Self::from_term(b)))
            }
            Expr::Neg(a) => Mutable::Neg(Box::new(Self::from_term(a))),
        }
    }

    pub fn to_term(&self) -> Term {
        match self {
            Mutable::Num(n) => Term::num(*n),
            Mutable::Var(x) => Term::var(x),
            Mutable::Add(a, b) => Term::sum(a.to_term(), b.to_term()),
            Mutable::Mul(a, b) => Term::product(a.to_term(), b.to_term()),
            Mutable::Neg(a) => Term::negate(a.to_term()),
        }
    }

    /// Rewrites the first `-(-x)` in pre-order to `x`, in place.
    pub fn rewrite_first(&mut self) -> bool {
        if let Mutable::Neg(inner) = self {
            if let Mutable::Neg(x) = inner.as_mut() {
                let x = std::mem::replace(x.as_mut(), Mutable::Num(0));
                *self = x;
                return true;
            }
        }
        match self {
            Mutable::Num(_) | Mutable::Var(_) => false,
            Mutable::Neg(a) => a.rewrite_first(),
            Mutable::Add(a, b) | Mutable::Mul(a, b) => a.rewrite_first() || b.rewrite_first(),
        }
    }
}

/// (b) Backtracking on a mutable IR by deep-cloning before every attempt (the clone
/// is what a failed attempt would fall back to).
pub fn clone_per_attempt(m: Mutable, rewrites: usize) -> Mutable {
    let mut current = m;
    for _ in 0..rewrites {
        let mut attempt = current.clone();
        assert!(attempt.rewrite_first());
        current = attempt;
    }
    current
}

/// (c) Destructive rewriting of one mutable copy: no versions, no backtracking.
pub fn destructive(m: Mutable, rewrites: usize) -> Mutable {
    let mut current = m;
    for _ in 0..rewrites {
        assert!(current.rewrite_first());
    }
    current
}
