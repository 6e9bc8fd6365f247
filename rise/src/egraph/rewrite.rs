//! Equations as egg rewrites; beta reduction, which is not a pattern (substitution
//! performed by extraction); library strategies as rewrites; and the e-matcher.
//!
//! An equation's left-hand side becomes an egg [`egg::Pattern`] (binders become De Bruijn
//! nodes); its right-hand side is typed once per combination of the types of what
//! the pattern variables matched ([`crate::infer::retype_as`], cached), then added
//! node by node. A pattern variable that moves under or out of binders is shifted by
//! extracting its class's smallest term and re-indexing it; the equation's scoping
//! is the side condition (a variable may not mention a binder it leaves).

use super::convert::{self, add_open, best_expr, nat_of, ConvertError, Env};
use super::lang::{may_grow, Op, Rise, RiseAnalysis, RiseGraph, TemplateKey, TyId};
use crate::nat::{Nat, NatVar};
use crate::rules::Equation;
use crate::term::{Expr, Ident, Term};
use egg::{Applier, ENodeOrVar, Id, PatternAst, RecExpr, Rewrite, Subst, Symbol, Var};
use elevate_core::stack::guard;
use rustc_hash::FxHashMap;
use std::sync::Arc;
use std::time::Instant;

/// A rewrite of RISE e-graphs.
pub type RiseRewrite = Rewrite<Rise, RiseAnalysis>;

/// Why an equation or a pattern does not make an e-graph rewrite.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RewriteError {
    /// The left-hand side binds a nat, which e-graph patterns cannot match.
    #[error("{rule}: nat binders are not supported in e-graph patterns")]
    NatBinder {
        /// The equation's name.
        rule: String,
    },
    /// The pattern text of a strategy's rewrite is not an equation's left-hand side.
    #[error("{0}")]
    Pattern(String),
    /// egg refused the rewrite, in its words (a right-hand side variable that the
    /// left-hand side does not bind, say).
    #[error("{0}")]
    Egg(String),
}

/// The egg rewrite of an equation.
///
/// ```
/// use elevate_rise::egraph::{rewrite, RiseGraph, add_term, best_term};
/// use elevate_rise::rules::Equation;
/// let eq = Equation::known("removeTransposePair", "transpose(transpose(x)) -> x");
/// let r = rewrite(&eq).unwrap();
/// assert_eq!(r.name.as_str(), "removeTransposePair");
/// ```
pub fn rewrite(eq: &Equation) -> Result<RiseRewrite, RewriteError> {
    let pattern = lhs_pattern(eq)?;
    let applier = EquationApplier { eq: eq.clone() };
    Rewrite::new(eq.label().to_string(), pattern, applier).map_err(RewriteError::Egg)
}

fn var_of(name: &str) -> Var {
    format!("?{name}").parse().expect("a pattern variable")
}

fn nat_var_of(name: &str) -> Var {
    format!("?nat_{name}").parse().expect("a pattern variable")
}

fn lhs_pattern(eq: &Equation) -> Result<RisePattern, RewriteError> {
    let mut ast = PatternAst::<Rise>::default();
    pattern_node(eq, eq.lhs(), &mut Vec::new(), &mut ast)?;
    Ok(RisePattern::new(ast))
}

const ANY: TyId = TyId::NAT;

