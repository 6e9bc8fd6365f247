//! The walk over a term: every node is given a type, with an explicit work stack
//! (terms 100,000 levels deep are normal).

use super::{shown, span_of, Inference};
use crate::error::{Error, ErrorKind};
use crate::nat::{Nat, NatVar};
use crate::prim::FreshVars;
use crate::term::{Expr, Literal, Term};
use crate::types::{Scalar, Type, TypeKind};
use elevate_core::Traversable;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// Work left to do: a node to visit, or a node to finish once its children are typed
/// (their results are on the result stack, in order).
enum Task {
    Visit(Term),
    /// The body of this lambda is typed; its parameter has this type.
    Lambda(Term, Type),
    /// The function of this application is typed; its argument is next.
    Function(Term),
    /// Both sides of this application are typed.
    App(Term),
    /// The body of this `depFun` is typed; its equations start at this index.
    NatLambda(Term, usize),
    /// The function of this nat application is typed.
    NatApp(Term),
    /// Item `index` of this array is typed.
    Item(Term, usize),
    /// The expression of this annotation is typed.
    Annotation(Term),
}

/// The variables in scope and their types: innermost binding of each last.
#[derive(Default)]
struct Env {
    values: FxHashMap<u64, Vec<Type>>,
    /// Nat variables bound by the enclosing `depFun`s, with their multiplicity.
    nats: FxHashMap<NatVar, usize>,
}

