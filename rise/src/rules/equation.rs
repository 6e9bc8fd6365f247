//! Rules written once, as equations between patterns, and used both as Elevate
//! strategies ([`Equation::strategy`]) and, with the feature `egraph`, as egg rewrites
//! (`elevate_rise::egraph::rewrite`).
//!
//! An equation is RISE text `lhs -> rhs` in which unknown names are pattern
//! variables (`f`, `x`), and unknown nat names in the left-hand side (`split(n)`)
//! are nat variables. Binders are matched structurally; a binder of the right-hand
//! side with the name of one of the left-hand side stands for the same variable
//! (`map(fun(x => f(e)))(xs) -> map(f)(map(fun(x => e))(xs))` keeps `x` for `e`).
//! The scoping of the two sides is the side condition: a pattern variable may only
//! mention the binders of the left-hand side that also surround it on the right (in
//! the example, `f` must not mention `x`).
//!
//! ```
//! use elevate_rise::rules::Equation;
//! use elevate_rise::{infer, parse_term, print_term};
//! let fusion = Equation::new("mapFusion", "map(f)(map(g)(x)) -> map(fun(y => f(g(y))))(x)").unwrap();
//! let t = infer(&parse_term("fun(xs: 4.f32 => xs |> map(neg) |> map(abs))").unwrap()).unwrap();
//! let s = elevate_rise::rules::body(fusion.strategy());
//! let out = s.run(&t).unwrap();
//! assert_eq!(print_term(&out), "fun(xs: 4.f32 => xs |> map(fun(y => abs(-y))))");
//! ```

use super::typing::typed_result;
use crate::error::{Error, ErrorKind};
use crate::nat::{Nat, NatVar};
use crate::term::{Expr, Ident, Term};
use elevate_core::{Name, NameSupply, Rule, Strategy};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// A rule given as an equation between patterns.
#[derive(Clone)]
pub struct Equation(Arc<Inner>);

#[derive(Clone)]
struct Inner {
    name: Name,
    /// The name with its arguments (`splitJoin(32)`): the strategy text, and the
    /// e-graph rewrite's name.
    label: Name,
    text: String,
    lhs: Term,
    rhs: Term,
    /// The pattern variables, by identity, with their names.
    vars: Vec<Ident>,
    /// Nat variables of the left-hand side.
    nat_vars: Vec<Arc<str>>,
    /// For each pattern variable: the names of the left-hand side's binders around
    /// it (outermost first), and for each of its occurrences on the right, the names
    /// of the binders around that occurrence.
    scopes: FxHashMap<u64, Scope>,
    /// The left-hand side's binder names that the right-hand side binds again.
    rebound: Vec<Arc<str>>,
}

/// Where a pattern variable sits on the two sides of an equation.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// The binders around its occurrence on the left, outermost first.
    pub lhs: Vec<Arc<str>>,
    /// The binders around each occurrence on the right, outermost first.
    pub rhs: Vec<Vec<Arc<str>>>,
}

impl Scope {
    /// The left-hand side binders (by position, outermost first) that some occurrence
    /// on the right does not see: the variable must not mention them.
    pub fn forbidden(&self) -> Vec<usize> {
        (0..self.lhs.len())
            .filter(|&i| {
                self.rhs
                    .iter()
                    .any(|chain| !chain.iter().any(|n| *n == self.lhs[i]))
            })
            .collect()
    }
}

/// What a match binds.
#[derive(Default, Clone)]
struct Bindings {
    terms: FxHashMap<u64, Term>,
    nats: FxHashMap<Arc<str>, Nat>,
    /// Left-hand binder names to the identities they matched.
    binders: FxHashMap<Arc<str>, Ident>,
    /// Left-hand binder identities (pattern) to matched identities (term).
    bound: Vec<(u64, u64)>,
    /// Left-hand binder names to the annotations of the lambdas they matched.
    annotations: FxHashMap<Arc<str>, Option<crate::types::Type>>,
}

fn error(message: String) -> Error {
    Error {
        kind: ErrorKind::Parse,
        span: None,
        message,
    }
}

