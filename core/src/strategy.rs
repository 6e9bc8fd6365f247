//! Strategies: values that rewrite a program or fail; rules; sequence and choice.

use crate::context::Context;
use crate::failure::{Failure, RewriteResult};
use crate::Name;
use std::fmt;
use std::ops::{BitOr, Shr};
use std::sync::Arc;

/// How tightly a strategy's text binds, for printing with the fewest parentheses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Precedence {
    /// `a <+ b`: binds loosest.
    Choice,
    /// `a ; b` and `a ;; b`.
    Seq,
    /// `a @ t`: binds tighter than `;` and `<+`.
    At,
    /// A name, possibly with arguments: never needs parentheses.
    Atom,
}

/// The behaviour of a kind of strategy. Implement this to add a new combinator or
/// traversal; wrap it with [`Strategy::new`] to compose it.
///
/// Implementations apply their sub-strategies through [`Strategy::apply`] (which counts
/// the application and checks the budget), propagate budget failures untouched
/// ([`Failure::is_budget`]), and descend into children through
/// [`Context::descend`] (which also keeps deep recursion off the end of the stack).
pub trait StrategyImpl<P>: Send + Sync + 'static {
    /// Rewrites `program`, or fails.
    fn apply(&self, program: &P, cx: &mut Context) -> RewriteResult<P>;

    /// Like [`apply`](Self::apply), for callers that recover from an ordinary failure
    /// without looking at it (choice, `try`, the traversals): `Ok(None)` is an
    /// ordinary failure, `Err` only a spent budget. Override it when a failure can be
    /// reported more cheaply than by building a [`Failure`], as rules do.
    #[inline]
    fn attempt(&self, program: &P, cx: &mut Context) -> Result<Option<P>, Failure> {
        match self.apply(program, cx) {
            Ok(result) => Ok(Some(result)),
            Err(failure) if failure.is_budget() => Err(failure),
            Err(_) => Ok(None),
        }
    }

    /// The strategy's name, e.g. `topDown`, reported in failures.
    fn name(&self) -> Name;

    /// Writes the strategy as strategy text (by default, its name).
    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }

    /// How tightly the text binds (see [`Precedence`]).
    fn precedence(&self) -> Precedence {
        Precedence::Atom
    }
}

/// A rewrite rule: a named partial function on programs. Every rule is a strategy; a
/// successful application counts as one rewrite step and appears in the trace.
///
/// Use [`rule`] for a closure; implement this trait for a rule with parameters.
///
/// ```
/// use elevate_core::{arith::{Term, Expr}, Name, Rule, Strategy};
/// /// `x * c -> c * x` for one constant `c`.
/// struct ConstFirst(i64);
/// impl Rule<Term> for ConstFirst {
///     fn name(&self) -> Name { Name::new("constFirst") }
///     fn rewrite(&self, t: &Term) -> Option<Term> {
///         match t.expr() {
///             Expr::Mul(x, c) if c.as_num() == Some(self.0) => Some(Term::product(c.clone(), x.clone())),
///             _ => None,
///         }
///     }
///     fn write_text(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         write!(f, "constFirst({})", self.0)
///     }
/// }
/// let s = Strategy::from_rule(ConstFirst(2));
/// assert_eq!(s.to_string(), "constFirst(2)");
/// let t: Term = "x * 2".parse().unwrap();
/// assert_eq!(s.run(&t).unwrap().to_string(), "2 * x");
/// ```
pub trait Rule<P>: Send + Sync + 'static {
    /// The rule's name, e.g. `mapFusion`.
    fn name(&self) -> Name;

    /// The rewritten program, or `None` where the rule does not apply.
    fn rewrite(&self, program: &P) -> Option<P>;

    /// Writes the rule as strategy text (by default, its name).
    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// Adapts a [`Rule`] to a strategy: counts and traces its successes.
struct RuleStrategy<R>(R);

impl<P, R: Rule<P>> StrategyImpl<P> for RuleStrategy<R> {
    #[inline]
    fn apply(&self, program: &P, cx: &mut Context) -> RewriteResult<P> {
        match self.0.rewrite(program) {
            Some(result) => {
                cx.record_step(&self.0.name())?;
                Ok(result)
            }
            None => Err(Failure::no_match(self.0.name())),
        }
    }

