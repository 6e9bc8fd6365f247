//! Terms to symbolic values: each primitive as an index function, a recorded loop, or
//! an expression.

use super::eval::{
    not_structured, sfun, size, Inline, LoopKind, Materialize, NotStructured, ScalarExpr,
    Structuring, SymArray, SymValue, SymbolicEvaluator,
};
use super::index::Aff;
use super::scalar::{can_trap, safe_divisor, ExprRef};
use super::views::{concat, reshaped};
use crate::loop_program::env::{bind, lookup};
use crate::loop_program::MAX_VECTOR_LANES;
use crate::prim::{Iteration, Makes, Prim, Schedule};
use crate::term::{Expr, Literal, Term};
use crate::types::{Scalar, Type, TypeKind};
use crate::view::Reshape;
use crate::Span;
use elevate_core::stack::guard;
use std::rc::Rc;

pub type Env = crate::loop_program::env::Env<SymValue>;

fn untyped() -> NotStructured {
    NotStructured::new("an untyped term")
}

/// The most unrolled iterations of one loop: beyond it, unrolling would only bloat the
/// code, and the loop runs as written without it.
const MAX_UNROLL: i64 = 1024;

/// The kind of a loop of `trips` iterations the program unrolls: `unroll`, or `plain`
/// beyond [`MAX_UNROLL`].
fn unrolled(trips: i64, unroll: LoopKind, plain: LoopKind) -> LoopKind {
    if trips > MAX_UNROLL {
        plain
    } else {
        unroll
    }
}

/// The loop recorded for a loop primitive that iterates as `it` (its nat arguments
/// `nats`) over `trips` elements. A `reduce` not lowered yet is a sequential one.
fn recorded_loop(it: Iteration, nats: &[i64], trips: i64) -> Structuring<LoopKind> {
    let accumulates = match it.makes {
        Makes::Elements => false,
        Makes::Accumulation => true,
        Makes::Prefixes => return not_structured("a scan"),
    };
    Ok(match (it.schedule, accumulates) {
        (Schedule::Unlowered | Schedule::Sequential, false) => LoopKind::Seq,
        (Schedule::Unlowered | Schedule::Sequential, true) => LoopKind::Reduce,
        (Schedule::Unrolled, false) => unrolled(trips, LoopKind::Unroll, LoopKind::Seq),
        (Schedule::Unrolled, true) => unrolled(trips, LoopKind::ReduceUnroll, LoopKind::Reduce),
        (Schedule::Parallel, false) => LoopKind::Par,
        (Schedule::Gpu(level), false) => {
            let Ok(dim @ 0..=2) = u8::try_from(nats[0]) else {
                return not_structured(format!("a GPU dimension of {}", nats[0]));
            };
            LoopKind::Gpu(level, dim)
        }
        (Schedule::Parallel | Schedule::Gpu(_), true) => {
            return not_structured("a reduction across threads")
        }
    })
}

/// `n` lanes, if the bridge generates vectors that wide.
fn lanes(n: i64) -> Structuring<i64> {
    if (1..=MAX_VECTOR_LANES).contains(&n) {
        Ok(n)
    } else {
        not_structured(format!("a vector of {n} lanes"))
    }
}

/// `n`, a size the program divides by, if it is positive.
fn positive(n: i64) -> Structuring<i64> {
    if n > 0 {
        Ok(n)
    } else {
        not_structured(format!("a size of {n} where a positive one is needed"))
    }
}

impl SymbolicEvaluator {
    /// The value of `t`: as deep as the program (100,000 nested applications are
    /// normal), on a stack that grows.
    pub fn expr(&mut self, t: &Term, env: &Env, m: &mut dyn Materialize) -> Structuring<SymValue> {
        guard(|| self.term(t, env, m))
    }

