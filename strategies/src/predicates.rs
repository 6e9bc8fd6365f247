//! Predicates (succeed with the program unchanged, or fail) and observation.

use elevate_core::{Context, Failure, Name, RewriteResult, Strategy, StrategyImpl, Traversable};
use std::fmt;
use std::sync::Arc;

struct Not<P>(Strategy<P>);

impl<P: Clone + Send + Sync + 'static> StrategyImpl<P> for Not<P> {
    fn apply(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        match self.0.attempt(p, cx)? {
            Some(_) => Err(Failure::no_match("not")),
            None => Ok(p.clone()),
        }
    }

    fn name(&self) -> Name {
        Name::new("not")
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not({})", self.0)
    }
}

/// `not(s)`: succeeds with the program unchanged where `s` fails, and fails where `s`
/// succeeds.
///
/// ```
/// use elevate_core::arith::{self, Term};
/// use elevate_strategies::not;
/// let t: Term = "x".parse().unwrap();
/// assert_eq!(not(arith::add_zero()).run(&t).unwrap(), t);
/// ```
pub fn not<P: Clone + Send + Sync + 'static>(s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Not(s))
}

struct IfThenElse<P> {
    condition: Strategy<P>,
    then: Strategy<P>,
    otherwise: Strategy<P>,
}

impl<P: Clone + Send + Sync + 'static> StrategyImpl<P> for IfThenElse<P> {
    fn apply(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        let mark = cx.trace_mark();
        match self.condition.attempt(p, cx)? {
            Some(_) => {
                // Only the branch's rewrites are part of the result.
                cx.rollback_trace(mark);
                self.then.apply(p, cx)
            }
            None => self.otherwise.apply(p, cx),
        }
    }

    fn name(&self) -> Name {
        Name::new("ifThenElse")
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ifThenElse({}, {}, {})",
            self.condition, self.then, self.otherwise
        )
    }
}

/// `ifThenElse(p, t, e)`: `t` where the predicate `p` succeeds, else `e`; both on the
/// original program (`p`'s result is only a verdict).
pub fn if_then_else<P: Clone + Send + Sync + 'static>(
    condition: Strategy<P>,
    then: Strategy<P>,
    otherwise: Strategy<P>,
) -> Strategy<P> {
    Strategy::new(IfThenElse {
        condition,
        then,
        otherwise,
    })
}

struct IsEqualTo<P>(P);

impl<P> StrategyImpl<P> for IsEqualTo<P>
where
    P: PartialEq + fmt::Display + Clone + Send + Sync + 'static,
{
    fn apply(&self, p: &P, _: &mut Context) -> RewriteResult<P> {
        if *p == self.0 {
            Ok(p.clone())
        } else {
            Err(Failure::no_match("isEqualTo"))
        }
    }

    fn name(&self) -> Name {
        Name::new("isEqualTo")
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "isEqualTo({})", self.0)
    }
}

/// `isEqualTo(q)`: succeeds where the program equals `q`.
pub fn is_equal_to<P>(program: P) -> Strategy<P>
where
    P: PartialEq + fmt::Display + Clone + Send + Sync + 'static,
{
    Strategy::new(IsEqualTo(program))
}

struct Contains<P>(P);

impl<P: Traversable + PartialEq + fmt::Display> StrategyImpl<P> for Contains<P> {
    fn apply(&self, p: &P, _: &mut Context) -> RewriteResult<P> {
        // An explicit stack: programs may be deeper than the call stack.
        let mut pending = vec![p];
        while let Some(q) = pending.pop() {
            if *q == self.0 {
                return Ok(p.clone());
            }
            pending.extend((0..q.arity()).rev().map(|i| q.child(i)));
        }
        Err(Failure::no_match("contains"))
    }

    fn name(&self) -> Name {
        Name::new("contains")
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "contains({})", self.0)
    }
}

/// `contains(q)`: succeeds where `q` occurs somewhere in the program.
///
/// ```
/// use elevate_core::arith::Term;
/// use elevate_strategies::contains;
/// let t: Term = "a * (b + 0)".parse().unwrap();
/// assert!(contains("b + 0".parse::<Term>().unwrap()).run(&t).is_ok());
/// assert!(contains("a + 0".parse::<Term>().unwrap()).run(&t).is_err());
/// ```
pub fn contains<P: Traversable + PartialEq + fmt::Display>(program: P) -> Strategy<P> {
    Strategy::new(Contains(program))
}

type Observer<P> = dyn Fn(&P, &mut Context) + Send + Sync;

struct Inspect<P> {
    name: Name,
    observe: Arc<Observer<P>>,
}

impl<P: Clone + Send + Sync + 'static> StrategyImpl<P> for Inspect<P> {
    fn apply(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        (self.observe)(p, cx);
        Ok(p.clone())
    }

    fn name(&self) -> Name {
        self.name.clone()
    }
}

/// A strategy named `name` that calls `observe` on the program and succeeds with it
/// unchanged (Elevate's `peek` with a function of your own).
pub fn inspect<P: Clone + Send + Sync + 'static>(
    name: impl Into<Name>,
    observe: impl Fn(&P, &mut Context) + Send + Sync + 'static,
) -> Strategy<P> {
    Strategy::new(Inspect {
        name: name.into(),
        observe: Arc::new(observe),
    })
}

/// `peek`: prints the program to the context's log and succeeds.
///
/// ```
/// use elevate_core::{arith::Term, Context, Log};
/// use elevate_strategies::peek;
/// let t: Term = "a + 1".parse().unwrap();
/// let mut cx = Context::default().with_log(Log::Collect(Vec::new()));
/// peek().apply(&t, &mut cx).unwrap();
/// assert_eq!(cx.messages(), ["a + 1"]);
/// ```
pub fn peek<P: fmt::Display + Clone + Send + Sync + 'static>() -> Strategy<P> {
    inspect("peek", |p: &P, cx: &mut Context| cx.log(|| p.to_string()))
}

struct Debug {
    message: Arc<str>,
}

impl<P: Clone + 'static> StrategyImpl<P> for Debug {
    fn apply(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        cx.log(|| self.message.to_string());
        Ok(p.clone())
    }

    fn name(&self) -> Name {
        Name::new("debug")
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "debug({:?})", self.message)
    }
}

/// `debug(msg)`: prints `msg` to the context's log and succeeds.
pub fn debug<P: Clone + Send + Sync + 'static>(message: &str) -> Strategy<P> {
    Strategy::new(Debug {
        message: message.into(),
    })
}
