//! The basic strategies: `id`, `fail`, `try`, `repeat`, `repeatN`, `applyN`.

use elevate_core::{Context, Failure, Name, RewriteResult, Strategy, StrategyImpl};
use std::fmt;

struct Id;

impl<P: Clone + 'static> StrategyImpl<P> for Id {
    fn apply(&self, p: &P, _: &mut Context) -> RewriteResult<P> {
        Ok(p.clone())
    }

    fn name(&self) -> Name {
        Name::new("id")
    }
}

/// `id`: succeeds with the program unchanged.
pub fn id<P: Clone + Send + Sync + 'static>() -> Strategy<P> {
    Strategy::new(Id)
}

struct Fail;

impl<P: 'static> StrategyImpl<P> for Fail {
    fn apply(&self, _: &P, _: &mut Context) -> RewriteResult<P> {
        Err(Failure::no_match("fail"))
    }

    fn name(&self) -> Name {
        Name::new("fail")
    }
}

/// `fail`: always fails.
pub fn fail<P: 'static>() -> Strategy<P> {
    Strategy::new(Fail)
}

struct Try<P>(Strategy<P>);

impl<P: Clone + Send + Sync + 'static> StrategyImpl<P> for Try<P> {
    #[inline]
    fn apply(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        Ok(self.0.attempt(p, cx)?.unwrap_or_else(|| p.clone()))
    }

    fn name(&self) -> Name {
        Name::new("try")
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "try({})", self.0)
    }
}

/// `try(s) = s <+ id`: `s`, or the program unchanged where `s` fails.
///
/// ```
/// use elevate_core::arith::{self, Term};
/// use elevate_strategies::try_;
/// let t: Term = "x".parse().unwrap();
/// assert_eq!(try_(arith::add_zero()).run(&t).unwrap(), t);
/// ```
pub fn try_<P: Clone + Send + Sync + 'static>(s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Try(s))
}

struct Repeat<P>(Strategy<P>);

impl<P: Clone + Send + Sync + 'static> StrategyImpl<P> for Repeat<P> {
    fn apply(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        // A loop, not Elevate's `try(s ; repeat(s))`: a million iterations must not
        // mean a million stack frames.
        let mut current = p.clone();
        while let Some(next) = self.0.attempt(&current, cx)? {
            current = next;
        }
        Ok(current)
    }

    fn name(&self) -> Name {
        Name::new("repeat")
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "repeat({})", self.0)
    }
}

/// `repeat(s) = try(s ; repeat(s))`: applies `s` until it fails; never fails itself
/// (but for the budget, the only way to stop `repeat(id)`).
///
/// ```
/// use elevate_core::{arith::{self, Term}, Budget, Context, FailureKind, BudgetLimit};
/// use elevate_strategies::{id, repeat};
/// let t: Term = "-(-(-(-x)))".parse().unwrap();
/// assert_eq!(repeat(arith::neg_neg()).run(&t).unwrap().to_string(), "x");
///
/// let mut cx = Context::new(Budget::unlimited().applications(1000));
/// let failure = repeat(id()).apply(&t, &mut cx).unwrap_err();
/// assert_eq!(failure.kind(), FailureKind::Budget(BudgetLimit::Applications(1000)));
/// ```
pub fn repeat<P: Clone + Send + Sync + 'static>(s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Repeat(s))
}

struct RepeatN<P> {
    /// `repeatN`, or `applyN` for the text language's `applyN(n, s)`.
    name: &'static str,
    times: usize,
    s: Strategy<P>,
}

impl<P: Clone + Send + Sync + 'static> StrategyImpl<P> for RepeatN<P> {
    fn apply(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        // A loop that each application of `s` checks the budget in: `times` may be
        // absurd (`repeatN(10^11, id)`), the budget is what bounds it.
        let mut current = p.clone();
        for _ in 0..self.times {
            current = self.s.apply(&current, cx)?;
        }
        Ok(current)
    }

    fn name(&self) -> Name {
        Name::new(self.name)
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({}, {})", self.name, self.times, self.s)
    }
}

/// `repeatN(n, s) = s ; s ; ... ; s` (`n` times, Elevate's `repeatNTimes`): fails if
/// any application fails. `repeatN(0, s) = id`.
///
/// ```
/// use elevate_core::arith::{self, Term};
/// use elevate_strategies::repeat_n;
/// let t: Term = "-(-(-(-x)))".parse().unwrap();
/// assert_eq!(repeat_n(1, arith::neg_neg()).run(&t).unwrap().to_string(), "-(-x)");
/// assert!(repeat_n(3, arith::neg_neg()).run(&t).is_err());
/// ```
pub fn repeat_n<P: Clone + Send + Sync + 'static>(times: usize, s: Strategy<P>) -> Strategy<P> {
    Strategy::new(RepeatN {
        name: "repeatN",
        times,
        s,
    })
}

/// The text language's `applyN(n, s)`: `repeatN(n, s)` under the name it was
/// written with.
pub(crate) fn apply_n_times<P: Clone + Send + Sync + 'static>(
    times: usize,
    s: Strategy<P>,
) -> Strategy<P> {
    Strategy::new(RepeatN {
        name: "applyN",
        times,
        s,
    })
}

/// `applyN(n, f, s) = f(f(...f(s)))` (`n` times; Elevate's `applyNTimes`): builds a
/// strategy by applying a strategy transformer, typically a traversal, `n` times.
/// The result prints as the strategy it built, which has `n` levels: in strategy
/// text, `applyN(n, T)(s)` takes `n` up to [`MAX_APPLY_N`].
///
/// ```
/// use elevate_core::arith::{self, Term};
/// use elevate_strategies::{apply_n, one};
/// let s = apply_n(2, one, arith::add_zero());
/// assert_eq!(s.to_string(), "one(one(addZero))");
/// let t: Term = "-(a * (b + 0))".parse().unwrap();
/// assert_eq!(s.run(&t).unwrap().to_string(), "-(a * b)");
/// ```
pub fn apply_n<P>(
    times: usize,
    f: impl Fn(Strategy<P>) -> Strategy<P>,
    s: Strategy<P>,
) -> Strategy<P> {
    (0..times).fold(s, |s, _| f(s))
}

/// The largest `n` of `applyN(n, T)(s)` in strategy text: as deep as strategy text
/// may nest (`try(try(...))` 100,000 times).
pub const MAX_APPLY_N: usize = 100_000;