impl Equation {
    /// Parses `lhs -> rhs`.
    pub fn new(name: impl Into<Name>, text: &str) -> Result<Equation, Error> {
        let Some((lhs, rhs)) = text.split_once("->") else {
            return Err(error(format!(
                "an equation is `lhs -> rhs`, found `{text}`"
            )));
        };
        let both = crate::parser::parse_pattern(&format!("[{}, {}]", lhs.trim(), rhs.trim()))?;
        let Expr::Array(sides) = both.expr() else {
            unreachable!("parsed as an array")
        };
        let (lhs, rhs) = (sides[0].clone(), sides[1].clone());
        let mut vars = Vec::new();
        let mut scopes: FxHashMap<u64, Scope> = FxHashMap::default();
        let mut nat_vars = Vec::new();
        collect_lhs(&lhs, &mut Vec::new(), &mut vars, &mut scopes, &mut nat_vars)?;
        collect_rhs(&rhs, &mut Vec::new(), &mut scopes, &vars)?;
        let rebound = binder_names(&rhs)
            .into_iter()
            .filter(|n| binder_names(&lhs).contains(n))
            .collect();
        let name: Name = name.into();
        Ok(Equation(Arc::new(Inner {
            label: name.clone(),
            rebound,
            name,
            text: text.to_string(),
            lhs,
            rhs,
            vars,
            nat_vars,
            scopes,
        })))
    }

    /// Like [`Equation::new`], for equations written in the library (a typo there is a
    /// bug, not user input).
    pub fn known(name: impl Into<Name>, text: &str) -> Equation {
        Equation::new(name, text).unwrap_or_else(|e| panic!("the equation `{text}`: {e}"))
    }

    /// The rule's name.
    pub fn name(&self) -> Name {
        self.0.name.clone()
    }

    /// The rule's name with its arguments, if any (`splitJoin(32)`).
    pub fn label(&self) -> Name {
        self.0.label.clone()
    }

    /// The same equation, written `label` with its arguments (`splitJoin(32)` for the
    /// rule `splitJoin`).
    pub fn with_label(self, label: impl Into<Name>) -> Equation {
        let mut inner = Arc::unwrap_or_clone(self.0);
        inner.label = label.into();
        Equation(Arc::new(inner))
    }

    /// The same equation with the nat variables `nats` replaced on both sides (the
    /// arguments of a rule such as `splitJoin(n)`).
    pub fn with_nats(self, nats: &[(NatVar, Nat)]) -> Equation {
        let mut inner = Arc::unwrap_or_clone(self.0);
        for (v, n) in nats {
            inner.lhs = inner.lhs.substitute_nat(v, n);
            inner.rhs = inner.rhs.substitute_nat(v, n);
            inner
                .nat_vars
                .retain(|name| !matches!(v, NatVar::Named(w) if w == name));
        }
        Equation(Arc::new(inner))
    }

    /// The equation's text, `lhs -> rhs`.
    pub fn text(&self) -> &str {
        &self.0.text
    }

    /// The left-hand side pattern.
    pub fn lhs(&self) -> &Term {
        &self.0.lhs
    }

    /// The right-hand side pattern.
    pub fn rhs(&self) -> &Term {
        &self.0.rhs
    }

    /// The pattern variables.
    pub fn vars(&self) -> &[Ident] {
        &self.0.vars
    }

    /// The nat variables of the left-hand side.
    pub fn nat_vars(&self) -> &[Arc<str>] {
        &self.0.nat_vars
    }

    /// Where pattern variable `v` occurs on the two sides.
    pub fn scope(&self, v: &Ident) -> &Scope {
        &self.0.scopes[&v.id]
    }

    /// The equation as an Elevate rule: rewrites a term that matches the left-hand
    /// side at its root.
    pub fn strategy(&self) -> Strategy<Term> {
        Strategy::from_rule(self.clone())
    }

    /// The rewritten term, if `t` matches the left-hand side at its root. The
    /// right-hand side's binders get fresh identities from `names`, above those of
    /// `t` (whoever rewrites a part of a larger program reserves the rest's).
    pub fn rewrite_term(&self, t: &Term, names: &mut NameSupply) -> Option<Term> {
        let mut b = Bindings::default();
        if !self.match_term(&self.0.lhs, t, &mut b) {
            return None;
        }
        // The side conditions: what a variable may not mention.
        for v in &self.0.vars {
            let scope = &self.0.scopes[&v.id];
            let forbidden = scope.forbidden();
            if forbidden.is_empty() {
                continue;
            }
            let Some(bound) = b.terms.get(&v.id) else {
                continue;
            };
            let free = bound.free_vars();
            for i in forbidden {
                if b.binders
                    .get(&scope.lhs[i])
                    .is_some_and(|x| free.contains(&x.id))
                {
                    return None;
                }
            }
        }
        names.reserve_above(t.name_floor().max(self.0.rhs.name_floor()));
        let result = self.instantiate(&self.0.rhs, &b, &mut Vec::new(), names);
        typed_result(t, result)
    }

