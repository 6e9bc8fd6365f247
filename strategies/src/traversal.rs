//! One-level traversals (`all`, `one`, `some`) and whole-program traversals.
//!
//! The whole-program traversals are implemented directly (one Rust function per
//! traversal, recursing through the children) rather than by literally building
//! `s <+ one(topDown(s))`: the same meaning, without allocating a strategy per node.
//! Where a traversal recovers from a failure without looking at it, it uses
//! [`Strategy::attempt`], so a rule that does not match costs no [`Failure`].
//!
//! Before a traversal works on the children of a node, it tells the run's name supply
//! the node's [`name_floor`](Traversable::name_floor) (`enter_children`): a rule
//! applied below then makes names that are new to the whole program, not only to
//! the subterm it sees.

use crate::memo::{with_failed_set, FailedSet};
use elevate_core::{Context, Failure, Name, RewriteResult, Strategy, StrategyImpl, Traversable};
use std::fmt;

/// What [`Strategy::attempt`] returns: `Ok(None)` is an ordinary failure.
type Attempt<P> = Result<Option<P>, Failure>;

/// Prepares a descent into the children of `program`: names made below must not clash
/// with those of `program` (which holds those of its ancestors' other parts, or the
/// traversal that reached `program` reserved them already).
#[inline]
pub(crate) fn enter_children<P: Traversable>(program: &P, cx: &mut Context) {
    cx.names_mut().reserve_above(program.name_floor());
}

/// Applies `f` to child `index` of `program`, at the child's location.
#[inline]
fn in_child<P: Traversable, R>(
    program: &P,
    index: usize,
    cx: &mut Context,
    f: &mut impl FnMut(&P, &mut Context) -> R,
) -> R {
    cx.descend(index, |cx| f(program.child(index), cx))
}

/// `f` on every child; fails if any fails. Returns `program` itself (not a copy) if
/// every child came back as the same node.
fn all_children<P: Traversable>(
    program: &P,
    cx: &mut Context,
    mut f: impl FnMut(&P, &mut Context) -> RewriteResult<P>,
) -> RewriteResult<P> {
    let arity = program.arity();
    enter_children(program, cx);
    let mut rebuilt: Option<Vec<P>> = None;
    for index in 0..arity {
        let result = in_child(program, index, cx, &mut f).map_err(|e| e.in_child(index))?;
        match &mut rebuilt {
            Some(children) => children.push(result),
            None if !result.same_node(program.child(index)) => {
                let mut children = Vec::with_capacity(arity);
                children.extend((0..index).map(|j| program.child(j).clone()));
                children.push(result);
                rebuilt = Some(children);
            }
            None => {}
        }
    }
    Ok(match rebuilt {
        Some(children) => program.with_children(children),
        None => program.clone(),
    })
}

/// `f` on the children in order until one succeeds: `Ok(Some(rebuilt))`, `Ok(None)`
/// if none does, `Err` if the budget ran out. Children in `failed` are skipped, and
/// children on which `f` fails are added to it.
fn one_child<P: Traversable>(
    program: &P,
    cx: &mut Context,
    mut failed: Option<&mut FailedSet<P>>,
    mut f: impl FnMut(&P, &mut Context, Option<&mut FailedSet<P>>) -> Attempt<P>,
) -> Attempt<P> {
    enter_children(program, cx);
    for index in 0..program.arity() {
        let child = program.child(index);
        if failed.as_ref().is_some_and(|set| set.contains(child)) {
            continue;
        }
        let result = cx.descend(index, |cx| f(child, cx, failed.as_deref_mut()));
        match result.map_err(|e| e.in_child(index))? {
            Some(rewritten) => return Ok(Some(program.with_child(index, rewritten))),
            None => {
                if let Some(set) = failed.as_deref_mut() {
                    set.insert(child);
                }
            }
        }
    }
    Ok(None)
}

/// `f` on every child; `Ok(Some(rebuilt))` if at least one succeeded (the others
/// unchanged), `Ok(None)` if none did.
fn some_children<P: Traversable>(
    program: &P,
    cx: &mut Context,
    mut f: impl FnMut(&P, &mut Context) -> Attempt<P>,
) -> Attempt<P> {
    let arity = program.arity();
    enter_children(program, cx);
    let mut children = Vec::with_capacity(arity);
    let mut any = false;
    for index in 0..arity {
        match in_child(program, index, cx, &mut f).map_err(|e| e.in_child(index))? {
            Some(rewritten) => {
                any = true;
                children.push(rewritten);
            }
            None => children.push(program.child(index).clone()),
        }
    }
    Ok(any.then(|| program.with_children(children)))
}