    #[inline]
    fn attempt(&self, program: &P, cx: &mut Context) -> Result<Option<P>, Failure> {
        match self.0.rewrite(program) {
            Some(result) => {
                cx.record_step(&self.0.name())?;
                Ok(Some(result))
            }
            None => Ok(None),
        }
    }

    fn name(&self) -> Name {
        self.0.name()
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write_text(f)
    }
}

struct FnRule<F> {
    name: Name,
    rewrite: F,
}

impl<P, F> Rule<P> for FnRule<F>
where
    F: Fn(&P) -> Option<P> + Send + Sync + 'static,
{
    fn name(&self) -> Name {
        self.name.clone()
    }

    #[inline]
    fn rewrite(&self, program: &P) -> Option<P> {
        (self.rewrite)(program)
    }
}

/// A rule from a name and a closure that rewrites or returns `None`.
///
/// ```
/// use elevate_core::{arith::{Term, Expr}, rule};
/// let add_zero = rule("addZero", |t: &Term| match t.expr() {
///     Expr::Add(x, z) if z.as_num() == Some(0) => Some(x.clone()),
///     _ => None,
/// });
/// let t: Term = "y + 0".parse().unwrap();
/// assert_eq!(add_zero.run(&t).unwrap().to_string(), "y");
/// assert_eq!(add_zero.to_string(), "addZero");
/// ```
pub fn rule<P, F>(name: impl Into<Name>, rewrite: F) -> Strategy<P>
where
    P: 'static,
    F: Fn(&P) -> Option<P> + Send + Sync + 'static,
{
    Strategy::from_rule(FnRule {
        name: name.into(),
        rewrite,
    })
}

/// A strategy: rewrites a program of type `P`, or fails. A cheap-to-clone handle, so
/// strategies are values that compose, print as strategy text, and can be stored,
/// logged and searched over.
///
/// `a >> b` is the sequence `a ; b`, and `a | b` is the left choice `a <+ b`; Rust's
/// precedence (`>>` before `|`) matches the strategy language's (`;` before `<+`).
///
/// ```
/// use elevate_core::{arith::{self, Term}, Strategy};
/// let s: Strategy<Term> = arith::add_zero() >> arith::mul_one() | arith::neg_neg();
/// assert_eq!(s.to_string(), "addZero ; mulOne <+ negNeg");
/// let t: Term = "-(-x)".parse().unwrap();
/// assert_eq!(s.run(&t).unwrap().to_string(), "x");
/// ```
pub struct Strategy<P>(Arc<dyn StrategyImpl<P>>);

impl<P: 'static> Strategy<P> {
    /// Wraps a strategy implementation.
    pub fn new(strategy: impl StrategyImpl<P>) -> Self {
        Strategy(Arc::new(strategy))
    }

    /// Wraps a rule: each success counts as a rewrite step and is traced.
    pub fn from_rule(rule: impl Rule<P>) -> Self {
        Strategy(Arc::new(RuleStrategy(rule)))
    }

    /// Applies the strategy within a run: counts the application, checks the budget,
    /// then rewrites or fails. A failed application leaves nothing in the trace.
    #[inline]
    pub fn apply(&self, program: &P, cx: &mut Context) -> RewriteResult<P> {
        cx.enter(|| self.0.name())?;
        let mark = cx.trace_mark();
        let result = self.0.apply(program, cx);
        match result {
            Ok(_) => cx.count_success(),
            Err(_) => cx.rollback_trace(mark),
        }
        result
    }

    /// Applies the strategy where the caller recovers from an ordinary failure without
    /// looking at it: `Ok(None)` is an ordinary failure, `Err` a spent budget. Cheaper
    /// than [`apply`](Self::apply) for rules, which then build no [`Failure`].
    #[inline]
    pub fn attempt(&self, program: &P, cx: &mut Context) -> Result<Option<P>, Failure> {
        cx.enter(|| self.0.name())?;
        let mark = cx.trace_mark();
        let result = self.0.attempt(program, cx);
        if matches!(result, Ok(Some(_))) {
            cx.count_success();
        } else {
            cx.rollback_trace(mark);
        }
        result
    }

    /// Applies the strategy in a fresh context without limits.
    pub fn run(&self, program: &P) -> RewriteResult<P> {
        self.apply(program, &mut Context::default())
    }

    /// The strategy's name (`topDown` for `topDown(mapFusion)`).
    pub fn name(&self) -> Name {
        self.0.name()
    }

    /// How tightly its text binds.
    pub fn precedence(&self) -> Precedence {
        self.0.precedence()
    }

    /// An identity for this strategy value, stable while any clone of it is alive;
    /// used to key memo tables.
    pub fn key(&self) -> usize {
        Arc::as_ptr(&self.0) as *const u8 as usize
    }

    /// Writes the text of this strategy as an operand of an operator binding at
    /// `context`, parenthesized if it binds looser (or equally, when `strict`).
    pub fn write_operand(
        &self,
        f: &mut fmt::Formatter<'_>,
        context: Precedence,
        strict: bool,
    ) -> fmt::Result {
        let own = self.precedence();
        if own < context || (strict && own == context) {
            write!(f, "({self})")
        } else {
            write!(f, "{self}")
        }
    }

    /// `self ; next`.
    pub fn seq(self, next: Strategy<P>) -> Strategy<P> {
        seq(self, next)
    }

    /// `self <+ alternative`.
    pub fn or_else(self, alternative: Strategy<P>) -> Strategy<P> {
        left_choice(self, alternative)
    }
}

