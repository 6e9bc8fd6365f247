//! Algorithmic rules: fusion and fission of maps, split/join, transpose pairs, reduce.

use super::catalogue::{EGraphUse, Param, RuleDef, Set, ALGORITHMIC};
use super::pattern::{applied, call};
use super::pattern::{rule, rule_with_names};
use crate::prim::Prim;
use crate::term::{Expr, Ident, Term};
use crate::types::{Type, TypeKind};
use elevate_core::Strategy;

/// `map(f)(map(g)(x)) -> map(fun(y => f(g(y))))(x)`
pub fn map_fusion() -> Strategy<Term> {
    super::catalogue::rule("mapFusion")
}

/// `map(fun(x => f(e)))(xs) -> map(f)(map(fun(x => e))(xs))` where `x` is not free
/// in `f`, and `e` is data and not a variable: the last function applied in the body
/// becomes a map of its own.
pub fn map_fission() -> Strategy<Term> {
    rule("mapFission", |t: &Term| {
        let (_, args) = applied(t, Prim::Map, 2)?;
        let Expr::Lambda(x, annotation, body) = args[0].expr() else {
            return None;
        };
        let Expr::App(f, e) = body.expr() else {
            return None;
        };
        // The intermediate array holds the values of `e`: they must be data, and a bare
        // variable would give `map(fun(x => x))` and fission forever.
        if f.has_free(x.id) || matches!(e.expr(), Expr::Var(_)) || !is_data(e)? {
            return None;
        }
        let built = || {
            let first = Term::new(Expr::Lambda(x.clone(), annotation.clone(), e.clone()));
            call(
                Prim::Map,
                &[],
                [f.clone(), call(Prim::Map, &[], [first, args[1].clone()])],
            )
        };
        // RNF fissions every map it can, so this rule runs often: where the types
        // are known, the new nodes are typed directly (debug builds check that
        // inference gives the same).
        let Some(typed) = annotation
            .is_none()
            .then(|| fission_typed(t, x, f, e, &args[1]))
            .flatten()
        else {
            return Some(built());
        };
        if cfg!(debug_assertions) {
            let inferred = super::typing::typed_result(t, built());
            assert!(
                inferred.is_some_and(|i| i == typed && super::typing::same_types(&i, &typed)),
                "mapFission typed {t} apart from inference"
            );
        }
        Some(typed)
    })
}

/// `map(f)(map(fun(x => e))(xs))` with its types, for `t = map(fun(x => f(e)))(xs)`
/// where `t`, `xs` (`[n]a`), `e` (`c`) and `f` (`c -> b`) have types without
/// unknowns: the types inference gives the new nodes.
fn fission_typed(t: &Term, x: &Ident, f: &Term, e: &Term, xs: &Term) -> Option<Term> {
    let known = |term: &Term| term.ty().filter(|ty| !ty.has_unknowns()).cloned();
    let (t_ty, xs_ty, c) = (known(t)?, known(xs)?, known(e)?);
    let f_ty = known(f)?;
    let TypeKind::Array(n, a) = xs_ty.kind() else {
        return None;
    };
    let TypeKind::Fun(c_f, b) = f_ty.kind() else {
        return None;
    };
    if matches!(c_f.kind(), TypeKind::DepFun(..)) {
        return None;
    }
    let node = |expr: Expr, ty: Type| Term::with(expr, Some(ty), None);
    let map = |s: &Type, r: &Type| {
        let ty = Type::fun(
            Type::fun(s.clone(), r.clone()),
            Type::fun(
                Type::array(n.clone(), s.clone()),
                Type::array(n.clone(), r.clone()),
            ),
        );
        node(Expr::Prim(Prim::Map), ty)
    };
    let first = node(
        Expr::Lambda(x.clone(), None, e.clone()),
        Type::fun(a.clone(), c.clone()),
    );
    let inner_f = node(
        Expr::App(map(a, &c), first),
        Type::fun(xs_ty.clone(), Type::array(n.clone(), c.clone())),
    );
    let inner = node(
        Expr::App(inner_f, xs.clone()),
        Type::array(n.clone(), c.clone()),
    );
    let outer_f = node(
        Expr::App(map(c_f, b), f.clone()),
        Type::fun(
            Type::array(n.clone(), c_f.clone()),
            Type::array(n.clone(), b.clone()),
        ),
    );
    // The root keeps the original's type, as `typed_result` does.
    Some(node(Expr::App(outer_f, inner), t_ty))
}

