//! The primitives: what each one is as a view, a loop or an operation.

use super::emitter::Gen;
use super::value::{
    arith_of, array_of, array_type_of, elem_of, lanes_value, scalar_of, select_val, ArrayVal, Val,
};
use super::views::reshaped;
use crate::boundary::{lanes, positive, size};
use crate::error::Error;
use crate::ir::{self, Block, Op};
use elevate_core::stack::guard;
use elevate_rise::nat::Nat;
use elevate_rise::prim::Prim;
use elevate_rise::term::Term;
use elevate_rise::types::{Scalar, Type, TypeKind};
use elevate_rise::view::Reshape;
use std::rc::Rc;

impl Gen {
    /// `p(nats...)(args...)` whose result has type `ty`.
    pub(super) fn apply_primitive(
        &mut self,
        p: Prim,
        nats: &[i64],
        args: Vec<Val>,
        ty: &Type,
        at: &Term,
    ) -> Result<Val, Error> {
        use Prim::*;
        let unsupported =
            |what: &str| Err(Error::unsupported(at, format!("`{}`: {what}", p.name())));
        match p {
            Id => Ok(args[0].clone()),
            Add | Sub | Mul | Div | Mod | Max | Min | Lt | Gt | Equal => {
                let (x, s, lanes) = arith_of(&args[0], at)?;
                let (y, _, _) = arith_of(&args[1], at)?;
                self.binary(p, &x, &y, s, lanes, at)
            }
            Neg | Not | Exp | Sqrt | Abs => {
                let (x, s, lanes) = arith_of(&args[0], at)?;
                self.unary(p, &x, s, lanes, at)
            }
            Select => {
                let (c, _) = scalar_of(&args[0], at)?;
                select_val(self, &c, &args[1], &args[2], at)
            }
            Cast => {
                let (x, from) = scalar_of(&args[0], at)?;
                let TypeKind::Scalar(to) = ty.kind() else {
                    return Err(Error::untyped(at));
                };
                Ok(self.cast(&x, from, *to))
            }
            Let => {
                let value = match &args[0] {
                    v @ Val::Array(_) => self.materialize(v, &array_type_of(v), at)?,
                    v => v.clone(),
                };
                self.apply(args[1].clone(), value, at)
            }
            ToMem | ToGlobal | ToShared | ToPrivate => match &args[0] {
                v @ Val::Array(_) => self.materialize(v, &array_type_of(v), at),
                v => Ok(v.clone()),
            },
            Generate => {
                let TypeKind::Array(n, elem) = ty.kind() else {
                    return Err(Error::untyped(at));
                };
                let f = args[0].clone();
                let at2 = at.clone();
                Ok(Val::Array(ArrayVal::new(
                    size(n, at)?,
                    elem.clone(),
                    move |g, i| g.apply(f.clone(), Val::Index(i.to_string()), &at2),
                )))
            }
            Idx => {
                let Val::Index(i) = &args[0] else {
                    return unsupported("an index that is not an idx value");
                };
                array_of(&args[1], at)?.at(self, i)
            }
            IndexAsNat => {
                let Val::Index(i) = &args[0] else {
                    return unsupported("an index that is not an idx value");
                };
                let x = self.op(ir::cast(
                    "arith.index_cast",
                    i,
                    &ir::Type::Index,
                    &ir::Type::I64,
                ));
                Ok(Val::Scalar(x, Scalar::I64))
            }
            NatAsIndex => {
                // A number from data: checked, as the interpreter checks it, so that no
                // read goes out of its buffer.
                let (x, _) = scalar_of(&args[0], at)?;
                Ok(Val::Index(self.checked_index(&x, nats[0], p, at)))
            }
            Take | Drop => {
                let xs = array_of(&args[0], at)?;
                let n = nats[0];
                let (len, offset) = if p == Take { (n, 0) } else { (xs.len - n, n) };
                let elem = xs.elem.clone();
                Ok(Val::Array(reshaped(
                    Reshape::Offset { offset, len },
                    xs,
                    None,
                    elem,
                    at,
                )?))
            }
            Concat => {
                let (a, b) = (array_of(&args[0], at)?, array_of(&args[1], at)?);
                let reshape = Reshape::Concat {
                    first: a.len,
                    second: b.len,
                };
                let elem = a.elem.clone();
                let with = Some(Val::Array(b));
                Ok(Val::Array(reshaped(reshape, a, with, elem, at)?))
            }
            Split | Slide => {
                let xs = array_of(&args[0], at)?;
                let len = xs.len;
                let reshape = match p {
                    Split => Reshape::Split {
                        chunk: positive(nats[0], at)?,
                        len,
                    },
                    _ => Reshape::Slide {
                        size: nats[0],
                        step: positive(nats[1], at)?,
                        len,
                    },
                };
                let row = match reshape {
                    Reshape::Split { chunk, .. } => chunk,
                    _ => nats[0],
                };
                let elem = Type::array(Nat::cst(row), xs.elem.clone());
                Ok(Val::Array(reshaped(reshape, xs, None, elem, at)?))
            }
            Join | Transpose => {
                let xs = array_of(&args[0], at)?;
                let TypeKind::Array(m, inner) = xs.elem.kind() else {
                    return Err(Error::untyped(at));
                };
                let (rows, columns, inner) = (xs.len, size(m, at)?, inner.clone());
                let (reshape, elem) = match p {
                    Join => (Reshape::Join { rows, columns }, inner),
                    _ => (
                        Reshape::Transpose { rows, columns },
                        Type::array(Nat::cst(rows), inner),
                    ),
                };
                Ok(Val::Array(reshaped(reshape, xs, None, elem, at)?))
            }
            PadCst | PadClamp => {
                let (left, right) = (nats[0], nats[1]);
                let (with, xs) = if p == PadCst {
                    (Some(args[0].clone()), array_of(&args[1], at)?)
                } else {
                    (None, array_of(&args[0], at)?)
                };
                let len = xs.len;
                let reshape = match p {
                    PadCst => Reshape::PadConstant { left, right, len },
                    _ => Reshape::PadClamp { left, right, len },
                };
                let elem = xs.elem.clone();
                Ok(Val::Array(reshaped(reshape, xs, with, elem, at)?))
            }
            Zip => {
                let (a, b) = (array_of(&args[0], at)?, array_of(&args[1], at)?);
                let elem = Type::pair(a.elem.clone(), b.elem.clone());
                let pair = Rc::new((a.clone(), b.clone()));
                let mut zipped = ArrayVal::new(a.len, elem, move |g, i| {
                    Ok(Val::Pair(Box::new(a.at(g, i)?), Box::new(b.at(g, i)?)))
                });
                zipped.zipped = Some(pair);
                Ok(Val::Array(zipped))
            }
            Unzip => {
                let xs = array_of(&args[0], at)?;
                if let Some(pair) = &xs.zipped {
                    return Ok(Val::Pair(
                        Box::new(Val::Array(pair.0.clone())),
                        Box::new(Val::Array(pair.1.clone())),
                    ));
                }
                let TypeKind::Pair(ta, tb) = xs.elem.kind() else {
                    return Err(Error::untyped(at));
                };
                let side = |second: bool, t: Type| {
                    let xs = xs.clone();
                    let at = at.clone();
                    Val::Array(ArrayVal::new(xs.len, t, move |g, i| match xs.at(g, i)? {
                        Val::Pair(a, b) => Ok(if second { *b } else { *a }),
                        _ => Err(Error::unsupported(
                            &at,
                            "unzip of something else than pairs",
                        )),
                    }))
                };
                Ok(Val::Pair(
                    Box::new(side(false, ta.clone())),
                    Box::new(side(true, tb.clone())),
                ))
            }
            MakePair => Ok(Val::Pair(
                Box::new(args[0].clone()),
                Box::new(args[1].clone()),
            )),
            Fst | Snd => match &args[0] {
                Val::Pair(a, b) => Ok(if p == Fst {
                    (**a).clone()
                } else {
                    (**b).clone()
                }),
                _ => unsupported("a projection of something else than a pair"),
            },
            MapFst | MapSnd => match &args[1] {
                Val::Pair(a, b) => {
                    if p == MapFst {
                        let a = self.apply(args[0].clone(), (**a).clone(), at)?;
                        Ok(Val::Pair(Box::new(a), b.clone()))
                    } else {
                        let b = self.apply(args[0].clone(), (**b).clone(), at)?;
                        Ok(Val::Pair(a.clone(), Box::new(b)))
                    }
                }
                _ => unsupported("of something else than a pair"),
            },
            Map => {
                // A view: each element computed where it is read.
                let (f, xs) = (args[0].clone(), array_of(&args[1], at)?);
                let at2 = at.clone();
                Ok(Val::Array(ArrayVal::new(
                    xs.len,
                    elem_of(ty),
                    move |g, i| {
                        let x = xs.at(g, i)?;
                        g.apply(f.clone(), x, &at2)
                    },
                )))
            }
            // On a CPU, GPU maps are parallel loops (the CPU check of GPU schedules).
            MapSeq | MapSeqUnroll | MapPar | MapGlobal | MapWorkGroup | MapLocal => {
                let (f, xs) = (args[0].clone(), array_of(&args[1], at)?);
                let storage = self.alloc(ty, at)?;
                let (s2, at2, len) = (storage.clone(), at.clone(), xs.len);
                let body = move |g: &mut Gen, i: &str| {
                    let x = xs.at(g, i)?;
                    let y = g.apply(f.clone(), x, &at2)?;
                    g.store(&y, &s2, &[i.to_string()], &at2)
                };
                if matches!(p, MapPar | MapGlobal | MapWorkGroup | MapLocal) {
                    self.parallel_loop(len, at, body)?;
                } else {
                    self.for_loop(len, at, body)?;
                }
                Ok(self.view(&storage, ty, Vec::new()))
            }
            Reduce | ReduceSeq | ReduceSeqUnroll => {
                let (op, init, xs) = (args[0].clone(), args[1].clone(), array_of(&args[2], at)?);
                self.reduce(op, init, xs, ty, at)
            }
            VectorFromScalar => {
                let (x, s) = scalar_of(&args[0], at)?;
                let TypeKind::Vector(_, n) = ty.kind() else {
                    return Err(Error::untyped(at));
                };
                let lanes = lanes(size(n, at)?, at)?;
                let v = self.splat(&x, s, Some(lanes));
                Ok(Val::Vector(v, s, lanes))
            }
            AsVector | AsVectorAligned => {
                let xs = array_of(&args[0], at)?;
                let (width, len) = (lanes(nats[0], at)?, xs.len);
                let elem = Type::vector(xs.elem.clone(), Nat::cst(width));
                let reshape = Reshape::AsVector { width, len };
                Ok(Val::Array(reshaped(reshape, xs, None, elem, at)?))
            }
            AsScalar => {
                let xs = array_of(&args[0], at)?;
                let TypeKind::Vector(e, n) = xs.elem.kind() else {
                    return Err(Error::untyped(at));
                };
                let (width, len, e) = (size(n, at)?, xs.len, e.clone());
                Ok(Val::Array(reshaped(
                    Reshape::AsScalar { width, len },
                    xs,
                    None,
                    e,
                    at,
                )?))
            }
            ScanSeq | Iterate => unsupported("not supported by the bridge yet"),
        }
    }