    fn term(&mut self, t: &Term, env: &Env, m: &mut dyn Materialize) -> Structuring<SymValue> {
        match t.expr() {
            Expr::Var(x) => lookup(env, x.id)
                .ok_or_else(|| NotStructured::new(format!("`{}` is unbound", x.name))),
            Expr::Literal(l) => Ok(SymValue::Scalar(ScalarExpr::Lit(*l).shared())),
            Expr::Lambda(x, _, body) => {
                let (x, body, env) = (x.id, body.clone(), env.clone());
                // Materialization happens at the top level only, never inside a
                // function (whose body is evaluated where it is called).
                Ok(sfun(move |ex, arg| {
                    ex.expr(&body, &bind(&env, x, arg), &mut Inline)
                }))
            }
            Expr::App(f, a) => {
                // `toMem` at the top level materializes: see `top_level`.
                if let Some((p, args)) = top_level_materialization(t) {
                    return self.top_level(p, &args, env, m);
                }
                if let Some(value) = self.saturated_primitive(t, env, m) {
                    return value;
                }
                let f = self.expr(f, env, m)?;
                let a = self.expr(a, env, m)?;
                self.apply(&f, a)
            }
            Expr::Annotation(e, _) => self.expr(e, env, m),
            Expr::Array(items) if (1..=MAX_LITERAL_ITEMS).contains(&items.len()) => {
                // Each item a part of the array, as `concat` has: written into its row
                // by a kernel of its own.
                let parts = items
                    .iter()
                    .map(|item| {
                        let value = self.expr(item, env, m)?;
                        Ok(SymArray::new(1, move |_, _| Ok(value.clone())))
                    })
                    .collect::<Structuring<Vec<SymArray>>>()?;
                Ok(SymValue::Array(balanced_concat(parts)))
            }
            Expr::Prim(_) | Expr::NatApp(..) => self.primitive(t),
            _ => not_structured(format!("`{t}`")),
        }
    }

    /// `toMem(x)` at the top level materializes `x` into a buffer of its own;
    /// `let(x)(fun(y => body))` evaluates `body` at the top level too (so that its
    /// `toMem`s materialize), with `y` bound to `x`'s value.
    fn top_level(
        &mut self,
        p: Prim,
        args: &[Term],
        env: &Env,
        m: &mut dyn Materialize,
    ) -> Structuring<SymValue> {
        let value = self.expr(&args[0], env, m)?;
        match (p, args.get(1).map(Term::expr)) {
            (p, _) if p.stores() => match value {
                SymValue::Array(_) if self.depth == 0 => {
                    let ty = args[0].ty().ok_or_else(untyped)?;
                    m.materialize(self, value, ty)
                }
                v if p == Prim::ToShared => Ok(staged(v)),
                v => Ok(v),
            },
            (_, Some(Expr::Lambda(x, _, body))) => self.expr(body, &bind(env, x.id, value), m),
            _ => {
                let f = self.expr(&args[1], env, m)?;
                self.apply(&f, value)
            }
        }
    }

    /// `p(nats...)(values...)` with at least as many values as `p` takes, applied at
    /// once (as its curried function would be, one value after the other, without
    /// making the function of each prefix); `None` for any other term.
    fn saturated_primitive(
        &mut self,
        t: &Term,
        env: &Env,
        m: &mut dyn Materialize,
    ) -> Option<Structuring<SymValue>> {
        let (head, args) = t.value_arguments();
        let (prim, nat_args) = head.nat_arguments();
        let Expr::Prim(p) = prim.expr() else {
            return None;
        };
        let (p, arity) = (*p, p.value_arity());
        if arity == 0 || args.len() < arity {
            return None;
        }
        let apply = || {
            let nats = nat_args
                .into_iter()
                .map(size)
                .collect::<Structuring<Vec<_>>>()?;
            let mut ty = head.ty().ok_or_else(untyped)?;
            let mut values = Vec::with_capacity(arity);
            for arg in &args[..arity] {
                values.push(self.expr(arg, env, m)?);
                ty = match ty.kind() {
                    TypeKind::Fun(_, r) => r,
                    _ => return not_structured("untyped primitive"),
                };
            }
            let mut value = self.apply_primitive(p, &nats, values, ty, head.span())?;
            for arg in &args[arity..] {
                let x = self.expr(arg, env, m)?;
                value = self.apply(&value, x)?;
            }
            Ok(value)
        };
        Some(apply())
    }

    /// A primitive with its nat arguments, as a curried function of its values.
    fn primitive(&mut self, t: &Term) -> Structuring<SymValue> {
        let (head, nat_args) = t.nat_arguments();
        let nats = nat_args
            .into_iter()
            .map(size)
            .collect::<Structuring<Vec<_>>>()?;
        let Expr::Prim(p) = head.expr() else {
            return not_structured("a nat argument of something other than a primitive");
        };
        let ty = t.ty().cloned().ok_or_else(untyped)?;
        Ok(curried(*p, Rc::new(nats), ty, t.span(), Vec::new()))
    }
}

