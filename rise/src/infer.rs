//! Type inference: unification of types, with nat equations solved at the end.
//!
//! Only parameters need annotations. Dependent functions are instantiated implicitly
//! where a function is expected (`dot(a, b)` for `dot: (n: nat) -> n.f32 -> ...`), and
//! the instantiation becomes an explicit nat application in the typed term. After
//! inference every node carries its type.

use crate::definition::Definition;
use crate::error::Span;
use crate::error::{Error, ErrorKind};
use crate::nat::{solve, Equation, Nat, NatVar, SolveError};
use crate::prim::{Class, FreshVars};
use crate::term::{Expr, Literal, Term};
use crate::types::{Scalar, Type, TypeKind};
use elevate_core::stack::guard;
use std::collections::BTreeMap;

/// A definition after type inference.
#[derive(Debug, Clone)]
pub struct TypedDefinition {
    /// Its name.
    pub name: String,
    /// Its type, as `check` prints it: implicit nat parameters left implicit.
    pub ty: Type,
    /// The typed term (leading `depFun`s bind the nat parameters).
    pub term: Term,
    /// Its nat parameters.
    pub nat_params: Vec<NatVar>,
}

/// Infers the types of every definition of a program (each on its own, polymorphic in
/// its nat parameters).
pub fn infer_program(defs: &[Definition]) -> Result<Vec<TypedDefinition>, Error> {
    defs.iter()
        .map(|def| {
            let term = infer(&def.term)?;
            let mut ty = term.ty().cloned().expect("inferred terms are typed");
            if !def.explicit_nats {
                for _ in &def.nat_params {
                    if let TypeKind::DepFun(_, body) = ty.kind() {
                        ty = body.clone();
                    }
                }
            }
            Ok(TypedDefinition {
                name: def.name.clone(),
                ty,
                term,
                nat_params: def.nat_params.clone(),
            })
        })
        .collect()
}

/// Infers the type of a closed term; every node of the result carries its type.
pub fn infer(term: &Term) -> Result<Term, Error> {
    let mut inference = Inference::default();
    let mut env = Vec::new();
    let (typed, _) = inference.infer(term, &mut env)?;
    let solution = inference.solve_nats()?;
    let resolved = inference.resolve_term(&typed, &solution)?;
    inference.check_classes(&solution)?;
    Ok(resolved)
}

/// Types the untyped nodes of a term whose other nodes are typed: a typed node of data
/// or a typed lambda or variable is taken as it is, without looking inside, so re-typing what a
/// rewrite rule built costs time in the size of the new nodes only (other typed nodes,
/// such as `map(f)`, are inferred again, since a rule may move them to arrays of other
/// sizes). Variables bound outside the term must be typed.
///
/// ```
/// use elevate_rise::{infer, parse_term, print_term, Term};
/// use elevate_rise::term::Expr;
/// let typed = infer::infer(&parse_term("fun(x: 4.f32 => x |> map(neg))").unwrap()).unwrap();
/// let Expr::Lambda(_, _, body) = typed.expr() else { unreachable!() };
/// // `transpose(transpose(body))` built around the typed body, then re-typed:
/// let t = |x: Term| Term::app(Term::prim(elevate_rise::prim::Prim::Id), x);
/// let retyped = infer::retype(&t(body.clone())).unwrap();
/// assert_eq!(retyped.ty().unwrap().to_string(), "4.f32");
/// ```
pub fn retype(term: &Term) -> Result<Term, Error> {
    retype_inner(term, None)
}

/// [`retype`], for a term that must have type `expected` (what a rewrite replaced).
pub fn retype_as(term: &Term, expected: &Type) -> Result<Term, Error> {
    retype_inner(term, Some(expected))
}

