//! Conversions between typed RISE terms and the e-graph: a term is added with its
//! names turned into De Bruijn indices; a class is read back as its smallest term
//! (or any [`RecExpr`]), with fresh names and every node typed.
//!
//! Also the two De Bruijn operations the rules need, on extracted expressions:
//! [`remap_free`] (shifting) and [`substitute`] (beta reduction).

use super::lang::{LitBits, Op, Rise, RiseAnalysis, RiseGraph, TyId, Types};
use crate::term::{Expr, Ident, Term};
use crate::types::Type;
use egg::{Id, Language, RecExpr};
use elevate_core::stack::guard;
use elevate_core::NameSupply;
use rustc_hash::FxHashMap;

/// Why a term could not enter the e-graph.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConvertError(pub String);

/// An expression being written, children first: [`RecExpr::add`] checks its argument
/// in time linear in the expression (in debug builds), which is quadratic over an
/// expression 100,000 nodes long; this writes the nodes and makes the expression at
/// the end.
#[derive(Debug, Default)]
pub(crate) struct Nodes(Vec<Rise>);

impl Nodes {
    /// Appends `node` (whose children are earlier nodes); its id.
    pub(crate) fn add(&mut self, node: Rise) -> Id {
        self.0.push(node);
        Id::from(self.0.len() - 1)
    }

    /// The nodes written so far.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// The expression (its root is the last node written).
    pub(crate) fn finish(self) -> RecExpr<Rise> {
        RecExpr::from(self.0)
    }
}

/// The binders around a subterm, innermost last, with each variable's binders by
/// identity: a variable's De Bruijn index is found without walking the binders, so
/// that 100,000 nested binders convert in linear time.
#[derive(Debug, Default, Clone)]
pub(crate) struct Env {
    binders: Vec<Ident>,
    /// The positions in `binders` of each identity (shadowing binders stack up).
    positions: FxHashMap<u64, Vec<u32>>,
}

impl Env {
    /// The binders `outer` (outermost first).
    pub(crate) fn new(outer: &[Ident]) -> Env {
        let mut env = Env::default();
        for x in outer {
            env.push(x.clone());
        }
        env
    }

    pub(crate) fn push(&mut self, x: Ident) {
        self.positions
            .entry(x.id)
            .or_default()
            .push(self.binders.len() as u32);
        self.binders.push(x);
    }

    pub(crate) fn pop(&mut self) {
        if let Some(x) = self.binders.pop() {
            if let Some(stack) = self.positions.get_mut(&x.id) {
                stack.pop();
                if stack.is_empty() {
                    self.positions.remove(&x.id);
                }
            }
        }
    }

    /// The De Bruijn index of `x`, if a binder here binds it.
    pub(crate) fn index(&self, x: &Ident) -> Option<u32> {
        let at = *self.positions.get(&x.id)?.last()?;
        Some(self.binders.len() as u32 - 1 - at)
    }

    /// The binders, outermost first.
    pub(crate) fn binders(&self) -> &[Ident] {
        &self.binders
    }
}

/// How a variable that the term does not bind enters the e-graph: `resolve(x, env)`
/// with the binders around it.
pub(crate) type FreeResolver<'a> =
    dyn FnMut(&mut RiseGraph, &Ident, &Env) -> Result<Id, ConvertError> + 'a;

/// Adds a closed, typed term (every node typed, as [`crate::infer()`] leaves it) to the
/// e-graph and returns its class. The names of terms read back from the e-graph are
/// then new to `term`.
pub fn add_term(egraph: &mut RiseGraph, term: &Term) -> Result<Id, ConvertError> {
    add_body(egraph, term, &[])
}

/// Adds a typed term whose free variables `resolve` maps to classes.
pub(crate) fn add_open(
    egraph: &mut RiseGraph,
    term: &Term,
    env: &mut Env,
    resolve: &mut FreeResolver<'_>,
) -> Result<Id, ConvertError> {
    guard(|| add_node(egraph, term, env, resolve))
}

fn type_of(egraph: &mut RiseGraph, term: &Term) -> Result<TyId, ConvertError> {
    match term.ty() {
        Some(ty) => Ok(egraph.analysis.types.intern(ty)),
        None => Err(ConvertError(format!(
            "`{}` has no type: terms enter the e-graph typed",
            crate::print::print_term(term)
        ))),
    }
}