/// The kinds of traversal, each a strategy over one sub-strategy.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    All,
    One,
    Some,
    TopDown,
    BottomUp,
    AllTopDown,
    AllBottomUp,
    TryAll,
    Downup,
    Alltd,
    Sometd,
    Somebu,
    Normalize,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::All => "all",
            Kind::One => "one",
            Kind::Some => "some",
            Kind::TopDown => "topDown",
            Kind::BottomUp => "bottomUp",
            Kind::AllTopDown => "allTopDown",
            Kind::AllBottomUp => "allBottomUp",
            Kind::TryAll => "tryAll",
            Kind::Downup => "downup",
            Kind::Alltd => "alltd",
            Kind::Sometd => "sometd",
            Kind::Somebu => "somebu",
            Kind::Normalize => "normalize",
        }
    }

    /// Whether a failure of this traversal is best reported where it happened
    /// (the `all` family: which child failed), rather than as the traversal's own.
    fn reports_inner_failures(self) -> bool {
        matches!(
            self,
            Kind::All
                | Kind::AllTopDown
                | Kind::AllBottomUp
                | Kind::TryAll
                | Kind::Downup
                | Kind::Alltd
        )
    }
}

struct Traversal<P> {
    kind: Kind,
    s: Strategy<P>,
}

impl<P: Traversable> Traversal<P> {
    fn top_down(&self, p: &P, cx: &mut Context, failed: Option<&mut FailedSet<P>>) -> Attempt<P> {
        if let Some(rewritten) = self.s.attempt(p, cx)? {
            return Ok(Some(rewritten));
        }
        one_child(p, cx, failed, |c, cx, failed| self.top_down(c, cx, failed))
    }

    fn bottom_up(&self, p: &P, cx: &mut Context, failed: Option<&mut FailedSet<P>>) -> Attempt<P> {
        match one_child(p, cx, failed, |c, cx, failed| self.bottom_up(c, cx, failed))? {
            Some(rewritten) => Ok(Some(rewritten)),
            None => self.s.attempt(p, cx),
        }
    }

    fn sometd(&self, p: &P, cx: &mut Context) -> Attempt<P> {
        match self.s.attempt(p, cx)? {
            Some(rewritten) => Ok(Some(rewritten)),
            None => some_children(p, cx, |c, cx| self.sometd(c, cx)),
        }
    }

    fn somebu(&self, p: &P, cx: &mut Context) -> Attempt<P> {
        match some_children(p, cx, |c, cx| self.somebu(c, cx))? {
            Some(rewritten) => Ok(Some(rewritten)),
            None => self.s.attempt(p, cx),
        }
    }

    fn all_top_down(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        let here = self.s.apply(p, cx)?;
        all_children(&here, cx, |c, cx| self.all_top_down(c, cx))
    }

    fn all_bottom_up(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        let below = all_children(p, cx, |c, cx| self.all_bottom_up(c, cx))?;
        self.s.apply(&below, cx)
    }

    fn try_all(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        let below = all_children(p, cx, |c, cx| self.try_all(c, cx))?;
        Ok(self.s.attempt(&below, cx)?.unwrap_or(below))
    }

    fn downup(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        let down = self.s.apply(p, cx)?;
        let below = all_children(&down, cx, |c, cx| self.downup(c, cx))?;
        self.s.apply(&below, cx)
    }

    fn alltd(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        match self.s.attempt(p, cx)? {
            Some(rewritten) => Ok(rewritten),
            None => all_children(p, cx, |c, cx| self.alltd(c, cx)),
        }
    }

    /// A memoized traversal from the root: fails at once on a known failure, and
    /// records a new one.
    fn memoized(
        p: &P,
        failed: Option<&mut FailedSet<P>>,
        run: impl FnOnce(Option<&mut FailedSet<P>>) -> Attempt<P>,
    ) -> Attempt<P> {
        match failed {
            Some(set) if set.contains(p) => Ok(None),
            Some(set) => {
                let result = run(Some(&mut *set));
                if matches!(result, Ok(None)) {
                    set.insert(p);
                }
                result
            }
            None => run(None),
        }
    }