/// Whether `e` computes data: from its type if it has one, else from its shape (a
/// literal, an array, or a fully applied primitive that always returns data); `None`
/// when that cannot be told without a type.
fn is_data(e: &Term) -> Option<bool> {
    if let Some(ty) = e.ty() {
        return Some(ty.is_data());
    }
    match e.expr() {
        Expr::Literal(_) | Expr::Array(_) => Some(true),
        Expr::Lambda(..) | Expr::NatLambda(..) => Some(false),
        _ => {
            let mut values = 0;
            let mut head = e;
            while let Expr::App(f, _) = head.expr() {
                values += 1;
                head = f;
            }
            while let Expr::NatApp(f, _) = head.expr() {
                head = f;
            }
            match head.expr() {
                // `let` and `id` return whatever they are given.
                Expr::Prim(Prim::Let | Prim::Id) => None,
                Expr::Prim(p) => (values == p.value_arity()).then_some(true),
                _ => None,
            }
        }
    }
}

/// `transpose(transpose(x)) -> x`
pub fn remove_transpose_pair() -> Strategy<Term> {
    super::catalogue::rule("removeTransposePair")
}

/// `x -> transpose(transpose(x))` for a two-dimensional array `x`.
pub fn create_transpose_pair() -> Strategy<Term> {
    rule("createTransposePair", |t: &Term| {
        let TypeKind::Array(_, row) = t.ty()?.kind() else {
            return None;
        };
        if !matches!(row.kind(), TypeKind::Array(..)) {
            return None;
        }
        let once = call(Prim::Transpose, &[], [t.clone()]);
        Some(call(Prim::Transpose, &[], [once]))
    })
}

/// `splitJoin(n)`: `map(f)(x) -> join(map(map(f))(split(n)(x)))` (`n` divides the
/// length of `x`).
///
/// A constant length must be a multiple of `n` (the typed result is otherwise a nat
/// error, and the rule does not apply); a symbolic one is split as RISE does, the
/// type `(len/n).n` recording that `n` divides it.
pub fn split_join(n: i64) -> Strategy<Term> {
    super::catalogue::sized("splitJoin", n)
}

/// `join(split(n)(x)) -> x`
pub fn join_split() -> Strategy<Term> {
    super::catalogue::rule("joinSplit")
}

/// The functions of a lambda body that is a chain of applications to the parameter,
/// `fun(x => f1(f2(...fk(x))))`, outermost first, if `x` is free in none of them.
fn application_chain(lambda: &Term) -> Option<Vec<Term>> {
    let Expr::Lambda(x, _, body) = lambda.expr() else {
        return None;
    };
    let mut functions = Vec::new();
    let mut current = body;
    loop {
        match current.expr() {
            Expr::Var(y) if y.id == x.id => break,
            Expr::App(f, a) if !f.has_free(x.id) => {
                functions.push(f.clone());
                current = a;
            }
            _ => return None,
        }
    }
    (functions.len() >= 2).then_some(functions)
}

/// `mapFullFission`: `map(fun(x => f1(f2(...fk(x)))))(xs) -> map(f1)(map(f2)(...map(fk)(xs)))`
/// where `x` is free in no `fi`: one map per function.
pub fn map_full_fission() -> Strategy<Term> {
    rule("mapFullFission", |t: &Term| {
        let (_, args) = applied(t, Prim::Map, 2)?;
        let functions = application_chain(&args[0])?;
        Some(
            functions
                .into_iter()
                .rev()
                .fold(args[1].clone(), |xs, f| call(Prim::Map, &[], [f, xs])),
        )
    })
}