impl<P: 'static> Clone for Strategy<P> {
    fn clone(&self) -> Self {
        Strategy(Arc::clone(&self.0))
    }
}

impl<P: 'static> fmt::Display for Strategy<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write_text(f)
    }
}

impl<P: 'static> fmt::Debug for Strategy<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Strategy({self})")
    }
}

/// Strategies are equal when they print the same strategy text.
impl<P: 'static> PartialEq for Strategy<P> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.to_string() == other.to_string()
    }
}

impl<P: 'static> Shr for Strategy<P> {
    type Output = Strategy<P>;
    /// `a >> b` is `a ; b`.
    fn shr(self, next: Strategy<P>) -> Strategy<P> {
        seq(self, next)
    }
}

impl<P: 'static> BitOr for Strategy<P> {
    type Output = Strategy<P>;
    /// `a | b` is `a <+ b`.
    fn bitor(self, alternative: Strategy<P>) -> Strategy<P> {
        left_choice(self, alternative)
    }
}

struct Seq<P> {
    first: Strategy<P>,
    second: Strategy<P>,
}

impl<P: 'static> StrategyImpl<P> for Seq<P> {
    #[inline]
    fn apply(&self, program: &P, cx: &mut Context) -> RewriteResult<P> {
        let intermediate = self.first.apply(program, cx)?;
        self.second.apply(&intermediate, cx)
    }

    #[inline]
    fn attempt(&self, program: &P, cx: &mut Context) -> Result<Option<P>, Failure> {
        match self.first.attempt(program, cx)? {
            Some(intermediate) => self.second.attempt(&intermediate, cx),
            None => Ok(None),
        }
    }

    fn name(&self) -> Name {
        Name::new("seq")
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.first.write_operand(f, Precedence::Seq, false)?;
        f.write_str(" ; ")?;
        self.second.write_operand(f, Precedence::Seq, true)
    }

    fn precedence(&self) -> Precedence {
        Precedence::Seq
    }
}

/// `first ; second`: applies `first`, then `second` to its result; fails if either does.
pub fn seq<P: 'static>(first: Strategy<P>, second: Strategy<P>) -> Strategy<P> {
    Strategy::new(Seq { first, second })
}

struct LeftChoice<P> {
    first: Strategy<P>,
    second: Strategy<P>,
}

impl<P: 'static> StrategyImpl<P> for LeftChoice<P> {
    #[inline]
    fn apply(&self, program: &P, cx: &mut Context) -> RewriteResult<P> {
        match self.first.attempt(program, cx)? {
            Some(result) => Ok(result),
            None => self.second.apply(program, cx),
        }
    }

    #[inline]
    fn attempt(&self, program: &P, cx: &mut Context) -> Result<Option<P>, Failure> {
        match self.first.attempt(program, cx)? {
            Some(result) => Ok(Some(result)),
            None => self.second.attempt(program, cx),
        }
    }

    fn name(&self) -> Name {
        Name::new("leftChoice")
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.first.write_operand(f, Precedence::Choice, false)?;
        f.write_str(" <+ ")?;
        self.second.write_operand(f, Precedence::Choice, true)
    }

    fn precedence(&self) -> Precedence {
        Precedence::Choice
    }
}

/// `first <+ second`: applies `first`; if it fails, `second` on the original program.
pub fn left_choice<P: 'static>(first: Strategy<P>, second: Strategy<P>) -> Strategy<P> {
    Strategy::new(LeftChoice { first, second })
}