/// The most items of an array literal written item by item (a kernel each).
const MAX_LITERAL_ITEMS: usize = 256;

/// The concatenation of `parts`, as a balanced tree (as deep as the logarithm of
/// their number).
fn balanced_concat(mut parts: Vec<SymArray>) -> SymArray {
    while parts.len() > 1 {
        let mut pairs = Vec::with_capacity(parts.len().div_ceil(2));
        let mut it = parts.into_iter();
        while let Some(a) = it.next() {
            pairs.push(match it.next() {
                Some(b) => concat(a, b),
                None => a,
            });
        }
        parts = pairs;
    }
    parts
        .pop()
        .unwrap_or_else(|| SymArray::new(0, |_, _| not_structured("an empty array")))
}

/// `toMem(x)` or `let(x)(f)`, fully applied: the primitive and its value arguments.
fn top_level_materialization(t: &Term) -> Option<(Prim, Vec<Term>)> {
    // Most applications are none: look at the head before collecting the arguments.
    let (mut head, mut arity) = (t, 0);
    while let Expr::App(f, _) = head.expr() {
        (head, arity) = (f, arity + 1);
    }
    match head.expr() {
        Expr::Prim(p) if (p.stores() && arity == 1) || (*p == Prim::Let && arity == 2) => {}
        _ => return None,
    }
    let (head, args) = t.value_arguments();
    let p = match head.expr() {
        // At the top level every address space is the same memory.
        Expr::Prim(p) if p.stores() && args.len() == 1 => *p,
        Expr::Prim(Prim::Let) if args.len() == 2 => Prim::Let,
        _ => return None,
    };
    Some((p, args.into_iter().cloned().collect()))
}

/// `v`, each buffer its elements read recorded as staged in shared memory
/// ([`SymbolicEvaluator::shared`]) when they are read.
fn staged(v: SymValue) -> SymValue {
    match v {
        SymValue::Array(arr) => SymValue::Array(SymArray::new(arr.len, move |ex, i| {
            let element = arr.at(ex, i)?;
            if let SymValue::Scalar(e) | SymValue::Vector { elem: e, .. } = &element {
                let mut loads = Vec::new();
                e.collect_loads(&mut loads);
                ex.shared.extend(loads.into_iter().map(|(b, _)| b));
            }
            Ok(staged(element))
        })),
        SymValue::Pair(a, b) => SymValue::Pair(Box::new(staged(*a)), Box::new(staged(*b))),
        other => other,
    }
}

/// `at`: where the primitive is in the program (the trap site of a `natAsIndex`).
fn curried(
    p: Prim,
    nats: Rc<Vec<i64>>,
    ty: Type,
    at: Option<Span>,
    args: Vec<SymValue>,
) -> SymValue {
    sfun(move |ex, arg| {
        let mut args = args.clone();
        args.push(arg);
        let rest = match ty.kind() {
            TypeKind::Fun(_, r) => r.clone(),
            _ => return not_structured("untyped primitive"),
        };
        if args.len() == p.value_arity() {
            ex.apply_primitive(p, &nats, args, &rest, at)
        } else {
            Ok(curried(p, nats.clone(), rest, at, args))
        }
    })
}