fn pattern_node(
    eq: &Equation,
    p: &Term,
    binders: &mut Vec<u64>,
    ast: &mut PatternAst<Rise>,
) -> Result<Id, RewriteError> {
    let node = match p.expr() {
        Expr::Var(x) => match binders.iter().rev().position(|&y| y == x.id) {
            Some(i) => ENodeOrVar::ENode(Rise::leaf(Op::Var(i as u32), ANY)),
            None => ENodeOrVar::Var(var_of(&x.name)),
        },
        Expr::Lambda(x, _, body) => {
            binders.push(x.id);
            let body = pattern_node(eq, body, binders, ast);
            binders.pop();
            ENodeOrVar::ENode(Rise::new(Op::Lam, ANY, [body?]))
        }
        Expr::App(f, a) => {
            let f = pattern_node(eq, f, binders, ast)?;
            let a = pattern_node(eq, a, binders, ast)?;
            ENodeOrVar::ENode(Rise::new(Op::App, ANY, [f, a]))
        }
        Expr::NatApp(f, n) => {
            let f = pattern_node(eq, f, binders, ast)?;
            let n = match bare_nat_var(eq, n) {
                Some(name) => ast.add(ENodeOrVar::Var(nat_var_of(&name))),
                None => ast.add(ENodeOrVar::ENode(Rise::nat(n))),
            };
            ENodeOrVar::ENode(Rise::new(Op::NatApp, ANY, [f, n]))
        }
        Expr::Prim(q) => ENodeOrVar::ENode(Rise::leaf(Op::Prim(*q), ANY)),
        Expr::Literal(l) => ENodeOrVar::ENode(Rise::leaf(Op::Lit((*l).into()), ANY)),
        Expr::Array(items) => {
            let items = items
                .iter()
                .map(|i| pattern_node(eq, i, binders, ast))
                .collect::<Result<Vec<_>, _>>()?;
            ENodeOrVar::ENode(Rise::new(Op::Array, ANY, items))
        }
        Expr::Annotation(inner, _) => return pattern_node(eq, inner, binders, ast),
        Expr::NatLambda(..) => {
            return Err(RewriteError::NatBinder {
                rule: eq.name().to_string(),
            })
        }
    };
    Ok(ast.add(node))
}

fn bare_nat_var(eq: &Equation, n: &Nat) -> Option<Arc<str>> {
    match n.vars().as_slice() {
        [NatVar::Named(name)]
            if *n == Nat::var(NatVar::Named(name.clone())) && eq.nat_vars().contains(name) =>
        {
            Some(name.clone())
        }
        _ => None,
    }
}

struct EquationApplier {
    eq: Equation,
}

impl EquationApplier {
    /// The right-hand side typed for these pattern-variable types and nats, with the
    /// pattern variables left as typed placeholders (their own identities); cached in
    /// the e-graph, whose types the key's ids are.
    fn template(
        &self,
        egraph: &mut RiseGraph,
        rule: Symbol,
        key: TemplateKey,
        nats: &FxHashMap<Arc<str>, Nat>,
    ) -> Option<Term> {
        let key = (rule, key);
        if let Some(t) = egraph.analysis.templates.get(&key) {
            return t.clone();
        }
        let types = &egraph.analysis.types;
        let placeholders: Option<FxHashMap<u64, Term>> = self
            .eq
            .vars()
            .iter()
            .zip(&key.1 .0)
            .map(|(v, &ty)| Some((v.id, Term::var(v).with_type(types.get(ty)?.clone()))))
            .collect();
        let typed = match (placeholders, types.get(key.1 .2)) {
            (Some(placeholders), Some(ty)) => {
                let rhs = self.eq.instantiate_with(&placeholders, nats);
                crate::infer::retype_as(&rhs, ty).ok()
            }
            _ => None,
        };
        egraph.analysis.templates.insert(key, typed.clone());
        typed
    }
}

impl Applier<Rise, RiseAnalysis> for EquationApplier {
    fn apply_one(
        &self,
        egraph: &mut RiseGraph,
        eclass: Id,
        subst: &Subst,
        _searcher_ast: Option<&PatternAst<Rise>>,
        rule_name: Symbol,
    ) -> Vec<Id> {
        if !may_grow(egraph) {
            return vec![];
        }
        let vars = self.eq.vars();
        let mut classes = Vec::with_capacity(vars.len());
        let mut types = Vec::with_capacity(vars.len());
        for v in vars {
            let Some(&id) = subst.get(var_of(&v.name)) else {
                return vec![];
            };
            let data = &egraph[id].data;
            // The side condition: no binder the variable leaves may occur in it.
            let scope = self.eq.scope(v);
            let depth = scope.lhs.len();
            if scope
                .forbidden()
                .into_iter()
                .any(|p| data.free.contains(&((depth - 1 - p) as u32)))
            {
                return vec![];
            }
            classes.push(id);
            types.push(data.ty);
        }
        let mut nats = FxHashMap::default();
        let mut nat_values = Vec::new();
        for name in self.eq.nat_vars() {
            if let Some(&id) = subst.get(nat_var_of(name)) {
                let Some(n) = nat_of(egraph, id) else {
                    return vec![];
                };
                nat_values.push(n.clone());
                nats.insert(name.clone(), n);
            }
        }
        let key = (types, nat_values, egraph[eclass].data.ty);
        let Some(template) = self.template(egraph, rule_name, key, &nats) else {
            return vec![];
        };
        let mut resolve = |egraph: &mut RiseGraph, x: &Ident, env: &Env| {
            let k = vars
                .iter()
                .position(|v| v.id == x.id)
                .ok_or_else(|| ConvertError(format!("unbound `{}`", x.name)))?;
            moved(
                egraph,
                classes[k],
                &self.eq.scope(&vars[k]).lhs,
                env.binders(),
            )
        };
        let Ok(new) = add_open(egraph, &template, &mut Env::default(), &mut resolve) else {
            return vec![];
        };
        unite(egraph, eclass, new, rule_name)
    }
}

