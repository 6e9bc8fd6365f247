//! Reduction rules: fusing and fissioning the function mapped before a reduction,
//! blocking a reduction, and lifting a reduction out of a map (the moves of the
//! ELEVATE matrix-multiplication strategies).

use super::catalogue::{Param, RuleDef, LOWERING};
use super::pattern::{applied, call, rule, rule_with_names};
use crate::nat::Nat;
use crate::prim::Prim;
use crate::term::{Expr, Ident, Literal, Term};
use crate::types::TypeKind;
use elevate_core::{Name, NameSupply, Rule, Strategy};

/// The reductions: `reduce` and its sequential forms.
const REDUCTIONS: [Prim; 3] = [Prim::Reduce, Prim::ReduceSeq, Prim::ReduceSeqUnroll];

/// `(R, [op, init, xs])` if `t` is a fully applied reduction `R(op)(init)(xs)`.
pub(super) fn reduction(t: &Term) -> Option<(Prim, Vec<Term>)> {
    REDUCTIONS
        .into_iter()
        .find_map(|p| applied(t, p, 3).map(|(_, args)| (p, args)))
}

/// `fun(a => fun(b => body))` as `(a, b, body)`.
pub(super) fn binary_lambda(f: &Term) -> Option<(&Ident, &Ident, &Term)> {
    let Expr::Lambda(a, _, inner) = f.expr() else {
        return None;
    };
    let Expr::Lambda(b, _, body) = inner.expr() else {
        return None;
    };
    Some((a, b, body))
}

pub(super) fn lambda2(a: Ident, b: Ident, body: Term) -> Term {
    Term::lambda(a, Term::lambda(b, body))
}

/// The arithmetic primitive a reduction operator stands for: `add`,
/// `fun(a => add(a))` or `fun(a, b => add(a)(b))`.
pub(super) fn operator(op: &Term) -> Option<Prim> {
    let is_var = |t: &Term, x: &Ident| matches!(t.expr(), Expr::Var(y) if y.id == x.id);
    match op.expr() {
        Expr::Prim(p) => Some(*p),
        Expr::Lambda(a, _, body) => {
            if let Some((a2, b, inner)) = binary_lambda(op) {
                let (p, args) = applied_any(inner, 2)?;
                return (is_var(&args[0], a2) && is_var(&args[1], b)).then_some(p);
            }
            let (p, args) = applied_any(body, 1)?;
            is_var(&args[0], a).then_some(p)
        }
        _ => None,
    }
}

/// `p(args...)` for any primitive `p` without nat arguments.
fn applied_any(t: &Term, values: usize) -> Option<(Prim, Vec<Term>)> {
    let mut head = t;
    for _ in 0..values {
        let Expr::App(f, _) = head.expr() else {
            return None;
        };
        head = f;
    }
    let Expr::Prim(p) = head.expr() else {
        return None;
    };
    applied(t, *p, values).map(|(_, args)| (*p, args))
}

/// Whether `init` is the neutral element of the associative operator `p`.
pub(super) fn neutral(p: Prim, init: &Term) -> bool {
    let Expr::Literal(l) = init.expr() else {
        return false;
    };
    let value = match *l {
        Literal::I32(v) => v as f64,
        Literal::I64(v) => v as f64,
        Literal::F32(v) => v as f64,
        Literal::F64(v) => v,
        Literal::Bool(_) => return false,
    };
    match p {
        Prim::Add => value == 0.0,
        Prim::Mul => value == 1.0,
        _ => false,
    }
}

pub(super) fn mentions(t: &Term, x: &Ident) -> bool {
    t.has_free(x.id)
}

/// `reduceMapFusion`: `R(op)(init)(map(f)(xs)) -> reduceSeq(fun(a, y => op(a)(f(y))))(init)(xs)`
/// for `R` = `reduce` or `reduceSeq` (`reduceSeqUnroll` stays unrolled): the function
/// is applied to each element as the reduction reads it. The fused operator takes two
/// different types, so the result is sequential.
pub fn reduce_map_fusion() -> Strategy<Term> {
    rule_with_names("reduceMapFusion", fused_reduce_map)
}

/// `fuseReduceMap`, ELEVATE's other name for [`reduce_map_fusion`].
pub fn fuse_reduce_map() -> Strategy<Term> {
    rule_with_names("fuseReduceMap", fused_reduce_map)
}

