//! RISE predicates (succeed with the term unchanged, or fail) and normal forms.

use super::algorithmic::{map_fission, map_fusion};
use super::basic::{beta_nat_reduction, beta_reduction, eta_reduction, share_argument};
use super::pattern::named;
use super::traversal::{argument_of, body, function};
use super::typing::typed_result;
use crate::prim::Prim;
use crate::term::{Expr, Ident, Term};
use crate::types::TypeKind;
use elevate_core::{Context, Failure, Name, RewriteResult, Strategy, StrategyImpl, Traversable};
use elevate_strategies::text::{ArgError, Registry, Value};
use elevate_strategies::{normalize, not, one, repeat, top_down, try_};
use std::fmt;
use std::sync::OnceLock;

pub(crate) fn predicate(
    name: &'static str,
    holds: impl Fn(&Term) -> bool + Send + Sync + 'static,
) -> Strategy<Term> {
    struct Predicate<F> {
        name: &'static str,
        holds: F,
    }
    impl<F: Fn(&Term) -> bool + Send + Sync + 'static> StrategyImpl<Term> for Predicate<F> {
        fn apply(&self, t: &Term, _: &mut Context) -> RewriteResult<Term> {
            if (self.holds)(t) {
                Ok(t.clone())
            } else {
                Err(Failure::no_match(self.name))
            }
        }

        fn name(&self) -> Name {
            Name::new(self.name)
        }
    }
    Strategy::new(Predicate { name, holds })
}

/// `isPrimitive(p)`: the node is the primitive `p` itself (unapplied).
pub fn is_primitive(p: Prim) -> Strategy<Term> {
    struct IsPrimitive(Prim);
    impl StrategyImpl<Term> for IsPrimitive {
        fn apply(&self, t: &Term, _: &mut Context) -> RewriteResult<Term> {
            match t.expr() {
                Expr::Prim(q) if *q == self.0 => Ok(t.clone()),
                _ => Err(Failure::no_match("isPrimitive")),
            }
        }

        fn name(&self) -> Name {
            Name::new("isPrimitive")
        }

        fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "isPrimitive({})", self.0)
        }
    }
    Strategy::new(IsPrimitive(p))
}

macro_rules! primitive_predicates {
    ($($(#[$doc:meta])* $fn:ident = $name:literal, $prim:ident;)*) => {$(
        $(#[$doc])*
        pub fn $fn() -> Strategy<Term> {
            predicate($name, |t| matches!(t.expr(), Expr::Prim(Prim::$prim)))
        }
    )*};
}

primitive_predicates! {
    /// `isMap`: the node is the `map` primitive.
    is_map = "isMap", Map;
    /// `isReduce`: the node is the `reduce` primitive.
    is_reduce = "isReduce", Reduce;
    /// `isReduceSeq`: the node is the `reduceSeq` primitive.
    is_reduce_seq = "isReduceSeq", ReduceSeq;
    /// `isTranspose`: the node is the `transpose` primitive.
    is_transpose = "isTranspose", Transpose;
    /// `isLet`: the node is the `let` primitive.
    is_let = "isLet", Let;
    /// `isGenerate`: the node is the `generate` primitive.
    is_generate = "isGenerate", Generate;
}

/// `isLambda`: the node is a `fun`.
pub fn is_lambda() -> Strategy<Term> {
    predicate("isLambda", |t| matches!(t.expr(), Expr::Lambda(..)))
}

/// `isApply`: the node is an application `f(a)`.
pub fn is_apply() -> Strategy<Term> {
    predicate("isApply", |t| matches!(t.expr(), Expr::App(..)))
}

/// `isApplied(s)`: the node is an application `f(a)` where `s` succeeds on `f`
/// (`isApplied(isApplied(isMap))` is an applied `map(f)(xs)`).
pub fn is_applied(s: Strategy<Term>) -> Strategy<Term> {
    struct IsApplied(Strategy<Term>);
    impl StrategyImpl<Term> for IsApplied {
        fn apply(&self, t: &Term, cx: &mut Context) -> RewriteResult<Term> {
            let Expr::App(f, _) = t.expr() else {
                return Err(Failure::no_match("isApplied"));
            };
            // A strategy on the function, like any descent, makes names new to `t`.
            cx.names_mut().reserve_above(t.name_floor());
            match self.0.attempt(f, cx)? {
                Some(_) => Ok(t.clone()),
                None => Err(Failure::no_match("isApplied")),
            }
        }

        fn name(&self) -> Name {
            Name::new("isApplied")
        }

        fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "isApplied({})", self.0)
        }
    }
    Strategy::new(IsApplied(s))
}

