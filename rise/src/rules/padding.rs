//! Padding to sizes that tiles divide, as BLAS pads its packed edge blocks: a map over
//! an array whose length the tile does not divide computes over the array padded with
//! zeros to the next multiple, and keeps its first elements. The padded elements are
//! computed and dropped, so the values are exactly those of the map; every tile is a
//! whole one, and the tiling strategies that need divisibility apply.
//!
//! - `padMap(q)`: one map;
//! - `padNest(q1, q2)`: a nest of two maps (a matrix product's rows and columns), its
//!   padded result stored in memory once and read back through `take`s, so that the
//!   loops of the padded nest are the only loops of the computation (the copy of the
//!   result is a kernel of its own).

use super::catalogue::{Param, RuleDef};
use super::pattern::{applied, call, rule_with_names};
use crate::nat::Nat;
use crate::prim::Prim;
use crate::term::{Expr, Ident, Literal, Term};
use crate::types::{Scalar, Type, TypeKind};
use elevate_core::{NameSupply, Strategy, Traversable};

/// `padMap(q)`: `map(f)(xs) -> take(n)(map(f)(padCst(0, p, zero)(xs)))` for `xs : n.t`
/// with a constant `n` that `q` does not divide, `p` the padding to the next multiple
/// of `q` and `zero` the zero of `t`. Fails where `q` divides `n`, and where `f` could
/// fail on zeros (integer division or remainder, an index computed from data).
///
/// ```
/// use elevate_rise::{parse_term, print_term, infer, rules::pad_map};
/// use elevate_core::Context;
/// let t = infer(&parse_term("fun(xs: 10.f32 => xs |> map(fun(x => x * 2.0)))").unwrap()).unwrap();
/// let padded = pad_map(4).apply(&t, &mut Context::default());
/// assert!(padded.is_err(), "the map is not the root");
/// let map = elevate_rise::rules::pad_map(4);
/// let s = elevate_strategies::top_down(map);
/// let padded = s.apply(&t, &mut Context::default()).unwrap();
/// assert!(print_term(&padded).contains("padCst(0, 2, 0.0) |> map"));
/// ```
pub fn pad_map(q: i64) -> Strategy<Term> {
    super::catalogue::sized("padMap", q)
}

fn pad_map_unchecked(q: i64) -> Strategy<Term> {
    rule_with_names("padMap", move |t: &Term, names: &mut NameSupply| {
        let (_, args) = applied(t, Prim::Map, 2)?;
        let (f, xs) = (&args[0], &args[1]);
        let (n, elem) = constant_array(xs)?;
        let p = padding(n, q)?;
        if !total_on_zeros(f) {
            return None;
        }
        let padded = pad_end(p, zero(&elem, names)?, xs.clone());
        Some(take(n, call(Prim::Map, &[], [f.clone(), padded])))
    })
}

/// `padNest(q1, q2)`: a nest `map(fun(x => map(g)(ys)))(xs)` (`ys` independent of `x`)
/// whose sizes `n` and `m` the tiles `q1` and `q2` do not both divide becomes
/// `take(n)(transpose(take(m)(transpose(toMem(map(fun(x => map(g)(ys')))(xs'))))))`
/// with `xs'` and `ys'` padded with zeros to the next multiples of `q1` and `q2` (the
/// `take`s and `padCst`s of a dimension that divides left out). The padded nest is
/// stored in memory, so that its loops are whole tiles and the `take`s read its first
/// rows and columns (a copy); the `take` of columns is between transposes, so that the
/// outermost map of the result is the padded nest's.
pub fn pad_nest(q1: i64, q2: i64) -> Strategy<Term> {
    let name = format!("padNest({q1}, {q2})");
    if q1 < 1 || q2 < 1 {
        return super::catalogue::invalid(name, "tile sizes are at least 1".into());
    }
    rule_with_names(name, move |t: &Term, names: &mut NameSupply| {
        let (_, outer) = applied(t, Prim::Map, 2)?;
        let (f, xs) = (&outer[0], &outer[1]);
        let Expr::Lambda(x, _, body) = f.expr() else {
            return None;
        };
        let (_, inner) = applied(body, Prim::Map, 2)?;
        let (g, ys) = (&inner[0], &inner[1]);
        if ys.has_free(x.id) || !total_on_zeros(f) {
            return None;
        }
        let ((n, row), (m, column)) = (constant_array(xs)?, constant_array(ys)?);
        let (p1, p2) = (padding(n, q1).unwrap_or(0), padding(m, q2).unwrap_or(0));
        if p1 == 0 && p2 == 0 {
            return None;
        }
        let pad = |p, elem: &Type, array: &Term, names: &mut NameSupply| {
            Some(if p == 0 {
                array.clone()
            } else {
                let padded = pad_end(p, zero(elem, names)?, array.clone());
                call(Prim::ToMem, &[], [padded])
            })
        };
        let ys = pad(p2, &column, ys, names)?;
        let xs = pad(p1, &row, xs, names)?;
        let body = call(Prim::Map, &[], [g.clone(), ys]);
        let lambda = Term::lambda(x.clone(), body);
        let nest = call(Prim::ToMem, &[], [call(Prim::Map, &[], [lambda, xs])]);
        let columns = if p2 == 0 {
            nest
        } else {
            let transpose = |e| call(Prim::Transpose, &[], [e]);
            transpose(take(m, transpose(nest)))
        };
        Some(if p1 == 0 { columns } else { take(n, columns) })
    })
}