fn retype_inner(term: &Term, expected: Option<&Type>) -> Result<Term, Error> {
    let mut inference = Inference {
        trust_typed: true,
        ..Inference::default()
    };
    let mut env = Vec::new();
    let (typed, ty) = inference.infer(term, &mut env)?;
    if let Some(expected) = expected {
        inference.expect(expected, &ty, span_of(term), "the rewrite changed the type")?;
    }
    let solution = inference.solve_nats()?;
    let resolved = inference.resolve_term(&typed, &solution)?;
    inference.check_classes(&solution)?;
    Ok(resolved)
}

/// Type-checks a term that has already been typed (after a rewrite, say) and returns
/// its type.
pub fn type_of(term: &Term) -> Result<Type, Error> {
    Ok(infer(term)?
        .ty()
        .cloned()
        .expect("inferred terms are typed"))
}

#[derive(Default)]
struct Inference {
    /// Solutions of type variables (`None`: unsolved).
    types: Vec<Option<Type>>,
    next_nat: u32,
    /// Nat unknowns bound during unification (`?3 := n`): most equations are of that
    /// form, and binding them at once keeps the solver's work small.
    bindings: rustc_hash::FxHashMap<u32, Nat>,
    /// The other nat equations, solved at the end (or when a `depFun` is finished).
    equations: Vec<(Equation, Span)>,
    classes: Vec<(Type, Class, Span)>,
    /// Take typed nodes as they are ([`retype`]).
    trust_typed: bool,
    /// The nodes taken as they are, which resolution leaves alone.
    trusted: rustc_hash::FxHashSet<elevate_core::NodeId>,
}

impl FreshVars for Inference {
    fn fresh_type(&mut self) -> Type {
        self.types.push(None);
        Type::var(self.types.len() as u32 - 1)
    }

    fn fresh_nat(&mut self) -> Nat {
        self.next_nat += 1;
        Nat::unknown(self.next_nat)
    }
}

/// Why two types do not unify.
struct Mismatch;

fn span_of(t: &Term) -> Span {
    t.span().unwrap_or_default()
}

fn type_error(span: Span, expected: &Type, found: &Type, what: &str) -> Error {
    Error::new(
        ErrorKind::Type,
        span,
        format!("{what}: expected {expected}, found {found}"),
    )
}

impl Inference {
    /// Follows solved type variables at the top.
    fn shallow(&self, t: &Type) -> Type {
        let mut t = t.clone();
        while let TypeKind::Var(k) = t.kind() {
            match &self.types[*k as usize] {
                Some(s) => t = s.clone(),
                None => break,
            }
        }
        t
    }

    /// Replaces every solved type variable, deeply.
    fn deep(&self, t: &Type) -> Type {
        let t = self.shallow(t);
        match t.kind() {
            TypeKind::Scalar(_) | TypeKind::Index(_) | TypeKind::Var(_) => t,
            TypeKind::Vector(e, n) => Type::vector(self.deep(e), n.clone()),
            TypeKind::Array(n, e) => Type::array(n.clone(), self.deep(e)),
            TypeKind::Pair(a, b) => Type::pair(self.deep(a), self.deep(b)),
            TypeKind::Fun(a, b) => Type::fun(self.deep(a), self.deep(b)),
            TypeKind::DepFun(v, b) => Type::dep_fun(v.clone(), self.deep(b)),
        }
    }

    fn occurs(&self, k: u32, t: &Type) -> bool {
        let t = self.shallow(t);
        match t.kind() {
            TypeKind::Var(j) => *j == k,
            TypeKind::Scalar(_) | TypeKind::Index(_) => false,
            TypeKind::Vector(e, _) | TypeKind::Array(_, e) | TypeKind::DepFun(_, e) => {
                self.occurs(k, e)
            }
            TypeKind::Pair(a, b) | TypeKind::Fun(a, b) => self.occurs(k, a) || self.occurs(k, b),
        }
    }

    /// `n` with the bound unknowns replaced.
    fn nat(&self, n: &Nat) -> Nat {
        let mut current = n.clone();
        for _ in 0..64 {
            if !current.contains_unknown() {
                break;
            }
            let next = current.substitute(&|v| match v {
                NatVar::Unknown(k) => self.bindings.get(k).cloned(),
                NatVar::Named(_) => None,
            });
            if next == current {
                break;
            }
            current = next;
        }
        current
    }