/// Eta-expansion where the position guarantees a function (the argument of `map`):
/// `f -> fun(x => f(x))`, without needing the node's type.
///
/// DFNF expands every function it gives a map or a reduction, so this rule runs
/// often: where `f` has a function type without unknowns, the three new nodes are
/// typed directly from it instead of by re-inference, which gives the same types
/// (debug builds check it).
fn eta_expand() -> Strategy<Term> {
    elevate_core::rule_with_names("etaAbstraction", |t: &Term, names| {
        let x = Ident::supplied(names, "x");
        let expanded = || Term::lambda(x.clone(), Term::app(t.clone(), Term::var(&x)));
        match eta_typed(t, &x) {
            Some(typed) => {
                if cfg!(debug_assertions) {
                    let inferred = typed_result(t, expanded());
                    assert!(
                        inferred
                            .is_some_and(|i| i == typed && super::typing::same_types(&i, &typed)),
                        "etaAbstraction typed {t} apart from inference"
                    );
                }
                Some(typed)
            }
            None => typed_result(t, expanded()),
        }
    })
}

/// `fun(x => f(x))` with its types, for an `f` of type `a -> b` without unknowns
/// (and not a function of a nat, whose argument inference instantiates): `x: a`,
/// `f(x): b`, the lambda `a -> b`.
fn eta_typed(f: &Term, x: &Ident) -> Option<Term> {
    let ty = f.ty().filter(|ty| !ty.has_unknowns())?;
    let TypeKind::Fun(a, b) = ty.kind() else {
        return None;
    };
    if matches!(a.kind(), TypeKind::DepFun(..)) {
        return None;
    }
    let var = Term::with(Expr::Var(x.clone()), Some(a.clone()), None);
    let app = Term::with(Expr::App(f.clone(), var), Some(b.clone()), None);
    let lambda = Expr::Lambda(x.clone(), None, app);
    Some(Term::with(lambda, Some(ty.clone()), None))
}

/// `inferTypes`: re-infers the types of a closed term (rules leave new nodes untyped;
/// rules that need sizes read types); fails if the term does not type-check.
pub fn infer_types() -> Strategy<Term> {
    elevate_core::rule("inferTypes", |t: &Term| crate::infer::infer(t).ok())
}

/// Whether some node of `t` has no type: each shared node once, without recursion
/// (a body 100,000 levels deep is a normal program).
fn has_untyped(t: &Term) -> bool {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut pending = vec![t];
    while let Some(t) = pending.pop() {
        if t.node_id().is_some_and(|id| !seen.insert(id)) {
            continue;
        }
        if t.ty().is_none() {
            return true;
        }
        pending.extend((0..t.arity()).map(|i| t.child(i)));
    }
    false
}

/// `inferTypes` where a node is untyped (rules type what they build, so after rules
/// there is usually nothing to do).
fn types_where_missing() -> Strategy<Term> {
    elevate_core::rule("inferTypes", |t: &Term| {
        if has_untyped(t) {
            crate::infer::infer(t).ok()
        } else {
            None
        }
    })
}