fn add_node(
    egraph: &mut RiseGraph,
    term: &Term,
    env: &mut Env,
    resolve: &mut FreeResolver<'_>,
) -> Result<Id, ConvertError> {
    let node = match term.expr() {
        Expr::Annotation(inner, _) => return add_open(egraph, inner, env, resolve),
        Expr::Var(x) => match env.index(x) {
            Some(index) => Rise::leaf(Op::Var(index), type_of(egraph, term)?),
            None => return resolve(egraph, x, env),
        },
        Expr::Lambda(x, _, body) => {
            env.push(x.clone());
            let body = add_open(egraph, body, env, resolve);
            env.pop();
            Rise::new(Op::Lam, type_of(egraph, term)?, [body?])
        }
        Expr::App(f, a) => {
            let f = add_open(egraph, f, env, resolve)?;
            let a = add_open(egraph, a, env, resolve)?;
            Rise::new(Op::App, type_of(egraph, term)?, [f, a])
        }
        Expr::NatLambda(v, body) => {
            let body = add_open(egraph, body, env, resolve)?;
            Rise::new(Op::NatLam(v.clone()), type_of(egraph, term)?, [body])
        }
        Expr::NatApp(f, n) => {
            let f = add_open(egraph, f, env, resolve)?;
            let n = egraph.add(Rise::nat(n));
            Rise::new(Op::NatApp, type_of(egraph, term)?, [f, n])
        }
        Expr::Literal(l) => Rise::leaf(Op::Lit(LitBits::from(*l)), type_of(egraph, term)?),
        Expr::Prim(p) => Rise::leaf(Op::Prim(*p), type_of(egraph, term)?),
        Expr::Array(items) => {
            let items = items
                .iter()
                .map(|i| add_open(egraph, i, env, resolve))
                .collect::<Result<Vec<_>, _>>()?;
            Rise::new(Op::Array, type_of(egraph, term)?, items)
        }
    };
    Ok(egraph.add(node))
}

/// The smallest term of a class (by AST size), as an expression: each class's
/// smallest e-node (the analysis keeps it), written children first with an explicit
/// work stack (the term may be 100,000 levels deep).
pub fn best_expr(egraph: &RiseGraph, id: Id) -> RecExpr<Rise> {
    let root = egraph.find(id);
    // The best e-nodes never form a cycle: each one's term is smaller than its
    // parent's was when the parent chose it, and sizes only shrink.
    let capacity = egraph[root].data.size.min(1 << 16);
    let mut written: FxHashMap<Id, Id> = FxHashMap::default();
    written.reserve(capacity);
    let mut out = Nodes::default();
    let mut todo: Vec<(Id, bool)> = vec![(root, false)];
    while let Some((class, children_written)) = todo.pop() {
        if written.contains_key(&class) {
            continue;
        }
        let best = &egraph[class].data.best;
        if !children_written {
            todo.push((class, true));
            for &c in best.children() {
                let c = egraph.find(c);
                if !written.contains_key(&c) {
                    todo.push((c, false));
                }
            }
            continue;
        }
        let node = best.clone().map_children(|c| written[&egraph.find(c)]);
        written.insert(class, out.add(node));
    }
    out.finish()
}

/// The expression of the e-nodes as they were added: `id`'s first e-node, its
/// children's first e-nodes, and so on (the term that made the class, before any
/// rewrite).
pub fn added_expr(egraph: &RiseGraph, id: Id) -> RecExpr<Rise> {
    fn go(egraph: &RiseGraph, id: Id, out: &mut Nodes, memo: &mut FxHashMap<Id, Id>) -> Id {
        if let Some(&done) = memo.get(&id) {
            return done;
        }
        let node = egraph
            .id_to_node(id)
            .clone()
            .map_children(|c| guard(|| go(egraph, c, out, memo)));
        let added = out.add(node);
        memo.insert(id, added);
        added
    }
    let mut out = Nodes::default();
    go(egraph, id, &mut out, &mut FxHashMap::default());
    out.finish()
}

/// The smallest term of a class, as a typed RISE term (fresh names; the outermost
/// lambdas, the program's parameters, carry their types as annotations so that the
/// printed program parses and type-checks on its own).
///
/// The binders' identities come from the e-graph's [`RiseAnalysis::names`]: new to
/// every term added, and to every term read back before.
pub fn best_term(egraph: &mut RiseGraph, id: Id) -> Term {
    let best = best_expr(egraph, id);
    expr_to_term(&mut egraph.analysis, &best)
}

/// A closed expression of an e-graph whose analysis is `analysis` as a typed term
/// (binders named from the analysis's supply).
pub fn expr_to_term(analysis: &mut RiseAnalysis, expr: &RecExpr<Rise>) -> Term {
    let root = Id::from(expr.as_ref().len() - 1);
    let RiseAnalysis { types, names, .. } = analysis;
    to_term(types, names, expr, root, &mut Vec::new(), true)
}