    /// `n` with the bound unknowns and the solver's `solution` replaced.
    fn final_nat(&self, n: &Nat, solution: &BTreeMap<u32, Nat>) -> Nat {
        let mut current = self.nat(n);
        for _ in 0..64 {
            let next = self.nat(&current.substitute(&|v| match v {
                NatVar::Unknown(k) => solution.get(k).cloned(),
                NatVar::Named(_) => None,
            }));
            if next == current {
                break;
            }
            current = next;
        }
        current
    }

    fn equate(&mut self, a: &Nat, b: &Nat, span: Span) {
        let (a, b) = (self.nat(a), self.nat(b));
        if a == b {
            return;
        }
        for (unknown, value) in [(&a, &b), (&b, &a)] {
            if let Some(k) = bare_unknown(unknown) {
                if !value.vars().contains(&NatVar::Unknown(k)) {
                    self.bindings.insert(k, value.clone());
                    return;
                }
            }
        }
        self.equations.push((Equation { lhs: a, rhs: b }, span));
    }

    fn unify(&mut self, a: &Type, b: &Type, span: Span) -> Result<(), Mismatch> {
        let (a, b) = (self.shallow(a), self.shallow(b));
        match (a.kind(), b.kind()) {
            (TypeKind::Var(j), TypeKind::Var(k)) if j == k => Ok(()),
            (TypeKind::Var(k), _) => self.bind(*k, &b),
            (_, TypeKind::Var(k)) => self.bind(*k, &a),
            (TypeKind::Scalar(s), TypeKind::Scalar(t)) if s == t => Ok(()),
            (TypeKind::Index(n), TypeKind::Index(m)) => {
                self.equate(n, m, span);
                Ok(())
            }
            (TypeKind::Vector(s, n), TypeKind::Vector(t, m)) => {
                self.equate(n, m, span);
                self.unify(s, t, span)
            }
            (TypeKind::Array(n, s), TypeKind::Array(m, t)) => {
                self.equate(n, m, span);
                self.unify(s, t, span)
            }
            (TypeKind::Pair(a1, b1), TypeKind::Pair(a2, b2))
            | (TypeKind::Fun(a1, b1), TypeKind::Fun(a2, b2)) => {
                self.unify(a1, a2, span)?;
                self.unify(b1, b2, span)
            }
            (TypeKind::DepFun(v, s), TypeKind::DepFun(w, t)) => {
                let renamed = t.map_nats(&|x| (x == w).then(|| Nat::var(v.clone())));
                self.unify(s, &renamed, span)
            }
            _ => Err(Mismatch),
        }
    }

    fn bind(&mut self, k: u32, t: &Type) -> Result<(), Mismatch> {
        if self.occurs(k, t) {
            return Err(Mismatch);
        }
        self.types[k as usize] = Some(t.clone());
        Ok(())
    }

    fn expect(
        &mut self,
        expected: &Type,
        found: &Type,
        span: Span,
        what: &str,
    ) -> Result<(), Error> {
        self.unify(expected, found, span)
            .map_err(|Mismatch| type_error(span, &self.deep(expected), &self.deep(found), what))
    }

    /// Instantiates a dependent function type implicitly: the term becomes a nat
    /// application to a fresh unknown.
    fn instantiate(&mut self, mut term: Term, mut ty: Type) -> (Term, Type) {
        loop {
            let resolved = self.shallow(&ty);
            let TypeKind::DepFun(v, body) = resolved.kind() else {
                return (term, ty);
            };
            let n = self.fresh_nat();
            ty = self.deep(body).map_nats(&|w| (w == v).then(|| n.clone()));
            let span = term.span();
            term = Term::with(Expr::NatApp(term, n), Some(ty.clone()), span);
        }
    }

