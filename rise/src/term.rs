//! RISE terms: immutable, shared, with binders that make rewriting safe.

pub use crate::error::Span;
use crate::nat::{Nat, NatVar};
use crate::prim::Prim;
use crate::types::{Type, TypeKind};
use elevate_core::stack::guard;
use elevate_core::{NameSupply, Node, NodeId, Traversable};
use rustc_hash::{FxHashMap, FxHashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A variable: a readable name and an identity.
///
/// Variables are compared by identity, never by name, so substitution cannot capture
/// a variable that merely has the same name; the printer chooses readable, distinct
/// names (`x`, `x2`, ...) for distinct variables in scope.
///
/// Identities come from a [`NameSupply`] owned by whoever makes the variable: the
/// parser (one per file), a run's [`Context`](elevate_core::Context) (for rules), a
/// [`Generator`](crate::generate::Generator). They carry no meaning beyond telling
/// variables apart (the printer names variables canonically).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ident {
    /// The name it was written with (or derived from).
    pub name: Arc<str>,
    /// Its identity.
    pub id: u64,
}

impl Ident {
    /// A variable named `name` with identity `id`.
    pub fn new(name: impl Into<Arc<str>>, id: u64) -> Ident {
        Ident {
            name: name.into(),
            id,
        }
    }

    /// A variable named `name` with a fresh identity from `names`.
    ///
    /// ```
    /// use elevate_core::NameSupply;
    /// use elevate_rise::Ident;
    /// let mut names = NameSupply::above(7);
    /// let x = Ident::supplied(&mut names, "x");
    /// assert_eq!((x.name.as_ref(), x.id), ("x", 7));
    /// assert_eq!(Ident::supplied(&mut names, "x").id, 8);
    /// ```
    pub fn supplied(names: &mut NameSupply, name: &str) -> Ident {
        Ident::new(name, names.fresh())
    }

    /// A variable with the same name and a fresh identity from `names`.
    pub fn renamed(&self, names: &mut NameSupply) -> Ident {
        Ident {
            name: self.name.clone(),
            id: names.fresh(),
        }
    }
}

/// A literal.
#[derive(Debug, Clone, Copy)]
pub enum Literal {
    /// `true`, `false`
    Bool(bool),
    /// `3`
    I32(i32),
    /// `3i64`
    I64(i64),
    /// `0.5`
    F32(f32),
    /// `0.5f64`
    F64(f64),
}

impl PartialEq for Literal {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Literal::Bool(a), Literal::Bool(b)) => a == b,
            (Literal::I32(a), Literal::I32(b)) => a == b,
            (Literal::I64(a), Literal::I64(b)) => a == b,
            (Literal::F32(a), Literal::F32(b)) => a.to_bits() == b.to_bits(),
            (Literal::F64(a), Literal::F64(b)) => a.to_bits() == b.to_bits(),
            _ => false,
        }
    }
}

impl Eq for Literal {}

impl Hash for Literal {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            Literal::Bool(b) => (0u8, *b).hash(state),
            Literal::I32(v) => (1u8, *v).hash(state),
            Literal::I64(v) => (2u8, *v).hash(state),
            Literal::F32(v) => (3u8, v.to_bits()).hash(state),
            Literal::F64(v) => (4u8, v.to_bits()).hash(state),
        }
    }
}

/// The top node of a term.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr {
    /// A variable.
    Var(Ident),
    /// `fun(x: T => body)`; the annotation is optional.
    Lambda(Ident, Option<Type>, Term),
    /// `f(a)`
    App(Term, Term),
    /// `depFun(n => body)`
    NatLambda(NatVar, Term),
    /// `f(n)` where `f` expects a nat.
    NatApp(Term, Nat),
    /// A literal.
    Literal(Literal),
    /// A primitive.
    Prim(Prim),
    /// `[a, b, c]`
    Array(Vec<Term>),
    /// `e : T`
    Annotation(Term, Type),
}

