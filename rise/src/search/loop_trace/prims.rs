//! Each primitive as a view (an index function), a loop, or an operation.

use super::eval::{array, fun, scalar, size, typed, unsupported, Arr, Ev, Load, Sc, R, V};
use super::index::Idx as Index;
use super::LoopKind;
use crate::prim::Prim;
use crate::term::{Expr, Term};
use crate::types::{Type, TypeKind};
use std::rc::Rc;

/// A primitive with its nat arguments, as a curried function of its values.
pub(super) fn primitive(t: &Term) -> R<V> {
    let (head, nat_args) = t.nat_arguments();
    let nats = nat_args.into_iter().map(size).collect::<R<Vec<_>>>()?;
    let Expr::Prim(p) = head.expr() else {
        return unsupported("a nat argument of something other than a primitive");
    };
    Ok(curried(*p, Rc::new(nats), typed(t)?, Vec::new()))
}

fn curried(p: Prim, nats: Rc<Vec<i64>>, ty: Type, args: Vec<(V, Type)>) -> V {
    fun(move |ev, arg| {
        let TypeKind::Fun(param, rest) = ty.kind() else {
            return unsupported(format!("`{}` with a type that is not a function", p.name()));
        };
        let mut args = args.clone();
        args.push((arg, param.clone()));
        if args.len() == p.value_arity() {
            let (values, types): (Vec<V>, Vec<Type>) = args.into_iter().unzip();
            apply(ev, p, &nats, values, &types, rest)
        } else {
            Ok(curried(p, nats.clone(), rest.clone(), args))
        }
    })
}

/// The cost of an operation, in operations of its width.
fn cost(p: Prim) -> f64 {
    match p {
        Prim::Div | Prim::Sqrt => 4.0,
        Prim::Exp => 10.0,
        _ => 1.0,
    }
}

/// Element-wise choice between `a` and `b` (both are computed, as compiled code does).
fn select(c: &Sc, a: V, b: V) -> R<V> {
    match (a, b) {
        (V::S(x), V::S(y)) => Ok(V::S(Sc::op(1.0, &[c, &x, &y]))),
        (V::P(x), V::P(y)) => Ok(V::P(Rc::new((
            select(c, x.0.clone(), y.0.clone())?,
            select(c, x.1.clone(), y.1.clone())?,
        )))),
        (V::A(x), V::A(y)) => {
            let c = c.clone();
            Ok(V::A(Arr::new(x.len, move |ev, i| {
                let a = x.at(ev, i.clone())?;
                let b = y.at(ev, i)?;
                select(&c, a, b)
            })))
        }
        _ => unsupported("a choice between values of different kinds"),
    }
}

fn pair(v: V) -> R<Rc<(V, V)>> {
    match v {
        V::P(p) => Ok(p),
        _ => unsupported("a pair was expected"),
    }
}

/// The length of the rows of an array of arrays of type `ty`.
fn row_length(ty: &Type) -> R<i64> {
    match ty.kind() {
        TypeKind::Array(_, e) => match e.kind() {
            TypeKind::Array(m, _) => size(m),
            _ => unsupported(format!("rows of {ty}")),
        },
        _ => unsupported(format!("rows of {ty}")),
    }
}

fn lanes_of(ty: &Type) -> R<u32> {
    match ty.kind() {
        TypeKind::Vector(_, n) => Ok(size(n)?.clamp(1, 1 << 16) as u32),
        TypeKind::Array(_, e) => lanes_of(e),
        _ => unsupported(format!("vectors in {ty}")),
    }
}