    fn infer(&mut self, t: &Term, env: &mut Vec<(u64, Type)>) -> Result<(Term, Type), Error> {
        guard(|| self.infer_node(t, env))
    }

    fn infer_node(&mut self, t: &Term, env: &mut Vec<(u64, Type)>) -> Result<(Term, Type), Error> {
        if self.trust_typed {
            // Data has its type wherever it goes; a lambda keeps the type of its
            // parameter. A partial application such as `map(f)` does not: rules move
            // it to arrays of other sizes, so it is inferred again.
            let trusted = |ty: &&Type| {
                (ty.is_data() || matches!(t.expr(), Expr::Lambda(..) | Expr::Var(_)))
                    && !ty.has_unknowns()
            };
            if let Some(ty) = t.ty().filter(trusted) {
                self.trusted.insert(t.node().id());
                return Ok((t.clone(), ty.clone()));
            }
        }
        let span = span_of(t);
        let (expr, ty) = match t.expr() {
            Expr::Var(x) => {
                let Some((_, ty)) = env.iter().rev().find(|(id, _)| *id == x.id) else {
                    return Err(Error::new(
                        ErrorKind::UnknownName,
                        span,
                        format!("`{}` is not bound here", x.name),
                    ));
                };
                (t.expr().clone(), ty.clone())
            }
            Expr::Literal(l) => (t.expr().clone(), Type::scalar(literal_type(l))),
            Expr::Prim(p) => {
                let instance = p.instantiate(self);
                for (ty, class) in instance.classes {
                    self.classes.push((ty, class, span));
                }
                (t.expr().clone(), instance.ty)
            }
            Expr::Lambda(x, annotation, body) => {
                let param = match annotation {
                    Some(ty) => ty.clone(),
                    None => self.fresh_type(),
                };
                env.push((x.id, param.clone()));
                let result = self.infer(body, env);
                env.pop();
                let (body, body_ty) = result?;
                let (body, body_ty) = self.instantiate(body, body_ty);
                (
                    Expr::Lambda(x.clone(), annotation.clone(), body),
                    Type::fun(param, body_ty),
                )
            }
            Expr::App(f, a) => {
                let (f_typed, f_ty) = self.infer(f, env)?;
                let (f_typed, f_ty) = self.instantiate(f_typed, f_ty);
                let (a_typed, a_ty) = self.infer(a, env)?;
                // A function of a nat stays one where one is expected (`iterate`).
                let wants_dep_fun = match self.shallow(&f_ty).kind() {
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
                let result = match self.shallow(&f_ty).kind() {
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
                                self.deep(&f_ty)
                            ),
                        ))
                    }
                };
                (Expr::App(f_typed, a_typed), result)
            }
            Expr::NatLambda(v, body) => {
                let first_equation = self.equations.len();
                let (body, body_ty) = self.infer(body, env)?;
                // Solve the body's nat equations now, so that its type is expressed in
                // terms of `v`: `v` is bound here and must not escape through an
                // unknown solved later.
                let body_ty = self.settle(first_equation, &body_ty)?;
                (
                    Expr::NatLambda(v.clone(), body.clone()),
                    Type::dep_fun(v.clone(), body_ty),
                )
            }
            Expr::NatApp(f, n) => {
                let (f_typed, f_ty) = self.infer(f, env)?;
                match self.shallow(&f_ty).kind() {
                    TypeKind::DepFun(v, body) => {
                        let ty = self.deep(body).map_nats(&|w| (w == v).then(|| n.clone()));
                        (Expr::NatApp(f_typed, n.clone()), ty)
                    }
                    _ => {
                        return Err(Error::new(
                            ErrorKind::Type,
                            span,
                            format!("expected a function of a nat, found {}", self.deep(&f_ty)),
                        ))
                    }
                }
            }
            Expr::Array(items) => {
                let elem = self.fresh_type();
                let mut typed = Vec::with_capacity(items.len());
                for item in items {
                    let (item_typed, item_ty) = self.infer(item, env)?;
                    self.expect(&elem, &item_ty, span_of(item), "array elements differ")?;
                    typed.push(item_typed);
                }
                let len = Nat::cst(items.len() as i64);
                (Expr::Array(typed), Type::array(len, elem))
            }
            Expr::Annotation(e, annotation) => {
                let (e_typed, e_ty) = self.infer(e, env)?;
                let (e_typed, e_ty) = if matches!(annotation.kind(), TypeKind::DepFun(..)) {
                    (e_typed, e_ty)
                } else {
                    self.instantiate(e_typed, e_ty)
                };
                self.expect(annotation, &e_ty, span, "the annotation does not match")?;
                (
                    Expr::Annotation(e_typed, annotation.clone()),
                    annotation.clone(),
                )
            }
        };
        Ok((Term::with(expr, Some(ty.clone()), t.span()), ty))
    }

    /// Solves the equations from `first` on if they can be solved on their own, and
    /// returns `ty` with the solution applied; a false equation is an error now.
    fn settle(&self, first: usize, ty: &Type) -> Result<Type, Error> {
        let equations: Vec<Equation> = self.equations[first..]
            .iter()
            .map(|(e, _)| Equation {
                lhs: self.nat(&e.lhs),
                rhs: self.nat(&e.rhs),
            })
            .collect();
        match solve(&equations) {
            Ok(solution) => Ok(self
                .deep(ty)
                .map_nats(&|v| Some(self.final_nat(&Nat::var(v.clone()), &solution)))),
            Err(SolveError::Unsolvable { .. }) => Ok(self
                .deep(ty)
                .map_nats(&|v| Some(self.nat(&Nat::var(v.clone()))))),
            Err(e) => {
                let index = match &e {
                    SolveError::False { index, .. } | SolveError::Unsolvable { index, .. } => {
                        *index
                    }
                };
                Err(Error::new(
                    ErrorKind::Nat,
                    self.equations[first + index].1,
                    format!("{e}"),
                ))
            }
        }
    }

    fn solve_nats(&self) -> Result<BTreeMap<u32, Nat>, Error> {
        let equations: Vec<Equation> = self
            .equations
            .iter()
            .map(|(e, _)| Equation {
                lhs: self.nat(&e.lhs),
                rhs: self.nat(&e.rhs),
            })
            .collect();
        let solution = solve(&equations).map_err(|e| {
            let (index, message) = match &e {
                SolveError::False { index, .. } => (*index, format!("{e}")),
                SolveError::Unsolvable { index, .. } => (*index, format!("{e}")),
            };
            Error::new(ErrorKind::Nat, self.equations[index].1, message)
        })?;
        let mut full = BTreeMap::new();
        for k in self.bindings.keys().chain(solution.keys()) {
            full.insert(*k, self.final_nat(&Nat::unknown(*k), &solution));
        }
        Ok(full)
    }

    /// The final type: type variables and nat unknowns replaced by their solutions.
    fn resolve(&self, t: &Type, solution: &BTreeMap<u32, Nat>) -> Type {
        let nats = |v: &NatVar| match v {
            NatVar::Unknown(k) => solution.get(k).cloned(),
            NatVar::Named(_) => None,
        };
        self.deep(t).map_nats(&nats)
    }

    fn resolve_term(&self, t: &Term, solution: &BTreeMap<u32, Nat>) -> Result<Term, Error> {
        if !self.trusted.is_empty() && self.trusted.contains(&t.node().id()) {
            return Ok(t.clone());
        }
        guard(|| {
            let ty = t.ty().map(|ty| self.resolve(ty, solution));
            if let Some(ty) = &ty {
                check_resolved(ty, t)?;
            }
            let nats = |v: &NatVar| match v {
                NatVar::Unknown(k) => solution.get(k).cloned(),
                NatVar::Named(_) => None,
            };
            let expr = match t.expr() {
                Expr::Lambda(x, annotation, body) => Expr::Lambda(
                    x.clone(),
                    annotation.clone(),
                    self.resolve_term(body, solution)?,
                ),
                Expr::App(f, a) => Expr::App(
                    self.resolve_term(f, solution)?,
                    self.resolve_term(a, solution)?,
                ),
                Expr::NatLambda(v, body) => {
                    Expr::NatLambda(v.clone(), self.resolve_term(body, solution)?)
                }
                Expr::NatApp(f, n) => {
                    let n = n.substitute(&nats);
                    if n.contains_unknown() {
                        return Err(Error::new(
                            ErrorKind::Nat,
                            span_of(t),
                            format!("cannot infer the nat argument here (found {n})"),
                        ));
                    }
                    Expr::NatApp(self.resolve_term(f, solution)?, n)
                }
                Expr::Array(items) => Expr::Array(
                    items
                        .iter()
                        .map(|i| self.resolve_term(i, solution))
                        .collect::<Result<_, _>>()?,
                ),
                Expr::Annotation(e, ty) => {
                    Expr::Annotation(self.resolve_term(e, solution)?, ty.clone())
                }
                Expr::Var(_) | Expr::Literal(_) | Expr::Prim(_) => t.expr().clone(),
            };
            Ok(Term::with(expr, ty, t.span()))
        })
    }

    fn check_classes(&self, solution: &BTreeMap<u32, Nat>) -> Result<(), Error> {
        for (ty, class, span) in &self.classes {
            let ty = self.resolve(ty, solution);
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
                    format!("expected {expected}, found {ty}"),
                ));
            }
        }
        Ok(())
    }
}

