//! Type variables, nat unknowns and unification, without recursion on the depth of
//! types and without copying shared parts of them.

use super::{type_error, Inference};
use crate::error::{Error, Span};
use crate::nat::{Nat, NatEquation, NatVar};
use crate::prim::FreshVars;
use crate::term::{Expr, Term};
use crate::types::{Type, TypeKind};
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

/// Why two types do not unify.
pub(super) struct Mismatch;

/// A type node's address: its identity while the node is alive.
pub(super) fn addr(t: &Type) -> usize {
    t.kind() as *const TypeKind as usize
}

/// Whether `a` and `b` are the very same node.
pub(super) fn same(a: &Type, b: &Type) -> bool {
    std::ptr::eq(a.kind(), b.kind())
}

/// A memo of rebuilt types: by node address and whether a `depFun` hides the variable
/// being substituted there.
pub(super) type ZonkMemo = FxHashMap<(usize, bool), Type>;

impl Inference<'_> {
    /// Follows solved type variables at the top, shortening the chain it followed.
    pub(super) fn shallow(&mut self, t: &Type) -> Type {
        let mut current = t.clone();
        let mut path = Vec::new();
        while let TypeKind::Var(k) = current.kind() {
            match &self.types[*k as usize] {
                Some(s) => {
                    path.push(*k as usize);
                    current = s.clone();
                }
                None => break,
            }
        }
        if path.len() > 1 {
            for k in path {
                self.types[k] = Some(current.clone());
            }
        }
        current
    }

    /// `t` with every solved type variable replaced by its solution.
    pub(super) fn deep(&self, t: &Type) -> Type {
        self.zonk(t, None, None)
    }

    /// `t` with solved type variables replaced throughout and, if `nats` is given,
    /// every nat mapped by it, except under a `depFun` binding `shadow` (the variable
    /// `nats` substitutes). Without `shadow`, `nats` must change only nat unknowns
    /// (it resolves them), so that a part without unknowns is kept as it is, unvisited.
    /// Parts shared in `t` are rebuilt once, and parts that do not change are kept
    /// (shared with `t`).
    pub(super) fn zonk(
        &self,
        t: &Type,
        nats: Option<&dyn Fn(&Nat) -> Nat>,
        shadow: Option<&NatVar>,
    ) -> Type {
        self.zonk_with(t, nats, shadow, &mut ZonkMemo::default())
    }

    /// [`zonk`](Inference::zonk) with a memo kept across calls (for the same `nats`
    /// and `shadow`).
    pub(super) fn zonk_with(
        &self,
        t: &Type,
        nats: Option<&dyn Fn(&Nat) -> Nat>,
        shadow: Option<&NatVar>,
        memo: &mut ZonkMemo,
    ) -> Type {
        // `nats` maps only unknowns unless a variable is substituted (`shadow`): a type
        // without unknowns is then its own result, whatever its size.
        let unchanged = |ty: &Type| shadow.is_none() && !ty.has_unknowns();
        if unchanged(t) {
            return t.clone();
        }
        let mut stack: Vec<(Type, bool, bool)> = vec![(t.clone(), false, false)];
        while let Some((ty, hidden, ready)) = stack.pop() {
            if memo.contains_key(&(addr(&ty), hidden)) {
                continue;
            }
            if unchanged(&ty) {
                memo.insert((addr(&ty), hidden), ty);
                continue;
            }
            let children = self.zonk_children(&ty, hidden, shadow);
            if !ready
                && children
                    .iter()
                    .any(|(c, h)| !memo.contains_key(&(addr(c), *h)))
            {
                stack.push((ty.clone(), hidden, true));
                stack.extend(children.into_iter().map(|(c, h)| (c, h, false)));
                continue;
            }
            let get = |c: &Type, h: bool| memo[&(addr(c), h)].clone();
            let map_nat = |n: &Nat| match nats {
                Some(f) if !hidden => f(n),
                _ => n.clone(),
            };
            let result = match ty.kind() {
                TypeKind::Scalar(_) => ty.clone(),
                TypeKind::Var(k) => match &self.types[*k as usize] {
                    Some(s) => get(s, hidden),
                    None => ty.clone(),
                },
                TypeKind::Index(n) => {
                    let m = map_nat(n);
                    if m == *n {
                        ty.clone()
                    } else {
                        Type::index(m)
                    }
                }
                TypeKind::Vector(e, n) => {
                    let (f, m) = (get(e, hidden), map_nat(n));
                    if same(&f, e) && m == *n {
                        ty.clone()
                    } else {
                        Type::vector(f, m)
                    }
                }
                TypeKind::Array(n, e) => {
                    let (m, f) = (map_nat(n), get(e, hidden));
                    if same(&f, e) && m == *n {
                        ty.clone()
                    } else {
                        Type::array(m, f)
                    }
                }
                TypeKind::Pair(a, b) | TypeKind::Fun(a, b) => {
                    let (c, d) = (get(a, hidden), get(b, hidden));
                    if same(&c, a) && same(&d, b) {
                        ty.clone()
                    } else if matches!(ty.kind(), TypeKind::Pair(..)) {
                        Type::pair(c, d)
                    } else {
                        Type::fun(c, d)
                    }
                }
                TypeKind::DepFun(v, body) => {
                    let b = get(body, hidden || shadow == Some(v));
                    if same(&b, body) {
                        ty.clone()
                    } else {
                        Type::dep_fun(v.clone(), b)
                    }
                }
            };
            memo.insert((addr(&ty), hidden), result);
        }
        memo[&(addr(t), false)].clone()
    }

    fn zonk_children(
        &self,
        ty: &Type,
        hidden: bool,
        shadow: Option<&NatVar>,
    ) -> SmallVec<[(Type, bool); 2]> {
        let mut children = SmallVec::new();
        match ty.kind() {
            TypeKind::Scalar(_) | TypeKind::Index(_) => {}
            TypeKind::Var(k) => {
                if let Some(s) = &self.types[*k as usize] {
                    children.push((s.clone(), hidden));
                }
            }
            TypeKind::Vector(e, _) | TypeKind::Array(_, e) => children.push((e.clone(), hidden)),
            TypeKind::Pair(a, b) | TypeKind::Fun(a, b) => {
                children.push((a.clone(), hidden));
                children.push((b.clone(), hidden));
            }
            TypeKind::DepFun(v, body) => {
                children.push((body.clone(), hidden || shadow == Some(v)));
            }
        }
        children
    }

    /// Whether the unsolved variable `k` occurs in `t`. Each shared part is visited
    /// once, parts found free of unsolved variables are remembered as such, and chains
    /// (a solved variable, or a node with a single part that may hold an unsolved
    /// variable) are followed through [`Inference::chain_end`], which shortens them for
    /// later checks. So the checks of `map(map(...map(f)...))`, where each level binds
    /// a variable to an array of the level below, cost amortized constant time each,
    /// not the depth of that level's type.
    fn occurs(&mut self, k: u32, t: &Type) -> bool {
        // For each chain end visited: whether it reaches an unsolved variable.
        let mut open: FxHashMap<usize, bool> = FxHashMap::default();
        // A chain end to visit, or one whose parts' ends (given) have been visited.
        enum Step {
            Enter(Type),
            Leave(Type, SmallVec<[Type; 2]>),
        }
        let mut stack = vec![Step::Enter(self.chain_end(t))];
        while let Some(step) = stack.pop() {
            match step {
                Step::Enter(end) => {
                    let key = addr(&end);
                    if open.contains_key(&key) || self.is_ground(&end) {
                        continue;
                    }
                    if let TypeKind::Var(j) = end.kind() {
                        if self.types[*j as usize].is_none() {
                            if *j == k {
                                return true;
                            }
                            open.insert(key, true);
                            continue;
                        }
                    }
                    let parts: SmallVec<[Type; 2]> = self
                        .open_parts(&end)
                        .into_iter()
                        .map(|part| self.chain_end(&part))
                        .collect();
                    stack.push(Step::Leave(end, parts.clone()));
                    stack.extend(parts.into_iter().map(Step::Enter));
                }
                Step::Leave(end, parts) => {
                    let has_open = parts
                        .iter()
                        .any(|p| open.get(&addr(p)).copied().unwrap_or(false));
                    open.insert(addr(&end), has_open);
                    if !has_open {
                        self.ground.insert(addr(&end), end);
                    }
                }
            }
        }
        false
    }

    /// Whether `t` is known to hold no unsolved type variable.
    fn is_ground(&self, t: &Type) -> bool {
        !t.has_unknowns() || self.ground.contains_key(&addr(t))
    }

    /// The parts of `t` (its solution, if `t` is a solved variable) that may hold an
    /// unsolved type variable.
    fn open_parts(&self, t: &Type) -> SmallVec<[Type; 2]> {
        let mut parts = self.zonk_children(t, false, None);
        parts.retain(|(part, _)| !self.is_ground(part));
        parts.into_iter().map(|(part, _)| part).collect()
    }

    /// The end of the chain from `t`: following solved variables and nodes with a
    /// single open part (the unsolved variables reachable from a node are those
    /// reachable from that part, and stay so whatever is solved later), up to an
    /// unsolved variable or a node with several open parts, or none. The nodes on the
    /// way are linked to the end, so a chain is walked once, however often it is
    /// checked (path compression, as in union-find).
    fn chain_end(&mut self, t: &Type) -> Type {
        let mut path: Vec<Type> = Vec::new();
        let mut current = t.clone();
        while !self.is_ground(&current) {
            let next = match self.links.get(&addr(&current)) {
                Some((_, end)) => end.clone(),
                None => match self.open_parts(&current).as_slice() {
                    [only] => only.clone(),
                    _ => break,
                },
            };
            path.push(std::mem::replace(&mut current, next));
        }
        for node in path {
            self.links.insert(addr(&node), (node, current.clone()));
        }
        current
    }

    pub(super) fn unify(&mut self, a: &Type, b: &Type, span: Span) -> Result<(), Mismatch> {
        let mut work = vec![(a.clone(), b.clone())];
        while let Some((a, b)) = work.pop() {
            let (a, b) = (self.shallow(&a), self.shallow(&b));
            if same(&a, &b) {
                continue;
            }
            match (a.kind(), b.kind()) {
                (TypeKind::Var(j), TypeKind::Var(k)) if j == k => {}
                (TypeKind::Var(k), _) => self.bind(*k, &b)?,
                (_, TypeKind::Var(k)) => self.bind(*k, &a)?,
                (TypeKind::Scalar(s), TypeKind::Scalar(t)) if s == t => {}
                (TypeKind::Index(n), TypeKind::Index(m)) => self.equate(n, m, span),
                (TypeKind::Vector(s, n), TypeKind::Vector(t, m))
                | (TypeKind::Array(n, s), TypeKind::Array(m, t)) => {
                    self.equate(n, m, span);
                    work.push((s.clone(), t.clone()));
                }
                (TypeKind::Pair(a1, b1), TypeKind::Pair(a2, b2))
                | (TypeKind::Fun(a1, b1), TypeKind::Fun(a2, b2)) => {
                    work.push((b1.clone(), b2.clone()));
                    work.push((a1.clone(), a2.clone()));
                }
                (TypeKind::DepFun(v, s), TypeKind::DepFun(w, t)) => {
                    let renamed = if v == w {
                        t.clone()
                    } else {
                        let to_v = |n: &Nat| {
                            if n.mentions(w) {
                                n.substitute(&|x| (x == w).then(|| Nat::var(v.clone())))
                            } else {
                                n.clone()
                            }
                        };
                        self.zonk(t, Some(&to_v), Some(w))
                    };
                    work.push((s.clone(), renamed));
                }
                _ => return Err(Mismatch),
            }
        }
        Ok(())
    }

    fn bind(&mut self, k: u32, t: &Type) -> Result<(), Mismatch> {
        if self.occurs(k, t) {
            return Err(Mismatch);
        }
        self.types[k as usize] = Some(t.clone());
        Ok(())
    }

    pub(super) fn expect(
        &mut self,
        expected: &Type,
        found: &Type,
        span: Span,
        what: &str,
    ) -> Result<(), Error> {
        self.unify(expected, found, span)
            .map_err(|Mismatch| type_error(span, &self.deep(expected), &self.deep(found), what))
    }

    /// `n` with the bound unknowns replaced, fully.
    pub(super) fn nat(&mut self, n: &Nat) -> Nat {
        if !n.contains_unknown() {
            return n.clone();
        }
        let mut values = FxHashMap::default();
        for k in n.unknowns() {
            if let Some(v) = self.resolved_binding(k) {
                values.insert(k, v);
            }
        }
        if values.is_empty() {
            return n.clone();
        }
        n.substitute(&|v| match v {
            NatVar::Unknown(k) => values.get(k).cloned(),
            NatVar::Named(_) => None,
        })
    }

    /// The value bound to `?root`, with the unknowns bound since replaced: every
    /// binding on the way is rewritten to its resolved value, so a chain of bindings is
    /// followed once, not at every use.
    pub(super) fn resolved_binding(&mut self, root: u32) -> Option<Nat> {
        self.bindings.get(&root)?;
        let mut stack = vec![(root, false)];
        let mut entered = FxHashSet::default();
        while let Some((k, ready)) = stack.pop() {
            let bound: Vec<u32> = self.bindings[&k]
                .unknowns()
                .into_iter()
                .filter(|u| self.bindings.contains_key(u))
                .collect();
            if bound.is_empty() {
                continue;
            }
            if !ready {
                if !entered.insert(k) {
                    // On a cycle (which binding never makes): leave it as it is.
                    continue;
                }
                stack.push((k, true));
                stack.extend(bound.into_iter().map(|u| (u, false)));
                continue;
            }
            let value = self.bindings[&k].substitute(&|v| match v {
                NatVar::Unknown(u) if *u != k => self.bindings.get(u).cloned(),
                _ => None,
            });
            self.bindings.insert(k, value);
        }
        self.bindings.get(&root).cloned()
    }

    pub(super) fn equate(&mut self, a: &Nat, b: &Nat, span: Span) {
        let (a, b) = (self.nat(a), self.nat(b));
        if a == b {
            return;
        }
        for (unknown, value) in [(&a, &b), (&b, &a)] {
            if let Some(k) = bare_unknown(unknown) {
                if !value.mentions(&NatVar::Unknown(k)) {
                    self.bindings.insert(k, value.clone());
                    return;
                }
            }
        }
        self.equations.push((NatEquation { lhs: a, rhs: b }, span));
    }

    /// Instantiates a dependent function type implicitly: the term becomes a nat
    /// application to a fresh unknown.
    pub(super) fn instantiate(&mut self, mut term: Term, mut ty: Type) -> (Term, Type) {
        loop {
            let resolved = self.shallow(&ty);
            let TypeKind::DepFun(v, body) = resolved.kind() else {
                return (term, ty);
            };
            let n = self.fresh_nat();
            ty = self.substitute_bound(body, v, &n);
            let span = term.span();
            term = Term::with(Expr::NatApp(term, n), Some(ty.clone()), span);
        }
    }

    /// The body `body` of `(v: nat) -> body` at `v = n`.
    pub(super) fn substitute_bound(&self, body: &Type, v: &NatVar, n: &Nat) -> Type {
        let at_n = |m: &Nat| {
            if m.mentions(v) {
                m.substitute(&|w| (w == v).then(|| n.clone()))
            } else {
                m.clone()
            }
        };
        self.zonk(body, Some(&at_n), Some(v))
    }
}

/// `k` if `n` is just the unknown `?k`.
fn bare_unknown(n: &Nat) -> Option<u32> {
    match n.unknowns().as_slice() {
        [k] if *n == Nat::unknown(*k) => Some(*k),
        _ => None,
    }
}