/// `p(nats...)(args...)`, whose arguments have types `types` and whose result has
/// type `ty`.
fn apply(ev: &mut Ev, p: Prim, nats: &[i64], mut args: Vec<V>, types: &[Type], ty: &Type) -> R<V> {
    use Prim::*;
    let arg = |args: &mut Vec<V>, k: usize| std::mem::replace(&mut args[k], V::I(Index::cst(0)));
    match p {
        Id => Ok(arg(&mut args, 0)),
        Add | Sub | Mul | Div | Mod | Max | Min | Lt | Gt | Equal => {
            let (a, b) = (scalar(arg(&mut args, 0))?, scalar(arg(&mut args, 1))?);
            Ok(V::S(Sc::op(cost(p), &[&a, &b])))
        }
        Neg | Not | Exp | Sqrt | Abs | Cast => {
            let a = scalar(arg(&mut args, 0))?;
            Ok(V::S(Sc::op(cost(p), &[&a])))
        }
        Select => {
            let c = scalar(arg(&mut args, 0))?;
            select(&c, arg(&mut args, 1), arg(&mut args, 2))
        }
        Let => {
            let v = arg(&mut args, 0);
            let v = match &v {
                V::A(_) => ev.materialize(v, &types[0])?,
                _ => v,
            };
            ev.apply(&args[1], v)
        }
        ToMem | ToGlobal | ToShared | ToPrivate => ev.materialize(arg(&mut args, 0), ty),
        Generate => {
            let TypeKind::Array(n, _) = ty.kind() else {
                return unsupported("`generate` of something other than an array");
            };
            let f = arg(&mut args, 0);
            Ok(V::A(Arr::new(size(n)?, move |ev, i| ev.apply(&f, V::I(i)))))
        }
        Idx => {
            let V::I(i) = arg(&mut args, 0) else {
                return unsupported("an index that is not an `idx` value");
            };
            array(arg(&mut args, 1))?.at(ev, i)
        }
        IndexAsNat => Ok(V::S(Sc::free(1))),
        NatAsIndex => {
            // A position read from data: where it points is not known here.
            let s = scalar(arg(&mut args, 0))?;
            ev.consume(&s)?;
            Ok(V::I(Index::cst(0)))
        }
        Take | Drop => {
            let xs = array(arg(&mut args, 0))?;
            let n = nats[0].clamp(0, xs.len);
            let (len, offset) = if p == Take { (n, 0) } else { (xs.len - n, n) };
            Ok(V::A(Arr::new(len, move |ev, i| {
                xs.at(ev, i.offset(offset))
            })))
        }
        Concat => {
            let (a, b) = (array(arg(&mut args, 0))?, array(arg(&mut args, 1))?);
            Ok(V::A(Arr::new(a.len + b.len, move |ev, i| {
                if a.len == 0 {
                    return b.at(ev, i);
                }
                if b.len == 0 {
                    return a.at(ev, i);
                }
                let x = a.at(ev, i.clamp(0, a.len - 1))?;
                let y = b.at(ev, i.offset(-a.len).clamp(0, b.len - 1))?;
                select(&Sc::free(1), x, y)
            })))
        }
        Split => {
            let xs = array(arg(&mut args, 0))?;
            let n = nats[0].max(1);
            Ok(V::A(Arr::new(xs.len / n, move |_, i| {
                let xs = xs.clone();
                Ok(V::A(Arr::new(n, move |ev, j| xs.at(ev, i.affine(n, &j)))))
            })))
        }
        Join => {
            let m = row_length(&types[0])?.max(1);
            let xs = array(arg(&mut args, 0))?;
            Ok(V::A(Arr::new(xs.len * m, move |ev, k| {
                let row = array(xs.at(ev, k.div(m))?)?;
                row.at(ev, k.rem(m))
            })))
        }
        Slide => {
            let xs = array(arg(&mut args, 0))?;
            let (sz, sp) = (nats[0], nats[1].max(1));
            let len = if xs.len >= sz {
                (xs.len - sz) / sp + 1
            } else {
                0
            };
            Ok(V::A(Arr::new(len, move |_, i| {
                let xs = xs.clone();
                Ok(V::A(Arr::new(sz, move |ev, j| xs.at(ev, i.affine(sp, &j)))))
            })))
        }
        Transpose => {
            let TypeKind::Array(m, col) = ty.kind() else {
                return unsupported("`transpose` of something other than a matrix");
            };
            let (m, n) = (
                size(m)?,
                match col.kind() {
                    TypeKind::Array(n, _) => size(n)?,
                    _ => return unsupported("`transpose` of something other than a matrix"),
                },
            );
            let xs = array(arg(&mut args, 0))?;
            Ok(V::A(Arr::new(m, move |_, j| {
                let xs = xs.clone();
                Ok(V::A(Arr::new(n, move |ev, i| {
                    array(xs.at(ev, i)?)?.at(ev, j.clone())
                })))
            })))
        }
        PadCst | PadClamp => {
            let (l, r) = (nats[0], nats[1]);
            let (value, xs) = if p == PadCst {
                (Some(arg(&mut args, 0)), array(arg(&mut args, 1))?)
            } else {
                (None, array(arg(&mut args, 0))?)
            };
            let n = xs.len;
            Ok(V::A(Arr::new(l + n + r, move |ev, i| {
                if n == 0 {
                    return value
                        .clone()
                        .map_or_else(|| unsupported("clamping an empty array"), Ok);
                }
                let inside = xs.at(ev, i.offset(-l).clamp(0, n - 1))?;
                match &value {
                    Some(v) => select(&Sc::free(1), v.clone(), inside),
                    None => Ok(inside),
                }
            })))
        }
        Zip => {
            let (a, b) = (array(arg(&mut args, 0))?, array(arg(&mut args, 1))?);
            Ok(V::A(Arr::new(a.len.min(b.len), move |ev, i| {
                Ok(V::P(Rc::new((a.at(ev, i.clone())?, b.at(ev, i)?))))
            })))
        }
        Unzip => {
            let xs = array(arg(&mut args, 0))?;
            let side = |second: bool| {
                let xs = xs.clone();
                V::A(Arr::new(xs.len, move |ev, i| {
                    let p = pair(xs.at(ev, i)?)?;
                    Ok(if second { p.1.clone() } else { p.0.clone() })
                }))
            };
            Ok(V::P(Rc::new((side(false), side(true)))))
        }
        MakePair => Ok(V::P(Rc::new((arg(&mut args, 0), arg(&mut args, 1))))),
        Fst | Snd => {
            let p2 = pair(arg(&mut args, 0))?;
            Ok(if p == Fst { p2.0.clone() } else { p2.1.clone() })
        }
        MapFst | MapSnd => {
            let f = arg(&mut args, 0);
            let p2 = pair(arg(&mut args, 1))?;
            Ok(if p == MapFst {
                V::P(Rc::new((ev.apply(&f, p2.0.clone())?, p2.1.clone())))
            } else {
                V::P(Rc::new((p2.0.clone(), ev.apply(&f, p2.1.clone())?)))
            })
        }
        Map => {
            // A view: each element computed where it is read.
            let f = arg(&mut args, 0);
            let xs = array(arg(&mut args, 1))?;
            Ok(V::A(Arr::new(xs.len, move |ev, i| {
                let x = xs.at(ev, i)?;
                ev.apply(&f, x)
            })))
        }
        MapSeq | MapSeqUnroll | MapPar => {
            let f = arg(&mut args, 0);
            let xs = array(arg(&mut args, 1))?;
            let kind = match p {
                MapSeq => LoopKind::Seq,
                MapPar => LoopKind::Par,
                _ => LoopKind::Unroll,
            };
            let storage = ev.alloc(ty, super::Role::Computed)?;
            let i = ev.enter(kind, xs.len, None);
            let body = (|| {
                let x = xs.at(ev, i.clone())?;
                let y = ev.apply(&f, x)?;
                ev.store(&y, &storage, &[i])
            })();
            ev.leave();
            body?;
            ev.view(&storage, ty, Vec::new())
        }
        Reduce | ReduceSeq | ReduceSeqUnroll => {
            let kind = if p == ReduceSeqUnroll {
                LoopKind::ReduceUnroll
            } else {
                LoopKind::Reduce
            };
            let (op, init) = (arg(&mut args, 0), arg(&mut args, 1));
            let xs = array(arg(&mut args, 2))?;
            ev.reduce(kind, op, init, xs, ty)
        }
        VectorFromScalar => {
            let s = scalar(arg(&mut args, 0))?;
            Ok(V::S(Sc::op_lanes(0.0, lanes_of(ty)?, &[&s])))
        }
        AsVector | AsVectorAligned => {
            let xs = array(arg(&mut args, 0))?;
            let w = nats[0].max(1);
            Ok(V::A(Arr::new(xs.len / w, move |ev, i| {
                as_vector(ev, &xs, w, &i)
            })))
        }
        AsScalar => {
            let w = i64::from(lanes_of(&types[0])?);
            let xs = array(arg(&mut args, 0))?;
            Ok(V::A(Arr::new(xs.len * w, move |ev, k| {
                let v = scalar(xs.at(ev, k.div(w))?)?;
                let lane = k.rem(w);
                let (loads, work) = ev.flatten(&v)?;
                let loads = loads
                    .into_iter()
                    .map(|l| Load {
                        off: l.off.add(&lane.scale(l.lane_stride)),
                        lanes: 1,
                        lane_stride: 0,
                        ..l
                    })
                    .collect();
                // The vector is computed once for its lanes.
                let mut share = work;
                share.vector /= w as f64;
                Ok(V::S(Sc::flat(loads, share, 1)))
            })))
        }
        ScanSeq | Iterate | MapGlobal | MapWorkGroup | MapLocal => {
            unsupported(format!("`{}` (the CPU code has no loop for it)", p.name()))
        }
    }
}

