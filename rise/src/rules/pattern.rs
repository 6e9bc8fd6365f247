//! Matching and building curried applications of primitives.

use super::typing::typed_result;
use crate::nat::Nat;
use crate::prim::Prim;
use crate::term::{Expr, Term};
use elevate_core::{Name, NameSupply, Strategy};

/// A RISE rule that makes no names: as [`elevate_core::rule`], and the nodes the rule
/// built are typed (see [`typed_result`]), so that later rules reading types find them.
pub(crate) fn rule<F>(name: impl Into<Name>, rewrite: F) -> Strategy<Term>
where
    F: Fn(&Term) -> Option<Term> + Send + Sync + 'static,
{
    elevate_core::rule(name, move |t: &Term| typed_result(t, rewrite(t)?))
}

/// A RISE rule that makes names (binders): as [`rule`], with the run's name supply,
/// whose identities are new to the whole program
/// ([`elevate_core::rule_with_names`]).
pub(crate) fn rule_with_names<F>(name: impl Into<Name>, rewrite: F) -> Strategy<Term>
where
    F: Fn(&Term, &mut NameSupply) -> Option<Term> + Send + Sync + 'static,
{
    elevate_core::rule_with_names(name, move |t: &Term, names: &mut NameSupply| {
        typed_result(t, rewrite(t, names)?)
    })
}

/// If `t` is `p(nats...)(values...)` with exactly `values` value arguments, its nat
/// and value arguments.
pub(crate) fn applied(t: &Term, p: Prim, values: usize) -> Option<(Vec<Nat>, Vec<Term>)> {
    let (head, args) = t.value_arguments();
    if args.len() != values {
        return None;
    }
    let (head, nats) = head.nat_arguments();
    match head.expr() {
        Expr::Prim(q) if *q == p && nats.len() == p.nat_params() => Some((
            nats.into_iter().cloned().collect(),
            args.into_iter().cloned().collect(),
        )),
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

/// A composite strategy that prints as `name` (its text form, so that printing gives
/// text that parses back to it).
pub(crate) fn named(name: impl Into<Name>, s: Strategy<Term>) -> Strategy<Term> {
    elevate_strategies::recursive(name, |_| s)
}
