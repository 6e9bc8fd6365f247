//! RISE locations: strategies applied to a part of a RISE node.

use crate::prim::Prim;
use crate::term::{Expr, Term};
use elevate_core::{Context, Failure, Name, RewriteResult, Strategy, StrategyImpl, Traversable};
use std::fmt;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Body,
    Function,
    Argument,
    Annotated,
}

struct Location {
    part: Part,
    /// For `argumentOf`: the primitive that must be the function.
    of: Option<Prim>,
    s: Strategy<Term>,
}

impl Location {
    fn name(&self) -> &'static str {
        match (self.part, self.of) {
            (Part::Body, _) => "body",
            (Part::Function, _) => "function",
            (Part::Argument, None) => "argument",
            (Part::Argument, Some(_)) => "argumentOf",
            (Part::Annotated, _) => "annotated",
        }
    }

    /// Which child the part is, if the node has it.
    fn child(&self, t: &Term) -> Option<usize> {
        match (self.part, t.expr()) {
            (Part::Body, Expr::Lambda(..) | Expr::NatLambda(..)) => Some(0),
            // An application's children: the argument (0), then the function (1).
            (Part::Function, Expr::App(..)) => Some(1),
            (Part::Function, Expr::NatApp(..)) => Some(0),
            (Part::Argument, Expr::App(f, _)) => match self.of {
                None => Some(0),
                Some(p) if is_prim(f, p) => Some(0),
                Some(_) => None,
            },
            (Part::Annotated, Expr::Annotation(..)) => Some(0),
            _ => None,
        }
    }
}

/// Whether `t` is the primitive `p`, possibly applied to its nat arguments.
fn is_prim(t: &Term, p: Prim) -> bool {
    match t.expr() {
        Expr::Prim(q) => *q == p,
        Expr::NatApp(f, _) => is_prim(f, p),
        _ => false,
    }
}

impl StrategyImpl<Term> for Location {
    fn apply(&self, t: &Term, cx: &mut Context) -> RewriteResult<Term> {
        let index = self
            .child(t)
            .ok_or_else(|| Failure::no_match(self.name()))?;
        // Names made in the part must be new to the rest of `t` too.
        cx.names_mut().reserve_above(t.name_floor());
        let rewritten = cx
            .descend(index, |cx| self.s.apply(t.child(index), cx))
            .map_err(|e| e.in_child(index))?;
        Ok(t.with_child(index, rewritten))
    }

    fn name(&self) -> Name {
        Name::new(self.name())
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.of {
            Some(p) => write!(f, "argumentOf({p}, {})", self.s),
            None => write!(f, "{}({})", self.name(), self.s),
        }
    }
}

/// `body(s)`: `s` on the body of a lambda (`fun` or `depFun`); fails elsewhere.
pub fn body(s: Strategy<Term>) -> Strategy<Term> {
    Strategy::new(Location {
        part: Part::Body,
        of: None,
        s,
    })
}

/// `function(s)`: `s` on the function of an application `f(a)`; fails elsewhere.
pub fn function(s: Strategy<Term>) -> Strategy<Term> {
    Strategy::new(Location {
        part: Part::Function,
        of: None,
        s,
    })
}

/// `argument(s)`: `s` on the argument of an application `f(a)`; fails elsewhere.
pub fn argument(s: Strategy<Term>) -> Strategy<Term> {
    Strategy::new(Location {
        part: Part::Argument,
        of: None,
        s,
    })
}

/// `annotated(s)`: `s` on the term of a type annotation `e : T` (the annotation
/// kept); fails elsewhere.
pub fn annotated(s: Strategy<Term>) -> Strategy<Term> {
    Strategy::new(Location {
        part: Part::Annotated,
        of: None,
        s,
    })
}

/// `argumentOf(p, s)`: `s` on the argument of `p(a)` where the function is the
/// primitive `p` (with its nat arguments); fails elsewhere.
pub fn argument_of(p: Prim, s: Strategy<Term>) -> Strategy<Term> {
    Strategy::new(Location {
        part: Part::Argument,
        of: Some(p),
        s,
    })
}

/// `fmap(s) = function(argumentOf(map, body(s)))`: `s` on the body of the lambda of an
/// applied `map(fun(x => b))(xs)` (apply `DFNF` first to make every map so).
pub fn fmap(s: Strategy<Term>) -> Strategy<Term> {
    function(argument_of(Prim::Map, body(s)))
}

