//! The vectorized reduction: a reduction over `len` scalars becomes a reduction over
//! `len/n` vectors of `n` lanes (each lane accumulates every `n`-th element, in a
//! vector register), then a reduction of the `n` lanes (the horizontal reduction).

use super::catalogue::{Param, RuleDef};
use super::lowering::{as_vectors, on_vectors, scalar_tree, vectorizable};
use super::pattern::{applied, call};
use super::reduction::{lambda2, mentions, neutral, operator, operator_and_work, reduction};
use crate::nat::Nat;
use crate::prim::Prim;
use crate::term::{Expr, Ident, Term};
use crate::types::{Type, TypeKind};
use elevate_core::{Name, NameSupply, Rule, Strategy};

/// A reduction read as `R(fun(a, y => op(a)(e)))(init)(xs)`: the operator, the start,
/// the array, and the work `e` done on each element `y`.
struct Parts {
    op: Prim,
    init: Term,
    xs: Term,
    y: Ident,
    e: Term,
}

/// Whether lanes may start from `init` and the lanes' results be combined starting
/// from `init` again: `init` is neutral for `add` and `mul`; `max` and `min` may
/// take any start twice (a literal or a variable, so that nothing is computed twice).
fn restartable(op: Prim, init: &Term) -> bool {
    match op {
        Prim::Add | Prim::Mul => neutral(op, init),
        Prim::Max | Prim::Min => matches!(init.expr(), Expr::Literal(_) | Expr::Var(_)),
        _ => false,
    }
}

/// `t` as a reduction that can be vectorized, in any of its three forms:
/// `R(fun(a, y => op(a)(e)))(init)(xs)` (a reduction fused with the work on each
/// element), `R(op)(init)(map(fun(y => e))(xs))`, and `R(op)(init)(xs)` (`e` is `y`).
fn parts(t: &Term, names: &mut NameSupply) -> Option<Parts> {
    let (r, args) = reduction(t)?;
    if r == Prim::ReduceSeqUnroll {
        return None;
    }
    let init = args[1].clone();
    if let Some(op) = operator(&args[0]) {
        if let Some((_, m)) = applied(&args[2], Prim::Map, 2) {
            if let Expr::Lambda(y, None, e) = m[0].expr() {
                if mentions(e, y) && vectorizable(e, y) {
                    return Some(Parts {
                        op,
                        init,
                        xs: m[1].clone(),
                        y: y.clone(),
                        e: e.clone(),
                    });
                }
            }
        }
        let y = Ident::supplied(names, "y");
        return Some(Parts {
            op,
            init,
            xs: args[2].clone(),
            e: Term::var(&y),
            y,
        });
    }
    let (y, op, e) = operator_and_work(&args[0])?;
    // `fuseReduceMap` leaves the mapped function applied to the element,
    // `fun(p => body)(y)`: the work is `body` on the element `p`.
    let (y, e) = match e.expr() {
        Expr::App(f, arg) => match (f.expr(), arg.expr()) {
            (Expr::Lambda(p, None, body), Expr::Var(v)) if v.id == y.id && !mentions(body, y) => {
                (p, body)
            }
            _ => (y, e),
        },
        _ => (y, e),
    };
    Some(Parts {
        op: operator(op)?,
        init,
        xs: args[2].clone(),
        y: y.clone(),
        e: e.clone(),
    })
}

/// `vectorizeReduce(n)`: see [`vectorize_reduce`].
struct VectorizeReduce(i64);

impl Rule<Term> for VectorizeReduce {
    fn name(&self) -> Name {
        Name::new("vectorizeReduce")
    }

    fn rewrite(&self, t: &Term, names: &mut NameSupply) -> Option<Term> {
        let n = self.0;
        let p = parts(t, names)?;
        let TypeKind::Array(len, elem) = p.xs.ty()?.kind() else {
            return None;
        };
        if n <= 1
            || len.as_const().is_some_and(|l| l % n != 0 || l < n)
            || !scalar_tree(elem)
            || !matches!(t.ty()?.kind(), TypeKind::Scalar(_))
            || !restartable(p.op, &p.init)
            // Without the element, the lanes' width cannot be inferred.
            || !mentions(&p.e, &p.y)
            || !vectorizable(&p.e, &p.y)
        {
            return None;
        }
        let (acc, v, i) = (
            Ident::supplied(names, "acc"),
            Ident::supplied(names, "v"),
            Ident::supplied(names, "i"),
        );
        let step = lambda2(
            acc.clone(),
            p.y.clone(),
            Term::apps(Term::prim(p.op), [Term::var(&acc), on_vectors(&p.e, &p.y)]),
        );
        let lanes = call(
            Prim::ReduceSeq,
            &[],
            [
                step,
                call(Prim::VectorFromScalar, &[], [p.init.clone()]),
                as_vectors(p.xs.clone(), elem, n),
            ],
        );
        // The vector as an array of one vector, read lane by lane: its binder's type
        // says that there is one.
        let one = Term::new(Expr::Lambda(
            i,
            Some(Type::index(Nat::cst(1))),
            Term::var(&v),
        ));
        let horizontal = call(
            Prim::ReduceSeqUnroll,
            &[],
            [
                Term::prim(p.op),
                p.init,
                call(Prim::AsScalar, &[], [call(Prim::Generate, &[], [one])]),
            ],
        );
        let result = call(Prim::Let, &[], [lanes, Term::lambda(v, horizontal)]);
        super::typing::typed_result(t, result)
    }

