//! Strategies: values that rewrite a program or fail; rules; sequence and choice.

use crate::context::Context;
use crate::failure::{Failure, RewriteResult};
use crate::stack::guard;
use crate::traversable::Traversable;
use crate::{Name, NameSupply};
use std::fmt;
use std::mem::ManuallyDrop;
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
/// Use [`rule`] for a closure ([`rule_with_names`] for one that makes names);
/// implement this trait for a rule with parameters.
///
/// ```
/// use elevate_core::{arith::{Term, Expr}, Name, NameSupply, Rule, Strategy};
/// /// `x * c -> c * x` for one constant `c`.
/// struct ConstFirst(i64);
/// impl Rule<Term> for ConstFirst {
///     fn name(&self) -> Name { Name::new("constFirst") }
///     fn rewrite(&self, t: &Term, _names: &mut NameSupply) -> Option<Term> {
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
    ///
    /// Names the rule makes (binders, variables) take their identities from `names`.
    /// As a strategy, the rule gets its run's supply, above the identities of the
    /// whole program (see [`Traversable::name_floor`]); a caller that calls `rewrite`
    /// itself gives a supply above `program`'s floor at least.
    fn rewrite(&self, program: &P, names: &mut NameSupply) -> Option<P>;

    /// Writes the rule as strategy text (by default, its name).
    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// Adapts a [`Rule`] to a strategy: gives it the run's names, counts and traces its
/// successes.
struct RuleStrategy<R>(R);

impl<R> RuleStrategy<R> {
    /// The rule's rewrite, with names above every identity of `program` (the
    /// traversals that led here reserved those of the rest of the program).
    #[inline]
    fn rewrite<P: Traversable>(&self, program: &P, cx: &mut Context) -> Option<P>
    where
        R: Rule<P>,
    {
        let names = cx.names_mut();
        names.reserve_above(program.name_floor());
        self.0.rewrite(program, names)
    }
}

impl<P: Traversable, R: Rule<P>> StrategyImpl<P> for RuleStrategy<R> {
    #[inline]
    fn apply(&self, program: &P, cx: &mut Context) -> RewriteResult<P> {
        match self.rewrite(program, cx) {
            Some(result) => {
                cx.record_step(&self.0.name())?;
                Ok(result)
            }
            None => Err(Failure::no_match(self.0.name())),
        }
    }