/// The length and element type of an array of constant length at least 1.
fn constant_array(xs: &Term) -> Option<(i64, Type)> {
    match xs.ty()?.kind() {
        TypeKind::Array(n, elem) => Some((n.as_const().filter(|n| *n >= 1)?, elem.clone())),
        _ => None,
    }
}

/// The elements to add to `n` for `q` to divide it, if any are needed.
fn padding(n: i64, q: i64) -> Option<i64> {
    (q > 1 && n % q != 0).then(|| q - n % q)
}

fn take(n: i64, x: Term) -> Term {
    call(Prim::Take, &[Nat::cst(n)], [x])
}

/// `padCst(0, p, c)(xs)`
fn pad_end(p: i64, c: Term, xs: Term) -> Term {
    call(Prim::PadCst, &[Nat::cst(0), Nat::cst(p)], [c, xs])
}

/// The zero of a scalar, or an array of zeros (`generate(fun(i => zero))`), or a pair
/// of zeros. Built with an explicit stack: a type 100,000 levels deep has a zero as
/// deep, without recursion.
fn zero(ty: &Type, names: &mut NameSupply) -> Option<Term> {
    enum Task<'a> {
        Visit(&'a Type),
        Generate,
        Pair,
    }
    let mut tasks = vec![Task::Visit(ty)];
    let mut built: Vec<Term> = Vec::new();
    while let Some(task) = tasks.pop() {
        match task {
            Task::Visit(t) => match t.kind() {
                TypeKind::Scalar(s) => built.push(Term::literal(match s {
                    Scalar::Bool => Literal::Bool(false),
                    Scalar::I32 => Literal::I32(0),
                    Scalar::I64 => Literal::I64(0),
                    Scalar::F32 => Literal::F32(0.0),
                    Scalar::F64 => Literal::F64(0.0),
                })),
                TypeKind::Array(n, elem) => {
                    n.as_const()?;
                    tasks.push(Task::Generate);
                    tasks.push(Task::Visit(elem));
                }
                TypeKind::Pair(a, b) => {
                    tasks.push(Task::Pair);
                    tasks.push(Task::Visit(b));
                    tasks.push(Task::Visit(a));
                }
                _ => return None,
            },
            Task::Generate => {
                let elem = built.pop()?;
                let i = Ident::supplied(names, "i");
                built.push(call(Prim::Generate, &[], [Term::lambda(i, elem)]));
            }
            Task::Pair => {
                let (b, a) = (built.pop()?, built.pop()?);
                built.push(call(Prim::MakePair, &[], [a, b]));
            }
        }
    }
    built.pop()
}

/// Whether `f` computes on zeros without failing: no integer division or remainder
/// (by zero), no index computed from data (out of its range).
fn total_on_zeros(f: &Term) -> bool {
    let mut pending = vec![f];
    while let Some(t) = pending.pop() {
        // An index from a constant is in its range or fails without the padding too.
        if let Some((_, arg)) = applied(t, Prim::NatAsIndex, 1) {
            if matches!(arg[0].expr(), Expr::Literal(_)) {
                continue;
            }
        }
        match t.expr() {
            Expr::Prim(Prim::Div | Prim::Mod) if !float_operator(t) => return false,
            Expr::Prim(Prim::NatAsIndex) => return false,
            _ => pending.extend((0..t.arity()).map(|i| t.child(i))),
        }
    }
    true
}

/// Whether the primitive `t` (`div` or `mod`) works on floats (by its type).
fn float_operator(t: &Term) -> bool {
    let Some(ty) = t.ty() else {
        return false;
    };
    match ty.kind() {
        TypeKind::Fun(a, _) => matches!(a.kind(), TypeKind::Scalar(s) if s.is_float()),
        _ => false,
    }
}

/// The rules of this module, for the [catalogue](super::catalogue).
pub(super) const RULES: &[RuleDef] = &[RuleDef::sized(
    "padMap",
    &[Param::width("q")],
    "map(f)(xs) -> take(n)(map(f)(padCst(0, p, zero)(xs)))",
    pad_map_unchecked,
)
.note("xs : n.t with q not dividing n, p = q - n mod q; f may not divide integers or compute indices (it runs on the zeros)")
.bias(Prim::Map)
.example("fun(x: 6.f32 => x |> map(fun(v => v * 2.0)))")
.typical(&[4])];