/// A node: the expression, its type once inferred, and where it came from.
///
/// Equality and hashing see only the expression: a rewritten, not yet re-typed term
/// equals the typed one it is equal to.
#[derive(Debug, Clone)]
pub struct TermNode {
    /// The expression.
    pub expr: Expr,
    /// The type, after inference.
    pub ty: Option<Type>,
    /// The source location, if the node was parsed.
    pub span: Option<Span>,
    /// Above every variable identity in the term (see [`Term::name_floor`]), cached
    /// so that traversals read it at each node in `O(1)`.
    floor: u64,
}

/// The name floor of a node whose expression is `expr`: one more than the largest
/// identity of its own variable or binder, and at least its children's floors.
#[inline]
fn floor_of(expr: &Expr) -> u64 {
    let above = |x: &Ident| x.id.saturating_add(1);
    match expr {
        Expr::Var(x) => above(x),
        Expr::Lambda(x, _, body) => above(x).max(body.name_floor()),
        Expr::App(f, a) => f.name_floor().max(a.name_floor()),
        Expr::NatLambda(_, t) | Expr::NatApp(t, _) | Expr::Annotation(t, _) => t.name_floor(),
        Expr::Literal(_) | Expr::Prim(_) => 0,
        Expr::Array(items) => items.iter().map(Term::name_floor).max().unwrap_or(0),
    }
}

impl PartialEq for TermNode {
    fn eq(&self, other: &Self) -> bool {
        self.expr == other.expr
    }
}

impl Eq for TermNode {}

impl Hash for TermNode {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.expr.hash(state)
    }
}

/// An immutable, shared RISE term.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Term(Node<TermNode>);

impl Term {
    /// A term from an expression, untyped and without a location.
    pub fn new(expr: Expr) -> Term {
        Term::with(expr, None, None)
    }

    /// A term from an expression with a type and a location.
    pub fn with(expr: Expr, ty: Option<Type>, span: Option<Span>) -> Term {
        let floor = floor_of(&expr);
        Term(Node::new(TermNode {
            expr,
            ty,
            span,
            floor,
        }))
    }

    /// The top node's expression.
    pub fn expr(&self) -> &Expr {
        &self.0.expr
    }

    /// The term below its nat applications and their arguments, in order:
    /// `split(4)` is `split` with `[4]`; a term without any is itself with none.
    ///
    /// ```
    /// use elevate_rise::{nat::Nat, prim::Prim, Term};
    /// let t = Term::nat_app(Term::nat_app(Term::prim(Prim::Slide), Nat::cst(3)), Nat::cst(1));
    /// let (head, nats) = t.nat_arguments();
    /// assert!(matches!(head.expr(), elevate_rise::Expr::Prim(Prim::Slide)));
    /// assert_eq!(nats, [&Nat::cst(3), &Nat::cst(1)]);
    /// ```
    pub fn nat_arguments(&self) -> (&Term, Vec<&Nat>) {
        let mut nats = Vec::new();
        let mut head = self;
        while let Expr::NatApp(f, n) = head.expr() {
            nats.push(n);
            head = f;
        }
        nats.reverse();
        (head, nats)
    }

    /// The term below its (value) applications and their arguments, in order:
    /// `zip(a)(b)` is `zip` with `[a, b]`; a term that is no application is itself
    /// with none. With [`nat_arguments`](Self::nat_arguments) on the head, a call
    /// `p(nats...)(values...)` reads in two steps.
    ///
    /// ```
    /// use elevate_rise::parse_term;
    /// let t = parse_term("fun(a => fun(b => zip(a)(b)))").unwrap();
    /// let elevate_rise::Expr::Lambda(_, _, inner) = t.expr() else { unreachable!() };
    /// let elevate_rise::Expr::Lambda(_, _, call) = inner.expr() else { unreachable!() };
    /// let (head, args) = call.value_arguments();
    /// assert_eq!(head.to_string(), "zip");
    /// assert_eq!(args.len(), 2);
    /// ```
    pub fn value_arguments(&self) -> (&Term, Vec<&Term>) {
        let mut args = Vec::new();
        let mut head = self;
        while let Expr::App(f, a) = head.expr() {
            args.push(a);
            head = f;
        }
        args.reverse();
        (head, args)
    }

    /// The inferred type, if the term has been type-checked.
    pub fn ty(&self) -> Option<&Type> {
        self.0.ty.as_ref()
    }