/// An expression whose free indices are `params` (innermost last) as a typed term,
/// its binders named from the analysis's supply (which must be above the identities
/// of `params`: it is if they come from it or from a term added).
pub fn expr_to_open_term(
    analysis: &mut RiseAnalysis,
    expr: &RecExpr<Rise>,
    params: &[Ident],
) -> Term {
    let root = Id::from(expr.as_ref().len() - 1);
    let RiseAnalysis { types, names, .. } = analysis;
    to_term(types, names, expr, root, &mut params.to_vec(), false)
}

/// A program's parameters: its outermost lambdas and nat lambdas
/// (`depFun(n => fun(a: n.f32 => fun(b: U => body)))`), as the lambda nodes
/// themselves, and its body. Saturation works on the body, so that the parameters stay
/// as they are (eta reduction would otherwise drop them, and extraction would lose
/// their names and annotations).
pub fn parameters(program: &Term) -> (Vec<Term>, Term) {
    let mut params = Vec::new();
    let mut body = program.clone();
    while let Expr::Lambda(_, _, inner) | Expr::NatLambda(_, inner) = body.expr() {
        params.push(body.clone());
        body = inner.clone();
    }
    (params, body)
}

/// The identities of the value parameters among those [`parameters`] returned
/// (outermost first: the body's free indices).
pub fn parameter_idents(params: &[Term]) -> Vec<Ident> {
    params
        .iter()
        .filter_map(|p| match p.expr() {
            Expr::Lambda(x, _, _) => Some(x.clone()),
            _ => None,
        })
        .collect()
}

/// `body` inside the parameter lambdas again (each keeps its annotation and type).
pub fn with_parameters(params: &[Term], body: Term) -> Term {
    params.iter().rev().fold(body, |body, p| {
        let e = match p.expr() {
            Expr::Lambda(x, ann, _) => Expr::Lambda(x.clone(), ann.clone(), body),
            Expr::NatLambda(v, _) => Expr::NatLambda(v.clone(), body),
            _ => unreachable!("parameters are lambdas"),
        };
        Term::with(e, p.ty().cloned(), p.span())
    })
}

/// Adds the body of a typed program whose parameters are `params` (free indices).
pub fn add_body(egraph: &mut RiseGraph, body: &Term, params: &[Ident]) -> Result<Id, ConvertError> {
    // Binders read back from the e-graph must not capture the parameters, nor reuse
    // a name of the term (in case parts of the two meet again).
    let names = &mut egraph.analysis.names;
    names.reserve_above(body.name_floor());
    for x in params {
        names.reserve_above(x.id.saturating_add(1));
    }
    let mut closed = |_: &mut RiseGraph, x: &Ident, _: &Env| {
        Err(ConvertError(format!(
            "the variable `{}` is not bound in the term",
            x.name
        )))
    };
    add_open(egraph, body, &mut Env::new(params), &mut closed)
}

fn to_term(
    types: &Types,
    names: &mut NameSupply,
    expr: &RecExpr<Rise>,
    id: Id,
    env: &mut Vec<Ident>,
    annotate: bool,
) -> Term {
    guard(|| {
        let node = &expr[id];
        let ty = types.get(node.ty).cloned();
        let kid = |k: usize| node.children[k];
        let e = match &node.op {
            Op::Var(i) => {
                let x = &env[env.len() - 1 - *i as usize];
                Expr::Var(x.clone())
            }
            Op::Lam => {
                let param = match ty.as_ref().map(Type::kind) {
                    Some(crate::types::TypeKind::Fun(a, _)) => Some(a.clone()),
                    _ => None,
                };
                let x = Ident::supplied(names, var_name(param.as_ref()));
                env.push(x.clone());
                let body = to_term(types, names, expr, kid(0), env, annotate);
                env.pop();
                Expr::Lambda(x, param.filter(|_| annotate), body)
            }
            Op::App => {
                let app = Expr::App(
                    to_term(types, names, expr, kid(0), env, false),
                    to_term(types, names, expr, kid(1), env, false),
                );
                // Nothing else may fix how long a generated array is (the input said
                // it with an annotation, which the e-graph does not keep).
                if expr[kid(0)].op == Op::Prim(crate::prim::Prim::Generate) {
                    let ty = ty.clone().expect("an application is typed");
                    Expr::Annotation(Term::with(app, Some(ty.clone()), None), ty)
                } else {
                    app
                }
            }
            Op::NatLam(v) => Expr::NatLambda(
                v.clone(),
                to_term(types, names, expr, kid(0), env, annotate),
            ),
            Op::NatApp => {
                let Op::Nat(n) = &expr[kid(1)].op else {
                    unreachable!("the argument of a nat application is a nat")
                };
                Expr::NatApp(to_term(types, names, expr, kid(0), env, false), n.clone())
            }
            Op::Nat(n) => unreachable!("a nat {n} outside a nat application"),
            Op::Lit(l) => Expr::Literal((*l).into()),
            Op::Prim(p) => Expr::Prim(*p),
            Op::Array => Expr::Array(
                node.children
                    .iter()
                    .map(|&c| to_term(types, names, expr, c, env, false))
                    .collect(),
            ),
        };
        Term::with(e, ty, None)
    })
}