    pub(super) fn reduce(
        &mut self,
        op: Val,
        init: Val,
        xs: ArrayVal,
        ty: &Type,
        at: &Term,
    ) -> Result<Val, Error> {
        match &init {
            // Numbers, or pairs of them: one value the loop carries per number.
            Val::Scalar(..) | Val::Vector(..) | Val::Pair(..) if numbers(&init).is_some() => {
                let start = numbers(&init).unwrap_or_default();
                let types: Vec<ir::Type> = start
                    .iter()
                    .map(|(_, s, l)| ir::Type::lanes(*s, *l))
                    .collect();
                let (zero, end, one) = (self.index(0), self.index(xs.len), self.index(1));
                let i = self.fresh();
                let accs: Vec<String> = start.iter().map(|_| self.fresh()).collect();
                let result = self.fresh();
                let outs: Vec<String> = match start.len() {
                    1 => vec![result],
                    n => (0..n).map(|k| format!("{result}_{k}")).collect(),
                };
                self.enter(xs.len, at)?;
                let x = xs.at(self, &i)?;
                let acc = rebuilt(
                    &init,
                    &mut accs
                        .iter()
                        .zip(&start)
                        .map(|(a, (_, s, l))| lanes_value(a.clone(), *s, *l)),
                );
                let step = self.apply(op.clone(), acc, at)?;
                let next = self.apply(step, x, at)?;
                let next = numbers(&next)
                    .filter(|n| n.len() == start.len())
                    .ok_or_else(|| {
                        Error::unsupported(
                            at,
                            "a reduction step whose result is not shaped as its accumulator",
                        )
                    })?;
                let typed = |names: Vec<String>| -> Vec<ir::Value> {
                    names
                        .into_iter()
                        .zip(types.iter().cloned())
                        .map(|(x, t)| ir::Value::new(x, t))
                        .collect()
                };
                let yielded = typed(next.into_iter().map(|(x, _, _)| x).collect());
                let body = self.leave(ir::yield_values("scf.yield", yielded));
                let mut args = vec![ir::Value::new(i, ir::Type::Index)];
                args.extend(typed(accs));
                let mut head = Op::new("scf.for").operands_of(&[zero, end, one], &ir::Type::Index);
                head =
                    head.operand_values(&typed(start.iter().map(|(x, _, _)| x.clone()).collect()));
                for v in typed(outs.clone()) {
                    head = head.result(v.name, &v.ty);
                }
                self.push(head.region(Block::new(args, body)));
                Ok(rebuilt(
                    &init,
                    &mut outs
                        .into_iter()
                        .zip(&start)
                        .map(|(x, (_, s, l))| lanes_value(x, *s, *l)),
                ))
            }
            Val::Array(_) => {
                // The accumulator lives in a buffer: each step computes the next one
                // into a second buffer, then copies it back.
                let acc = self.alloc(ty, at)?;
                self.store(&init, &acc, &[], at)?;
                let acc_view = self.view(&acc, ty, Vec::new());
                let (acc2, view2) = (acc.clone(), acc_view.clone());
                let at2 = at.clone();
                let ty2 = ty.clone();
                self.for_loop(xs.len, at, move |g, i| {
                    let x = xs.at(g, i)?;
                    let step = g.apply(op.clone(), view2.clone(), &at2)?;
                    let next = g.apply(step, x, &at2)?;
                    let next = g.materialize(&next, &ty2, &at2)?;
                    g.store(&next, &acc2, &[], &at2)
                })?;
                Ok(acc_view)
            }
            _ => Err(Error::unsupported(
                at,
                "a reduction with an accumulator of pairs holding arrays",
            )),
        }
    }
}

/// The numbers of a value of numbers and pairs of them, in order (`None` for anything
/// else): what a loop carries for it.
fn numbers(v: &Val) -> Option<Vec<(String, Scalar, Option<i64>)>> {
    let mut out = Vec::new();
    let mut pending = vec![v];
    while let Some(v) = pending.pop() {
        match v {
            Val::Scalar(x, s) => out.push((x.clone(), *s, None)),
            Val::Vector(x, s, n) => out.push((x.clone(), *s, Some(*n))),
            Val::Pair(a, b) => {
                pending.push(b);
                pending.push(a);
            }
            _ => return None,
        }
    }
    Some(out)
}

/// A value shaped as `like` (numbers and pairs of them) made of `numbers`, in order.
fn rebuilt(like: &Val, numbers: &mut dyn Iterator<Item = Val>) -> Val {
    guard(|| match like {
        Val::Pair(a, b) => {
            let a = rebuilt(a, numbers);
            Val::Pair(Box::new(a), Box::new(rebuilt(b, numbers)))
        }
        other => numbers.next().unwrap_or_else(|| other.clone()),
    })
}
