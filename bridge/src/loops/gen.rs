//! The translation of terms to values: buffers (allocated, written, read as views),
//! terms, literals, applications, primitives waiting for their arguments.

use super::emitter::Gen;
use super::value::{fun, ArrayVal, Contiguous, Env, Val};
use crate::boundary::{check_buffer, size, Storage};
use crate::error::Error;
use crate::ir::{self, Op};
use crate::loop_program::env::{bind, lookup};
use elevate_core::stack::guard;
use elevate_rise::prim::Prim;
use elevate_rise::term::{Expr, Literal, Term};
use elevate_rise::types::{Type, TypeKind};
use std::rc::Rc;

impl Gen {
    /// New buffers for a value of type `ty`: one memref per scalar leaf of the type
    /// (an array of pairs is stored as a pair of arrays).
    pub(super) fn alloc(&mut self, ty: &Type, what: &Term) -> Result<Storage, Error> {
        self.alloc_within(ty, Vec::new(), what)
    }

    pub(super) fn alloc_within(
        &mut self,
        ty: &Type,
        mut dims: Vec<i64>,
        what: &Term,
    ) -> Result<Storage, Error> {
        guard(|| match ty.kind() {
            TypeKind::Array(n, e) => {
                dims.push(size(n, what)?);
                self.alloc_within(e, dims, what)
            }
            TypeKind::Scalar(s) => {
                check_buffer(&self.limits, "a buffer", &dims, *s, what)?;
                let ty = ir::Type::memref(&dims, *s);
                let buffer = self.op(Op::new("memref.alloc")
                    .prop("operandSegmentSizes", ir::Attr::segments(&[0, 0]))
                    .returns(&ty));
                if let Some(region) = self.allocations.last_mut() {
                    region.push((buffer.clone(), ty));
                }
                Ok(Storage::Leaf {
                    buffer,
                    dims: Rc::new(dims),
                    scalar: *s,
                })
            }
            TypeKind::Vector(e, n) => {
                dims.push(size(n, what)?);
                self.alloc_within(e, dims, what)
            }
            TypeKind::Pair(a, b) => Ok(Storage::Pair(
                Rc::new(self.alloc_within(a, dims.clone(), what)?),
                Rc::new(self.alloc_within(b, dims, what)?),
            )),
            _ => Err(Error::unsupported(
                what,
                format!("storing a value of type {ty}"),
            )),
        })
    }

    /// Writes `v` into `storage` at `prefix` and the positions below.
    pub(super) fn store(
        &mut self,
        v: &Val,
        storage: &Storage,
        prefix: &[String],
        what: &Term,
    ) -> Result<(), Error> {
        guard(|| self.store_at(v, storage, prefix, what))
    }

    fn store_at(
        &mut self,
        v: &Val,
        storage: &Storage,
        prefix: &[String],
        what: &Term,
    ) -> Result<(), Error> {
        match (v, storage) {
            (
                Val::Scalar(x, _),
                Storage::Leaf {
                    buffer,
                    dims,
                    scalar,
                },
            ) => {
                let ty = ir::Type::memref(dims, *scalar);
                self.push(
                    Op::new("memref.store")
                        .operand(x, &ir::Type::scalar(*scalar))
                        .operand(buffer, &ty)
                        .operands_of(prefix, &ir::Type::Index),
                );
                Ok(())
            }
            (
                Val::Vector(x, s, n),
                Storage::Leaf {
                    buffer,
                    dims,
                    scalar,
                },
            ) => {
                let at = self.vector_position(prefix);
                let t = ir::Type::lanes(*s, Some(*n));
                self.push(
                    Op::new("vector.store")
                        .operand(x, &t)
                        .operand(buffer, &ir::Type::memref(dims, *scalar))
                        .operands_of(&at, &ir::Type::Index),
                );
                Ok(())
            }
            (Val::Pair(a, b), Storage::Pair(sa, sb)) => {
                self.store(a, sa, prefix, what)?;
                self.store(b, sb, prefix, what)
            }
            (Val::Array(a), _) => {
                let (a, storage, prefix) = (a.clone(), storage.clone(), prefix.to_vec());
                self.for_loop(a.len, what, |g, i| {
                    let element = a.at(g, i)?;
                    let mut inner = prefix.clone();
                    inner.push(i.to_string());
                    g.store(&element, &storage, &inner, what)
                })
            }
            _ => Err(Error::unsupported(what, "storing a function or an index")),
        }
    }

