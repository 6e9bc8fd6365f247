//! Core rules: beta and eta, let inlining, pair projections, identity.

use super::catalogue::{EGraphUse, RuleDef, ALGORITHMIC};
use super::pattern::{applied, call};
use super::pattern::{rule, rule_with_names};
use crate::prim::Prim;
use crate::term::{Expr, Ident, Term};
use crate::types::TypeKind;
use elevate_core::Strategy;

/// `fun(x => b)(a) -> b[x := a]` (capture-avoiding).
pub fn beta_reduction() -> Strategy<Term> {
    rule_with_names("betaReduction", |t: &Term, names| match t.expr() {
        Expr::App(f, a) => match f.expr() {
            Expr::Lambda(x, _, body) => Some(body.substitute(x, a, names)),
            _ => None,
        },
        _ => None,
    })
}

/// `fun(x => f(x)) -> f` where `x` is not free in `f`. A lambda whose parameter is
/// annotated is left alone: the annotation may be what makes the program's type
/// inferable (a program's parameters are such lambdas).
pub fn eta_reduction() -> Strategy<Term> {
    rule("etaReduction", eta_reduce)
}

/// The equation of [`eta_reduction`], as a function.
pub(crate) fn eta_reduce(t: &Term) -> Option<Term> {
    match t.expr() {
        Expr::Lambda(x, None, body) => match body.expr() {
            Expr::App(f, arg)
                if matches!(arg.expr(), Expr::Var(y) if y.id == x.id) && !f.has_free(x.id) =>
            {
                Some(f.clone())
            }
            _ => None,
        },
        _ => None,
    }
}

/// `f -> fun(x => f(x))` for a term whose (inferred) type is a function.
pub fn eta_abstraction() -> Strategy<Term> {
    rule_with_names("etaAbstraction", |t: &Term, names| {
        match t.ty().map(|ty| ty.kind()) {
            Some(TypeKind::Fun(..)) => {
                let x = Ident::supplied(names, "x");
                Some(Term::lambda(x.clone(), Term::app(t.clone(), Term::var(&x))))
            }
            _ => None,
        }
    })
}

/// `let(v, fun(x => b)) -> b[x := v]`
pub fn let_inline() -> Strategy<Term> {
    rule_with_names("letInline", |t: &Term, names| {
        let (_, args) = applied(t, Prim::Let, 2)?;
        match args[1].expr() {
            Expr::Lambda(x, _, body) => Some(body.substitute(x, &args[0], names)),
            _ => None,
        }
    })
}

/// `fst((a, b)) -> a`
pub fn fst_reduction() -> Strategy<Term> {
    super::catalogue::rule("fstReduction")
}

/// `snd((a, b)) -> b`
pub fn snd_reduction() -> Strategy<Term> {
    super::catalogue::rule("sndReduction")
}

/// `x -> id(x)` (a handle for later rules; never normalize with it).
pub fn id_after() -> Strategy<Term> {
    rule("idAfter", |t: &Term| match t.ty().map(|ty| ty.is_data()) {
        Some(true) => Some(call(Prim::Id, &[], [t.clone()])),
        _ => None,
    })
}

/// `id(x) -> x`
pub fn remove_id() -> Strategy<Term> {
    rule("removeId", |t: &Term| {
        let (_, args) = applied(t, Prim::Id, 1)?;
        Some(args[0].clone())
    })
}

/// `depFun(n => b)(k) -> b[n := k]`: beta reduction of a function of a nat (the form
/// a call of a definition with nat parameters takes).
pub fn beta_nat_reduction() -> Strategy<Term> {
    rule("betaNatReduction", |t: &Term| match t.expr() {
        Expr::NatApp(f, k) => match f.expr() {
            Expr::NatLambda(v, body) => Some(body.substitute_nat(v, k)),
            _ => None,
        },
        _ => None,
    })
}

/// The rules of this module, for the [catalogue](super::catalogue).
pub(super) const RULES: &[RuleDef] = &[
    RuleDef::rule(
        "betaReduction",
        "fun(x => b)(a) -> b[x := a]",
        beta_reduction,
    )
    .bias(Prim::Let)
    .sets(ALGORITHMIC)
    .egraph(EGraphUse::Beta),
    RuleDef::rule("etaReduction", "fun(x => f(x)) -> f", eta_reduction)
        .note("x not free in f")
        .example("fun(xs: 4.f32 => xs |> map(fun(x => neg(x))))")
        .egraph(EGraphUse::Equation("fun(x => f(x)) -> f"))
        .sets(ALGORITHMIC),
    RuleDef::rule("etaAbstraction", "f -> fun(x => f(x))", eta_abstraction)
        .note("f a function")
        .bias(Prim::Map)
        .example("fun(xs: 4.f32 => xs |> map(neg))"),
    RuleDef::rule("letInline", "let(v, fun(x => b)) -> b[x := v]", let_inline).bias(Prim::Let),
    RuleDef::rule(
        "betaNatReduction",
        "depFun(n => b)(k) -> b[n := k]",
        beta_nat_reduction,
    )
    .example("fun(y: 4.f32 => depFun(n => fun(x: n.f32 => x |> map(neg)))(4, y))"),
    RuleDef::equation("fstReduction", "fst((a, b)) -> a").sets(ALGORITHMIC),
    RuleDef::equation("sndReduction", "snd((a, b)) -> b").sets(ALGORITHMIC),
    RuleDef::rule("idAfter", "x -> id(x)", id_after).example("fun(xs: 4.f32 => xs |> map(neg))"),
    RuleDef::rule("removeId", "id(x) -> x", remove_id)
        .example("fun(xs: 4.f32 => xs |> id |> map(neg))"),
];