/// A readable name for a variable of type `ty`.
fn var_name(ty: Option<&Type>) -> &'static str {
    use crate::types::TypeKind;
    match ty.map(Type::kind) {
        Some(TypeKind::Array(..)) => "xs",
        Some(TypeKind::Pair(..)) => "p",
        Some(TypeKind::Fun(..)) => "f",
        _ => "x",
    }
}

/// `expr` (closed up to its free indices) with every free index `i` replaced by
/// `map(i)`; `None` if `map` refuses one (a variable that may not occur there).
pub fn remap_free(expr: &RecExpr<Rise>, map: &dyn Fn(u32) -> Option<u32>) -> Option<RecExpr<Rise>> {
    let mut out = Nodes::default();
    let mut memo = FxHashMap::default();
    let root = Id::from(expr.as_ref().len() - 1);
    remap_into(expr, root, 0, map, &mut out, &mut memo)?;
    Some(out.finish())
}

fn remap_into(
    expr: &RecExpr<Rise>,
    id: Id,
    depth: u32,
    map: &dyn Fn(u32) -> Option<u32>,
    out: &mut Nodes,
    memo: &mut FxHashMap<(Id, u32), Id>,
) -> Option<Id> {
    if let Some(&done) = memo.get(&(id, depth)) {
        return Some(done);
    }
    let node = &expr[id];
    let new = match node.op {
        Op::Var(i) if i >= depth => Rise::leaf(Op::Var(map(i - depth)? + depth), node.ty),
        _ => {
            let inner = depth + u32::from(node.op == Op::Lam);
            let mut children = Vec::with_capacity(node.children.len());
            for &c in &node.children {
                children.push(guard(|| remap_into(expr, c, inner, map, out, memo))?);
            }
            Rise::new(node.op.clone(), node.ty, children)
        }
    };
    let added = out.add(new);
    memo.insert((id, depth), added);
    Some(added)
}

/// `body[%0 := arg]`: the body of a lambda with its variable replaced by `arg` (whose
/// free indices are shifted under the binders it moves into), and the body's other
/// free indices decremented.
pub fn substitute(body: &RecExpr<Rise>, arg: &RecExpr<Rise>) -> RecExpr<Rise> {
    let mut out = Nodes::default();
    let mut memo = FxHashMap::default();
    let mut shifted = FxHashMap::default();
    let root = Id::from(body.as_ref().len() - 1);
    subst_into(body, root, 0, arg, &mut out, &mut memo, &mut shifted);
    out.finish()
}

fn subst_into(
    body: &RecExpr<Rise>,
    id: Id,
    depth: u32,
    arg: &RecExpr<Rise>,
    out: &mut Nodes,
    memo: &mut FxHashMap<(Id, u32), Id>,
    shifted: &mut FxHashMap<u32, Id>,
) -> Id {
    if let Some(&done) = memo.get(&(id, depth)) {
        return done;
    }
    let node = &body[id];
    let added = match node.op {
        Op::Var(i) if i == depth => *shifted.entry(depth).or_insert_with(|| {
            let moved = remap_free(arg, &|j| Some(j + depth)).expect("shifting up succeeds");
            append(out, &moved)
        }),
        Op::Var(i) if i > depth => out.add(Rise::leaf(Op::Var(i - 1), node.ty)),
        _ => {
            let inner = depth + u32::from(node.op == Op::Lam);
            let children: Vec<Id> = node
                .children
                .iter()
                .map(|&c| guard(|| subst_into(body, c, inner, arg, out, memo, shifted)))
                .collect();
            out.add(Rise::new(node.op.clone(), node.ty, children))
        }
    };
    memo.insert((id, depth), added);
    added
}

/// Appends the nodes of `expr` to `out`; returns the new id of `expr`'s root.
fn append(out: &mut Nodes, expr: &RecExpr<Rise>) -> Id {
    let base = out.len();
    for node in expr.as_ref() {
        let node = node
            .clone()
            .map_children(|c| Id::from(usize::from(c) + base));
        out.add(node);
    }
    Id::from(out.len() - 1)
}

/// The nat of a class that holds nats (the argument of a nat application).
pub fn nat_of(egraph: &RiseGraph, id: Id) -> Option<crate::nat::Nat> {
    egraph[id].nodes.iter().find_map(|n| match &n.op {
        Op::Nat(k) => Some(k.clone()),
        _ => None,
    })
}