    /// The value of type `ty` held in `storage` at `prefix`: arrays are read where
    /// they are indexed, scalars are loaded now.
    pub(super) fn view(&mut self, storage: &Storage, ty: &Type, prefix: Vec<String>) -> Val {
        guard(|| self.view_at(storage, ty, prefix))
    }

    fn view_at(&mut self, storage: &Storage, ty: &Type, prefix: Vec<String>) -> Val {
        match (ty.kind(), storage) {
            (TypeKind::Array(n, e), _) => {
                let contiguous = match (storage, e.kind()) {
                    (
                        Storage::Leaf {
                            buffer,
                            dims,
                            scalar,
                        },
                        TypeKind::Scalar(_),
                    ) if prefix.len() + 1 == dims.len() => Some(Rc::new(Contiguous {
                        buffer: buffer.clone(),
                        dims: dims.clone(),
                        scalar: *scalar,
                        prefix: prefix.clone(),
                        offset: None,
                    })),
                    _ => None,
                };
                let (storage, e) = (storage.clone(), e.clone());
                let len = n.as_const().unwrap_or(0);
                let mut array = ArrayVal::new(len, e.clone(), move |g, i| {
                    let mut at = prefix.clone();
                    at.push(i.to_string());
                    Ok(g.view(&storage, &e, at))
                });
                array.contiguous = contiguous;
                Val::Array(array)
            }
            (TypeKind::Pair(a, b), Storage::Pair(sa, sb)) => Val::Pair(
                Box::new(self.view(sa, a, prefix.clone())),
                Box::new(self.view(sb, b, prefix)),
            ),
            (
                TypeKind::Vector(_, n),
                Storage::Leaf {
                    buffer,
                    dims,
                    scalar,
                },
            ) => {
                let lanes = n.as_const().unwrap_or(1);
                let at = self.vector_position(&prefix);
                let t = ir::Type::lanes(*scalar, Some(lanes));
                let v = self.op(Op::new("vector.load")
                    .operand(buffer, &ir::Type::memref(dims, *scalar))
                    .operands_of(&at, &ir::Type::Index)
                    .returns(&t));
                Val::Vector(v, *scalar, lanes)
            }
            (
                _,
                Storage::Leaf {
                    buffer,
                    dims,
                    scalar,
                },
            ) => {
                let ty = ir::Type::memref(dims, *scalar);
                let x = self.op(ir::load(buffer, &ty, &prefix, &ir::Type::scalar(*scalar)));
                Val::Scalar(x, *scalar)
            }
            _ => unreachable!("storage made for this type"),
        }
    }

    /// `v` (of type `ty`) computed into new buffers, then read from them.
    pub(super) fn materialize(&mut self, v: &Val, ty: &Type, what: &Term) -> Result<Val, Error> {
        match v {
            Val::Array(_) => {
                let storage = self.alloc(ty, what)?;
                self.store(v, &storage, &[], what)?;
                Ok(self.view(&storage, ty, Vec::new()))
            }
            _ => Ok(v.clone()),
        }
    }

    /// The value of `t`: as deep as the program (100,000 nested applications are
    /// normal), on a stack that grows.
    pub(super) fn expr(&mut self, t: &Term, env: &Env) -> Result<Val, Error> {
        guard(|| self.term(t, env))
    }