impl Inference<'_> {
    /// Types every node of `term`; returns the typed term and its type.
    pub(super) fn walk(&mut self, term: &Term) -> Result<(Term, Type), Error> {
        let mut env = Env::default();
        let mut tasks = vec![Task::Visit(term.clone())];
        let mut results: Vec<(Term, Type)> = Vec::new();
        // Array elements typed so far, per open array (innermost last).
        let mut items: Vec<(Vec<Term>, Type)> = Vec::new();
        while let Some(task) = tasks.pop() {
            match task {
                Task::Visit(t) => {
                    if let Some(done) = self.visit(&t, &mut env, &mut tasks)? {
                        results.push(done);
                    }
                }
                Task::Lambda(t, param) => {
                    let (body, body_ty) = results.pop().expect("the body's result");
                    let Expr::Lambda(x, annotation, _) = t.expr() else {
                        unreachable!("a lambda task")
                    };
                    if let Some(types) = env.values.get_mut(&x.id) {
                        types.pop();
                    }
                    let (body, body_ty) = self.instantiate(body, body_ty);
                    let expr = Expr::Lambda(x.clone(), annotation.clone(), body);
                    results.push(typed(&t, expr, Type::fun(param, body_ty)));
                }
                Task::Function(t) => {
                    let (f, f_ty) = results.pop().expect("the function's result");
                    let (f, f_ty) = self.instantiate(f, f_ty);
                    results.push((f, f_ty));
                    let Expr::App(_, a) = t.expr() else {
                        unreachable!("an application task")
                    };
                    let a = a.clone();
                    tasks.push(Task::App(t));
                    tasks.push(Task::Visit(a));
                }
                Task::App(t) => {
                    let (a_typed, a_ty) = results.pop().expect("the argument's result");
                    let (f_typed, f_ty) = results.pop().expect("the function's result");
                    let done = self.application(&t, f_typed, f_ty, a_typed, a_ty)?;
                    results.push(done);
                }
                Task::NatLambda(t, first_equation) => {
                    let (body, body_ty) = results.pop().expect("the body's result");
                    let Expr::NatLambda(v, _) = t.expr() else {
                        unreachable!("a depFun task")
                    };
                    leave_nat(&mut env, v);
                    // Solve the body's nat equations now, so that its type is expressed
                    // in terms of `v`: `v` is bound here and must not escape through an
                    // unknown solved later.
                    let body_ty = self.settle(first_equation, &body_ty)?;
                    let expr = Expr::NatLambda(v.clone(), body);
                    results.push(typed(&t, expr, Type::dep_fun(v.clone(), body_ty)));
                }
                Task::NatApp(t) => {
                    let (f_typed, f_ty) = results.pop().expect("the function's result");
                    let Expr::NatApp(_, n) = t.expr() else {
                        unreachable!("a nat application task")
                    };
                    let resolved = self.shallow(&f_ty);
                    let TypeKind::DepFun(v, body) = resolved.kind() else {
                        return Err(Error::new(
                            ErrorKind::Type,
                            span_of(&t),
                            format!(
                                "expected a function of a nat, found {}",
                                shown(&self.deep(&f_ty))
                            ),
                        ));
                    };
                    let ty = self.substitute_bound(body, v, n);
                    results.push(typed(&t, Expr::NatApp(f_typed, n.clone()), ty));
                }
                Task::Item(t, index) => {
                    let (item, item_ty) = results.pop().expect("the item's result");
                    let Expr::Array(all) = t.expr() else {
                        unreachable!("an array task")
                    };
                    if index == 0 {
                        // The first item's type is the element type: no variable to
                        // solve, so nested arrays build no chains of variables.
                        items.push((Vec::with_capacity(all.len()), item_ty));
                    } else {
                        let elem = items.last().expect("an open array").1.clone();
                        let what = "array elements differ";
                        self.expect(&elem, &item_ty, span_of(&all[index]), what)?;
                    }
                    let open = items.last_mut().expect("an open array");
                    open.0.push(item);
                    if index + 1 < all.len() {
                        let next = all[index + 1].clone();
                        tasks.push(Task::Item(t, index + 1));
                        tasks.push(Task::Visit(next));
                    } else {
                        let (typed_items, elem) = items.pop().expect("an open array");
                        let ty = Type::array(Nat::cst(all.len() as i64), elem);
                        results.push(typed(&t, Expr::Array(typed_items), ty));
                    }
                }
                Task::Annotation(t) => {
                    let (e_typed, e_ty) = results.pop().expect("the expression's result");
                    let Expr::Annotation(_, annotation) = t.expr() else {
                        unreachable!("an annotation task")
                    };
                    let (e_typed, e_ty) = if matches!(annotation.kind(), TypeKind::DepFun(..)) {
                        (e_typed, e_ty)
                    } else {
                        self.instantiate(e_typed, e_ty)
                    };
                    let what = "the annotation does not match";
                    self.expect(annotation, &e_ty, span_of(&t), what)?;
                    let expr = Expr::Annotation(e_typed, annotation.clone());
                    results.push(typed(&t, expr, annotation.clone()));
                }
            }
        }
        Ok(results.pop().expect("the term's result"))
    }

    /// Starts on node `t`: its result if it has no children to type first, else
    /// `None` and the tasks that will produce it.
    fn visit(
        &mut self,
        t: &Term,
        env: &mut Env,
        tasks: &mut Vec<Task>,
    ) -> Result<Option<(Term, Type)>, Error> {
        if let Some(done) = self.reuse(t) {
            return Ok(Some(done));
        }
        let span = span_of(t);
        Ok(Some(match t.expr() {
            Expr::Var(x) => {
                let Some(ty) = env.values.get(&x.id).and_then(|types| types.last()) else {
                    return Err(Error::new(
                        ErrorKind::UnknownName,
                        span,
                        format!("`{}` is not bound here", x.name),
                    ));
                };
                typed(t, t.expr().clone(), ty.clone())
            }
            Expr::Literal(l) => typed(t, t.expr().clone(), Type::scalar(literal_type(l))),
            Expr::Prim(p) => {
                let instance = p.instantiate(self);
                for (ty, class) in instance.classes {
                    self.classes.push((ty, class, span));
                }
                typed(t, t.expr().clone(), instance.ty)
            }
            Expr::Lambda(x, annotation, body) => {
                let param = match annotation {
                    Some(ty) => ty.clone(),
                    None => self.fresh_type(),
                };
                env.values.entry(x.id).or_default().push(param.clone());
                tasks.push(Task::Lambda(t.clone(), param));
                tasks.push(Task::Visit(body.clone()));
                return Ok(None);
            }
            Expr::App(f, _) => {
                tasks.push(Task::Function(t.clone()));
                tasks.push(Task::Visit(f.clone()));
                return Ok(None);
            }
            Expr::NatLambda(v, _) => {
                // A `depFun` binding a nat variable already bound outside it is renamed
                // apart: nat equations name variables, and the two must not meet.
                let t = if env.nats.contains_key(v) {
                    rename_nat_binder(t, v, &env.nats)
                } else {
                    t.clone()
                };
                let Expr::NatLambda(v, body) = t.expr() else {
                    unreachable!("renaming keeps a depFun")
                };
                *env.nats.entry(v.clone()).or_default() += 1;
                let body = body.clone();
                tasks.push(Task::NatLambda(t, self.equations.len()));
                tasks.push(Task::Visit(body));
                return Ok(None);
            }
            Expr::NatApp(f, _) => {
                tasks.push(Task::NatApp(t.clone()));
                tasks.push(Task::Visit(f.clone()));
                return Ok(None);
            }
            Expr::Array(all) => {
                if all.is_empty() {
                    let elem = self.fresh_type();
                    typed(t, t.expr().clone(), Type::array(Nat::cst(0), elem))
                } else {
                    tasks.push(Task::Item(t.clone(), 0));
                    tasks.push(Task::Visit(all[0].clone()));
                    return Ok(None);
                }
            }
            Expr::Annotation(e, _) => {
                tasks.push(Task::Annotation(t.clone()));
                tasks.push(Task::Visit(e.clone()));
                return Ok(None);
            }
        }))
    }

    /// A node typed without looking inside: a definition typed already, or (when
    /// re-typing a rewrite) a typed node whose type holds wherever it goes.
    fn reuse(&mut self, t: &Term) -> Option<(Term, Type)> {
        if let Some(def) = self.known.and_then(|known| known.get(t)) {
            let ty = def.ty().cloned().expect("typed definitions are typed");
            let node = Term::with(def.expr().clone(), Some(ty.clone()), t.span());
            self.trusted.insert(node.node().id());
            return Some((node, ty));
        }
        if self.trust_typed {
            if let Some(ty) = kept_type(t) {
                self.trusted.insert(t.node().id());
                return Some((t.clone(), ty.clone()));
            }
        }
        None
    }

    /// `f(a)`, both typed.
    fn application(
        &mut self,
        t: &Term,
        f_typed: Term,
        f_ty: Type,
        a_typed: Term,
        a_ty: Type,
    ) -> Result<(Term, Type), Error> {
        let Expr::App(f, a) = t.expr() else {
            unreachable!("an application")
        };
        // A function of a nat stays one where one is expected (`iterate`).
        let f_resolved = self.shallow(&f_ty);
        let wants_dep_fun = match f_resolved.kind() {
            TypeKind::Fun(param, _) => {
                matches!(self.shallow(param).kind(), TypeKind::DepFun(..))
            }
            _ => false,
        };
        let (a_typed, a_ty) = if wants_dep_fun {
            (a_typed, a_ty)
        } else {
            self.instantiate(a_typed, a_ty)
        };
        let result = match f_resolved.kind() {
            TypeKind::Fun(param, result) => {
                self.expect(param, &a_ty, span_of(a), "wrong argument")?;
                result.clone()
            }
            TypeKind::Var(_) => {
                let result = self.fresh_type();
                let fun = Type::fun(a_ty.clone(), result.clone());
                self.expect(&f_ty, &fun, span_of(f), "wrong function")?;
                result
            }
            _ => {
                return Err(Error::new(
                    ErrorKind::Type,
                    span_of(f),
                    format!(
                        "expected a function, found a value of type {}",
                        shown(&self.deep(&f_ty))
                    ),
                ))
            }
        };
        Ok(typed(t, Expr::App(f_typed, a_typed), result))
    }
}

