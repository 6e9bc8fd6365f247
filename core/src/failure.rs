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
/// Building a failure costs one small allocation and no formatting; the hot paths do
/// not build one at all: traversals, choice, `try` and `repeat` recover from ordinary
/// failures through [`Strategy::attempt`](crate::Strategy::attempt), where a rule that
/// does not match just says so. A failure is built where someone may look at it, and
/// location combinators (`all`, `atPath`, ...) extend its location as it propagates
/// up to them. Boxed, it keeps a `Result<P, Failure>` two words wide.
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
pub struct Failure(Box<Details>);

#[derive(Clone, PartialEq, Eq)]
struct Details {
    strategy: Name,
    kind: FailureKind,
    /// Child positions from the innermost outwards (pushed while propagating up).
    reversed_path: Vec<u32>,
}

impl Failure {
    /// `strategy` does not apply here.
    pub fn no_match(strategy: impl Into<Name>) -> Self {
        Failure(Box::new(Details {
            strategy: strategy.into(),
            kind: FailureKind::NoMatch,
            reversed_path: Vec::new(),
        }))
    }

    /// The budget ran out while `strategy` was being applied.
    pub fn budget(strategy: impl Into<Name>, limit: BudgetLimit) -> Self {
        Failure(Box::new(Details {
            strategy: strategy.into(),
            kind: FailureKind::Budget(limit),
            reversed_path: Vec::new(),
        }))
    }

    /// The same failure, seen from the parent of the node where it happened.
    #[inline]
    pub fn in_child(mut self, index: usize) -> Self {
        self.0.reversed_path.push(index as u32);
        self
    }

    /// The same failure, seen from `path` above the node where it happened.
    pub fn at_path(mut self, path: &Path) -> Self {
        self.0
            .reversed_path
            .extend(path.as_slice().iter().rev().copied());
        self
    }

    /// The name of the strategy that failed.
    pub fn strategy(&self) -> &Name {
        &self.0.strategy
    }

    /// Why it failed.
    pub fn kind(&self) -> FailureKind {
        self.0.kind
    }

    /// Whether the budget ran out (as opposed to an ordinary mismatch).
    #[inline]
    pub fn is_budget(&self) -> bool {
        matches!(self.0.kind, FailureKind::Budget(_))
    }

    /// Where it failed, relative to where the reporting strategy was applied.
    pub fn path(&self) -> Path {
        Path::from(
            self.0
                .reversed_path
                .iter()
                .rev()
                .copied()
                .collect::<Vec<_>>(),
        )
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind() {
            FailureKind::NoMatch => {
                write!(
                    f,
                    "strategy `{}` failed at {}",
                    self.strategy(),
                    self.path()
                )
            }
            FailureKind::Budget(limit) => write!(
                f,
                "budget of {limit} exhausted in `{}` at {}",
                self.strategy(),
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