    /// Where the term came from in the source, if parsed.
    pub fn span(&self) -> Option<Span> {
        self.0.span
    }

    /// The same node with a type.
    pub fn with_type(&self, ty: Type) -> Term {
        Term::with(self.expr().clone(), Some(ty), self.span())
    }

    /// The node with `f` applied to each child, rebuilt only if a child changed (so an
    /// unchanged term stays the same node, shared).
    pub fn map_children(&self, mut f: impl FnMut(&Term) -> Term) -> Term {
        let mut changed = false;
        let children: Vec<Term> = (0..self.arity())
            .map(|i| {
                let c = f(self.child(i));
                changed |= !c.same_node(self.child(i));
                c
            })
            .collect();
        if changed {
            self.with_children(children)
        } else {
            self.clone()
        }
    }

    /// The same node without its type (its children keep theirs).
    pub fn untyped_root(&self) -> Term {
        Term::with(self.expr().clone(), None, self.span())
    }

    /// A node like this one with these children (in [`Traversable`] order: an
    /// application's argument, then its function), type and location, built at once.
    ///
    /// # Panics
    ///
    /// If `children` are not as many as the node has.
    pub(crate) fn with_parts(
        &self,
        children: Vec<Term>,
        ty: Option<Type>,
        span: Option<Span>,
    ) -> Term {
        assert_eq!(children.len(), self.arity(), "a RISE node's children");
        let mut children = children.into_iter();
        let mut child = || children.next().expect("counted above");
        let expr = match self.expr() {
            Expr::Lambda(x, annotation, _) => Expr::Lambda(x.clone(), annotation.clone(), child()),
            Expr::App(..) => {
                let argument = child();
                Expr::App(child(), argument)
            }
            Expr::NatLambda(v, _) => Expr::NatLambda(v.clone(), child()),
            Expr::NatApp(_, n) => Expr::NatApp(child(), n.clone()),
            Expr::Annotation(_, annotation) => Expr::Annotation(child(), annotation.clone()),
            Expr::Array(items) => Expr::Array((0..items.len()).map(|_| child()).collect()),
            Expr::Var(_) | Expr::Literal(_) | Expr::Prim(_) => self.expr().clone(),
        };
        Term::with(expr, ty, span)
    }

    /// A variable.
    pub fn var(x: &Ident) -> Term {
        Term::new(Expr::Var(x.clone()))
    }

    /// `fun(x => body)`
    pub fn lambda(x: Ident, body: Term) -> Term {
        Term::new(Expr::Lambda(x, None, body))
    }

    /// `f(a)`
    pub fn app(f: Term, a: Term) -> Term {
        Term::new(Expr::App(f, a))
    }

    /// `f(a1)(a2)...`
    pub fn apps(f: Term, args: impl IntoIterator<Item = Term>) -> Term {
        args.into_iter().fold(f, Term::app)
    }

    /// `f(n)` for a nat `n`.
    pub fn nat_app(f: Term, n: Nat) -> Term {
        Term::new(Expr::NatApp(f, n))
    }

    /// A primitive.
    pub fn prim(p: Prim) -> Term {
        Term::new(Expr::Prim(p))
    }

    /// A literal.
    pub fn literal(l: Literal) -> Term {
        Term::new(Expr::Literal(l))
    }

    /// One more than the largest variable identity in the term, free or bound (0 for
    /// a term without variables): names with identities from a supply
    /// [`reserve_above`](NameSupply::reserve_above) it are new to the term. Cached at
    /// construction, so `O(1)`.
    ///
    /// ```
    /// use elevate_rise::parse_term;
    /// let t = parse_term("fun(x => fun(y => x))").unwrap();
    /// let body = match t.expr() { elevate_rise::Expr::Lambda(_, _, b) => b.clone(), _ => unreachable!() };
    /// assert!(t.name_floor() > 0);
    /// assert!(body.name_floor() <= t.name_floor());
    /// assert_eq!(parse_term("map(neg)").unwrap().name_floor(), 0);
    /// ```
    #[inline]
    pub fn name_floor(&self) -> u64 {
        self.0.floor
    }