fn fused_reduce_map(t: &Term, names: &mut NameSupply) -> Option<Term> {
    let (r, args) = reduction(t)?;
    let (_, map) = applied(&args[2], Prim::Map, 2)?;
    let (a, y) = (Ident::supplied(names, "a"), Ident::supplied(names, "y"));
    let step = Term::apps(
        args[0].clone(),
        [Term::var(&a), Term::app(map[0].clone(), Term::var(&y))],
    );
    let fused = lambda2(a, y, step);
    let result = if r == Prim::ReduceSeqUnroll {
        r
    } else {
        Prim::ReduceSeq
    };
    Some(call(result, &[], [fused, args[1].clone(), map[1].clone()]))
}

/// A reducing function `fun(acc, y => op(acc)(e))` read as the operator `op` and the
/// work `e` done on each element `y`: `acc` occurs only as `op`'s first argument, and
/// `y` not in `op`.
pub(super) fn operator_and_work(f: &Term) -> Option<(&Ident, &Term, &Term)> {
    let (acc, y, body) = binary_lambda(f)?;
    let Expr::App(op_acc, e) = body.expr() else {
        return None;
    };
    let Expr::App(op, first) = op_acc.expr() else {
        return None;
    };
    let reads_acc_once = matches!(first.expr(), Expr::Var(x) if x.id == acc.id)
        && !mentions(op, acc)
        && !mentions(e, acc);
    (reads_acc_once && !mentions(op, y)).then_some((y, op, e))
}

/// `reduceMapFission`: `R(fun(acc, y => op(acc)(e)))(init)(xs) -> reduce(op)(init)(map(fun(y => e))(xs))`
/// where `acc` occurs only as `op`'s first argument and `y` not in `op`: the work
/// done on each element becomes a map of its own, and what is left is a plain
/// reduction (which must type as one: `op : t -> t -> t`).
pub fn reduce_map_fission() -> Strategy<Term> {
    rule("reduceMapFission", |t: &Term| {
        let (_, args) = reduction(t)?;
        let (y, op, e) = operator_and_work(&args[0])?;
        if !mentions(e, y) {
            return None;
        }
        let work = Term::lambda(y.clone(), e.clone());
        Some(call(
            Prim::Reduce,
            &[],
            [
                op.clone(),
                args[1].clone(),
                call(Prim::Map, &[], [work, args[2].clone()]),
            ],
        ))
    })
}

/// `blockedReduce(n)`: `reduce(op)(init)(xs) -> reduceSeq(fun(acc, y => op(acc)(reduce(op)(init)(y))))(init)(split(n)(xs))`
/// where `op` is `add` with `init` 0 or `mul` with `init` 1 (associative, with a
/// neutral start) and `n` divides the length: each block of `n` is reduced on its
/// own and the partial results are combined. Also named `splitStrategy(n)`.
struct BlockedReduce {
    n: i64,
    name: &'static str,
}

impl Rule<Term> for BlockedReduce {
    fn name(&self) -> Name {
        Name::new(self.name)
    }

    fn rewrite(&self, t: &Term, names: &mut NameSupply) -> Option<Term> {
        let (_, args) = applied(t, Prim::Reduce, 3)?;
        let p = operator(&args[0])?;
        if !neutral(p, &args[1]) || self.n <= 0 {
            return None;
        }
        let TypeKind::Array(len, _) = args[2].ty()?.kind() else {
            return None;
        };
        if len.as_const().is_some_and(|l| l % self.n != 0) {
            return None;
        }
        let (acc, y) = (Ident::supplied(names, "acc"), Ident::supplied(names, "y"));
        let block = call(
            Prim::Reduce,
            &[],
            [args[0].clone(), args[1].clone(), Term::var(&y)],
        );
        let step = lambda2(
            acc.clone(),
            y,
            Term::apps(args[0].clone(), [Term::var(&acc), block]),
        );
        let blocks = call(Prim::Split, &[Nat::cst(self.n)], [args[2].clone()]);
        super::typing::typed_result(
            t,
            call(Prim::ReduceSeq, &[], [step, args[1].clone(), blocks]),
        )
    }

    fn write_text(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({})", self.name, self.n)
    }
}

/// `blockedReduce(n)`: `reduce(op)(init)(xs) -> reduceSeq(fun(acc, y => op(acc)(reduce(op)(init)(y))))(init)(split(n)(xs))`
/// for `op` = `add` with `init` 0 or `mul` with `init` 1, `n` dividing the length:
/// each block of `n` is reduced on its own and the partial results are combined.
pub fn blocked_reduce(n: i64) -> Strategy<Term> {
    super::catalogue::sized("blockedReduce", n)
}

/// [`blocked_reduce`] without checking the argument.
fn blocked_reduce_unchecked(n: i64) -> Strategy<Term> {
    Strategy::from_rule(BlockedReduce {
        n,
        name: "blockedReduce",
    })
}