/// `BENF`, the beta-eta normal form:
/// `normalize(etaReduction <+ shareArgument <+ betaReduction <+ betaNatReduction)`.
/// `shareArgument` binds with `let` a large argument that a function uses more than
/// once, which substitution would copy into each use (see
/// [`MAX_COPIED_ARGUMENT`](super::basic::MAX_COPIED_ARGUMENT)); `betaNatReduction`
/// is for calls of definitions with nat parameters, which ELEVATE's RISE does not have.
pub fn benf() -> Strategy<Term> {
    named(
        "BENF",
        normalize(eta_reduction() | share_argument() | beta_reduction() | beta_nat_reduction()),
    )
}

/// `etaReduction` except of `fun(x => p(...)(x))` for a primitive `p`: the form DFNF
/// gives the functions of maps and reductions, so reducing it would only be undone.
fn eta_reduction_keeping_primitives() -> Strategy<Term> {
    super::pattern::rule("etaReduction", move |t: &Term| {
        if let Expr::Lambda(_, _, body) = t.expr() {
            if let Expr::App(f, _) = body.expr() {
                let mut head = f;
                while let Expr::App(g, _) | Expr::NatApp(g, _) = head.expr() {
                    head = g;
                }
                if matches!(head.expr(), Expr::Prim(_)) {
                    return None;
                }
            }
        }
        super::basic::eta_reduce(t)
    })
}

/// `overMany`: a predicate, the node is `map(f)` (a function of an array) or an
/// application to an array, and that array is not of one element. Threads on a loop
/// of one iteration (the batch of a network at batch 1) only cost: the loops inside
/// it then run on one thread (a nested parallel region), entering a parallel region
/// at each iteration of the loops around them (a bias over 512 channels of 7x7 ran in
/// 0.45 ms instead of 0.02, measured).
pub fn over_many() -> Strategy<Term> {
    predicate("overMany", |t| {
        let walked = match t.ty().map(|ty| ty.kind()) {
            Some(TypeKind::Fun(param, _)) => Some(param.clone()),
            _ => match t.expr() {
                Expr::App(_, a) => a.ty().cloned(),
                _ => None,
            },
        };
        !matches!(walked.as_ref().map(|w| w.kind()),
            Some(TypeKind::Array(n, _)) if n.as_const() == Some(1))
    })
}

/// `DFNF`, the data-flow normal form: `BENF`, then every function given to `map` or
/// `reduce` is a lambda and every map is applied to its array, so that `fmap`,
/// `mapNest` and the movement rules find `map(fun(x => ...))(xs)`. Ends by re-inferring
/// types where the term is closed.
///
/// The BENF step leaves `fun(x => p(...)(x))` for a primitive `p` alone: DFNF would
/// eta-expand it again (the normal form is the same; ELEVATE reduces and re-expands).
///
/// Every call returns the same shared strategy: the traversals remember, per strategy
/// and context, the shared subterms where they failed, so one instance lets each DFNF
/// of a composite (`reorder` applies dozens) skip what an earlier one already found
/// in normal form, instead of each starting with an empty memo.
pub fn dfnf() -> Strategy<Term> {
    static DFNF: OnceLock<Strategy<Term>> = OnceLock::new();
    DFNF.get_or_init(build_dfnf).clone()
}

fn build_dfnf() -> Strategy<Term> {
    let lambda_argument = |p: Prim| argument_of(p, not(is_lambda()) >> eta_expand());
    let partial = || function(is_map()) | one(function(is_reduce()));
    let beta_eta = normalize(
        eta_reduction_keeping_primitives()
            | share_argument()
            | beta_reduction()
            | beta_nat_reduction(),
    );
    let s = beta_eta
        >> normalize(lambda_argument(Prim::Map))
        >> normalize(lambda_argument(Prim::Reduce))
        >> normalize(argument_of(
            Prim::Reduce,
            body(not(is_lambda()) >> eta_expand()),
        ))
        >> normalize(one(partial()) >> not(is_apply()) >> one(partial() >> eta_expand()))
        >> try_(types_where_missing());
    named("DFNF", s)
}