impl SymbolicEvaluator {
    fn apply_primitive(
        &mut self,
        p: Prim,
        nats: &[i64],
        args: Vec<SymValue>,
        ty: &Type,
        at: Option<Span>,
    ) -> Structuring<SymValue> {
        use Prim::*;
        match p {
            Id => Ok(args[0].clone()),
            Add | Sub | Mul | Div | Mod | Max | Min | Lt | Gt | Equal => {
                self.binary(p, &args[0], &args[1], at)
            }
            Neg | Not | Exp | Sqrt | Abs => lanewise_unary(&args[0], |x| ScalarExpr::Un(p, x)),
            Cast => match ty.kind() {
                TypeKind::Scalar(to) => lanewise_unary(&args[0], |x| ScalarExpr::Cast(x, *to)),
                _ => not_structured("a cast to something other than a scalar"),
            },
            // An index's value as a number: its position in the kernel's loops (an
            // index computed from data has no position there).
            IndexAsNat => match &args[0] {
                SymValue::Index(i) if i.vars().iter().all(|v| !self.data.contains_key(v)) => {
                    Ok(SymValue::Scalar(ScalarExpr::Position(i.clone()).shared()))
                }
                _ => not_structured("the number of an index computed from data"),
            },
            Concat => Ok(SymValue::Array(concat(args[0].array()?, args[1].array()?))),
            Select => match &args[0] {
                SymValue::Scalar(c) => self.pick(c, &args[1], &args[2]),
                _ => not_structured("`select` on a condition that is not a boolean"),
            },
            // Inside loops `toMem` only names a value; `let` binds it. `toShared`
            // marks the buffers it reads as staged in a GPU block's shared memory.
            ToShared => Ok(staged(args[0].clone())),
            ToMem | ToGlobal | ToPrivate => Ok(args[0].clone()),
            Let => self.apply(&args[1], args[0].clone()),
            Generate => {
                let TypeKind::Array(n, _) = ty.kind() else {
                    return not_structured("untyped generate");
                };
                let f = args[0].clone();
                Ok(SymValue::Array(SymArray::new(size(n)?, move |ex, i| {
                    ex.apply(&f, SymValue::Index(i.clone()))
                })))
            }
            Idx => match &args[0] {
                SymValue::Index(i) => args[1].array()?.at(self, i),
                _ => not_structured("an index computed from data"),
            },
            NatAsIndex => match &args[0] {
                SymValue::Scalar(x) if matches!(**x, ScalarExpr::Lit(Literal::I64(c)) if (0..nats[0]).contains(&c)) =>
                {
                    let ScalarExpr::Lit(Literal::I64(c)) = **x else {
                        unreachable!("a constant was matched")
                    };
                    Ok(SymValue::Index(Aff::cst(c)))
                }
                // A number from data: a variable of the indices it reaches, which the
                // kernel reads it for (checked there, as the interpreter checks it).
                SymValue::Scalar(x) if x.scalar() == Scalar::I64 && nats[0] > 0 => {
                    let v = self.data_index(x.clone(), nats[0], at);
                    Ok(SymValue::Index(Aff::var(v)))
                }
                _ => not_structured("an index computed from data"),
            },
            PadCst | PadClamp => {
                let (left, right) = (nats[0], nats[1]);
                let (with, xs) = match p {
                    PadCst => (Some(args[0].clone()), args[1].array()?),
                    _ => (None, args[0].array()?),
                };
                let len = xs.len;
                let reshape = match p {
                    PadCst => Reshape::PadConstant { left, right, len },
                    _ => Reshape::PadClamp { left, right, len },
                };
                Ok(SymValue::Array(reshaped(reshape, xs, with)?))
            }
            Take | Drop => {
                let xs = args[0].array()?;
                let n = nats[0];
                let (len, offset) = if p == Take { (n, 0) } else { (xs.len - n, n) };
                Ok(SymValue::Array(reshaped(
                    Reshape::Offset { offset, len },
                    xs,
                    None,
                )?))
            }
            Split => {
                let xs = args[0].array()?;
                let chunk = positive(nats[0])?;
                let len = xs.len;
                Ok(SymValue::Array(reshaped(
                    Reshape::Split { chunk, len },
                    xs,
                    None,
                )?))
            }
            Slide => {
                let xs = args[0].array()?;
                let (size, step, len) = (nats[0], positive(nats[1])?, xs.len);
                let reshape = Reshape::Slide { size, step, len };
                Ok(SymValue::Array(reshaped(reshape, xs, None)?))
            }
            Join | Transpose | AsScalar => {
                let xs = args[0].array()?;
                let rows = xs.len;
                let reshape = match (p, ty.kind()) {
                    (Transpose, TypeKind::Array(columns, _)) => Reshape::Transpose {
                        rows,
                        columns: size(columns)?,
                    },
                    // The rows' (or vectors') length, from the result's.
                    (_, TypeKind::Array(total, _)) => {
                        let total = size(total)?;
                        let columns = if rows == 0 { 1 } else { total / rows };
                        match p {
                            Join => Reshape::Join { rows, columns },
                            _ => Reshape::AsScalar {
                                width: columns,
                                len: rows,
                            },
                        }
                    }
                    _ => return not_structured(format!("an untyped `{}`", p.name())),
                };
                Ok(SymValue::Array(reshaped(reshape, xs, None)?))
            }
            Zip => {
                let (a, b) = (args[0].array()?, args[1].array()?);
                Ok(SymValue::Array(SymArray::new(a.len, move |ex, i| {
                    Ok(SymValue::Pair(
                        Box::new(a.at(ex, i)?),
                        Box::new(b.at(ex, i)?),
                    ))
                })))
            }
            Unzip => {
                let xs = args[0].array()?;
                let side = |second: bool| {
                    let xs = xs.clone();
                    SymValue::Array(SymArray::new(xs.len, move |ex, i| match xs.at(ex, i)? {
                        SymValue::Pair(a, b) => Ok(if second { *b } else { *a }),
                        _ => not_structured("unzip of something else than pairs"),
                    }))
                };
                Ok(SymValue::Pair(Box::new(side(false)), Box::new(side(true))))
            }
            MakePair => Ok(SymValue::Pair(
                Box::new(args[0].clone()),
                Box::new(args[1].clone()),
            )),
            Fst | Snd => match &args[0] {
                SymValue::Pair(a, b) => Ok(if p == Fst {
                    (**a).clone()
                } else {
                    (**b).clone()
                }),
                _ => not_structured("a projection of something else than a pair"),
            },
            MapFst | MapSnd => match &args[1] {
                SymValue::Pair(a, b) => {
                    if p == MapFst {
                        let a = self.apply(&args[0], (**a).clone())?;
                        Ok(SymValue::Pair(Box::new(a), b.clone()))
                    } else {
                        let b = self.apply(&args[0], (**b).clone())?;
                        Ok(SymValue::Pair(a.clone(), Box::new(b)))
                    }
                }
                _ => not_structured("mapFst/mapSnd of something else than a pair"),
            },
            Map => {
                let (f, xs) = (args[0].clone(), args[1].array()?);
                Ok(SymValue::Array(SymArray::new(xs.len, move |ex, i| {
                    let x = xs.at(ex, i)?;
                    ex.apply(&f, x)
                })))
            }
            MapSeq | MapSeqUnroll | MapPar | MapGlobal | MapWorkGroup | MapLocal | Reduce
            | ReduceSeq | ReduceSeqUnroll => {
                let it = p.iteration().expect("a loop primitive");
                let xs = args[it.array].array()?;
                let kind = recorded_loop(it, nats, xs.len)?;
                if kind.is_reduction() {
                    self.reduction(kind, &args[0], args[1].clone(), &xs)
                } else {
                    self.computed_map(kind, &args[0], &xs)
                }
            }
            VectorFromScalar => {
                let SymValue::Scalar(x) = &args[0] else {
                    return not_structured("a vector of something other than a scalar");
                };
                let TypeKind::Vector(_, n) = ty.kind() else {
                    return not_structured("untyped vector");
                };
                let n = lanes(size(n)?)?;
                let lane = self.new_lane(n);
                Ok(SymValue::Vector {
                    lane,
                    n,
                    elem: x.clone(),
                })
            }
            AsVector | AsVectorAligned => {
                let xs = args[0].array()?;
                let (width, len) = (lanes(nats[0])?, xs.len);
                Ok(SymValue::Array(reshaped(
                    Reshape::AsVector { width, len },
                    xs,
                    None,
                )?))
            }
            // No translation has these yet: the program is reported unsupported. (No
            // wildcard here: a new primitive must be placed.)
            ScanSeq | Iterate => not_structured(format!("`{}`", p.name())),
        }
    }