/// The type of `t` if re-typing ([`super::retype`]) takes it as it is, without looking
/// inside: data has its type wherever it goes, and a lambda or a variable keeps the
/// type of its parameter. A partial application such as `map(f)` does not (rules move
/// it to arrays of other sizes), so it is inferred again; so is a type with unknowns.
pub(crate) fn kept_type(t: &Term) -> Option<&Type> {
    let ty = t.ty()?;
    let holds =
        (ty.is_data() || matches!(t.expr(), Expr::Lambda(..) | Expr::Var(_))) && !ty.has_unknowns();
    holds.then_some(ty)
}

/// Ends the scope of a `depFun`'s variable.
fn leave_nat(env: &mut Env, v: &NatVar) {
    if let Some(count) = env.nats.get_mut(v) {
        *count -= 1;
        if *count == 0 {
            env.nats.remove(v);
        }
    }
}

/// `t`, a `depFun` binding `v`, with `v` renamed to a name bound nowhere around or
/// inside it.
fn rename_nat_binder(t: &Term, v: &NatVar, bound: &FxHashMap<NatVar, usize>) -> Term {
    let Expr::NatLambda(_, body) = t.expr() else {
        unreachable!("a depFun")
    };
    let NatVar::Named(name) = v else {
        return t.clone();
    };
    let inside = named_nat_vars(body);
    let fresh = (1..)
        .map(|k| format!("{name}{k}"))
        .find(|c| {
            !inside.contains(c.as_str()) && !bound.contains_key(&NatVar::Named(c.as_str().into()))
        })
        .expect("some name is free");
    let fresh = NatVar::Named(fresh.as_str().into());
    let body = body.substitute_nat(v, &Nat::var(fresh.clone()));
    Term::with(Expr::NatLambda(fresh, body), t.ty().cloned(), t.span())
}

/// Every named nat variable written anywhere in `t` (in nats, types and binders).
fn named_nat_vars(t: &Term) -> FxHashSet<Arc<str>> {
    let mut names = FxHashSet::default();
    let mut add = |vars: Vec<NatVar>| {
        for v in vars {
            if let NatVar::Named(n) = v {
                names.insert(n);
            }
        }
    };
    let mut stack = vec![t.clone()];
    while let Some(t) = stack.pop() {
        if let Some(ty) = t.ty() {
            add(ty.nat_vars());
        }
        match t.expr() {
            Expr::NatLambda(v, _) => add(vec![v.clone()]),
            Expr::NatApp(_, n) => add(n.vars()),
            Expr::Lambda(_, Some(ty), _) | Expr::Annotation(_, ty) => add(ty.nat_vars()),
            _ => {}
        }
        for i in 0..t.arity() {
            stack.push(t.child(i).clone());
        }
    }
    names
}

/// The typed node for `t`.
fn typed(t: &Term, expr: Expr, ty: Type) -> (Term, Type) {
    (Term::with(expr, Some(ty.clone()), t.span()), ty)
}

fn literal_type(l: &Literal) -> Scalar {
    match l {
        Literal::Bool(_) => Scalar::Bool,
        Literal::I32(_) => Scalar::I32,
        Literal::I64(_) => Scalar::I64,
        Literal::F32(_) => Scalar::F32,
        Literal::F64(_) => Scalar::F64,
    }
}