    /// The node's identity.
    pub fn node(&self) -> &Node<TermNode> {
        &self.0
    }

    /// Whether the variable with identity `id` occurs free in the term: `O(1)` where
    /// the term's [`name_floor`](Self::name_floor) is at most `id`, otherwise a walk
    /// that skips subterms below it and bodies that bind `id` again (no allocation
    /// beyond its stack).
    ///
    /// ```
    /// use elevate_rise::{parse_term, Expr};
    /// let t = parse_term("fun(x => fun(y => x))").unwrap();
    /// let Expr::Lambda(x, _, body) = t.expr() else { unreachable!() };
    /// assert!(body.has_free(x.id));
    /// assert!(!t.has_free(x.id));
    /// ```
    pub fn has_free(&self, id: u64) -> bool {
        let mut pending = vec![self];
        while let Some(t) = pending.pop() {
            if t.name_floor() <= id {
                continue;
            }
            match t.expr() {
                Expr::Var(x) if x.id == id => return true,
                Expr::Lambda(x, _, _) if x.id == id => {}
                _ => pending.extend((0..t.arity()).map(|i| t.child(i))),
            }
        }
        false
    }

    /// The identities of the free variables.
    pub fn free_vars(&self) -> FxHashSet<u64> {
        enum Step<'t> {
            Enter(&'t Term),
            Leave(u64),
        }
        let mut free = FxHashSet::default();
        let mut bound: FxHashMap<u64, usize> = FxHashMap::default();
        let mut stack = vec![Step::Enter(self)];
        while let Some(step) = stack.pop() {
            match step {
                Step::Leave(x) => {
                    let count = bound.get_mut(&x).expect("bound on entry");
                    *count -= 1;
                    if *count == 0 {
                        bound.remove(&x);
                    }
                }
                Step::Enter(t) => match t.expr() {
                    Expr::Var(x) => {
                        if !bound.contains_key(&x.id) {
                            free.insert(x.id);
                        }
                    }
                    Expr::Lambda(x, _, body) => {
                        *bound.entry(x.id).or_default() += 1;
                        stack.push(Step::Leave(x.id));
                        stack.push(Step::Enter(body));
                    }
                    _ => stack.extend((0..t.arity()).map(|i| Step::Enter(t.child(i)))),
                },
            }
        }
        free
    }

    /// `self` with every free occurrence of `x` replaced by `value`, renaming binders
    /// of `self` that would capture a free variable of `value`. The renamed binders
    /// take fresh identities from `names` (reserved above both terms first).
    pub fn substitute(&self, x: &Ident, value: &Term, names: &mut NameSupply) -> Term {
        let free = value.free_vars();
        names.reserve_above(self.name_floor().max(value.name_floor()));
        substitute(self, x.id, value, &free, names)
    }

    /// `self` with nat variable `v` replaced by `n` (in nat arguments, annotations and
    /// types), up to a `depFun` binding `v`.
    pub fn substitute_nat(&self, v: &NatVar, n: &Nat) -> Term {
        let f = |w: &NatVar| if w == v { Some(n.clone()) } else { None };
        map_nats(self, &f, v)
    }

