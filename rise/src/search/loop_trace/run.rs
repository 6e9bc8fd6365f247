//! Terms to values: the program's body evaluated on views of its inputs, its result
//! stored into the output.

use super::eval::{fun, typed, unsupported, Ev, Sc, R, V};
use super::index::Idx;
use super::{Role, Trace, TraceError};

use crate::term::{Expr, Term};
use crate::types::TypeKind;
use elevate_core::stack::guard;
use std::rc::Rc;

impl Ev {
    pub(super) fn apply(&mut self, f: &V, x: V) -> R<V> {
        self.tick()?;
        match f {
            V::F(f) => guard(|| f(self, x)),
            _ => unsupported("applying something that is not a function"),
        }
    }

    /// The value of `t` in `env`.
    pub(super) fn expr(&mut self, t: &Term, env: &Env) -> R<V> {
        self.tick()?;
        guard(|| match t.expr() {
            Expr::Var(x) => lookup(env, x.id)
                .ok_or_else(|| TraceError::Unsupported(format!("`{}` is not bound", x.name))),
            Expr::Literal(_) => Ok(V::S(Sc::free(1))),
            Expr::Lambda(x, _, body) => {
                let (x, body, env) = (x.id, body.clone(), env.clone());
                Ok(fun(move |ev, arg| ev.expr(&body, &bind(&env, x, arg))))
            }
            Expr::App(f, a) => {
                let f = self.expr(f, env)?;
                let a = self.expr(a, env)?;
                self.apply(&f, a)
            }
            Expr::Annotation(e, _) => self.expr(e, env),
            Expr::Prim(_) | Expr::NatApp(..) => super::prims::primitive(t),
            Expr::NatLambda(..) => unsupported("a function of a nat inside the program"),
            Expr::Array(items) => {
                let ty = typed(t)?;
                let storage = self.alloc(&ty, Role::Computed)?;
                for (k, item) in items.iter().enumerate() {
                    let v = self.expr(item, env)?;
                    self.store(&v, &storage, &[Idx::cst(k as i64)])?;
                }
                self.view(&storage, &ty, Vec::new())
            }
        })
    }
}

/// Variables and their values, newest first: a persistent list.
#[derive(Clone, Default)]
pub(super) struct Env(Option<Rc<(u64, V, Env)>>);

impl Drop for Env {
    fn drop(&mut self) {
        let mut next = self.0.take();
        while let Some(rc) = next {
            next = match Rc::try_unwrap(rc) {
                Ok((_, _, mut outer)) => outer.0.take(),
                Err(_) => None,
            };
        }
    }
}

fn bind(env: &Env, id: u64, v: V) -> Env {
    Env(Some(Rc::new((id, v, env.clone()))))
}

fn lookup(env: &Env, id: u64) -> Option<V> {
    let mut at = env.0.as_ref();
    while let Some(b) = at {
        if b.0 == id {
            return Some(b.1.clone());
        }
        at = b.2 .0.as_ref();
    }
    None
}

/// Evaluates the function `program` on its inputs and stores its result.
pub(super) fn run(program: &Term, in_place: bool) -> R<Trace> {
    let mut ev = Ev::new(in_place);
    let mut env = Env::default();
    let mut body = program;
    while let Expr::Lambda(x, _, inner) = body.expr() {
        let ty = typed(body)?;
        let TypeKind::Fun(param, _) = ty.kind() else {
            return unsupported("a function whose type is not a function type");
        };
        let value = match param.kind() {
            TypeKind::Scalar(_) => V::S(Sc::free(1)),
            TypeKind::Fun(..) | TypeKind::DepFun(..) => {
                return unsupported("a parameter that is a function")
            }
            _ => {
                let storage = ev.alloc(param, Role::Input)?;
                ev.view(&storage, param, Vec::new())?
            }
        };
        env = bind(&env, x.id, value);
        body = inner;
    }
    let ty = typed(body)?;
    if !ty.is_data() {
        return unsupported(format!("a result of type {ty} (sizes must be concrete)"));
    }
    // The output first: what the program computes is made after it, and can be
    // written in place of it.
    let out = ev.alloc(&ty, Role::Output)?;
    let result = ev.expr(body, &env)?;
    ev.store(&result, &out, &[])?;
    drop(env);
    Ok(ev.finish())
}
