//! Typing what a rule built ([`typed_result`]), with a memo of the types inference gave.
//!
//! Re-typing a rule's result ([`crate::infer::retype_as`]) infers the nodes the rule
//! built around the typed parts it reused, which it takes as they are. What it gives
//! depends only on the *shape* of the built nodes (their primitives, nats, literals,
//! annotations, and which binder each variable refers to), on the types of the reused
//! parts and on the original's type: not on names, identities or where in the program
//! the rewrite happens. Search meets the same shape again and again: after a step, the
//! rules that applied at each ancestor of the change apply there again to parts of the
//! same types, and a rule such as `splitJoin(32)` builds one shape at every map over
//! arrays of the same type. So the types of a shape are kept (per thread, in a bounded
//! table) and given again without inference. Debug builds check every such answer
//! against inference.

use crate::error::ErrorKind;
use crate::infer::kept_type;
use crate::nat::{Nat, NatVar};
use crate::prim::Prim;
use crate::term::{Expr, Literal, Term};
use crate::types::Type;
use elevate_core::Traversable;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::sync::Arc;

/// A rule's `result` for `original`, with types: the new nodes are inferred around the
/// typed nodes the rule reused ([`crate::infer::retype`]). A result that does not
/// type-check is no result (the rule fails); if it cannot be typed for want of types
/// (an untyped input), it at least keeps the original's type, since rules preserve
/// types.
pub(crate) fn typed_result(original: &Term, result: Term) -> Option<Term> {
    let Some(expected) = original.ty().filter(|_| result.ty().is_none()) else {
        return Some(keep_type(original, result));
    };
    let Some(shape) = Shape::of(&result, expected) else {
        return inferred(original, expected, result).into_result();
    };
    if let Some(known) = MEMO.with(|memo| memo.borrow().get(&shape).cloned()) {
        #[cfg(test)]
        tests::HITS.with(|hits| hits.set(hits.get() + 1));
        let given = known.map(|types| with_types(&result, &types));
        if cfg!(debug_assertions) {
            let by_inference = inferred(original, expected, result).into_result();
            assert!(
                match (&given, &by_inference) {
                    (Some(g), Some(i)) => g == i && same_types(g, i),
                    (None, None) => true,
                    _ => false,
                },
                "the memo typed a result of {original} apart from inference"
            );
        }
        return given;
    }
    match inferred(original, expected, result.clone()) {
        Inferred::Typed(typed) => {
            if let Some(types) = built_types(&result, &typed) {
                remember(shape, Some(types.into()));
            }
            Some(typed)
        }
        Inferred::Fails => {
            remember(shape, None);
            None
        }
        Inferred::Unknowable(kept) => Some(kept),
    }
}

/// What inference made of a rule's result.
enum Inferred {
    Typed(Term),
    /// It does not type-check.
    Fails,
    /// It mentions a name bound outside it, which inference cannot see; it keeps the
    /// original's type. Not a function of the shape.
    Unknowable(Term),
}

impl Inferred {
    /// The rule's result, if it has one.
    fn into_result(self) -> Option<Term> {
        match self {
            Inferred::Typed(t) | Inferred::Unknowable(t) => Some(t),
            Inferred::Fails => None,
        }
    }
}

/// `result` typed by inference.
fn inferred(original: &Term, expected: &Type, result: Term) -> Inferred {
    match crate::infer::retype_as(&result, expected) {
        // Equal types may be written differently (`(n/4)*4` and `n`): the original's
        // form is kept at the root, where the parent expects it.
        Ok(typed) if typed.ty() != original.ty() => {
            Inferred::Typed(keep_type(original, typed.untyped_root()))
        }
        Ok(typed) => Inferred::Typed(typed),
        Err(e) if e.kind == ErrorKind::UnknownName => {
            Inferred::Unknowable(keep_type(original, result))
        }
        Err(_) => Inferred::Fails,
    }
}

/// `result`, typed as `original` if it has no type of its own.
pub(crate) fn keep_type(original: &Term, result: Term) -> Term {
    match (original.ty(), result.ty()) {
        (Some(ty), None) => result.with_type(ty.clone()),
        _ => result,
    }
}

/// Whether two equal terms carry the same types at every node (what the rules that
/// type their results directly check against inference in debug builds).
pub(super) fn same_types(a: &Term, b: &Term) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        if a.ty() != b.ty() || a.arity() != b.arity() {
            return false;
        }
        stack.extend((0..a.arity()).map(|i| (a.child(i), b.child(i))));
    }
    true
}

/// Shapes remembered per thread; the table starts again when full.
const MEMO_ENTRIES: usize = 1 << 14;

thread_local! {
    /// For each shape: the types of its built nodes in pre-order, or `None` where the
    /// result does not type-check.
    static MEMO: RefCell<FxHashMap<Shape, Option<Arc<[Type]>>>> = RefCell::default();
}