/// Merges what a rule built into the class it matched (with the rule as the
/// explanation); the changed class, if the two were not already one.
fn unite(egraph: &mut RiseGraph, eclass: Id, new: Id, rule_name: Symbol) -> Vec<Id> {
    if egraph.union_trusted(eclass, new, rule_name) {
        vec![new]
    } else {
        vec![]
    }
}

/// The class `id`, matched under the left-hand side binders `lhs` (outermost first),
/// placed under the right-hand side binders `env`: its free indices re-numbered.
fn moved(
    egraph: &mut RiseGraph,
    id: Id,
    lhs: &[Arc<str>],
    env: &[Ident],
) -> Result<Id, ConvertError> {
    let (l, r) = (lhs.len() as u32, env.len() as u32);
    let map = |i: u32| -> Option<u32> {
        if i < l {
            let name = &lhs[(l - 1 - i) as usize];
            let k = env.iter().rposition(|x| x.name == *name)? as u32;
            Some(r - 1 - k)
        } else {
            Some(i - l + r)
        }
    };
    let free = &egraph[id].data.free;
    if free.iter().all(|&i| map(i) == Some(i)) {
        return Ok(id);
    }
    if free.iter().any(|&i| map(i).is_none()) {
        return Err(ConvertError("a variable leaves its binder".into()));
    }
    let expr = best_expr(egraph, id);
    let shifted = convert::remap_free(&expr, &map)
        .ok_or_else(|| ConvertError("a variable leaves its binder".into()))?;
    Ok(egraph.add_expr(&shifted))
}

/// `fun(x => b)(a) -> b[x := a]`, by extraction: the smallest terms of the body and
/// the argument, substituted and added.
pub fn beta_rewrite() -> RiseRewrite {
    let pattern = {
        let mut ast = PatternAst::<Rise>::default();
        let body = ast.add(ENodeOrVar::Var(var_of("body")));
        let lam = ast.add(ENodeOrVar::ENode(Rise::new(Op::Lam, ANY, [body])));
        let arg = ast.add(ENodeOrVar::Var(var_of("arg")));
        ast.add(ENodeOrVar::ENode(Rise::new(Op::App, ANY, [lam, arg])));
        RisePattern::new(ast)
    };
    Rewrite::new("betaReduction", pattern, BetaApplier).expect("a valid rewrite")
}

struct BetaApplier;

impl Applier<Rise, RiseAnalysis> for BetaApplier {
    fn apply_one(
        &self,
        egraph: &mut RiseGraph,
        eclass: Id,
        subst: &Subst,
        _searcher_ast: Option<&PatternAst<Rise>>,
        rule_name: Symbol,
    ) -> Vec<Id> {
        if !may_grow(egraph) {
            return vec![];
        }
        let body = best_expr(egraph, subst[var_of("body")]);
        let arg = best_expr(egraph, subst[var_of("arg")]);
        let result = convert::substitute(&body, &arg);
        let new = egraph.add_expr(&result);
        unite(egraph, eclass, new, rule_name)
    }
}

