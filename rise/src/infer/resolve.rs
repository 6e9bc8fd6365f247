//! Solving the nat equations and resolving the typed term: every node's final type,
//! checked. Types are DAGs, so each shared part is resolved and checked once.

use super::unify::{addr, ZonkMemo};
use super::{shown, span_of, Inference};
use crate::error::{Error, ErrorKind};
use crate::nat::{solve, Nat, NatEquation, NatVar, Solution, SolveError};
use crate::prim::Class;
use crate::term::{Expr, Term};
use crate::types::{check_size, IllFormed, Scalar, SizeRole, Type, TypeKind};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

impl Inference<'_> {
    /// The equations from index `first` on, their bound unknowns replaced.
    fn pending_equations(&mut self, first: usize) -> Vec<NatEquation> {
        (first..self.equations.len())
            .map(|i| {
                let (lhs, rhs) = (
                    self.equations[i].0.lhs.clone(),
                    self.equations[i].0.rhs.clone(),
                );
                NatEquation {
                    lhs: self.nat(&lhs),
                    rhs: self.nat(&rhs),
                }
            })
            .collect()
    }

    /// Rewrites the bindings of the unknowns in `t` to their resolved values, so that
    /// one substitution ([`Inference::bound`]) resolves them.
    fn compress_unknowns_in(&mut self, t: &Type) {
        let mut unknowns = Vec::new();
        each_nat(&self.deep(t), |n| unknowns.extend(n.unknowns()));
        for k in unknowns {
            self.resolved_binding(k);
        }
    }

    /// `n` with bound unknowns replaced, in one pass: for unknowns whose bindings are
    /// compressed.
    fn bound(&self, n: &Nat) -> Nat {
        if !n.contains_unknown() {
            return n.clone();
        }
        n.substitute(&|v| match v {
            NatVar::Unknown(k) => self.bindings.get(k).cloned(),
            NatVar::Named(_) => None,
        })
    }

    /// Solves the equations from `first` on if they can be solved on their own, and
    /// returns `ty` with the solution applied; a false equation is an error now.
    pub(super) fn settle(&mut self, first: usize, ty: &Type) -> Result<Type, Error> {
        let equations = self.pending_equations(first);
        self.compress_unknowns_in(ty);
        match solve(&equations) {
            Ok(solution) => {
                let resolve = |n: &Nat| apply(&solution, &self.bound(n));
                Ok(self.zonk(ty, Some(&resolve), None))
            }
            Err(SolveError::Unsolvable { .. }) => {
                let resolve = |n: &Nat| self.bound(n);
                Ok(self.zonk(ty, Some(&resolve), None))
            }
            Err(e) => Err(self.nat_error(first, &e)),
        }
    }

    /// Solves every equation; afterwards each binding holds its resolved value.
    pub(super) fn solve_nats(&mut self) -> Result<Solution, Error> {
        let equations = self.pending_equations(0);
        let solution = solve(&equations).map_err(|e| self.nat_error(0, &e))?;
        let keys: Vec<u32> = self.bindings.keys().copied().collect();
        for k in keys {
            self.resolved_binding(k);
        }
        Ok(solution)
    }

    fn nat_error(&self, first: usize, e: &SolveError) -> Error {
        let index = match e {
            SolveError::False { index, .. } | SolveError::Unsolvable { index, .. } => *index,
        };
        Error::new(
            ErrorKind::Nat,
            self.equations[first + index].1,
            format!("{e}"),
        )
    }
}

/// `n` with the solver's `solution` applied.
fn apply(solution: &Solution, n: &Nat) -> Nat {
    if solution.is_empty() || !n.contains_unknown() {
        return n.clone();
    }
    n.substitute(&|v| match v {
        NatVar::Unknown(k) => solution.get(k).cloned(),
        NatVar::Named(_) => None,
    })
}

/// Calls `f` on every nat of `t`, visiting each shared part once.
fn each_nat(t: &Type, mut f: impl FnMut(&Nat)) {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut stack = vec![t.clone()];
    while let Some(ty) = stack.pop() {
        if !seen.insert(addr(&ty)) {
            continue;
        }
        match ty.kind() {
            TypeKind::Scalar(_) | TypeKind::Var(_) => {}
            TypeKind::Index(n) => f(n),
            TypeKind::Vector(e, n) | TypeKind::Array(n, e) => {
                f(n);
                stack.push(e.clone());
            }
            TypeKind::Pair(a, b) | TypeKind::Fun(a, b) => {
                stack.push(a.clone());
                stack.push(b.clone());
            }
            TypeKind::DepFun(_, b) => stack.push(b.clone()),
        }
    }
}

/// What is wrong with a final type, if anything (computed once per shared part).
#[derive(Clone, Default)]
struct Flaws {
    /// An inference variable or nat unknown remains.
    unknown: bool,
    /// A constant size that is not a whole number (the first, left to right).
    fraction: Option<Nat>,
    /// A function inside an array, vector or pair.
    function_inside: bool,
    /// A size that is undefined or too small (`n/0`, `0 - 1`, `vec[t, 0]`).
    ill_formed: Option<IllFormed>,
}