    fn normalize(
        &self,
        p: &P,
        cx: &mut Context,
        mut failed: Option<&mut FailedSet<P>>,
    ) -> RewriteResult<P> {
        let mut current = p.clone();
        loop {
            let step = Self::memoized(&current, failed.as_deref_mut(), |failed| {
                self.top_down(&current, cx, failed)
            })?;
            match step {
                Some(next) => current = next,
                None => return Ok(current),
            }
        }
    }

    /// The traversals of the `all` family, which report where they failed.
    fn apply_reporting(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        match self.kind {
            Kind::All => all_children(p, cx, |c, cx| self.s.apply(c, cx)),
            Kind::AllTopDown => self.all_top_down(p, cx),
            Kind::AllBottomUp => self.all_bottom_up(p, cx),
            Kind::TryAll => self.try_all(p, cx),
            Kind::Downup => self.downup(p, cx),
            Kind::Alltd => self.alltd(p, cx),
            _ => unreachable!("{} reports its own failures", self.kind.name()),
        }
    }
}

impl<P: Traversable> StrategyImpl<P> for Traversal<P> {
    fn apply(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        if self.kind.reports_inner_failures() {
            self.apply_reporting(p, cx)
        } else {
            self.attempt(p, cx)?
                .ok_or_else(|| Failure::no_match(self.kind.name()))
        }
    }

    fn attempt(&self, p: &P, cx: &mut Context) -> Attempt<P> {
        match self.kind {
            Kind::One => one_child(p, cx, None, |c, cx, _| self.s.attempt(c, cx)),
            Kind::Some => some_children(p, cx, |c, cx| self.s.attempt(c, cx)),
            Kind::TopDown => with_failed_set(cx, &self.s, "topDown", false, |cx, failed| {
                Self::memoized(p, failed, |failed| self.top_down(p, cx, failed))
            }),
            Kind::BottomUp => with_failed_set(cx, &self.s, "bottomUp", false, |cx, failed| {
                Self::memoized(p, failed, |failed| self.bottom_up(p, cx, failed))
            }),
            Kind::Sometd => self.sometd(p, cx),
            Kind::Somebu => self.somebu(p, cx),
            // `normalize(s)` repeats `topDown(s)`, so it shares that memo table.
            Kind::Normalize => with_failed_set(cx, &self.s, "topDown", true, |cx, failed| {
                self.normalize(p, cx, failed).map(Some)
            }),
            _ => match self.apply_reporting(p, cx) {
                Ok(rewritten) => Ok(Some(rewritten)),
                Err(e) if e.is_budget() => Err(e),
                Err(_) => Ok(None),
            },
        }
    }

    fn name(&self) -> Name {
        Name::new(self.kind.name())
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.kind.name(), self.s)
    }
}

fn traversal<P: Traversable>(kind: Kind, s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Traversal { kind, s })
}

/// `all(s)`: `s` on every child; fails if it fails on any. Succeeds on a leaf.
///
/// ```
/// use elevate_core::arith::{self, Term};
/// use elevate_strategies::all;
/// let t: Term = "(a + 0) * (b + 0)".parse().unwrap();
/// assert_eq!(all(arith::add_zero()).run(&t).unwrap().to_string(), "a * b");
/// let u: Term = "(a + 0) * b".parse().unwrap();
/// let failure = all(arith::add_zero()).run(&u).unwrap_err();
/// assert_eq!(failure.to_string(), "strategy `addZero` failed at [1]");
/// ```
pub fn all<P: Traversable>(s: Strategy<P>) -> Strategy<P> {
    traversal(Kind::All, s)
}

/// `one(s)`: `s` on the first child where it succeeds; fails if none (or on a leaf).
///
/// ```
/// use elevate_core::arith::{self, Term};
/// use elevate_strategies::one;
/// let t: Term = "a * (b + 0) + (c + 0)".parse().unwrap();
/// assert_eq!(one(one(arith::add_zero())).run(&t).unwrap().to_string(), "a * b + (c + 0)");
/// ```
pub fn one<P: Traversable>(s: Strategy<P>) -> Strategy<P> {
    traversal(Kind::One, s)
}