    /// The right-hand side with the pattern variables replaced by `terms` and the nat
    /// variables by `nats`; its binders are fresh.
    #[cfg_attr(not(feature = "egraph"), allow(dead_code))]
    pub(crate) fn instantiate_with(
        &self,
        terms: &FxHashMap<u64, Term>,
        nats: &FxHashMap<Arc<str>, Nat>,
    ) -> Term {
        let b = Bindings {
            terms: terms.clone(),
            nats: nats.clone(),
            ..Bindings::default()
        };
        // The binders must only differ from the variables of the right-hand side and
        // of the terms put in.
        let floor = terms.values().map(Term::name_floor).max().unwrap_or(0);
        let mut names = NameSupply::above(floor.max(self.0.rhs.name_floor()));
        self.instantiate(&self.0.rhs, &b, &mut Vec::new(), &mut names)
    }

    fn match_term(&self, p: &Term, t: &Term, b: &mut Bindings) -> bool {
        if let Expr::Var(x) = p.expr() {
            if self.0.vars.iter().any(|v| v.id == x.id) {
                return match b.terms.get(&x.id) {
                    Some(bound) => bound.alpha_eq(t),
                    None => {
                        b.terms.insert(x.id, t.clone());
                        true
                    }
                };
            }
        }
        // An annotation is transparent to the pattern's structure.
        let t = match t.expr() {
            Expr::Annotation(inner, _) => inner,
            _ => t,
        };
        match (p.expr(), t.expr()) {
            (Expr::Var(x), Expr::Var(y)) => {
                b.bound.iter().any(|&(px, ty)| px == x.id && ty == y.id)
            }
            (Expr::Lambda(x, _, pb), Expr::Lambda(y, annotation, tb)) => {
                // An annotated lambda (a program's parameter) keeps its annotation
                // only where the right-hand side binds the same variable again.
                if annotation.is_some() && !self.0.rebound.contains(&x.name) {
                    return false;
                }
                b.bound.push((x.id, y.id));
                b.binders.insert(x.name.clone(), y.clone());
                b.annotations.insert(x.name.clone(), annotation.clone());
                self.match_term(pb, tb, b)
            }
            (Expr::App(pf, pa), Expr::App(tf, ta)) => {
                self.match_term(pf, tf, b) && self.match_term(pa, ta, b)
            }
            (Expr::NatApp(pf, pn), Expr::NatApp(tf, tn)) => {
                self.match_nat(pn, tn, b) && self.match_term(pf, tf, b)
            }
            (Expr::NatLambda(pv, pb), Expr::NatLambda(tv, tb)) => {
                pv == tv && self.match_term(pb, tb, b)
            }
            (Expr::Prim(p), Expr::Prim(q)) => p == q,
            (Expr::Literal(l), Expr::Literal(m)) => l == m,
            (Expr::Array(ps), Expr::Array(ts)) => {
                ps.len() == ts.len() && ps.iter().zip(ts).all(|(p, t)| self.match_term(p, t, b))
            }
            _ => false,
        }
    }

    fn match_nat(&self, p: &Nat, n: &Nat, b: &mut Bindings) -> bool {
        if let [NatVar::Named(name)] = p.vars().as_slice() {
            if *p == Nat::var(NatVar::Named(name.clone())) && self.0.nat_vars.contains(name) {
                return match b.nats.get(name) {
                    Some(bound) => bound == n,
                    None => {
                        b.nats.insert(name.clone(), n.clone());
                        true
                    }
                };
            }
        }
        substitute_nats(p, &b.nats) == *n
    }

    fn instantiate(
        &self,
        p: &Term,
        b: &Bindings,
        env: &mut Vec<(u64, Ident)>,
        names: &mut NameSupply,
    ) -> Term {
        match p.expr() {
            Expr::Var(x) => {
                if let Some(t) = b.terms.get(&x.id) {
                    return t.clone();
                }
                match env.iter().rev().find(|(px, _)| *px == x.id) {
                    Some((_, y)) => Term::var(y),
                    None => p.clone(),
                }
            }
            Expr::Lambda(x, ann, body) => {
                let y = b
                    .binders
                    .get(&x.name)
                    .cloned()
                    .unwrap_or_else(|| x.renamed(names));
                env.push((x.id, y.clone()));
                let body = self.instantiate(body, b, env, names);
                env.pop();
                Term::new(Expr::Lambda(y, ann.clone(), body))
            }
            Expr::NatApp(f, n) => Term::nat_app(
                self.instantiate(f, b, env, names),
                substitute_nats(n, &b.nats),
            ),
            _ => p
                .map_children(|c| self.instantiate(c, b, env, names))
                .untyped_root(),
        }
    }
}

