//! Identity and `let` rules: lifting `id` into maps, identity maps, and moving `let`
//! bindings (`docs/elevate-rise-library.md`, §3.2 and the eqsat rules of §3.6).

use super::catalogue::RuleDef;
use super::layout::map;
use super::pattern::{applied, call, rule, rule_with_names};
use crate::prim::Prim;
use crate::term::{Expr, Ident, Term};
use crate::types::{Type, TypeKind};
use elevate_core::Strategy;

/// `liftId`: `id(a) -> map(fun(x => id(x)))(a)` for an array `a`.
pub fn lift_id() -> Strategy<Term> {
    rule_with_names("liftId", |t: &Term, names| {
        let (_, a) = applied(t, Prim::Id, 1)?;
        if !matches!(a[0].ty()?.kind(), TypeKind::Array(..)) {
            return None;
        }
        let x = Ident::supplied(names, "x");
        let each = Term::lambda(x.clone(), call(Prim::Id, &[], [Term::var(&x)]));
        Some(map(each, a[0].clone()))
    })
}

/// `idToCopy`: `id(a) -> fun(x => x)(a)` for a scalar `a` (an explicit copy).
pub fn id_to_copy() -> Strategy<Term> {
    rule_with_names("idToCopy", |t: &Term, names| {
        let (_, a) = applied(t, Prim::Id, 1)?;
        if !matches!(a[0].ty()?.kind(), TypeKind::Scalar(_)) {
            return None;
        }
        let x = Ident::supplied(names, "x");
        Some(Term::app(
            Term::lambda(x.clone(), Term::var(&x)),
            a[0].clone(),
        ))
    })
}

/// Whether `f` is `fun(x => x)`.
fn is_identity(f: &Term) -> bool {
    matches!(f.expr(), Expr::Lambda(x, _, body) if matches!(body.expr(), Expr::Var(y) if y.id == x.id))
}

/// `eliminateMapIdentity`: `map(fun(x => x)) -> fun(y => y)` on the partially applied
/// map (the public ELEVATE `mapIdentity` and the eqsat `eliminateMapIdentity`); the
/// library's `mapIdentity` rewrites the applied `map(fun(x => x))(xs)`.
pub fn eliminate_map_identity() -> Strategy<Term> {
    rule_with_names("eliminateMapIdentity", |t: &Term, names| {
        let (_, f) = applied(t, Prim::Map, 1)?;
        if !is_identity(&f[0]) {
            return None;
        }
        let y = Ident::supplied(names, "y");
        Some(Term::lambda(y.clone(), Term::var(&y)))
    })
}

/// `let(v)(fun(x => b))`: `v`, `x`, `x`'s annotation and `b`.
fn let_parts(t: &Term) -> Option<(Term, Ident, Option<Type>, Term)> {
    let (_, args) = applied(t, Prim::Let, 2)?;
    match args[1].expr() {
        Expr::Lambda(x, annotation, body) => {
            Some((args[0].clone(), x.clone(), annotation.clone(), body.clone()))
        }
        _ => None,
    }
}

fn make_let(v: Term, x: Ident, annotation: Option<Type>, body: Term) -> Term {
    call(
        Prim::Let,
        &[],
        [v, Term::new(Expr::Lambda(x, annotation, body))],
    )
}

/// `letSwap`: `let(v1)(fun(x1 => let(v2)(fun(x2 => b)))) -> let(v2)(fun(x2 => let(v1)(fun(x1 => b))))`
/// where `x1` is not free in `v2` (nor `x2` in `v1`).
pub fn let_swap() -> Strategy<Term> {
    rule("letSwap", |t: &Term| {
        let (v1, x1, a1, body) = let_parts(t)?;
        let (v2, x2, a2, b) = let_parts(&body)?;
        if v2.has_free(x1.id) || v1.has_free(x2.id) {
            return None;
        }
        Some(make_let(v2, x2, a2, make_let(v1, x1, a1, b)))
    })
}