/// `some(s)`: `s` on every child where it succeeds; fails if it succeeds on none.
pub fn some<P: Traversable>(s: Strategy<P>) -> Strategy<P> {
    traversal(Kind::Some, s)
}

/// `topDown(s) = s <+ one(topDown(s))`: `s` at the first location in pre-order where
/// it succeeds.
///
/// ```
/// use elevate_core::arith::{self, Term};
/// use elevate_strategies::top_down;
/// let t: Term = "(a + 0) * (b + 0)".parse().unwrap();
/// assert_eq!(top_down(arith::add_zero()).run(&t).unwrap().to_string(), "a * (b + 0)");
/// ```
pub fn top_down<P: Traversable>(s: Strategy<P>) -> Strategy<P> {
    traversal(Kind::TopDown, s)
}

/// `bottomUp(s) = one(bottomUp(s)) <+ s`: `s` at the first location in post-order
/// where it succeeds.
pub fn bottom_up<P: Traversable>(s: Strategy<P>) -> Strategy<P> {
    traversal(Kind::BottomUp, s)
}

/// `allTopDown(s) = s ; all(allTopDown(s))`: `s` everywhere, parents first; fails if
/// it fails anywhere.
pub fn all_top_down<P: Traversable>(s: Strategy<P>) -> Strategy<P> {
    traversal(Kind::AllTopDown, s)
}

/// `allBottomUp(s) = all(allBottomUp(s)) ; s`: `s` everywhere, children first; fails
/// if it fails anywhere.
pub fn all_bottom_up<P: Traversable>(s: Strategy<P>) -> Strategy<P> {
    traversal(Kind::AllBottomUp, s)
}

/// `tryAll(s) = all(tryAll(try(s))) ; try(s)`: `s` wherever it applies, children
/// first; never fails (but for the budget).
///
/// ```
/// use elevate_core::arith::{self, Term};
/// use elevate_strategies::try_all;
/// let t: Term = "(a + 0) * (b + 0 + 0)".parse().unwrap();
/// assert_eq!(try_all(arith::add_zero()).run(&t).unwrap().to_string(), "a * b");
/// ```
pub fn try_all<P: Traversable>(s: Strategy<P>) -> Strategy<P> {
    traversal(Kind::TryAll, s)
}

/// `downup(s) = s ; all(downup(s)) ; s`, exactly as in Elevate: `s` must succeed at
/// every location, on the way down and again on the way up. Pass `try(s)` for a rule
/// that applies only here and there.
pub fn downup<P: Traversable>(s: Strategy<P>) -> Strategy<P> {
    traversal(Kind::Downup, s)
}

/// `alltd(s) = s <+ all(alltd(s))`: `s` at the outermost locations where it applies.
/// Succeeds even where it applies nowhere (`all` succeeds on leaves).
pub fn alltd<P: Traversable>(s: Strategy<P>) -> Strategy<P> {
    traversal(Kind::Alltd, s)
}

/// `sometd(s) = s <+ some(sometd(s))`: `s` at the outermost locations where it
/// applies; fails if it applies nowhere.
pub fn sometd<P: Traversable>(s: Strategy<P>) -> Strategy<P> {
    traversal(Kind::Sometd, s)
}

/// `somebu(s) = some(somebu(s)) <+ s`: `s` at the innermost locations where it
/// applies; fails if it applies nowhere.
pub fn somebu<P: Traversable>(s: Strategy<P>) -> Strategy<P> {
    traversal(Kind::Somebu, s)
}

/// `normalize(s) = repeat(topDown(s))`: rewrites with `s` until it applies nowhere.
///
/// Memoized: within one application (and across applications in a context with
/// [`Context::with_failure_memo`]) it remembers the shared subterms where
/// `topDown(s)` failed and skips them on the next round, so only the nodes rebuilt by
/// the last rewrite are visited again. This assumes `s` is a function of the program
/// it is applied to, as rules and Elevate's combinators are.
///
/// ```
/// use elevate_core::arith::{self, Term};
/// use elevate_strategies::normalize;
/// let t: Term = "-(-(-(-x))) + 0".parse().unwrap();
/// let s = normalize(arith::neg_neg() | arith::add_zero());
/// assert_eq!(s.run(&t).unwrap().to_string(), "x");
/// ```
pub fn normalize<P: Traversable>(s: Strategy<P>) -> Strategy<P> {
    traversal(Kind::Normalize, s)
}