/// Final types for a finished inference.
pub(super) struct Resolver<'i, 'k> {
    inference: &'i Inference<'k>,
    solution: Solution,
    memo: ZonkMemo,
    flaws: FxHashMap<usize, Flaws>,
}

impl<'i, 'k> Resolver<'i, 'k> {
    pub(super) fn new(inference: &'i Inference<'k>, solution: Solution) -> Self {
        Resolver {
            inference,
            solution,
            memo: ZonkMemo::default(),
            flaws: FxHashMap::default(),
        }
    }

    fn final_nat(&self, n: &Nat) -> Nat {
        apply(&self.solution, &self.inference.bound(n))
    }

    /// The final type: type variables and nat unknowns replaced by their solutions.
    fn resolve(&mut self, t: &Type) -> Type {
        let Resolver {
            inference,
            solution,
            memo,
            ..
        } = self;
        let inference: &Inference<'_> = inference;
        let resolve = |n: &Nat| apply(solution, &inference.bound(n));
        inference.zonk_with(t, Some(&resolve), None, memo)
    }

    /// The typed term with final types, checked; parts taken as they are (reused
    /// definitions, trusted nodes) are left alone.
    pub(super) fn term(&mut self, root: &Term) -> Result<Term, Error> {
        let inference = self.inference;
        let trusted = &inference.trusted;
        let mut stack: Vec<(Term, Option<Option<Type>>)> = vec![(root.clone(), None)];
        let mut done: Vec<Term> = Vec::new();
        while let Some((t, resolved)) = stack.pop() {
            if !trusted.is_empty() && trusted.contains(&t.node().id()) {
                done.push(t);
                continue;
            }
            let Some(ty) = resolved else {
                // On the way down: the node's type first, so that the outermost
                // problem is the one reported.
                let ty = t.ty().map(|ty| self.resolve(ty));
                if let Some(ty) = &ty {
                    self.check(ty, &t)?;
                }
                if let Expr::NatApp(_, n) = t.expr() {
                    let n = self.final_nat(n);
                    if n.contains_unknown() {
                        return Err(Error::new(
                            ErrorKind::Nat,
                            span_of(&t),
                            format!("cannot infer the nat argument here (found {n})"),
                        ));
                    }
                }
                let children = children_in_order(&t);
                stack.push((t, Some(ty)));
                stack.extend(children.into_iter().rev().map(|c| (c, None)));
                continue;
            };
            let expr = match t.expr() {
                Expr::Lambda(x, annotation, _) => {
                    Expr::Lambda(x.clone(), annotation.clone(), pop(&mut done))
                }
                Expr::App(..) => {
                    let a = pop(&mut done);
                    Expr::App(pop(&mut done), a)
                }
                Expr::NatLambda(v, _) => Expr::NatLambda(v.clone(), pop(&mut done)),
                Expr::NatApp(_, n) => Expr::NatApp(pop(&mut done), self.final_nat(n)),
                Expr::Array(items) => Expr::Array(done.split_off(done.len() - items.len())),
                Expr::Annotation(_, annotation) => {
                    Expr::Annotation(pop(&mut done), annotation.clone())
                }
                Expr::Var(_) | Expr::Literal(_) | Expr::Prim(_) => t.expr().clone(),
            };
            done.push(Term::with(expr, ty, t.span()));
        }
        Ok(done.pop().expect("the root"))
    }

    /// A final type may contain no inference variable, and arrays, pairs and vectors
    /// hold only data.
    fn check(&mut self, ty: &Type, t: &Term) -> Result<(), Error> {
        let flaws = self.flaws_of(ty);
        if flaws.unknown {
            return Err(Error::new(
                ErrorKind::Type,
                span_of(t),
                format!(
                    "cannot infer the type here (found {}); add a type annotation",
                    shown(ty)
                ),
            ));
        }
        if let Some(size) = flaws.fraction {
            return Err(Error::new(
                ErrorKind::Nat,
                span_of(t),
                format!(
                    "the size {size} in {} is not a whole number: a division in the \
                     program's types does not divide (a function generic in a size used \
                     at a size it cannot take)",
                    shown(ty)
                ),
            ));
        }
        if let Some(e) = flaws.ill_formed {
            return Err(Error::new(ErrorKind::Type, span_of(t), e.to_string()));
        }
        if flaws.function_inside {
            return Err(Error::new(
                ErrorKind::Type,
                span_of(t),
                format!(
                    "expected data in arrays and pairs, found a function inside {}",
                    shown(ty)
                ),
            ));
        }
        Ok(())
    }