    /// Whether `self` and `other` are equal up to the names of bound variables.
    pub fn alpha_eq(&self, other: &Term) -> bool {
        enum Step<'t> {
            Compare(&'t Term, &'t Term),
            Unbind(u64, u64),
        }
        // For each binder in scope on either side: the pairing it is part of (a
        // number unique to the pair of binders) and its partner, innermost last.
        let mut left: FxHashMap<u64, Vec<usize>> = FxHashMap::default();
        let mut right: FxHashMap<u64, Vec<usize>> = FxHashMap::default();
        let mut in_scope = 0;
        let mut pairings = 0;
        let mut stack = vec![Step::Compare(self, other)];
        while let Some(step) = stack.pop() {
            let (a, b) = match step {
                Step::Unbind(x, y) => {
                    for (side, id) in [(&mut left, x), (&mut right, y)] {
                        let scopes = side.get_mut(&id).expect("bound on entry");
                        scopes.pop();
                        if scopes.is_empty() {
                            side.remove(&id);
                        }
                    }
                    in_scope -= 1;
                    continue;
                }
                Step::Compare(a, b) => (a, b),
            };
            if in_scope == 0 && a.same_node(b) {
                continue;
            }
            let equal = match (a.expr(), b.expr()) {
                (Expr::Var(x), Expr::Var(y)) => {
                    let l = left.get(&x.id).and_then(|s| s.last());
                    let r = right.get(&y.id).and_then(|s| s.last());
                    match (l, r) {
                        (None, None) => x.id == y.id,
                        (Some(p), Some(q)) => p == q,
                        _ => false,
                    }
                }
                (Expr::Lambda(x, tx, bx), Expr::Lambda(y, ty, by)) => {
                    if tx.is_some() && ty.is_some() && tx != ty {
                        return false;
                    }
                    pairings += 1;
                    in_scope += 1;
                    left.entry(x.id).or_default().push(pairings);
                    right.entry(y.id).or_default().push(pairings);
                    stack.push(Step::Unbind(x.id, y.id));
                    stack.push(Step::Compare(bx, by));
                    true
                }
                (Expr::App(f, x), Expr::App(g, y)) => {
                    stack.push(Step::Compare(x, y));
                    stack.push(Step::Compare(f, g));
                    true
                }
                (Expr::NatLambda(v, x), Expr::NatLambda(w, y)) => {
                    stack.push(Step::Compare(x, y));
                    v == w
                }
                (Expr::NatApp(f, n), Expr::NatApp(g, m)) => {
                    stack.push(Step::Compare(f, g));
                    n == m
                }
                (Expr::Literal(x), Expr::Literal(y)) => x == y,
                (Expr::Prim(p), Expr::Prim(q)) => p == q,
                (Expr::Array(xs), Expr::Array(ys)) => {
                    stack.extend(xs.iter().zip(ys).rev().map(|(x, y)| Step::Compare(x, y)));
                    xs.len() == ys.len()
                }
                (Expr::Annotation(x, s), Expr::Annotation(y, t)) => {
                    stack.push(Step::Compare(x, y));
                    s == t
                }
                _ => false,
            };
            if !equal {
                return false;
            }
        }
        true
    }

    /// The same term with every node's type and location forgotten.
    pub fn erase_types(&self) -> Term {
        let mut stack = vec![(self, false)];
        let mut done: Vec<Term> = Vec::new();
        while let Some((t, ready)) = stack.pop() {
            let n = t.arity();
            if !ready && n > 0 {
                stack.push((t, true));
                stack.extend((0..n).rev().map(|i| (t.child(i), false)));
                continue;
            }
            let children = done.split_off(done.len() - n);
            done.push(t.with_parts(children, None, None));
        }
        done.pop().expect("the root")
    }
}

fn substitute(
    t: &Term,
    x: u64,
    value: &Term,
    free: &FxHashSet<u64>,
    names: &mut NameSupply,
) -> Term {
    guard(|| match t.expr() {
        Expr::Var(y) if y.id == x => value.clone(),
        Expr::Var(_) | Expr::Literal(_) | Expr::Prim(_) => t.clone(),
        Expr::Lambda(y, _, _) if y.id == x => t.clone(),
        Expr::Lambda(y, ty, body) => {
            if free.contains(&y.id) {
                // The binder would capture a free variable of `value`: rename it.
                let fresh = y.renamed(names);
                let fresh_var = match t.ty().map(Type::kind) {
                    Some(TypeKind::Fun(param, _)) => {
                        Term::with(Expr::Var(fresh.clone()), Some(param.clone()), None)
                    }
                    _ => Term::var(&fresh),
                };
                let renamed = substitute(body, y.id, &fresh_var, &FxHashSet::default(), names);
                let body = substitute(&renamed, x, value, free, names);
                Term::with(
                    Expr::Lambda(fresh, ty.clone(), body),
                    t.ty().cloned(),
                    t.span(),
                )
            } else {
                let new_body = substitute(body, x, value, free, names);
                if new_body.same_node(body) {
                    t.clone()
                } else {
                    t.with_child(0, new_body)
                }
            }
        }
        _ => t.map_children(|c| substitute(c, x, value, free, names)),
    })
}