/// Any strategy of the library as an e-graph rewrite, for rules that are not
/// equations (`vectorize(32)`, `storeInMemory(...)`): where the pattern `lhs` (RISE
/// pattern text, unknown names are pattern variables) matches, the class's smallest
/// term is extracted, rewritten by `strategy`, and the result added to the class.
/// Like substitution, this works on one representative of the class.
///
/// ```
/// use elevate_rise::egraph::rewrite::strategy_rewrite;
/// let r = strategy_rewrite("vectorize(4)", "map(f)(xs)", elevate_rise::rules::vectorize(4)).unwrap();
/// assert_eq!(r.name.as_str(), "vectorize(4)");
/// ```
pub fn strategy_rewrite(
    name: &str,
    lhs: &str,
    strategy: elevate_core::Strategy<Term>,
) -> Result<RiseRewrite, RewriteError> {
    // The searcher is an equation's left-hand side (`lhs -> lhs`).
    let eq = Equation::new(name.to_string(), &format!("{lhs} -> {lhs}"))
        .map_err(|e| RewriteError::Pattern(e.message))?;
    let pattern = lhs_pattern(&eq)?;
    Rewrite::new(name.to_string(), pattern, StrategyApplier(strategy)).map_err(RewriteError::Egg)
}

struct StrategyApplier(elevate_core::Strategy<Term>);

impl Applier<Rise, RiseAnalysis> for StrategyApplier {
    fn apply_one(
        &self,
        egraph: &mut RiseGraph,
        eclass: Id,
        _subst: &Subst,
        _searcher_ast: Option<&PatternAst<Rise>>,
        rule_name: Symbol,
    ) -> Vec<Id> {
        if !may_grow(egraph) {
            return vec![];
        }
        let expr = best_expr(egraph, eclass);
        // Free indices become typed placeholder variables, and back.
        let free = egraph[eclass].data.free.clone();
        let depth = free.iter().max().map_or(0, |&m| m as usize + 1);
        let placeholders: Vec<Ident> = (0..depth)
            .map(|i| Ident::supplied(&mut egraph.analysis.names, &format!("free{i}")))
            .collect();
        let env: Vec<Ident> = placeholders.iter().rev().cloned().collect();
        let term = convert::expr_to_open_term(&mut egraph.analysis, &expr, &env);
        // The strategy runs within what is left of the saturation's time.
        let mut budget = elevate_core::Budget::unlimited();
        if let Some(deadline) = egraph.analysis.deadline {
            budget = budget.time(deadline.saturating_duration_since(Instant::now()));
        }
        let mut cx = elevate_core::Context::new(budget);
        let Ok(Some(result)) = self.0.attempt(&term, &mut cx) else {
            return vec![];
        };
        if result.ty().is_none() {
            return vec![];
        }
        let types: FxHashMap<u64, TyId> = free_var_types(&expr, &env);
        let mut resolve = |egraph: &mut RiseGraph, x: &Ident, inner: &Env| {
            let k = env
                .iter()
                .rev()
                .position(|y| y.id == x.id)
                .ok_or_else(|| ConvertError(format!("unbound `{}`", x.name)))?;
            let ty = *types
                .get(&x.id)
                .ok_or_else(|| ConvertError(format!("no type for `{}`", x.name)))?;
            Ok(egraph.add(Rise::leaf(Op::Var((k + inner.binders().len()) as u32), ty)))
        };
        let Ok(new) = add_open(egraph, &result, &mut Env::default(), &mut resolve) else {
            return vec![];
        };
        unite(egraph, eclass, new, rule_name)
    }
}

/// The types of the free variables of `expr`, by the identities `env` gives them.
fn free_var_types(expr: &RecExpr<Rise>, env: &[Ident]) -> FxHashMap<u64, TyId> {
    fn go(
        expr: &RecExpr<Rise>,
        id: Id,
        depth: u32,
        env: &[Ident],
        out: &mut FxHashMap<u64, TyId>,
        seen: &mut rustc_hash::FxHashSet<(Id, u32)>,
    ) {
        if !seen.insert((id, depth)) {
            return;
        }
        let node = &expr[id];
        if let Op::Var(i) = node.op {
            if i >= depth {
                let k = (i - depth) as usize;
                if k < env.len() {
                    out.insert(env[env.len() - 1 - k].id, node.ty);
                }
            }
        }
        let inner = depth + u32::from(node.op == Op::Lam);
        for &c in &node.children {
            guard(|| go(expr, c, inner, env, out, seen));
        }
    }
    let mut out = FxHashMap::default();
    let root = Id::from(expr.as_ref().len() - 1);
    go(expr, root, 0, env, &mut out, &mut Default::default());
    out
}