/// `splitStrategy(n)`, the ELEVATE paper's name for [`blocked_reduce`].
pub fn split_strategy(n: i64) -> Strategy<Term> {
    super::catalogue::sized("splitStrategy", n)
}

/// [`split_strategy`] without checking the argument.
fn split_strategy_unchecked(n: i64) -> Strategy<Term> {
    Strategy::from_rule(BlockedReduce {
        n,
        name: "splitStrategy",
    })
}

/// `reduceSeqInitFusion`: `op(x)(reduceSeq(fun(a, y => op(a)(e)))(init)(ys)) -> reduceSeq(fun(a, y => op(a)(e)))(x)(ys)`
/// for `op` = `add` with `init` 0 or `mul` with `init` 1: a value combined with a
/// reduction's result becomes the reduction's start (ELEVATE's `liftReduce` drops
/// such a wrapper; here it is a rule of its own, with its condition).
pub fn reduce_seq_init_fusion() -> Strategy<Term> {
    rule("reduceSeqInitFusion", |t: &Term| {
        let Expr::App(op_x, reduced) = t.expr() else {
            return None;
        };
        let Expr::App(op, x) = op_x.expr() else {
            return None;
        };
        let p = operator(op)?;
        let (_, args) = applied(reduced, Prim::ReduceSeq, 3)?;
        let (a, _, body) = binary_lambda(&args[0])?;
        let Expr::App(inner_op_a, _) = body.expr() else {
            return None;
        };
        let Expr::App(inner_op, first) = inner_op_a.expr() else {
            return None;
        };
        if operator(inner_op)? != p
            || !neutral(p, &args[1])
            || !matches!(first.expr(), Expr::Var(v) if v.id == a.id)
        {
            return None;
        }
        Some(call(
            Prim::ReduceSeq,
            &[],
            [args[0].clone(), x.clone(), args[2].clone()],
        ))
    })
}

/// `liftReduce`: `map(fun(v => R(op)(init)(e)))(xs) -> R(fun(acc, y => map(fun(q => op(fst(q))(snd(q))))(zip(acc)(y))))(inits)(transpose(map(fun(v => e))(xs)))`
/// where `v` is not free in `op`, `inits` is `generate(fun(i => init))` (or
/// `map(fun(v => init))(xs)` if `init` depends on `v`), and `map(fun(v => e))(xs)` is
/// just `xs` when `e` is `v`: a map of reductions becomes one reduction whose
/// accumulator is the array of all the map's accumulators, so the reduction's loop
/// moves outside the map's. `R` is `reduce`, `reduceSeq` or `reduceSeqUnroll`.
pub fn lift_reduce() -> Strategy<Term> {
    rule_with_names("liftReduce", |t: &Term, names| {
        let (_, m) = applied(t, Prim::Map, 2)?;
        let Expr::Lambda(v, _, body) = m[0].expr() else {
            return None;
        };
        let (r, args) = reduction(body)?;
        let (op, init, e) = (&args[0], &args[1], &args[2]);
        if mentions(op, v) {
            return None;
        }
        let xs = &m[1];
        let inits = if mentions(init, v) {
            call(
                Prim::Map,
                &[],
                [Term::lambda(v.clone(), init.clone()), xs.clone()],
            )
        } else {
            let i = Ident::supplied(names, "i");
            call(Prim::Generate, &[], [Term::lambda(i, init.clone())])
        };
        let columns = match e.expr() {
            Expr::Var(x) if x.id == v.id => xs.clone(),
            _ => call(
                Prim::Map,
                &[],
                [Term::lambda(v.clone(), e.clone()), xs.clone()],
            ),
        };
        let (acc, y, q) = (
            Ident::supplied(names, "acc"),
            Ident::supplied(names, "y"),
            Ident::supplied(names, "q"),
        );
        let pointwise = Term::lambda(
            q.clone(),
            Term::apps(
                op.clone(),
                [
                    call(Prim::Fst, &[], [Term::var(&q)]),
                    call(Prim::Snd, &[], [Term::var(&q)]),
                ],
            ),
        );
        let step = lambda2(
            acc.clone(),
            y.clone(),
            call(
                Prim::Map,
                &[],
                [
                    pointwise,
                    call(Prim::Zip, &[], [Term::var(&acc), Term::var(&y)]),
                ],
            ),
        );
        Some(call(
            r,
            &[],
            [step, inits, call(Prim::Transpose, &[], [columns])],
        ))
    })
}