    /// Arithmetic on scalars, or lane by lane on vectors (one lane loop for both).
    fn binary(
        &mut self,
        p: Prim,
        a: &SymValue,
        b: &SymValue,
        at: Option<Span>,
    ) -> Structuring<SymValue> {
        let op = move |x: ExprRef, y: ExprRef| {
            // A division that may trap is checked in the kernel's body.
            if can_trap(p, x.scalar()) && !constant_divisor(&y).is_some_and(safe_divisor) {
                return Ok(ScalarExpr::Checked {
                    op: p,
                    x,
                    y,
                    span: at,
                }
                .shared());
            }
            Ok(ScalarExpr::Bin(p, x, y).shared())
        };
        match self.lanewise(a.clone(), b.clone(), &op)? {
            Ok(v) => Ok(v),
            Err(_) => not_structured("arithmetic on something other than numbers"),
        }
    }

    /// `f` of two numbers: of two scalars, or lane by lane of two vectors (read with
    /// one lane loop); the values back where they are not numbers. (By value: a
    /// guard of 100,000 paddings grows as it is passed on, and is never copied.)
    fn lanewise(
        &mut self,
        a: SymValue,
        b: SymValue,
        f: &dyn Fn(ExprRef, ExprRef) -> Structuring<ExprRef>,
    ) -> Structuring<Result<SymValue, (SymValue, SymValue)>> {
        Ok(Ok(match (a, b) {
            (SymValue::Scalar(x), SymValue::Scalar(y)) => SymValue::Scalar(f(x, y)?),
            (
                SymValue::Vector { lane, n, elem: x },
                SymValue::Vector {
                    lane: lane2,
                    elem: y,
                    ..
                },
            ) => {
                let y = if lane == lane2 {
                    y
                } else {
                    self.read_lane(lane2, &Aff::var(lane))?;
                    y.subst(lane2, &Aff::var(lane), self).shared()
                };
                SymValue::Vector {
                    lane,
                    n,
                    elem: f(x, y)?,
                }
            }
            (a, b) => return Ok(Err((a, b))),
        }))
    }