/// A pattern over RISE e-graphs that matches operators whatever their types.
///
/// egg's compiled [`egg::Pattern`] looks subterms without variables up by exact
/// hash-consing, which would compare the types our e-nodes carry (and a pattern
/// knows none); this matcher compares operators only, like [`egg::Language::matches`].
pub struct RisePattern {
    ast: PatternAst<Rise>,
    vars: Vec<Var>,
}

impl RisePattern {
    /// A pattern from its AST (the root last).
    pub fn new(ast: PatternAst<Rise>) -> RisePattern {
        let mut vars = Vec::new();
        for node in ast.as_ref() {
            if let ENodeOrVar::Var(v) = node {
                if !vars.contains(v) {
                    vars.push(*v);
                }
            }
        }
        RisePattern { ast, vars }
    }

    fn root(&self) -> Id {
        Id::from(self.ast.as_ref().len() - 1)
    }

    /// Every way the pattern node `p` matches class `class`, extending `subst`.
    fn matches(&self, egraph: &RiseGraph, p: Id, class: Id, subst: Subst, out: &mut Vec<Subst>) {
        let class = egraph.find(class);
        match &self.ast[p] {
            ENodeOrVar::Var(v) => match subst.get(*v) {
                Some(&bound) if egraph.find(bound) != class => {}
                Some(_) => out.push(subst),
                None => {
                    let mut subst = subst;
                    subst.insert(*v, class);
                    out.push(subst);
                }
            },
            ENodeOrVar::ENode(pnode) => {
                for node in egraph[class]
                    .nodes
                    .iter()
                    .filter(|n| egg::Language::matches(pnode, n))
                {
                    let mut partial = vec![subst.clone()];
                    for (&pc, &c) in pnode.children.iter().zip(&node.children) {
                        let mut next = Vec::new();
                        for s in partial {
                            self.matches(egraph, pc, c, s, &mut next);
                        }
                        partial = next;
                        if partial.is_empty() {
                            break;
                        }
                    }
                    out.extend(partial);
                }
            }
        }
    }
}

impl egg::Searcher<Rise, RiseAnalysis> for RisePattern {
    fn search_eclass_with_limit(
        &self,
        egraph: &RiseGraph,
        eclass: Id,
        limit: usize,
    ) -> Option<egg::SearchMatches<'_, Rise>> {
        let mut substs = Vec::new();
        self.matches(egraph, self.root(), eclass, Subst::default(), &mut substs);
        substs.truncate(limit);
        (!substs.is_empty()).then(|| egg::SearchMatches {
            eclass,
            substs,
            ast: Some(std::borrow::Cow::Borrowed(&self.ast)),
        })
    }

    /// Only the classes that hold an e-node of the root's operator (egg keeps that
    /// index), rather than every class.
    fn search_with_limit(
        &self,
        egraph: &RiseGraph,
        limit: usize,
    ) -> Vec<egg::SearchMatches<'_, Rise>> {
        let ids: Vec<Id> = match &self.ast[self.root()] {
            ENodeOrVar::ENode(node) => egraph
                .classes_for_op(&node.op)
                .map(|ids| ids.collect())
                .unwrap_or_default(),
            ENodeOrVar::Var(_) => egraph.classes().map(|c| c.id).collect(),
        };
        let mut found = Vec::new();
        let mut left = limit;
        for (k, id) in ids.into_iter().enumerate() {
            // The search stops with what it found when the saturation's time is up
            // (reading the clock every few classes: matching one costs less).
            if left == 0 || (k % 64 == 63 && egraph.analysis.out_of_time()) {
                break;
            }
            if let Some(m) = self.search_eclass_with_limit(egraph, id, left) {
                left -= m.substs.len();
                found.push(m);
            }
        }
        found
    }

    fn get_pattern_ast(&self) -> Option<&PatternAst<Rise>> {
        Some(&self.ast)
    }

    fn vars(&self) -> Vec<Var> {
        self.vars.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_that_is_no_rewrite_says_why() {
        let id = elevate_strategies::id;
        let e = strategy_rewrite("natId", "depFun(n => x)", id()).unwrap_err();
        assert_eq!(
            e,
            RewriteError::NatBinder {
                rule: "natId".into()
            }
        );
        assert_eq!(
            e.to_string(),
            "natId: nat binders are not supported in e-graph patterns"
        );
        let e = strategy_rewrite("broken", "map(", id()).unwrap_err();
        assert!(matches!(e, RewriteError::Pattern(_)), "{e:?}");
    }
}