    fn write_text(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "vectorizeReduce({})", self.0)
    }
}

/// `vectorizeReduce(n)`:
/// `R(fun(a, y => op(a)(e)))(init)(xs) -> let(reduceSeq(fun(acc, y => op(acc)(e')))(vectorFromScalar(init))(V(xs)))(fun(v => reduceSeqUnroll(op)(init)(asScalar(generate(fun(i: idx[1] => v))))))`
/// for `R` = `reduce` or `reduceSeq`, also written `R(op)(init)(map(fun(y => e))(xs))`
/// or `R(op)(init)(xs)` (then `e` is `y`): lane `j` of a vector accumulator `v`
/// reduces the elements `j`, `j + n`, `j + 2n`, ... of `xs`, then the `n` lanes of
/// `v` are reduced (the horizontal reduction, unrolled; `generate` makes `v` an array
/// of one vector for `asScalar` to read lane by lane, and `let` computes `v` once, in
/// registers). `V(xs)` is `xs` as vectors of `n` (as [`super::vectorize`] makes them,
/// through `unzip`/`zip` for pairs), `e'` is `e` on vectors (other scalars broadcast).
/// Conditions: `op` is `add` or `mul` with a neutral `init`, or `max` or `min` (whose
/// start may be taken twice; a literal or a variable); `e` computes lane-wise on the
/// element `y` (scalars or pairs of them) and does not use `a`; `n` divides the
/// length. As with [`super::blocked_reduce`], floating-point sums are reassociated.
pub fn vectorize_reduce(n: i64) -> Strategy<Term> {
    super::catalogue::sized("vectorizeReduce", n)
}

/// [`vectorize_reduce`] without checking the argument.
fn vectorize_reduce_unchecked(n: i64) -> Strategy<Term> {
    Strategy::from_rule(VectorizeReduce(n))
}

/// The rules of this module, for the [catalogue](super::catalogue).
pub(super) const RULES: &[RuleDef] = &[RuleDef::sized(
    "vectorizeReduce",
    &[Param::width("n")],
    "R(fun(a, y => op(a)(e)))(init)(xs) -> let(reduceSeq(fun(acc, y => op(acc)(e on vectors)))(vectorFromScalar(init))(V(xs)))(fun(v => reduceSeqUnroll(op)(init)(asScalar(generate(fun(i: idx[1] => v))))))",
    vectorize_reduce_unchecked,
)
.note("R reduce or reduceSeq, also R(op)(init)(map(fun(y => e))(xs)) and R(op)(init)(xs); op add/mul with init neutral, or max/min; e lane-wise on y; n divides the length")
.bias(Prim::Reduce)
.example("fun(a: 8.f32, b: 8.f32, xs: 8.f32 => (zip(a, b) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0), (xs |> reduceSeq(fun(acc, x => acc + x * 2.0), 0.0), xs |> reduce(max, 0.0))))")
.typical(&[4])];

#[cfg(test)]
mod tests {
    use super::super::test_support::rewrite;
    use super::*;

    #[test]
    fn a_dot_product_becomes_a_sum_of_vectors_then_of_lanes() {
        let dot =
            "fun(ab: 16.(f32, f32) => ab |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0))";
        let out = rewrite(vectorize_reduce(4), dot).unwrap();
        assert!(out.contains("asVector(4)"), "{out}");
        assert!(out.contains("vectorFromScalar(0.0)"), "{out}");
        assert!(out.contains("generate(fun(i: idx[1] => v))"), "{out}");
        assert!(out.contains("reduceSeqUnroll(add, 0.0)"), "{out}");
        // The fused form, as `fuseReduceMap` leaves it.
        let fused =
            "fun(ab: 16.(f32, f32) => ab |> reduceSeq(fun(acc, p => acc + fst(p) * snd(p)), 0.0))";
        assert_eq!(rewrite(vectorize_reduce(4), fused).unwrap(), out);
        // As `fuseReduceMap` leaves it, the mapped function applied to the element.
        let after_fusion = rewrite(super::super::fuse_reduce_map() >> vectorize_reduce(4), dot);
        assert!(after_fusion.is_some_and(|t| t.contains("fst(p) * snd(p)")));
    }

    #[test]
    fn it_needs_a_width_that_divides_a_restartable_operator_and_lane_wise_work() {
        let cases = [
            // 4 does not divide 6.
            "fun(x: 6.f32 => x |> reduce(add, 0.0))",
            // A sum from 1: each lane would add it.
            "fun(x: 8.f32 => x |> reduce(add, 1.0))",
            // Subtraction is not associative.
            "fun(x: 8.f32 => x |> reduceSeq(fun(a, y => a - y), 0.0))",
            // The work reads the accumulator.
            "fun(x: 8.f32 => x |> reduceSeq(fun(a, y => a + a * y), 0.0))",
            // Already unrolled.
            "fun(x: 8.f32 => x |> reduceSeqUnroll(add, 0.0))",
            // Not on scalars.
            "fun(x: 8.4.f32 => x |> reduce(fun(a, r => zip(a, r) |> map(fun(p => fst(p) + snd(p)))), generate(fun(i => 0.0))))",
        ];
        for case in cases {
            assert_eq!(rewrite(vectorize_reduce(4), case), None, "{case}");
        }
        assert!(rewrite(
            vectorize_reduce(4),
            "fun(x: 8.f32 => x |> reduce(max, 3.0))"
        )
        .is_some());
    }
}