fn map_nats(t: &Term, f: &dyn Fn(&NatVar) -> Option<Nat>, v: &NatVar) -> Term {
    guard(|| {
        let expr = match t.expr() {
            Expr::NatLambda(w, _) if w == v => return t.clone(),
            Expr::NatApp(g, n) => Expr::NatApp(map_nats(g, f, v), n.substitute(f)),
            Expr::Lambda(x, ty, body) => Expr::Lambda(
                x.clone(),
                ty.as_ref().map(|ty| ty.map_nats(f)),
                map_nats(body, f, v),
            ),
            Expr::Annotation(e, ty) => Expr::Annotation(map_nats(e, f, v), ty.map_nats(f)),
            Expr::Var(_) | Expr::Literal(_) | Expr::Prim(_) => {
                return match t.ty() {
                    Some(ty) => t.with_type(ty.map_nats(f)),
                    None => t.clone(),
                }
            }
            _ => {
                let children = (0..t.arity()).map(|i| map_nats(t.child(i), f, v)).collect();
                let rebuilt = t.with_children(children);
                return Term::with(
                    rebuilt.expr().clone(),
                    t.ty().map(|ty| ty.map_nats(f)),
                    t.span(),
                );
            }
        };
        Term::with(expr, t.ty().map(|ty| ty.map_nats(f)), t.span())
    })
}

/// The traversal contract. An application `f(a)` has two children in ELEVATE's
/// order for RISE: the argument first (child 0), then the function (child 1), so
/// `topDown` reaches the earlier stages of a pipeline `h(g(f(x)))` first.
impl Traversable for Term {
    #[inline]
    fn arity(&self) -> usize {
        match self.expr() {
            Expr::Var(_) | Expr::Literal(_) | Expr::Prim(_) => 0,
            Expr::Lambda(..) | Expr::NatLambda(..) | Expr::NatApp(..) | Expr::Annotation(..) => 1,
            Expr::App(..) => 2,
            Expr::Array(items) => items.len(),
        }
    }

    #[inline]
    fn child(&self, index: usize) -> &Self {
        match (self.expr(), index) {
            (Expr::Lambda(_, _, b), 0)
            | (Expr::NatLambda(_, b), 0)
            | (Expr::NatApp(b, _), 0)
            | (Expr::Annotation(b, _), 0)
            | (Expr::App(_, b), 0) => b,
            (Expr::App(f, _), 1) => f,
            (Expr::Array(items), i) if i < items.len() => &items[i],
            _ => panic!("a RISE term has no child {index} here"),
        }
    }

    fn with_child(&self, index: usize, child: Self) -> Self {
        let expr = match (self.expr(), index) {
            (Expr::Lambda(x, t, _), 0) => Expr::Lambda(x.clone(), t.clone(), child),
            (Expr::NatLambda(v, _), 0) => Expr::NatLambda(v.clone(), child),
            (Expr::NatApp(_, n), 0) => Expr::NatApp(child, n.clone()),
            (Expr::Annotation(_, t), 0) => Expr::Annotation(child, t.clone()),
            (Expr::App(f, _), 0) => Expr::App(f.clone(), child),
            (Expr::App(_, a), 1) => Expr::App(child, a.clone()),
            (Expr::Array(items), i) if i < items.len() => {
                let mut items = items.clone();
                items[i] = child;
                Expr::Array(items)
            }
            _ => panic!("a RISE term has no child {index} here"),
        };
        // Rewrites replace a child by an equal term of the same type, so the node's
        // type stays valid.
        Term::with(expr, self.ty().cloned(), self.span())
    }

    fn with_children(&self, children: Vec<Self>) -> Self {
        self.with_parts(children, self.ty().cloned(), self.span())
    }

    #[inline]
    fn node_id(&self) -> Option<NodeId> {
        Some(self.0.id())
    }

    #[inline]
    fn prefetch(&self) {
        self.0.prefetch()
    }

    /// Cached at construction: one more than the largest variable identity in the
    /// term, free or bound (0 for a term without variables).
    #[inline]
    fn name_floor(&self) -> u64 {
        self.0.floor
    }
}
