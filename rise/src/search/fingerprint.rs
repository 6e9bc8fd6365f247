//! The structural fingerprint of a RISE term, which a search's cache is keyed by.
//!
//! Equal for alpha-equivalent terms ([`Term::alpha_eq`]): a bound variable is hashed by
//! its de Bruijn index (how many binders lie between it and the one that binds it), a
//! free variable by its name and identity. Primitives, the nats they are applied to,
//! literals (by their bits: `0.0` and `-0.0` differ, as they do for `alpha_eq`), array
//! literals, `depFun` binders and type annotations (`e : T`, which can fix sizes) all
//! count. Like `alpha_eq`, it ignores the types inference puts on nodes. It ignores the
//! annotation of a lambda's parameter where the body uses the parameter
//! (`fun(x: T => ...)` and `fun(x => ...)` are the same function where both type-check:
//! in a closed, typed program a used parameter's type is fixed by the program's inputs and
//! the uses around it), and hashes it where the body does not, since then nothing else
//! fixes it (`fun(x: f32 => 3.0)` and `fun(x: i32 => 3.0)` differ).
//!
//! The walk uses an explicit stack (programs 100,000 levels deep are normal) and
//! takes time linear in the size of the term as a tree.

use crate::term::{Expr, Term};
use elevate_core::Traversable;
use elevate_strategies::search::Fingerprint;
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::{Hash, Hasher};

/// What each kind of node contributes before its parts, so that nodes of different
/// kinds with equal parts differ.
#[derive(Hash)]
enum Tag {
    Bound,
    Free,
    Lambda,
    App,
    NatLambda,
    NatApp,
    Literal,
    Prim,
    Array,
    Annotation,
}

impl Fingerprint for Term {
    fn fingerprint(&self) -> u64 {
        fingerprint(self)
    }
}

/// The fingerprint of `term` (see the [module](self) documentation).
///
/// ```
/// use elevate_rise::{parse_term, search::fingerprint};
/// let a = parse_term("fun(x => fun(y => add(x)(y)))").unwrap();
/// let b = parse_term("fun(u => fun(v => add(u)(v)))").unwrap();
/// let c = parse_term("fun(u => fun(v => add(v)(u)))").unwrap();
/// assert_eq!(fingerprint(&a), fingerprint(&b));
/// assert_ne!(fingerprint(&a), fingerprint(&c));
/// ```
pub fn fingerprint(term: &Term) -> u64 {
    enum Step<'t> {
        Enter(&'t Term),
        /// All children of this node have their fingerprints on the output stack.
        Leave(&'t Term),
    }
    // For each variable bound in scope: the depths of its binders, innermost last
    // (a name may be bound again inside its own scope), and whether the body has used it
    // so far.
    let mut binders: FxHashMap<u64, Vec<(usize, bool)>> = FxHashMap::default();
    let mut depth = 0usize;
    let mut out: Vec<u64> = Vec::new();
    let mut stack = vec![Step::Enter(term)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Enter(t) => {
                if let Expr::Var(x) = t.expr() {
                    let mut h = FxHasher::default();
                    match binders.get_mut(&x.id).and_then(|d| d.last_mut()) {
                        Some((bound_at, used)) => {
                            *used = true;
                            (Tag::Bound, depth - *bound_at).hash(&mut h)
                        }
                        None => (Tag::Free, &*x.name, x.id).hash(&mut h),
                    }
                    out.push(h.finish());
                    continue;
                }
                if let Expr::Lambda(x, _, _) = t.expr() {
                    depth += 1;
                    binders.entry(x.id).or_default().push((depth, false));
                }
                stack.push(Step::Leave(t));
                // Children in order: the first one's fingerprint ends up deepest.
                stack.extend((0..t.arity()).rev().map(|i| Step::Enter(t.child(i))));
            }
            Step::Leave(t) => {
                let n = t.arity();
                let children = out.split_off(out.len() - n);
                let mut h = FxHasher::default();
                match t.expr() {
                    Expr::Var(_) => unreachable!("variables are leaves"),
                    Expr::Lambda(x, annotation, _) => {
                        let scopes = binders.get_mut(&x.id).expect("bound on entry");
                        let (_, used) = scopes.pop().expect("bound on entry");
                        if scopes.is_empty() {
                            binders.remove(&x.id);
                        }
                        depth -= 1;
                        Tag::Lambda.hash(&mut h);
                        if !used {
                            annotation.hash(&mut h);
                        }
                    }
                    Expr::App(..) => Tag::App.hash(&mut h),
                    Expr::NatLambda(v, _) => (Tag::NatLambda, v).hash(&mut h),
                    Expr::NatApp(_, n) => (Tag::NatApp, n).hash(&mut h),
                    Expr::Literal(l) => (Tag::Literal, l).hash(&mut h),
                    Expr::Prim(p) => (Tag::Prim, p).hash(&mut h),
                    Expr::Array(items) => (Tag::Array, items.len()).hash(&mut h),
                    Expr::Annotation(_, ty) => (Tag::Annotation, ty).hash(&mut h),
                }
                children.hash(&mut h);
                out.push(h.finish());
            }
        }
    }
    out.pop().expect("the root's fingerprint")
}