/// The body of the lambda of an applied `map(fun(x => body))(xs)`, if `t` is one.
fn mapped_body(t: &Term) -> Option<&Term> {
    let Expr::App(f, _) = t.expr() else {
        return None;
    };
    let Expr::App(map, lambda) = f.expr() else {
        return None;
    };
    if !is_prim(map, Prim::Map) {
        return None;
    }
    match lambda.expr() {
        Expr::Lambda(_, _, body) | Expr::NatLambda(_, body) => Some(body),
        _ => None,
    }
}

/// `mapNest(d)`, walked down level by level: `d` may be absurd, the program bounds
/// the walk.
struct MapNest(usize);

impl StrategyImpl<Term> for MapNest {
    fn apply(&self, t: &Term, _: &mut Context) -> RewriteResult<Term> {
        let mut current = t;
        for _ in 0..self.0 {
            current = mapped_body(current).ok_or_else(|| Failure::no_match("mapNest"))?;
        }
        Ok(t.clone())
    }

    fn name(&self) -> Name {
        Name::new("mapNest")
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mapNest({})", self.0)
    }
}

/// `mapNest(d)`: a predicate that holds for `d` maps nested directly in each other's
/// lambda bodies (`mapNest(0)` always holds): `mapNest(d) = fmap(mapNest(d - 1))`,
/// checked without building `d` strategies.
///
/// ```
/// use elevate_core::Traversable;
/// use elevate_rise::{parse_term, rules::map_nest};
/// let t = parse_term("fun(x: 4.4.f32 => x |> map(fun(r => r |> map(fun(v => v)))))").unwrap();
/// let body = t.child(0);
/// assert!(map_nest(2).run(body).is_ok());
/// assert!(map_nest(3).run(body).is_err());
/// assert!(map_nest(99_999_999_999).run(body).is_err());
/// ```
pub fn map_nest(d: usize) -> Strategy<Term> {
    Strategy::new(MapNest(d))
}

/// `outermost(p)(s) = topDown(p ; s)`: `s` at the first location, top-down, where the
/// predicate `p` holds and `s` succeeds.
pub fn outermost(p: Strategy<Term>, s: Strategy<Term>) -> Strategy<Term> {
    elevate_strategies::top_down(p >> s)
}

/// `innermost(p)(s) = bottomUp(p ; s)`.
pub fn innermost(p: Strategy<Term>, s: Strategy<Term>) -> Strategy<Term> {
    elevate_strategies::bottom_up(p >> s)
}

/// `everywhere(s) = normalize(s)`.
pub fn everywhere(s: Strategy<Term>) -> Strategy<Term> {
    elevate_strategies::normalize(s)
}

/// `check(p)(s) = p ; s`.
pub fn check(p: Strategy<Term>, s: Strategy<Term>) -> Strategy<Term> {
    p >> s
}

/// `inLambda(s)`, recursing through the leading lambdas directly (the strategy
/// prints as `inLambda(s)` without formatting `s` when built).
struct InLambda(Strategy<Term>);

impl InLambda {
    /// `s` on the innermost body below the leading lambdas where it succeeds.
    fn attempt_below(&self, t: &Term, cx: &mut Context) -> Result<Option<Term>, Failure> {
        if matches!(t.expr(), Expr::Lambda(..) | Expr::NatLambda(..)) {
            cx.names_mut().reserve_above(t.name_floor());
            let below = cx
                .descend(0, |cx| self.attempt_below(t.child(0), cx))
                .map_err(|e| e.in_child(0))?;
            if let Some(body) = below {
                return Ok(Some(t.with_child(0, body)));
            }
        }
        self.0.attempt(t, cx)
    }
}

impl StrategyImpl<Term> for InLambda {
    fn apply(&self, t: &Term, cx: &mut Context) -> RewriteResult<Term> {
        if matches!(t.expr(), Expr::Lambda(..) | Expr::NatLambda(..)) {
            cx.names_mut().reserve_above(t.name_floor());
            let below = cx
                .descend(0, |cx| self.attempt_below(t.child(0), cx))
                .map_err(|e| e.in_child(0))?;
            if let Some(body) = below {
                return Ok(t.with_child(0, body));
            }
        }
        self.0.apply(t, cx)
    }

    fn attempt(&self, t: &Term, cx: &mut Context) -> Result<Option<Term>, Failure> {
        self.attempt_below(t, cx)
    }

    fn name(&self) -> Name {
        Name::new("inLambda")
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "inLambda({})", self.0)
    }
}

/// `inLambda(s) = (isLambda ; body(inLambda(s))) <+ s`: `s` on the body below the
/// leading lambdas (a program's parameters, its nat parameters included), or, where
/// it fails there, on the nearest enclosing lambda where it succeeds.
pub fn in_lambda(s: Strategy<Term>) -> Strategy<Term> {
    Strategy::new(InLambda(s))
}