    /// The flaws of `ty`, computed bottom-up over its distinct parts.
    fn flaws_of(&mut self, ty: &Type) -> Flaws {
        let mut stack = vec![(ty.clone(), false)];
        while let Some((t, ready)) = stack.pop() {
            if self.flaws.contains_key(&addr(&t)) {
                continue;
            }
            let children: SmallVec<[Type; 2]> = match t.kind() {
                TypeKind::Scalar(_) | TypeKind::Index(_) | TypeKind::Var(_) => SmallVec::new(),
                TypeKind::Vector(e, _) | TypeKind::Array(_, e) | TypeKind::DepFun(_, e) => {
                    smallvec::smallvec![e.clone()]
                }
                TypeKind::Pair(a, b) | TypeKind::Fun(a, b) => {
                    smallvec::smallvec![a.clone(), b.clone()]
                }
            };
            if !ready && children.iter().any(|c| !self.flaws.contains_key(&addr(c))) {
                stack.push((t, true));
                stack.extend(children.into_iter().map(|c| (c, false)));
                continue;
            }
            let of = |c: &Type| self.flaws[&addr(c)].clone();
            let fractional = |n: &Nat| (n.is_const() && !n.is_integral()).then(|| n.clone());
            let flaws = match t.kind() {
                TypeKind::Scalar(_) => Flaws::default(),
                TypeKind::Var(_) => Flaws {
                    unknown: true,
                    ..Flaws::default()
                },
                TypeKind::Index(n) => Flaws {
                    unknown: n.contains_unknown(),
                    fraction: fractional(n),
                    function_inside: false,
                    ill_formed: check_size(n, SizeRole::IndexBound, &t).err(),
                },
                TypeKind::Vector(e, n) | TypeKind::Array(n, e) => {
                    let inner = of(e);
                    let role = match t.kind() {
                        TypeKind::Vector(..) => SizeRole::VectorWidth,
                        _ => SizeRole::ArrayLength,
                    };
                    Flaws {
                        unknown: n.contains_unknown() || inner.unknown,
                        fraction: fractional(n).or(inner.fraction),
                        function_inside: !e.is_data() || inner.function_inside,
                        ill_formed: check_size(n, role, &t).err().or(inner.ill_formed),
                    }
                }
                TypeKind::Pair(a, b) | TypeKind::Fun(a, b) => {
                    let (x, y) = (of(a), of(b));
                    let pair = matches!(t.kind(), TypeKind::Pair(..));
                    Flaws {
                        unknown: x.unknown || y.unknown,
                        fraction: x.fraction.or(y.fraction),
                        function_inside: (pair && !(a.is_data() && b.is_data()))
                            || x.function_inside
                            || y.function_inside,
                        ill_formed: x.ill_formed.or(y.ill_formed),
                    }
                }
                TypeKind::DepFun(_, b) => of(b),
            };
            self.flaws.insert(addr(&t), flaws);
        }
        self.flaws[&addr(ty)].clone()
    }

    /// Checks the class constraints of the primitives (`add` on numbers, ...).
    pub(super) fn check_classes(&mut self) -> Result<(), Error> {
        let classes = &self.inference.classes;
        for (ty, class, span) in classes {
            let ty = self.resolve(ty);
            let scalar = |t: &Type| match t.kind() {
                TypeKind::Scalar(s) => Some(*s),
                TypeKind::Vector(e, _) => match e.kind() {
                    TypeKind::Scalar(s) => Some(*s),
                    _ => None,
                },
                _ => None,
            };
            let ok = match class {
                Class::Arithmetic => scalar(&ty).is_some_and(|s| s != Scalar::Bool),
                Class::Comparable => scalar(&ty).is_some(),
                Class::Float => scalar(&ty).is_some_and(Scalar::is_float),
                Class::Scalar => matches!(ty.kind(), TypeKind::Scalar(_)),
                Class::Data => ty.is_data(),
            };
            if !ok {
                let expected = match class {
                    Class::Arithmetic => "a number or a vector of numbers",
                    Class::Comparable => "a scalar or a vector of scalars",
                    Class::Float => "f32, f64 or a vector of them",
                    Class::Scalar => "a scalar",
                    Class::Data => "data (not a function)",
                };
                return Err(Error::new(
                    ErrorKind::Type,
                    *span,
                    format!("expected {expected}, found {}", shown(&ty)),
                ));
            }
        }
        Ok(())
    }
}

/// The children of `t` in the order inference visits them (an application's function
/// before its argument).
fn children_in_order(t: &Term) -> SmallVec<[Term; 2]> {
    match t.expr() {
        Expr::Lambda(_, _, b)
        | Expr::NatLambda(_, b)
        | Expr::NatApp(b, _)
        | Expr::Annotation(b, _) => smallvec::smallvec![b.clone()],
        Expr::App(f, a) => smallvec::smallvec![f.clone(), a.clone()],
        Expr::Array(items) => items.iter().cloned().collect(),
        Expr::Var(_) | Expr::Literal(_) | Expr::Prim(_) => SmallVec::new(),
    }
}

fn pop(done: &mut Vec<Term>) -> Term {
    done.pop().expect("a child's result")
}