fn remember(shape: Shape, types: Option<Arc<[Type]>>) {
    MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        if memo.len() >= MEMO_ENTRIES {
            memo.clear();
        }
        memo.insert(shape, types);
    });
}

/// One node of a shape, in pre-order: what inference reads of a built node (without
/// its children, whose tokens follow), or a reused part (by its type alone).
#[derive(PartialEq, Eq, Hash)]
enum Token {
    Reused(Type),
    /// A variable bound by a built lambda: how many lambdas lie between them.
    Bound(usize),
    Lambda(Option<Type>),
    App,
    NatLambda(NatVar),
    NatApp(Nat),
    Literal(Literal),
    Prim(Prim),
    Array(usize),
    Annotation(Type),
}

/// What inference's answer for a rule's result is a function of: the original's type
/// and the result's tokens.
#[derive(PartialEq, Eq, Hash)]
struct Shape {
    expected: Type,
    tokens: Vec<Token>,
}

impl Shape {
    /// The shape of `result`, or `None` if it has a variable bound outside it that is
    /// not a reused part.
    fn of(result: &Term, expected: &Type) -> Option<Shape> {
        enum Visit<'t> {
            Enter(&'t Term),
            Leave(u64),
        }
        let mut tokens = Vec::new();
        // The depths of the built lambdas binding each variable, innermost last.
        let mut binders: FxHashMap<u64, Vec<usize>> = FxHashMap::default();
        let mut depth = 0;
        let mut stack = vec![Visit::Enter(result)];
        while let Some(visit) = stack.pop() {
            let t = match visit {
                Visit::Enter(t) => t,
                Visit::Leave(x) => {
                    binders.get_mut(&x).and_then(Vec::pop);
                    depth -= 1;
                    continue;
                }
            };
            if let Some(ty) = kept_type(t) {
                tokens.push(Token::Reused(ty.clone()));
                continue;
            }
            tokens.push(match t.expr() {
                Expr::Var(x) => Token::Bound(depth - binders.get(&x.id)?.last()?),
                Expr::Lambda(x, annotation, _) => {
                    depth += 1;
                    binders.entry(x.id).or_default().push(depth);
                    stack.push(Visit::Leave(x.id));
                    Token::Lambda(annotation.clone())
                }
                Expr::App(..) => Token::App,
                Expr::NatLambda(v, _) => Token::NatLambda(v.clone()),
                Expr::NatApp(_, n) => Token::NatApp(n.clone()),
                Expr::Literal(l) => Token::Literal(*l),
                Expr::Prim(p) => Token::Prim(*p),
                Expr::Array(items) => Token::Array(items.len()),
                Expr::Annotation(_, ty) => Token::Annotation(ty.clone()),
            });
            stack.extend((0..t.arity()).rev().map(|i| Visit::Enter(t.child(i))));
        }
        Some(Shape {
            expected: expected.clone(),
            tokens,
        })
    }
}

/// The types inference gave the built nodes of `result` (in pre-order), read off
/// `typed`; `None` if inference changed more than types (it inserted a nat
/// application, say), which the memo does not replay.
fn built_types(result: &Term, typed: &Term) -> Option<Vec<Type>> {
    let mut types = Vec::new();
    let mut stack = vec![(result, typed)];
    while let Some((r, t)) = stack.pop() {
        if kept_type(r).is_some() {
            if !r.same_node(t) {
                return None;
            }
            continue;
        }
        if !same_head(r, t) {
            return None;
        }
        types.push(t.ty()?.clone());
        stack.extend((0..r.arity()).rev().map(|i| (r.child(i), t.child(i))));
    }
    Some(types)
}

/// Whether two nodes are the same but for their children and types.
fn same_head(a: &Term, b: &Term) -> bool {
    match (a.expr(), b.expr()) {
        (Expr::Var(x), Expr::Var(y)) => x == y,
        (Expr::Lambda(x, s, _), Expr::Lambda(y, t, _)) => x == y && s == t,
        (Expr::App(..), Expr::App(..)) => true,
        (Expr::NatLambda(v, _), Expr::NatLambda(w, _)) => v == w,
        (Expr::NatApp(_, n), Expr::NatApp(_, m)) => n == m,
        (Expr::Literal(l), Expr::Literal(m)) => l == m,
        (Expr::Prim(p), Expr::Prim(q)) => p == q,
        (Expr::Array(xs), Expr::Array(ys)) => xs.len() == ys.len(),
        (Expr::Annotation(_, s), Expr::Annotation(_, t)) => s == t,
        _ => false,
    }
}