    fn term(&mut self, t: &Term, env: &Env) -> Result<Val, Error> {
        match t.expr() {
            Expr::Var(x) => lookup(env, x.id)
                .ok_or_else(|| Error::unsupported(t, format!("`{}` is not bound", x.name))),
            Expr::Literal(l) => Ok(self.literal(*l)),
            Expr::Lambda(x, _, body) => {
                let (x, body, env) = (x.id, body.clone(), env.clone());
                Ok(fun(move |g, arg| g.expr(&body, &bind(&env, x, arg))))
            }
            Expr::App(f, a) => {
                let f = self.expr(f, env)?;
                let a = self.expr(a, env)?;
                self.apply(f, a, t)
            }
            Expr::Annotation(e, _) => self.expr(e, env),
            Expr::Prim(_) | Expr::NatApp(..) => self.primitive(t),
            Expr::NatLambda(..) => Err(Error::unsupported(
                t,
                "a function of a nat inside the program (inline it first: BENF)",
            )),
            Expr::Array(items) => {
                let ty = t.ty().cloned().ok_or_else(|| Error::untyped(t))?;
                let TypeKind::Array(_, elem) = ty.kind() else {
                    return Err(Error::untyped(t));
                };
                let storage = self.alloc(&ty, t)?;
                for (k, item) in items.iter().enumerate() {
                    let v = self.expr(item, env)?;
                    let i = self.index(k as i64);
                    self.store(&v, &storage, &[i], t)?;
                }
                let _ = elem;
                Ok(self.view(&storage, &ty, Vec::new()))
            }
        }
    }

    pub(super) fn literal(&mut self, l: Literal) -> Val {
        let x = self.op(ir::constant(crate::scalar_ops::literal_attr(l)));
        let s = match l {
            Literal::Bool(_) => elevate_rise::types::Scalar::Bool,
            Literal::I32(_) => elevate_rise::types::Scalar::I32,
            Literal::I64(_) => elevate_rise::types::Scalar::I64,
            Literal::F32(_) => elevate_rise::types::Scalar::F32,
            Literal::F64(_) => elevate_rise::types::Scalar::F64,
        };
        match l {
            Literal::I32(v) => {
                self.constants.insert(x.clone(), i64::from(v));
            }
            Literal::I64(v) => {
                self.constants.insert(x.clone(), v);
            }
            _ => {}
        }
        Val::Scalar(x, s)
    }

    pub(super) fn apply(&mut self, f: Val, a: Val, at: &Term) -> Result<Val, Error> {
        match f {
            Val::Fun(f) => f(self, a),
            _ => Err(Error::unsupported(
                at,
                "applying a value that is not a function",
            )),
        }
    }

    /// A primitive with its nat arguments, as a curried function of its values.
    pub(super) fn primitive(&mut self, t: &Term) -> Result<Val, Error> {
        let (head, nat_args) = t.nat_arguments();
        let nats = nat_args
            .into_iter()
            .map(|n| size(n, t))
            .collect::<Result<Vec<_>, Error>>()?;
        let Expr::Prim(p) = head.expr() else {
            return Err(Error::unsupported(
                t,
                "a nat argument of something other than a primitive",
            ));
        };
        let ty = t.ty().cloned().ok_or_else(|| Error::untyped(t))?;
        Ok(curried(*p, Rc::new(nats), ty, Vec::new(), t.clone()))
    }
}

/// `p` waiting for its value arguments: a function until all have come, then applied.
pub(super) fn curried(p: Prim, nats: Rc<Vec<i64>>, ty: Type, args: Vec<Val>, at: Term) -> Val {
    if args.len() == p.value_arity() {
        unreachable!("curried is only built for missing arguments")
    }
    fun(move |g, arg| {
        let mut args = args.clone();
        args.push(arg);
        // The type of the rest, after this argument.
        let rest = match ty.kind() {
            TypeKind::Fun(_, r) => r.clone(),
            _ => return Err(Error::untyped(&at)),
        };
        if args.len() == p.value_arity() {
            g.apply_primitive(p, &nats, args, &rest, &at)
        } else {
            Ok(curried(p, nats.clone(), rest, args, at.clone()))
        }
    })
}