/// Registers `padNest(q1, q2)` in the strategy language (`padMap(q)` is in the
/// catalogue).
pub(super) fn register(r: &mut elevate_strategies::text::Registry<Term>) {
    r.add(
        "padNest",
        "(q1, q2)",
        "a nest of two maps computed on its arrays padded with zeros to multiples of q1 and q2, stored in memory, its first rows and columns kept: take(n)(transpose(take(m)(transpose(toMem(padded nest)))))",
        |a| match super::sizes(a, 0)?.as_slice() {
            [q1, q2] => Ok(pad_nest(*q1, *q2)),
            s => Err(elevate_strategies::text::ArgError::invalid(
                None,
                format!("expects 2 sizes (q1, q2), found {}", s.len()),
            )),
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{infer, interp, io, parse_term, print_term, NatEnv};
    use elevate_core::Context;
    use elevate_strategies::top_down;

    fn typed(text: &str) -> Term {
        infer(&parse_term(text).unwrap()).unwrap()
    }

    const MATMUL: &str = "fun(a: 5.3.f32, b: 3.6.f32 => a |> map(fun(r =>
        transpose(b) |> map(fun(c => zip(r, c) |> map(fun(p => fst(p) * snd(p)))
        |> reduce(add, 0.0))))))";

    #[test]
    fn a_nest_is_padded_where_its_tiles_do_not_divide_and_keeps_its_values() {
        let t = typed(MATMUL);
        let padded = top_down(pad_nest(4, 4))
            .apply(&t, &mut Context::default())
            .unwrap();
        let text = print_term(&padded);
        // 5 rows to 8, 6 columns to 8; the padded arrays and the product in memory.
        assert!(text.contains("padCst(0, 3, generate(fun("), "{text}");
        assert!(text.contains("padCst(0, 2, generate(fun("), "{text}");
        assert!(
            text.contains("toMem |> transpose |> take(6) |> transpose |> take(5)"),
            "{text}"
        );
        assert_eq!(padded.ty(), t.ty());
        let nats = NatEnv::default();
        let inputs = io::random_inputs(&io::signature(&t), &nats, 1).unwrap();
        let run = |t: &Term| {
            interp::evaluate(t, &nats, &inputs)
                .unwrap()
                .to_json()
                .unwrap()
        };
        assert_eq!(run(&padded), run(&t));
        // Tiles that divide: nothing to do.
        assert!(top_down(pad_nest(5, 3))
            .apply(&t, &mut Context::default())
            .is_err());
        // Only the columns: no `take` of rows.
        let columns = top_down(pad_nest(5, 4))
            .apply(&t, &mut Context::default())
            .unwrap();
        assert!(!print_term(&columns).contains("take(5)"));
    }

    #[test]
    fn zeros_of_deep_and_paired_types_are_built_without_recursion() {
        let mut ty = Type::scalar(Scalar::F32);
        for _ in 0..100_000 {
            ty = Type::new(TypeKind::Array(Nat::cst(1), ty));
        }
        let deep = zero(&ty, &mut NameSupply::default()).unwrap();
        // generate(fun(i => generate(fun(i2 => ... 0.0)))), one level per array.
        let mut depth = 0;
        let mut t = &deep;
        while let Expr::App(_, f) = t.expr() {
            let Expr::Lambda(_, _, body) = f.expr() else {
                break;
            };
            t = body;
            depth += 1;
        }
        assert_eq!(depth, 100_000);
        assert!(matches!(t.expr(), Expr::Literal(Literal::F32(_))));
        let pair = Type::pair(Type::scalar(Scalar::I32), Type::scalar(Scalar::F32));
        let zero = zero(&pair, &mut NameSupply::default()).unwrap();
        assert_eq!(print_term(&zero), "(0, 0.0)");
    }

    #[test]
    fn a_map_that_could_fail_on_zeros_is_not_padded() {
        let divides = typed("fun(xs: 6.i32 => xs |> map(fun(x => 12 / x)))");
        assert!(top_down(pad_map(4))
            .apply(&divides, &mut Context::default())
            .is_err());
        let floats = typed("fun(xs: 6.f32 => xs |> map(fun(x => 1.0 / x)))");
        let padded = top_down(pad_map(4))
            .apply(&floats, &mut Context::default())
            .unwrap();
        assert!(print_term(&padded).contains("padCst(0, 2, 0.0)"));
        let indexed =
            typed("fun(xs: 6.i64, ys: 4.f32 => xs |> map(fun(x => ys |> idx(natAsIndex(4, x)))))");
        assert!(top_down(pad_map(4))
            .apply(&indexed, &mut Context::default())
            .is_err());
        let constant = typed("fun(xs: 6.f32, ys: 4.f32 => xs |> map(fun(x => x + (ys |> idx(natAsIndex(4, 2i64))))))");
        assert!(top_down(pad_map(4))
            .apply(&constant, &mut Context::default())
            .is_ok());
    }
}