/// `result` with its built nodes typed by `types` (in pre-order), its reused parts as
/// they are.
fn with_types(result: &Term, types: &[Type]) -> Term {
    enum Visit<'t> {
        Enter(&'t Term),
        Build(&'t Term, usize),
    }
    let mut next = 0;
    let mut done: Vec<Term> = Vec::new();
    let mut stack = vec![Visit::Enter(result)];
    while let Some(visit) = stack.pop() {
        match visit {
            Visit::Enter(t) if kept_type(t).is_some() => done.push(t.clone()),
            Visit::Enter(t) => {
                stack.push(Visit::Build(t, next));
                next += 1;
                stack.extend((0..t.arity()).rev().map(|i| Visit::Enter(t.child(i))));
            }
            Visit::Build(t, index) => {
                let children = done.split_off(done.len() - t.arity());
                done.push(t.with_parts(children, Some(types[index].clone()), t.span()));
            }
        }
    }
    done.pop().expect("the root")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{infer, parse_term};
    use std::cell::Cell;

    thread_local! {
        /// Answers the memo gave on this thread.
        pub(super) static HITS: Cell<usize> = const { Cell::new(0) };
    }

    fn hits() -> usize {
        HITS.with(Cell::get)
    }

    fn typed(text: &str) -> Term {
        infer(&parse_term(text).unwrap()).unwrap()
    }

    /// `split(n)(x) |> map(map(f)) |> join` for `t = map(f)(x)`, built untyped.
    fn split_join(t: &Term, n: i64) -> Term {
        use super::super::pattern::{applied, call};
        let (_, args) = applied(t, Prim::Map, 2).unwrap();
        let inner = call(Prim::Map, &[], [args[0].clone()]);
        let split = call(Prim::Split, &[Nat::cst(n)], [args[1].clone()]);
        call(Prim::Join, &[], [call(Prim::Map, &[], [inner, split])])
    }

    /// The body of a lambda, typed.
    fn body(t: &Term) -> Term {
        let Expr::Lambda(_, _, body) = t.expr() else {
            panic!("a lambda")
        };
        body.clone()
    }

    #[test]
    fn a_shape_met_again_is_typed_from_the_memo_as_inference_types_it() {
        // Two maps of other functions and arrays, of the same types.
        let first = body(&typed("fun(xs: 256.f32 => xs |> map(fun(a => a + 1.0)))"));
        let second = body(&typed("fun(ys: 256.f32 => ys |> map(fun(b => b * 2.0)))"));
        let before = hits();
        let one = typed_result(&first, split_join(&first, 32)).unwrap();
        assert_eq!(hits(), before, "the first is inferred");
        let two = typed_result(&second, split_join(&second, 32)).unwrap();
        assert_eq!(hits(), before + 1, "the second comes from the memo");
        let inferred =
            crate::infer::retype_as(&split_join(&second, 32), second.ty().unwrap()).unwrap();
        assert!(two == inferred && same_types(&two, &inferred));
        assert_eq!(one.ty(), two.ty());
        // Another size is another shape.
        typed_result(&second, split_join(&second, 16)).unwrap();
        assert_eq!(hits(), before + 1);
    }

    #[test]
    fn a_result_that_does_not_type_check_fails_again_from_the_memo() {
        let first = body(&typed("fun(xs: 8.f32 => xs |> map(fun(a => a + 1.0)))"));
        let second = body(&typed("fun(ys: 8.f32 => ys |> map(fun(b => b * 2.0)))"));
        let before = hits();
        assert!(typed_result(&first, split_join(&first, 32)).is_none());
        assert!(typed_result(&second, split_join(&second, 32)).is_none());
        assert_eq!(hits(), before + 1);
    }

    #[test]
    fn binders_count_by_position_and_outer_names_are_not_memoized() {
        let x = crate::term::Ident::new("x", 900);
        let y = crate::term::Ident::new("y", 901);
        let pair = |a: &crate::term::Ident, b: &crate::term::Ident| {
            Term::lambda(a.clone(), Term::lambda(b.clone(), Term::var(a)))
        };
        let expected = crate::parse_type("f32 -> i32 -> f32").unwrap();
        // `fun(x => fun(y => x))` and `fun(y => fun(x => y))` have one shape;
        // `fun(x => fun(y => y))` another.
        let a = Shape::of(&pair(&x, &y), &expected).unwrap();
        let b = Shape::of(&pair(&y, &x), &expected).unwrap();
        let c = Shape::of(
            &Term::lambda(x.clone(), Term::lambda(y.clone(), Term::var(&y))),
            &expected,
        )
        .unwrap();
        assert!(a == b && a != c);
        // A variable bound outside the result is not a function of the shape.
        assert!(Shape::of(&Term::var(&x), &expected).is_none());
    }

    #[test]
    fn a_result_100000_levels_deep_is_typed_and_memoized() {
        let leaf = typed("fun(x: f32 => x)");
        let x = body(&leaf);
        let deep = |leaf: &Term| {
            (0..100_000).fold(leaf.clone(), |t, _| Term::app(Term::prim(Prim::Neg), t))
        };
        let before = hits();
        let one = typed_result(&x, deep(&x)).unwrap();
        let two = typed_result(&x, deep(&x)).unwrap();
        assert_eq!(hits(), before + 1);
        assert_eq!(one.ty().unwrap().to_string(), "f32");
        assert_eq!(two.ty(), one.ty());
    }
}