/// `reduceMap`, the inverse of [`lift_reduce`]:
/// `R(fun(acc, y => map(fun(q => op(fst(q))(snd(q))))(zip(acc)(y))))(generate(fun(i => init)))(transpose(xs)) -> map(fun(v => R(op)(init)(v)))(xs)`
/// where `op` and `init` do not use the bound variables: a reduction over arrays,
/// element by element, becomes a map of reductions (the map's loop moves outside the
/// reduction's).
pub fn reduce_map() -> Strategy<Term> {
    rule_with_names("reduceMap", |t: &Term, names| {
        let (r, args) = reduction(t)?;
        let (acc, y, body) = binary_lambda(&args[0])?;
        let (_, m) = applied(body, Prim::Map, 2)?;
        let (_, z) = applied(&m[1], Prim::Zip, 2)?;
        let is = |t: &Term, x: &Ident| matches!(t.expr(), Expr::Var(v) if v.id == x.id);
        if !is(&z[0], acc) || !is(&z[1], y) {
            return None;
        }
        let Expr::Lambda(q, _, pointwise) = m[0].expr() else {
            return None;
        };
        let Expr::App(op_first, second) = pointwise.expr() else {
            return None;
        };
        let Expr::App(op, first) = op_first.expr() else {
            return None;
        };
        let projects = |t: &Term, p: Prim| applied(t, p, 1).is_some_and(|(_, a)| is(&a[0], q));
        if !projects(first, Prim::Fst)
            || !projects(second, Prim::Snd)
            || [acc, y, q].iter().any(|x| mentions(op, x))
        {
            return None;
        }
        let (_, generated) = applied(&args[1], Prim::Generate, 1)?;
        let Expr::Lambda(i, _, init) = generated[0].expr() else {
            return None;
        };
        if mentions(init, i) {
            return None;
        }
        let (_, columns) = applied(&args[2], Prim::Transpose, 1)?;
        let v = Ident::supplied(names, "v");
        let per_row = call(r, &[], [op.clone(), init.clone(), Term::var(&v)]);
        Some(call(
            Prim::Map,
            &[],
            [Term::lambda(v, per_row), columns[0].clone()],
        ))
    })
}