/// Vector `i` of `xs` cut into vectors of `w` lanes: the loads of its first lane, as
/// far apart per lane as its first two lanes' loads are (1: one vector load).
fn as_vector(ev: &mut Ev, xs: &Arr, w: i64, i: &Index) -> R<V> {
    let base = i.scale(w);
    let first = scalar(xs.at(ev, base.clone())?)?;
    let (loads, work) = ev.flatten(&first)?;
    let second = if w > 1 {
        let snapshot = ev.snapshot();
        let second = xs.at(ev, base.offset(1)).and_then(scalar);
        ev.restore(snapshot);
        Some(ev.flatten(&second?)?.0)
    } else {
        None
    };
    // Lanes whose loads do not line up are gathered one by one.
    const GATHER: i64 = 1 << 20;
    let loads = loads
        .iter()
        .enumerate()
        .map(|(k, l)| {
            let next = second.as_ref().and_then(|s| s.get(k));
            let lane_stride = match next {
                Some(n) if n.buf == l.buf && n.lanes == l.lanes => n.off.value - l.off.value,
                Some(_) => GATHER,
                None => 0,
            };
            Load {
                lanes: w,
                lane_stride,
                ..l.clone()
            }
        })
        .collect();
    let mut vector = work;
    vector.vector += vector.scalar;
    vector.scalar = 0.0;
    vector.lanes = w as u32;
    Ok(V::S(Sc::flat(loads, vector, w as u32)))
}