/// `RNF`, the rewrite normal form (every map fissioned):
/// `repeat(DFNF ; topDown(mapFission) ; normalize(mapFission)) ; DFNF`.
///
/// ELEVATE writes `normalize(DFNF ; mapFission) ; DFNF`, which applies DFNF at each
/// node; a map nested as `map(map(f))` only becomes `map(fun(x => map(f)(x)))` when
/// DFNF runs at its parent, so that form can stop with fissionable maps left and a
/// second RNF changes the program. Putting DFNF at the root of every round makes RNF
/// idempotent. Each round fissions every map it can before the next DFNF (rather than
/// one), so that a nest takes as many rounds as it is deep, not as it has maps.
///
/// Shared like [`dfnf`], so that its traversals' memos carry over between uses.
pub fn rnf() -> Strategy<Term> {
    static RNF: OnceLock<Strategy<Term>> = OnceLock::new();
    RNF.get_or_init(|| {
        named(
            "RNF",
            repeat(dfnf() >> top_down(map_fission()) >> normalize(map_fission())) >> dfnf(),
        )
    })
    .clone()
}

/// `CNF`, the codegen normal form (every map fused): `normalize(mapFusion)`.
pub fn cnf() -> Strategy<Term> {
    named("CNF", normalize(map_fusion()))
}

/// Whether `t` is `pattern` up to the names of bound variables, with free variables
/// compared by name (a pattern written as text cannot know the program's variables).
fn matches_pattern(pattern: &Term, t: &Term, bound: &mut Vec<(u64, u64)>) -> bool {
    match (pattern.expr(), t.expr()) {
        (Expr::Var(x), Expr::Var(y)) => {
            match bound.iter().rev().find(|(p, q)| *p == x.id || *q == y.id) {
                Some(&(p, q)) => p == x.id && q == y.id,
                None => x.name == y.name,
            }
        }
        (Expr::Lambda(x, _, a), Expr::Lambda(y, _, b)) => {
            bound.push((x.id, y.id));
            let equal = matches_pattern(a, b, bound);
            bound.pop();
            equal
        }
        (Expr::NatLambda(v, a), Expr::NatLambda(w, b)) => v == w && matches_pattern(a, b, bound),
        (Expr::NatApp(f, n), Expr::NatApp(g, m)) => n == m && matches_pattern(f, g, bound),
        (Expr::App(f, a), Expr::App(g, b)) => {
            matches_pattern(f, g, bound) && matches_pattern(a, b, bound)
        }
        (Expr::Annotation(a, _), _) => matches_pattern(a, t, bound),
        (_, Expr::Annotation(b, _)) => matches_pattern(pattern, b, bound),
        (Expr::Literal(a), Expr::Literal(b)) => a == b,
        (Expr::Prim(p), Expr::Prim(q)) => p == q,
        (Expr::Array(xs), Expr::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| matches_pattern(x, y, bound))
        }
        _ => false,
    }
}

struct IsEqualTo {
    pattern: Term,
    contains: bool,
}

impl IsEqualTo {
    fn holds(&self, t: &Term) -> bool {
        if matches_pattern(&self.pattern, t, &mut Vec::new()) {
            return true;
        }
        self.contains && (0..t.arity()).any(|i| self.holds(t.child(i)))
    }
}

impl StrategyImpl<Term> for IsEqualTo {
    fn apply(&self, t: &Term, _: &mut Context) -> RewriteResult<Term> {
        if self.holds(t) {
            Ok(t.clone())
        } else {
            Err(Failure::no_match(self.name()))
        }
    }

    fn name(&self) -> Name {
        Name::new(if self.contains {
            "contains"
        } else {
            "isEqualTo"
        })
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = crate::print::print_term(&self.pattern);
        write!(f, "{}({:?})", self.name(), text)
    }
}