/// A final type may contain no inference variable, and arrays, pairs and vectors hold
/// only data.
fn check_resolved(ty: &Type, t: &Term) -> Result<(), Error> {
    if ty.has_unknowns() {
        return Err(Error::new(
            ErrorKind::Type,
            span_of(t),
            format!("cannot infer the type here (found {ty}); add a type annotation"),
        ));
    }
    fn data_inside(ty: &Type) -> bool {
        match ty.kind() {
            TypeKind::Array(_, e) | TypeKind::Vector(e, _) => e.is_data() && data_inside(e),
            TypeKind::Pair(a, b) => a.is_data() && b.is_data() && data_inside(a) && data_inside(b),
            TypeKind::Fun(a, b) => data_inside(a) && data_inside(b),
            TypeKind::DepFun(_, b) => data_inside(b),
            _ => true,
        }
    }
    if let Some(size) = fractional_size(ty) {
        return Err(Error::new(
            ErrorKind::Nat,
            span_of(t),
            format!(
                "the size {size} in {ty} is not a whole number: a division in the program's \
                 types does not divide (a function generic in a size used at a size it \
                 cannot take)"
            ),
        ));
    }
    if !data_inside(ty) {
        return Err(Error::new(
            ErrorKind::Type,
            span_of(t),
            format!("expected data in arrays and pairs, found a function inside {ty}"),
        ));
    }
    Ok(())
}

/// A constant size in `ty` that is not a whole number (`3/2`), if any.
fn fractional_size(ty: &Type) -> Option<Nat> {
    let fractional = |n: &Nat| (n.is_const() && !n.is_integral()).then(|| n.clone());
    match ty.kind() {
        TypeKind::Scalar(_) | TypeKind::Var(_) => None,
        TypeKind::Index(n) => fractional(n),
        TypeKind::Vector(e, n) | TypeKind::Array(n, e) => {
            fractional(n).or_else(|| fractional_size(e))
        }
        TypeKind::Pair(a, b) | TypeKind::Fun(a, b) => {
            fractional_size(a).or_else(|| fractional_size(b))
        }
        TypeKind::DepFun(_, b) => fractional_size(b),
    }
}

/// `k` if `n` is just the unknown `?k`.
fn bare_unknown(n: &Nat) -> Option<u32> {
    match n.vars().as_slice() {
        [NatVar::Unknown(k)] if *n == Nat::unknown(*k) => Some(*k),
        _ => None,
    }
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