    #[inline]
    fn attempt(&self, program: &P, cx: &mut Context) -> Result<Option<P>, Failure> {
        match self.rewrite(program, cx) {
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

/// A rule from a closure that makes no names.
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
    fn rewrite(&self, program: &P, _names: &mut NameSupply) -> Option<P> {
        (self.rewrite)(program)
    }
}

/// A rule from a closure that takes fresh names from the supply.
struct NamingFnRule<F> {
    name: Name,
    rewrite: F,
}

impl<P, F> Rule<P> for NamingFnRule<F>
where
    F: Fn(&P, &mut NameSupply) -> Option<P> + Send + Sync + 'static,
{
    fn name(&self) -> Name {
        self.name.clone()
    }

    #[inline]
    fn rewrite(&self, program: &P, names: &mut NameSupply) -> Option<P> {
        (self.rewrite)(program, names)
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
    P: Traversable,
    F: Fn(&P) -> Option<P> + Send + Sync + 'static,
{
    Strategy::from_rule(FnRule {
        name: name.into(),
        rewrite,
    })
}

/// A rule from a name and a closure that rewrites or returns `None`, and takes the
/// identities of the names it makes from the supply it is given (the run's, above
/// every identity of the program).
///
/// ```
/// use elevate_core::{arith::{Term, Expr}, rule_with_names};
/// // `n -> vK` with a variable named after a fresh identity `K`.
/// let name_it = rule_with_names("nameIt", |t: &Term, names| match t.expr() {
///     Expr::Num(_) => Some(Term::var(&format!("v{}", names.fresh()))),
///     _ => None,
/// });
/// let t: Term = "7".parse().unwrap();
/// assert_eq!(name_it.run(&t).unwrap().to_string(), "v0");
/// ```
pub fn rule_with_names<P, F>(name: impl Into<Name>, rewrite: F) -> Strategy<P>
where
    P: Traversable,
    F: Fn(&P, &mut NameSupply) -> Option<P> + Send + Sync + 'static,
{
    Strategy::from_rule(NamingFnRule {
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
///
/// Strategies nest as deeply as programs do (`try(try(...))` 100,000 times, a
/// sequence of 30,000 strategies): applying, printing and dropping one keep their
/// recursion on a stack that cannot overflow (see [`stack`](crate::stack)).
pub struct Strategy<P>(ManuallyDrop<Arc<dyn StrategyImpl<P>>>);

impl<P: 'static> Strategy<P> {
    /// Wraps a strategy implementation.
    pub fn new(strategy: impl StrategyImpl<P>) -> Self {
        Strategy(ManuallyDrop::new(Arc::new(strategy)))
    }

    /// Applies the strategy within a run: counts the application, checks the budget,
    /// then rewrites or fails. A failed application leaves nothing in the trace.
    #[inline]
    pub fn apply(&self, program: &P, cx: &mut Context) -> RewriteResult<P> {
        // Every nested strategy passes through here: the check that keeps a
        // strategy 100,000 levels deep from overflowing the stack.
        cx.nested(|cx| {
            cx.enter(|| self.0.name())?;
            let mark = cx.trace_mark();
            let result = self.0.apply(program, cx);
            match result {
                Ok(_) => cx.count_success(),
                Err(_) => cx.rollback_trace(mark),
            }
            result
        })
    }

    /// Applies the strategy where the caller recovers from an ordinary failure without
    /// looking at it: `Ok(None)` is an ordinary failure, `Err` a spent budget. Cheaper
    /// than [`apply`](Self::apply) for rules, which then build no [`Failure`].
    #[inline]
    pub fn attempt(&self, program: &P, cx: &mut Context) -> Result<Option<P>, Failure> {
        cx.nested(|cx| {
            cx.enter(|| self.0.name())?;
            let mark = cx.trace_mark();
            let result = self.0.attempt(program, cx);
            if matches!(result, Ok(Some(_))) {
                cx.count_success();
            } else {
                cx.rollback_trace(mark);
            }
            result
        })
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
        Arc::as_ptr(&*self.0) as *const u8 as usize
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

impl<P: Traversable> Strategy<P> {
    /// Wraps a rule: each success counts as a rewrite step and is traced; the rule
    /// takes its names from the run's supply.
    pub fn from_rule(rule: impl Rule<P>) -> Self {
        Strategy::new(RuleStrategy(rule))
    }
}

impl<P> Clone for Strategy<P> {
    fn clone(&self) -> Self {
        Strategy(ManuallyDrop::new(Arc::clone(&self.0)))
    }
}

impl<P> Drop for Strategy<P> {
    fn drop(&mut self) {
        // SAFETY: `self.0` is never used again after this point.
        let strategy = unsafe { ManuallyDrop::take(&mut self.0) };
        // Dropping the last handle drops the sub-strategies recursively: keep the
        // recursion on a stack that cannot overflow. (Always checked: whether this
        // handle is the last one is only known once it is dropped.)
        guard(move || drop(strategy));
    }
}

impl<P: 'static> fmt::Display for Strategy<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        guard(|| self.0.write_text(f))
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
        Arc::ptr_eq(&*self.0, &*other.0) || self.to_string() == other.to_string()
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

/// `s1 ; s2 ; ... ; sn`, kept flat: a long sequence is a loop, not a deep nest.
struct Seq<P>(Box<[Strategy<P>]>);

impl<P: 'static> StrategyImpl<P> for Seq<P> {
    #[inline]
    fn apply(&self, program: &P, cx: &mut Context) -> RewriteResult<P> {
        let (first, rest) = self.0.split_first().expect("a sequence is never empty");
        let mut current = first.apply(program, cx)?;
        for next in rest {
            current = next.apply(&current, cx)?;
        }
        Ok(current)
    }

    #[inline]
    fn attempt(&self, program: &P, cx: &mut Context) -> Result<Option<P>, Failure> {
        let (first, rest) = self.0.split_first().expect("a sequence is never empty");
        let Some(mut current) = first.attempt(program, cx)? else {
            return Ok(None);
        };
        for next in rest {
            match next.attempt(&current, cx)? {
                Some(result) => current = result,
                None => return Ok(None),
            }
        }
        Ok(Some(current))
    }

    fn name(&self) -> Name {
        Name::new("seq")
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_operands(f, &self.0, " ; ", Precedence::Seq)
    }

    fn precedence(&self) -> Precedence {
        Precedence::Seq
    }
}

/// Writes `parts` separated by `operator` (left-associative, binding at `context`).
fn write_operands<P: 'static>(
    f: &mut fmt::Formatter<'_>,
    parts: &[Strategy<P>],
    operator: &str,
    context: Precedence,
) -> fmt::Result {
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            f.write_str(operator)?;
        }
        part.write_operand(f, context, i > 0)?;
    }
    Ok(())
}

/// `first ; second`: applies `first`, then `second` to its result; fails if either does.
pub fn seq<P: 'static>(first: Strategy<P>, second: Strategy<P>) -> Strategy<P> {
    Strategy::new(Seq(Box::new([first, second])))
}

/// `s1 ; s2 ; ... ; sn` as one flat strategy (applied in a loop, however long); the
/// strategy itself if there is only one.
///
/// # Panics
/// If `parts` is empty: there is no sequence of nothing (use `id`).
///
/// ```
/// use elevate_core::{arith::{self, Term}, sequence};
/// let s = sequence(vec![arith::neg_neg(); 2]);
/// assert_eq!(s.to_string(), "negNeg ; negNeg");
/// let t: Term = "-(-(-(-x)))".parse().unwrap();
/// assert_eq!(s.run(&t).unwrap().to_string(), "x");
/// ```
pub fn sequence<P: 'static>(mut parts: Vec<Strategy<P>>) -> Strategy<P> {
    assert!(!parts.is_empty(), "a sequence of no strategies");
    if parts.len() == 1 {
        return parts.pop().expect("one part");
    }
    Strategy::new(Seq(parts.into_boxed_slice()))
}

/// `s1 <+ s2 <+ ... <+ sn`, kept flat: a long chain of alternatives is a loop.
struct LeftChoice<P>(Box<[Strategy<P>]>);

impl<P: 'static> StrategyImpl<P> for LeftChoice<P> {
    #[inline]
    fn apply(&self, program: &P, cx: &mut Context) -> RewriteResult<P> {
        let (last, alternatives) = self.0.split_last().expect("a choice is never empty");
        for alternative in alternatives {
            if let Some(result) = alternative.attempt(program, cx)? {
                return Ok(result);
            }
        }
        last.apply(program, cx)
    }

    #[inline]
    fn attempt(&self, program: &P, cx: &mut Context) -> Result<Option<P>, Failure> {
        for alternative in self.0.iter() {
            if let Some(result) = alternative.attempt(program, cx)? {
                return Ok(Some(result));
            }
        }
        Ok(None)
    }

    fn name(&self) -> Name {
        Name::new("leftChoice")
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_operands(f, &self.0, " <+ ", Precedence::Choice)
    }

    fn precedence(&self) -> Precedence {
        Precedence::Choice
    }
}

/// `first <+ second`: applies `first`; if it fails, `second` on the original program.
pub fn left_choice<P: 'static>(first: Strategy<P>, second: Strategy<P>) -> Strategy<P> {
    Strategy::new(LeftChoice(Box::new([first, second])))
}

/// `s1 <+ s2 <+ ... <+ sn` as one flat strategy: the first alternative that succeeds;
/// fails if all fail. The strategy itself if there is only one.
///
/// # Panics
/// If `alternatives` is empty (use `fail`).
pub fn choice<P: 'static>(mut alternatives: Vec<Strategy<P>>) -> Strategy<P> {
    assert!(!alternatives.is_empty(), "a choice of no strategies");
    if alternatives.len() == 1 {
        return alternatives.pop().expect("one alternative");
    }
    Strategy::new(LeftChoice(alternatives.into_boxed_slice()))
}
