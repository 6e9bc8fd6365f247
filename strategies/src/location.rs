//! Strategies at absolute locations: a path, a pre-order position, the n-th match.

use crate::traversal::enter_children;
use elevate_core::{
    Context, Failure, Name, Path, RewriteResult, Strategy, StrategyImpl, Traversable,
};
use std::fmt;

struct AtPath<P> {
    path: Path,
    s: Strategy<P>,
}

impl<P: Traversable> AtPath<P> {
    fn go(&self, p: &P, depth: usize, cx: &mut Context) -> RewriteResult<P> {
        let Some(&step) = self.path.as_slice().get(depth) else {
            return self.s.apply(p, cx);
        };
        let index = step as usize;
        if index >= p.arity() {
            return Err(Failure::no_match("atPath"));
        }
        enter_children(p, cx);
        let rewritten = cx
            .descend(index, |cx| self.go(p.child(index), depth + 1, cx))
            .map_err(|e| e.in_child(index))?;
        Ok(p.with_child(index, rewritten))
    }
}

impl<P: Traversable> StrategyImpl<P> for AtPath<P> {
    fn apply(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        self.go(p, 0, cx)
    }

    fn name(&self) -> Name {
        Name::new("atPath")
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "atPath({}, {})", self.path, self.s)
    }
}

/// `atPath(path, s)`: `s` at the location `path`; fails if there is no such location.
///
/// ```
/// use elevate_core::{arith::{self, Term}, Path};
/// use elevate_strategies::at_path;
/// let t: Term = "(a + 0) * (b + 0)".parse().unwrap();
/// let s = at_path(Path::from(vec![1]), arith::add_zero());
/// assert_eq!(s.run(&t).unwrap().to_string(), "(a + 0) * b");
/// ```
pub fn at_path<P: Traversable>(path: Path, s: Strategy<P>) -> Strategy<P> {
    Strategy::new(AtPath { path, s })
}

/// What a search for a location found below a node.
enum Search<P> {
    Done(RewriteResult<P>),
    NotHere,
}

struct Position<P> {
    index: usize,
    s: Strategy<P>,
}

impl<P: Traversable> Position<P> {
    fn go(&self, p: &P, remaining: &mut usize, cx: &mut Context) -> Search<P> {
        if *remaining == 0 {
            return Search::Done(self.s.apply(p, cx));
        }
        *remaining -= 1;
        enter_children(p, cx);
        for index in 0..p.arity() {
            let child = p.child(index);
            if let Search::Done(result) = cx.descend(index, |cx| self.go(child, remaining, cx)) {
                return Search::Done(
                    result
                        .map(|r| p.with_child(index, r))
                        .map_err(|e| e.in_child(index)),
                );
            }
        }
        Search::NotHere
    }
}

impl<P: Traversable> StrategyImpl<P> for Position<P> {
    fn apply(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        match self.go(p, &mut self.index.clone(), cx) {
            Search::Done(result) => result,
            Search::NotHere => Err(Failure::no_match("position")),
        }
    }

    fn name(&self) -> Name {
        Name::new("position")
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "position({})({})", self.index, self.s)
    }
}

/// `position(n)(s)`: `s` at the `n`-th location of a top-down (pre-order) traversal,
/// counting the root as 0; fails if `s` fails there or the program is smaller.
///
/// ```
/// use elevate_core::arith::{self, Term};
/// use elevate_strategies::position;
/// let t: Term = "(a + 0) * (b + 0)".parse().unwrap();
/// // pre-order: 0 `_ * _`, 1 `a + 0`, 2 `a`, 3 `0`, 4 `b + 0`
/// assert_eq!(position(4, arith::add_zero()).run(&t).unwrap().to_string(), "(a + 0) * b");
/// assert!(position(2, arith::add_zero()).run(&t).is_err());
/// ```
pub fn position<P: Traversable>(index: usize, s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Position { index, s })
}

struct Skip<P> {
    matches: usize,
    s: Strategy<P>,
}

impl<P: Traversable> Skip<P> {
    fn go(&self, p: &P, remaining: &mut usize, cx: &mut Context) -> Search<P> {
        let mark = cx.trace_mark();
        match self.s.attempt(p, cx) {
            Ok(Some(result)) if *remaining == 0 => return Search::Done(Ok(result)),
            Ok(Some(_)) => {
                // A skipped match: its rewrites are not part of the result.
                cx.rollback_trace(mark);
                *remaining -= 1;
            }
            Err(e) => return Search::Done(Err(e)),
            Ok(None) => {}
        }
        enter_children(p, cx);
        for index in 0..p.arity() {
            let child = p.child(index);
            if let Search::Done(result) = cx.descend(index, |cx| self.go(child, remaining, cx)) {
                return Search::Done(
                    result
                        .map(|r| p.with_child(index, r))
                        .map_err(|e| e.in_child(index)),
                );
            }
        }
        Search::NotHere
    }
}

impl<P: Traversable> StrategyImpl<P> for Skip<P> {
    fn apply(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        match self.go(p, &mut self.matches.clone(), cx) {
            Search::Done(result) => result,
            Search::NotHere => Err(Failure::no_match("skip")),
        }
    }

    fn name(&self) -> Name {
        Name::new("skip")
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "skip({})({})", self.matches, self.s)
    }
}

/// `skip(n)(s)`: `s` at the first location, in pre-order, after skipping the first
/// `n` locations where it succeeds; fails if it succeeds at `n` or fewer.
///
/// ```
/// use elevate_core::arith::{self, Term};
/// use elevate_strategies::skip;
/// let t: Term = "(a + 0) * (b + 0)".parse().unwrap();
/// assert_eq!(skip(1, arith::add_zero()).run(&t).unwrap().to_string(), "(a + 0) * b");
/// assert!(skip(2, arith::add_zero()).run(&t).is_err());
/// ```
pub fn skip<P: Traversable>(matches: usize, s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Skip { matches, s })
}