/// `n` with the bound nat variables replaced.
pub(crate) fn substitute_nats(n: &Nat, nats: &FxHashMap<Arc<str>, Nat>) -> Nat {
    if nats.is_empty() {
        return n.clone();
    }
    n.substitute(&|v| match v {
        NatVar::Named(name) => nats.get(name).cloned(),
        NatVar::Unknown(_) => None,
    })
}

impl Rule<Term> for Equation {
    fn name(&self) -> Name {
        self.0.name.clone()
    }

    fn rewrite(&self, program: &Term, names: &mut NameSupply) -> Option<Term> {
        self.rewrite_term(program, names)
    }

    fn write_text(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.label)
    }
}

impl std::fmt::Debug for Equation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.0.name, self.0.text)
    }
}

/// The names of the lambdas' binders in `p`.
fn binder_names(p: &Term) -> Vec<Arc<str>> {
    let mut out = Vec::new();
    if let Expr::Lambda(x, _, _) = p.expr() {
        out.push(x.name.clone());
    }
    for i in 0..elevate_core::Traversable::arity(p) {
        out.extend(binder_names(elevate_core::Traversable::child(p, i)));
    }
    out
}

fn collect_lhs(
    p: &Term,
    binders: &mut Vec<Ident>,
    vars: &mut Vec<Ident>,
    scopes: &mut FxHashMap<u64, Scope>,
    nat_vars: &mut Vec<Arc<str>>,
) -> Result<(), Error> {
    match p.expr() {
        Expr::Var(x) if binders.iter().any(|y| y.id == x.id) => {}
        Expr::Var(x) => {
            let chain: Vec<Arc<str>> = binders.iter().map(|y| y.name.clone()).collect();
            match scopes.get(&x.id) {
                Some(s) if s.lhs != chain => {
                    return Err(error(format!(
                        "the pattern variable `{}` occurs under different binders",
                        x.name
                    )))
                }
                Some(_) => {}
                None => {
                    vars.push(x.clone());
                    scopes.insert(
                        x.id,
                        Scope {
                            lhs: chain,
                            rhs: Vec::new(),
                        },
                    );
                }
            }
        }
        Expr::Lambda(x, _, body) => {
            if binders.iter().any(|y| y.name == x.name) {
                return Err(error(format!("the binder `{}` is bound twice", x.name)));
            }
            binders.push(x.clone());
            collect_lhs(body, binders, vars, scopes, nat_vars)?;
            binders.pop();
        }
        Expr::NatApp(f, n) => {
            for v in n.vars() {
                if let NatVar::Named(name) = v {
                    if !nat_vars.contains(&name) {
                        nat_vars.push(name);
                    }
                }
            }
            collect_lhs(f, binders, vars, scopes, nat_vars)?;
        }
        _ => {
            for i in 0..elevate_core::Traversable::arity(p) {
                collect_lhs(
                    elevate_core::Traversable::child(p, i),
                    binders,
                    vars,
                    scopes,
                    nat_vars,
                )?;
            }
        }
    }
    Ok(())
}

fn collect_rhs(
    p: &Term,
    binders: &mut Vec<Ident>,
    scopes: &mut FxHashMap<u64, Scope>,
    vars: &[Ident],
) -> Result<(), Error> {
    match p.expr() {
        Expr::Var(x) if binders.iter().any(|y| y.id == x.id) => {}
        Expr::Var(x) => match scopes.get_mut(&x.id) {
            Some(s) if vars.iter().any(|v| v.id == x.id) => {
                s.rhs.push(binders.iter().map(|y| y.name.clone()).collect())
            }
            _ => {
                return Err(error(format!(
                    "`{}` on the right-hand side is neither bound there nor a pattern variable of the left",
                    x.name
                )))
            }
        },
        Expr::Lambda(x, _, body) => {
            binders.push(x.clone());
            collect_rhs(body, binders, scopes, vars)?;
            binders.pop();
        }
        _ => {
            for i in 0..elevate_core::Traversable::arity(p) {
                collect_rhs(elevate_core::Traversable::child(p, i), binders, scopes, vars)?;
            }
        }
    }
    Ok(())
}
