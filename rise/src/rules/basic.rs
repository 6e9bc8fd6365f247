//! Core rules: beta and eta, let inlining, pair projections, identity.

use super::catalogue::{EGraphUse, RuleDef, ALGORITHMIC};
use super::pattern::{applied, call};
use super::pattern::{rule, rule_with_names};
use crate::prim::Prim;
use crate::term::{Expr, Ident, Term};
use crate::types::TypeKind;
use elevate_core::{Strategy, Traversable};

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

/// The most nodes an argument may have and still be copied into each use of a
/// function's parameter by `BENF` and `DFNF`. A larger one that the function uses
/// more than once is bound by `let` instead ([`share_argument`]): substitution copies
/// it, so a function applied to its own result again and again would grow as the
/// uses to the power of the depth (`fun(x => x * x - x)` 48 times: 3^48 nodes).
pub const MAX_COPIED_ARGUMENT: usize = 32;

/// `fun(x => b)(a) -> let(a, fun(x => b))` where `a` is data of more than
/// [`MAX_COPIED_ARGUMENT`] nodes and `x` occurs more than once in `b`: the argument is
/// computed once and named, where [`beta_reduction`] would copy it into every use.
/// `BENF` and `DFNF` try it before beta reduction.
pub fn share_argument() -> Strategy<Term> {
    rule("shareArgument", |t: &Term| {
        let Expr::App(f, a) = t.expr() else {
            return None;
        };
        let Expr::Lambda(x, _, body) = f.expr() else {
            return None;
        };
        let worth_sharing = a.ty().is_some_and(|ty| ty.is_data())
            && larger_than(a, MAX_COPIED_ARGUMENT)
            && occurs_more_than_once(body, x);
        worth_sharing.then(|| call(Prim::Let, &[], [a.clone(), f.clone()]))
    })
}

/// Whether `t`, as a tree (a shared subterm counted at each use), has more than `n`
/// nodes; it looks at `n + 1` at most.
fn larger_than(t: &Term, n: usize) -> bool {
    let mut pending = vec![t];
    let mut seen = 0;
    while let Some(t) = pending.pop() {
        seen += 1;
        if seen > n {
            return true;
        }
        pending.extend((0..t.arity()).map(|i| t.child(i)));
    }
    false
}

/// Whether variable `x` occurs free more than once in `t` (a shared subterm counted
/// at each use). It stops at the second occurrence, and where `t` holds twice a
/// subterm in which `x` is free, so it visits each distinct node once at most.
fn occurs_more_than_once(t: &Term, x: &Ident) -> bool {
    let mut visited = rustc_hash::FxHashSet::default();
    let mut found = 0;
    let mut pending = vec![t];
    while let Some(t) = pending.pop() {
        if t.name_floor() <= x.id {
            continue;
        }
        if let Some(id) = t.node_id() {
            if !visited.insert(id) {
                // Reached again: a second use of all it holds.
                if t.has_free(x.id) {
                    return true;
                }
                continue;
            }
        }
        match t.expr() {
            Expr::Var(v) if v.id == x.id => {
                found += 1;
                if found > 1 {
                    return true;
                }
            }
            Expr::Lambda(v, _, _) if v.id == x.id => {}
            _ => pending.extend((0..t.arity()).map(|i| t.child(i))),
        }
    }
    false
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
    RuleDef::rule(
        "shareArgument",
        "fun(x => b)(a) -> let(a, fun(x => b))",
        share_argument,
    )
    .note("a is data of more than 32 nodes; x occurs more than once in b")
    .example(
        "fun(v: f32 => (v * 2.0 + 1.0) * (v * 2.0 + 1.0) * (v * 2.0 + 1.0) * (v * 2.0 + 1.0) \
         |> fun(y => y * y - y))",
    ),
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
