//! Matching and building curried applications of primitives.

use crate::nat::Nat;
use crate::prim::Prim;
use crate::term::{Expr, Term};
use elevate_core::{Name, Strategy};

/// A RISE rule: as [`elevate_core::rule`], and the result keeps the type of the node
/// it replaces (rules preserve types), so that later rules reading types find it.
pub(crate) fn rule<F>(name: impl Into<Name>, rewrite: F) -> Strategy<Term>
where
    F: Fn(&Term) -> Option<Term> + Send + Sync + 'static,
{
    elevate_core::rule(name, move |t: &Term| Some(keep_type(t, rewrite(t)?)))
}

/// `result`, typed as `original` if it has no type of its own.
pub(crate) fn keep_type(original: &Term, result: Term) -> Term {
    match (original.ty(), result.ty()) {
        (Some(ty), None) => result.with_type(ty.clone()),
        _ => result,
    }
}

/// If `t` is `p(nats...)(values...)` with exactly `values` value arguments, its nat
/// and value arguments.
pub(crate) fn applied(t: &Term, p: Prim, values: usize) -> Option<(Vec<Nat>, Vec<Term>)> {
    let mut args = Vec::with_capacity(values);
    let mut head = t;
    while let Expr::App(f, a) = head.expr() {
        args.push(a.clone());
        head = f;
    }
    if args.len() != values {
        return None;
    }
    let mut nats = Vec::new();
    while let Expr::NatApp(f, n) = head.expr() {
        nats.push(n.clone());
        head = f;
    }
    match head.expr() {
        Expr::Prim(q) if *q == p && nats.len() == p.nat_params() => {
            args.reverse();
            nats.reverse();
            Some((nats, args))
        }
        _ => None,
    }
}

/// `p(nats...)(args...)`
pub(crate) fn call(p: Prim, nats: &[Nat], args: impl IntoIterator<Item = Term>) -> Term {
    let head = nats
        .iter()
        .fold(Term::prim(p), |f, n| Term::nat_app(f, n.clone()));
    Term::apps(head, args)
}
