//! Why a strategy did not produce a program.

use crate::{Name, Path};
use std::fmt;

/// The result of applying a strategy: the rewritten program, or why there is none.
pub type RewriteResult<P> = Result<P, Failure>;

/// Which limit of a [`Budget`](crate::Budget) ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BudgetLimit {
    /// Successful rule applications.
    Steps(u64),
    /// Strategy applications (every strategy, rule or combinator, counts).
    Applications(u64),
    /// Wall-clock time, in milliseconds.
    Time(u64),
}

impl fmt::Display for BudgetLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BudgetLimit::Steps(n) => write!(f, "{n} rewrite steps"),
            BudgetLimit::Applications(n) => write!(f, "{n} strategy applications"),
            BudgetLimit::Time(ms) => write!(f, "{ms} ms"),
        }
    }
}

/// What kind of failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// The strategy does not apply to the program: the ordinary failure that choice,
    /// `try` and the traversals recover from.
    NoMatch,
    /// The run's budget is exhausted. No combinator recovers from this: it unwinds the
    /// whole run.
    Budget(BudgetLimit),
}

/// A strategy failed: which named strategy, where, and why.
///
/// Failures are created on the hot path of every traversal (each node where a rule does
/// not match), so building one costs no allocation and no formatting: the name is a
/// cheap clone and the location starts empty. Location combinators (`all`, `atPath`,
/// ...) extend the location as the failure propagates up to them.
///
/// ```
/// use elevate_core::{Failure, FailureKind};
/// let f = Failure::no_match("mapFusion").in_child(1).in_child(0);
/// assert_eq!(f.strategy(), "mapFusion");
/// assert_eq!(f.kind(), FailureKind::NoMatch);
/// assert_eq!(f.path().to_string(), "[0, 1]");
/// assert_eq!(f.to_string(), "strategy `mapFusion` failed at [0, 1]");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Failure {
    strategy: Name,
    kind: FailureKind,
    /// Child positions from the innermost outwards (pushed while propagating up);
    /// boxed so that the common failure, at the place it happened, stays small.
    #[allow(clippy::box_collection)]
    reversed_path: Option<Box<Vec<u32>>>,
}

impl Failure {
    /// `strategy` does not apply here.
    #[inline]
    pub fn no_match(strategy: impl Into<Name>) -> Self {
        Failure {
            strategy: strategy.into(),
            kind: FailureKind::NoMatch,
            reversed_path: None,
        }
    }

    /// The budget ran out while `strategy` was being applied.
    pub fn budget(strategy: impl Into<Name>, limit: BudgetLimit) -> Self {
        Failure {
            strategy: strategy.into(),
            kind: FailureKind::Budget(limit),
            reversed_path: None,
        }
    }

    /// The same failure, seen from the parent of the node where it happened.
    #[inline]
    pub fn in_child(mut self, index: usize) -> Self {
        self.reversed_path
            .get_or_insert_with(Default::default)
            .push(index as u32);
        self
    }

    /// The same failure, seen from `path` above the node where it happened.
    pub fn at_path(mut self, path: &Path) -> Self {
        if !path.is_empty() {
            self.reversed_path
                .get_or_insert_with(Default::default)
                .extend(path.as_slice().iter().rev().copied());
        }
        self
    }

    /// The name of the strategy that failed.
    pub fn strategy(&self) -> &Name {
        &self.strategy
    }

    /// Why it failed.
    pub fn kind(&self) -> FailureKind {
        self.kind
    }

    /// Whether the budget ran out (as opposed to an ordinary mismatch).
    #[inline]
    pub fn is_budget(&self) -> bool {
        matches!(self.kind, FailureKind::Budget(_))
    }

    /// Where it failed, relative to where the reporting strategy was applied.
    pub fn path(&self) -> Path {
        let steps = self.reversed_path.as_deref().map_or(&[][..], Vec::as_slice);
        Path::from(steps.iter().rev().copied().collect::<Vec<_>>())
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            FailureKind::NoMatch => {
                write!(f, "strategy `{}` failed at {}", self.strategy, self.path())
            }
            FailureKind::Budget(limit) => write!(
                f,
                "budget of {limit} exhausted in `{}` at {}",
                self.strategy,
                self.path()
            ),
        }
    }
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Failure({self})")
    }
}

impl std::error::Error for Failure {}