    /// `f` of two values of one shape, number by number: [`SymbolicEvaluator::lanewise`] on numbers,
    /// element by element on arrays, component by component on pairs; `mismatch` is
    /// the reason where the shapes differ.
    pub fn zip_values(
        &mut self,
        a: SymValue,
        b: SymValue,
        f: Combine,
        mismatch: &'static str,
    ) -> Structuring<SymValue> {
        match self.lanewise(a, b, &*f)? {
            Ok(v) => Ok(v),
            Err((SymValue::Array(a), SymValue::Array(b))) => {
                Ok(SymValue::Array(SymArray::new(a.len, move |ex, j| {
                    let (x, y) = (a.at(ex, j)?, b.at(ex, j)?);
                    ex.zip_values(x, y, f.clone(), mismatch)
                })))
            }
            Err((SymValue::Pair(a, b), SymValue::Pair(x, y))) => Ok(SymValue::Pair(
                Box::new(self.zip_values(*a, *x, f.clone(), mismatch)?),
                Box::new(self.zip_values(*b, *y, f, mismatch)?),
            )),
            Err(_) => not_structured(mismatch),
        }
    }

    /// `select(c, a, b)`, element by element: one `arith.select` per element.
    fn pick(&mut self, c: &ScalarExpr, a: &SymValue, b: &SymValue) -> Structuring<SymValue> {
        let c = c.clone().shared();
        let pick = move |x: ExprRef, y: ExprRef| Ok(ScalarExpr::Pick(c.clone(), x, y).shared());
        self.zip_values(
            a.clone(),
            b.clone(),
            Rc::new(pick),
            "`select` between values of other shapes",
        )
    }
}

/// `f` of a number: of a scalar, or lane by lane of a vector.
fn lanewise_unary(x: &SymValue, f: impl Fn(ExprRef) -> ScalarExpr) -> Structuring<SymValue> {
    match x {
        SymValue::Scalar(x) => Ok(SymValue::Scalar(f(x.clone()).shared())),
        SymValue::Vector { lane, n, elem } => Ok(SymValue::Vector {
            lane: *lane,
            n: *n,
            elem: f(elem.clone()).shared(),
        }),
        _ => not_structured("arithmetic on something other than numbers"),
    }
}

/// How two numbers' expressions combine into one (shared by the elements it is
/// applied to).
pub type Combine = Rc<dyn Fn(ExprRef, ExprRef) -> Structuring<ExprRef>>;

/// The value of an integer constant.
fn constant_divisor(e: &ScalarExpr) -> Option<i64> {
    match e {
        ScalarExpr::Lit(Literal::I32(v)) => Some(i64::from(*v)),
        ScalarExpr::Lit(Literal::I64(v)) => Some(*v),
        _ => None,
    }
}