/// The rules of this module, for the [catalogue](super::catalogue).
pub(super) const RULES: &[RuleDef] = &[
    RuleDef::rule("reduceMapFusion", "R(op)(init)(map(f)(xs)) -> reduceSeq(fun(a, y => op(a)(f(y))))(init)(xs)", reduce_map_fusion)
        .note("R = reduce, reduceSeq")
        .bias(Prim::Reduce)
        .example("fun(xs: 4.f32 => (xs |> map(neg) |> reduce(add, 0.0), xs |> map(fun(x => x * 2.0)) |> reduceSeq(fun(a, y => a + y), 1.0)))"),
    RuleDef::rule("fuseReduceMap", "same as reduceMapFusion", fuse_reduce_map)
        .bias(Prim::Reduce)
        .example("fun(xs: 4.f32 => xs |> map(neg) |> reduce(add, 0.0))"),
    RuleDef::rule("reduceMapFission", "R(fun(acc, y => op(acc)(e)))(init)(xs) -> reduce(op)(init)(map(fun(y => e))(xs))", reduce_map_fission)
        .note("acc only as op's first argument")
        .bias(Prim::ReduceSeq)
        .example("fun(a: 4.f32, b: 4.f32 => zip(a, b) |> reduceSeq(fun(acc, p => acc + fst(p) * snd(p)), 0.0))"),
    RuleDef::sized("blockedReduce", &[Param::size("n")], "reduce(op)(init)(xs) -> reduceSeq(fun(acc, y => op(acc)(reduce(op)(init)(y))))(init)(split(n)(xs))", blocked_reduce_unchecked)
        .note("op add/mul, init neutral, n divides the length")
        .bias(Prim::Reduce)
        .example("fun(xs: 6.f32, ys: 4.i32 => (xs |> reduce(add, 0.0), ys |> reduce(fun(a, b => a * b), 1)))")
        .typical(&[2]),
    RuleDef::sized("splitStrategy", &[Param::size("n")], "same as blockedReduce(n)", split_strategy_unchecked)
        .bias(Prim::Reduce)
        .example("fun(xs: 6.f32 => xs |> reduce(add, 0.0))")
        .typical(&[2]),
    RuleDef::rule("reduceSeqInitFusion", "op(x)(reduceSeq(fun(a, y => op(a)(e)))(init)(ys)) -> reduceSeq(fun(a, y => op(a)(e)))(x)(ys)", reduce_seq_init_fusion)
        .note("op add/mul, init neutral")
        .bias(Prim::ReduceSeq)
        .example("fun(x: f32, ys: 4.f32 => x + (ys |> reduceSeq(fun(a, y => a + y * y), 0.0)))"),
    RuleDef::rule("liftReduce", "map(fun(v => R(op)(init)(e)))(xs) -> R(fun(acc, y => map(fun(q => op(fst(q))(snd(q))))(zip(acc)(y))))(generate(fun(i => init)))(transpose(map(fun(v => e))(xs)))", lift_reduce)
        .note("v not in op")
        .bias(Prim::Reduce)
        .example("fun(m: 3.4.f32, w: 4.f32 => (m |> map(fun(r => r |> reduce(add, 0.0))), (m |> map(fun(r => zip(r, w) |> reduceSeq(fun(a, p => a + fst(p) * snd(p)), 0.0))), m |> map(fun(r => r |> reduceSeq(fun(a, x => a + x), r |> reduce(max, 0.0)))))))"),
    RuleDef::rule("reduceMap", "R(fun(acc, y => map(fun(q => op(fst(q))(snd(q))))(zip(acc)(y))))(generate(fun(i => init)))(transpose(xs)) -> map(fun(v => R(op)(init)(v)))(xs)", reduce_map)
        .example("fun(m: 3.4.f32 => m |> transpose |> reduce(fun(acc, y => zip(acc, y) |> map(fun(q => fst(q) + snd(q)))), generate(fun(i => 0.0))))"),
    RuleDef::equation("reduceSeqMapFusion", "reduceSeq(op)(init)(map(f)(xs)) -> reduceSeq(fun(acc => fun(y => op(acc)(f(y)))))(init)(xs)")
        .example("fun(xs: 4.f32 => xs |> map(neg) |> reduceSeq(add, 0.0))")
        .sets(LOWERING),
    RuleDef::equation("reduceMapToSeq", "reduce(op)(init)(map(f)(xs)) -> reduceSeq(fun(acc => fun(y => op(acc)(f(y)))))(init)(xs)")
        .example("fun(xs: 4.f32 => xs |> map(neg) |> reduce(add, 0.0))")
        .sets(LOWERING),
    RuleDef::equation("addReduceSeq", "add(x)(reduceSeq(add)(0.0)(ys)) -> reduceSeq(add)(x)(ys)")
        .example("fun(x: f32, ys: 4.f32 => x + (ys |> reduceSeq(add, 0.0)))"),
    RuleDef::equation("addReduceSeqInit", "add(x)(reduceSeq(fun(a => fun(p => add(a)(e))))(0.0)(ys)) -> reduceSeq(fun(b => fun(p => add(b)(e))))(x)(ys)")
        .example("fun(x: f32, ys: 4.f32 => x + (ys |> reduceSeq(fun(a, y => a + y * y), 0.0)))"),
    RuleDef::equation("addReduce", "add(x)(reduce(add)(0.0)(ys)) -> reduceSeq(add)(x)(ys)")
        .example("fun(x: f32, ys: 4.f32 => x + (ys |> reduce(add, 0.0)))"),
    RuleDef::equation("liftReduceSeqInit", "map(fun(v => reduceSeq(op)(init)(e)))(xs) -> reduceSeq(fun(acc => fun(y => map(fun(q => op(fst(q))(snd(q))))(zip(acc)(y)))))(map(fun(v => init))(xs))(transpose(map(fun(v => e))(xs)))")
        .example("fun(m: 3.4.f32 => m |> map(fun(r => r |> reduceSeq(add, r |> reduce(max, 0.0)))))"),
    RuleDef::equation("liftReduceSeq", "map(fun(v => reduceSeq(op)(init)(e)))(xs) -> reduceSeq(fun(acc => fun(y => map(fun(q => op(fst(q))(snd(q))))(zip(acc)(y)))))(generate(fun(i => init)))(transpose(map(fun(v => e))(xs)))")
        .example("fun(m: 3.4.f32 => m |> map(fun(r => r |> reduceSeq(add, 0.0))))"),
    RuleDef::sized_equation(
        "blockedSum",
        &[Param::size("n")],
        "reduce(add)(0.0)(xs) -> reduceSeq(fun(acc => fun(y => add(acc)(reduce(add)(0.0)(y)))))(0.0)(split(n)(xs))",
    )
    .note("an f32 sum in blocks of n")
    .bias(Prim::Reduce)
    .example("fun(xs: 8.f32 => xs |> reduce(add, 0.0))")
    .typical(&[4]),
];