/// `mapFirstFission`: `map(fun(x => f1(...f(k-1)(fk(x)))))(xs) -> map(fun(z => f1(...f(k-1)(z))))(map(fk)(xs))`
/// where `x` is free in no `fi`: the first function applied becomes a map of its own.
pub fn map_first_fission() -> Strategy<Term> {
    rule_with_names("mapFirstFission", |t: &Term, names| {
        let (_, args) = applied(t, Prim::Map, 2)?;
        let mut functions = application_chain(&args[0])?;
        let first = functions.pop()?;
        let z = Ident::supplied(names, "z");
        let rest = functions
            .into_iter()
            .rev()
            .fold(Term::var(&z), |inner, f| Term::app(f, inner));
        Some(call(
            Prim::Map,
            &[],
            [
                Term::lambda(z, rest),
                call(Prim::Map, &[], [first, args[1].clone()]),
            ],
        ))
    })
}

/// The rules of this module, for the [catalogue](super::catalogue).
pub(super) const RULES: &[RuleDef] = &[
    RuleDef::equation(
        "mapFusion",
        "map(f)(map(g)(x)) -> map(fun(y => f(g(y))))(x)",
    )
    .bias(Prim::Map)
    .sets(ALGORITHMIC),
    RuleDef::rule(
        "mapFission",
        "map(fun(x => f(e)))(xs) -> map(f)(map(fun(x => e))(xs))",
        map_fission,
    )
    .note("x not free in f; e data, not a variable")
    .bias(Prim::Map)
    .example("fun(xs: 4.f32 => xs |> map(fun(x => abs(x + 1.0))))")
    .egraph(EGraphUse::Equation(
        "map(fun(x => f(e)))(xs) -> map(f)(map(fun(x => e))(xs))",
    ))
    .sets(ALGORITHMIC),
    RuleDef::rule(
        "mapFullFission",
        "map(fun(x => f1(f2(...fk(x)))))(xs) -> map(f1)(map(f2)(...map(fk)(xs)))",
        map_full_fission,
    )
    .note("x not in any fi")
    .bias(Prim::Map)
    .example("fun(xs: 3.f32 => xs |> map(fun(x => neg(abs(neg(x))))))"),
    RuleDef::rule(
        "mapFirstFission",
        "map(fun(x => f1(...fk(x))))(xs) -> map(fun(z => f1(...f(k-1)(z))))(map(fk)(xs))",
        map_first_fission,
    )
    .note("x not in any fi")
    .bias(Prim::Map)
    .example("fun(xs: 3.4.f32 => xs |> map(fun(x => neg(x |> reduce(add, 0.0) |> abs))))"),
    RuleDef::equation("removeTransposePair", "transpose(transpose(x)) -> x")
        .bias(Prim::Transpose)
        .sets(ALGORITHMIC),
    RuleDef::rule(
        "createTransposePair",
        "x -> transpose(transpose(x))",
        create_transpose_pair,
    )
    .note("x a 2D array")
    .bias(Prim::Transpose)
    .example("fun(x: 2.3.f32 => x |> map(map(neg)))"),
    RuleDef::sized_equation(
        "splitJoin",
        &[Param::size("n")],
        "map(f)(x) -> join(map(map(f))(split(n)(x)))",
    )
    .note("n divides the length")
    .bias(Prim::Map)
    .sets(&[(Set::Algorithmic, &[4]), (Set::Algorithmic, &[32])])
    .typical(&[2]),
    RuleDef::equation("joinSplit", "join(split(n)(x)) -> x")
        .bias(Prim::Split)
        .sets(ALGORITHMIC),
];