/// `isEqualTo(pattern)`: holds where the program is `pattern` (bound variables up to
/// renaming, free variables by name, types ignored).
///
/// ```
/// use elevate_rise::{parse_pattern, parse_term, rules};
/// let t = parse_term("fun(b => transpose(b))").unwrap();
/// let pattern = parse_pattern("transpose(b)").unwrap();
/// assert!(rules::body(rules::is_equal_to(pattern.clone())).run(&t).is_ok());
/// assert!(rules::is_equal_to(pattern).run(&t).is_err());
/// ```
pub fn is_equal_to(pattern: Term) -> Strategy<Term> {
    Strategy::new(IsEqualTo {
        pattern,
        contains: false,
    })
}

/// `contains(pattern) = topDown(isEqualTo(pattern))` as a predicate: holds where the
/// program has a subterm that is `pattern`.
pub fn contains(pattern: Term) -> Strategy<Term> {
    Strategy::new(IsEqualTo {
        pattern,
        contains: true,
    })
}

/// Registers the predicates and normal forms in the strategy language.
pub(super) fn register(r: &mut Registry<Term>) {
    r.rule(
        "BENF",
        "beta-eta normal form: normalize(etaReduction <+ shareArgument <+ betaReduction <+ betaNatReduction)",
        benf,
    );
    r.rule(
        "DFNF",
        "data-flow normal form: BENF, then maps and reduces applied to lambdas",
        dfnf,
    );
    r.rule(
        "RNF",
        "rewrite normal form: repeat(DFNF ; topDown(mapFission) ; normalize(mapFission)) ; DFNF",
        rnf,
    );
    r.rule("CNF", "codegen normal form: normalize(mapFusion)", cnf);
    r.rule(
        "inferTypes",
        "re-infers the types of a closed term; fails if it does not type-check",
        infer_types,
    );
    type Predicate = fn() -> Strategy<Term>;
    let predicates: [(&str, &str, Predicate); 9] = [
        ("isMap", "the node is the map primitive", is_map),
        ("isReduce", "the node is the reduce primitive", is_reduce),
        (
            "isReduceSeq",
            "the node is the reduceSeq primitive",
            is_reduce_seq,
        ),
        (
            "isTranspose",
            "the node is the transpose primitive",
            is_transpose,
        ),
        ("isLet", "the node is the let primitive", is_let),
        (
            "isGenerate",
            "the node is the generate primitive",
            is_generate,
        ),
        ("isLambda", "the node is a lambda", is_lambda),
        ("isApply", "the node is an application f(a)", is_apply),
        (
            "overMany",
            "the node is map(f) or map(f)(xs) over more than one element (or a length not known)",
            over_many,
        ),
    ];
    for (name, doc, make) in predicates {
        r.rule(name, doc, make);
    }
    r.unary(
        "isApplied",
        "the node is f(a) where s succeeds on f",
        is_applied,
    );
    r.add(
        "isPrimitive",
        "(PRIM)",
        "the node is the primitive PRIM",
        |a| Ok(is_primitive(super::prim_arg(a, 0)?)),
    );
    for (name, doc, make) in [
        (
            "isEqualTo",
            "predicate: the program is PROGRAM (RISE text; free variables by name)",
            is_equal_to as fn(Term) -> Strategy<Term>,
        ),
        (
            "contains",
            "predicate: the program has a subterm that is PROGRAM",
            contains,
        ),
    ] {
        r.add(name, "(\"PROGRAM\")", doc, move |a| match a {
            [Value::Str(text)] => {
                crate::parser::parse_pattern(text)
                    .map(make)
                    .map_err(|e| ArgError::Rejected {
                        index: 0,
                        reason: format!("is not a RISE program: {}", e.message),
                    })
            }
            _ => Err(ArgError::invalid(
                None,
                "expects one RISE program as a string",
            )),
        });
    }
}