/// `letSame`: `let(v)(fun(x => let(v)(fun(y => b)))) -> let(v)(fun(x => b[y := x]))`:
/// the second binding of the same value is the first, where `x` is not free in `v`
/// (else the inner `v` would mean something else).
pub fn let_same() -> Strategy<Term> {
    rule_with_names("letSame", |t: &Term, names| {
        let (v, x, a, body) = let_parts(t)?;
        let (w, y, _, b) = let_parts(&body)?;
        if !v.alpha_eq(&w) || v.has_free(x.id) {
            return None;
        }
        Some(make_let(
            v,
            x.clone(),
            a,
            b.substitute(&y, &Term::var(&x), names),
        ))
    })
}

/// `hoistLet`: `f(let(v)(fun(x => b))) -> let(v)(fun(x => f(b)))` and
/// `let(v)(fun(x => b))(a) -> let(v)(fun(x => b(a)))`, where `x` is not free in `f`,
/// respectively `a` (the eqsat `hoistLetApp1/2/3` in two cases: the binding moves out
/// of an argument or a function position).
pub fn hoist_let() -> Strategy<Term> {
    rule("hoistLet", |t: &Term| {
        let Expr::App(f, a) = t.expr() else {
            return None;
        };
        if let Some((v, x, ann, b)) = let_parts(a) {
            if !f.has_free(x.id) {
                return Some(make_let(v, x, ann, Term::app(f.clone(), b)));
            }
        }
        let (v, x, ann, b) = let_parts(f)?;
        if a.has_free(x.id) {
            return None;
        }
        Some(make_let(v, x, ann, Term::app(b, a.clone())))
    })
}

/// The rules of this module, for the [catalogue](super::catalogue).
pub(super) const RULES: &[RuleDef] = &[
    RuleDef::rule("liftId", "id(a) -> map(fun(x => id(x)))(a)", lift_id)
        .note("a an array")
        .example("fun(x: 3.2.f32 => (id(x), id(x |> map(map(neg)))))"),
    RuleDef::rule("idToCopy", "id(a) -> fun(x => x)(a)", id_to_copy)
        .note("a a scalar")
        .example("fun(x: f32 => id(x) * 2.0)"),
    RuleDef::rule("eliminateMapIdentity", "map(fun(x => x)) -> fun(y => y)", eliminate_map_identity)
        .bias(Prim::Map)
        .example("fun(x: 2.3.f32 => (x |> map(map(fun(v => v))), x |> map(fun(r => r))))"),
    RuleDef::rule("letSwap", "let(v1)(fun(x1 => let(v2)(fun(x2 => b)))) -> let(v2)(fun(x2 => let(v1)(fun(x1 => b))))", let_swap)
        .note("x1 not free in v2")
        .bias(Prim::Let)
        .example("fun(x: f32, y: f32 => (let a = x * 2.0 in let b = y + 1.0 in a * b, let c = x in let d = c + 1.0 in d))"),
    RuleDef::rule("letSame", "let(v)(fun(x => let(v)(fun(y => b)))) -> let(v)(fun(x => b[y := x]))", let_same)
        .bias(Prim::Let)
        .example("fun(x: f32 => let a = x * 2.0 in let b = x * 2.0 in a + b)"),
    RuleDef::rule("hoistLet", "f(let(v)(fun(x => b))) -> let(v)(fun(x => f(b))); let(v)(fun(x => b))(a) -> let(v)(fun(x => b(a)))", hoist_let)
        .note("x not free in f, a")
        .bias(Prim::Let)
        .example("fun(x: f32, y: f32 => (1.0 + (let a = x * 2.0 in a * a), y |> (let a = x * 2.0 in fun(z => z + a))))"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_support::rewrite;

    #[test]
    fn let_swap_keeps_dependent_bindings_in_order() {
        let independent = "fun(x: f32 => let a = x * 2.0 in let b = x + 1.0 in a * b)";
        assert_eq!(
            rewrite(let_swap(), independent).unwrap(),
            "let b = x + 1.0 in let a = x * 2.0 in a * b"
        );
        let dependent = "fun(x: f32 => let a = x * 2.0 in let b = a + 1.0 in a * b)";
        assert_eq!(rewrite(let_swap(), dependent), None);
    }

    #[test]
    fn let_same_needs_the_same_value() {
        let different = "fun(x: f32 => let a = x * 2.0 in let b = x * 3.0 in a + b)";
        assert_eq!(rewrite(let_same(), different), None);
    }
}
