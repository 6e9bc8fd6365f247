//! Recursive strategies defined in Rust, as Elevate defines its traversals.

use elevate_core::{Context, Failure, Name, RewriteResult, Strategy, StrategyImpl};
use std::fmt;
use std::sync::{Arc, OnceLock, Weak};

struct Definition<P> {
    name: Name,
    body: OnceLock<Strategy<P>>,
}

/// The defined strategy: owns the definition.
struct Defined<P>(Arc<Definition<P>>);

/// A reference to the definition from inside its own body: weak, so that a
/// definition does not keep itself alive.
struct SelfReference<P>(Weak<Definition<P>>);

fn apply_body<P: 'static>(definition: &Definition<P>, p: &P, cx: &mut Context) -> RewriteResult<P> {
    match definition.body.get() {
        Some(body) => body.apply(p, cx),
        None => Err(Failure::no_match(definition.name.clone())),
    }
}

impl<P: Send + Sync + 'static> StrategyImpl<P> for Defined<P> {
    fn apply(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        apply_body(&self.0, p, cx)
    }

    fn name(&self) -> Name {
        self.0.name.clone()
    }
}

impl<P: Send + Sync + 'static> StrategyImpl<P> for SelfReference<P> {
    fn apply(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        match self.0.upgrade() {
            Some(definition) => apply_body(&definition, p, cx),
            None => Err(Failure::no_match("recursive")),
        }
    }

    fn name(&self) -> Name {
        self.0
            .upgrade()
            .map_or(Name::new("recursive"), |d| d.name.clone())
    }
}

/// A strategy named `name` whose body may refer to itself: `recursive(name, f)` is
/// the strategy `s` with `s = f(s)`. It prints as its name.
///
/// This is how Elevate writes traversals, and a way to define your own:
///
/// ```
/// use elevate_core::arith::{self, Term};
/// use elevate_strategies::{one, recursive};
/// // Elevate's definition of topDown, literally.
/// let my_top_down = recursive("myTopDown", |me| arith::add_zero() | one(me));
/// let t: Term = "a * (b + 0)".parse().unwrap();
/// assert_eq!(my_top_down.run(&t).unwrap().to_string(), "a * b");
/// assert_eq!(my_top_down.to_string(), "myTopDown");
/// ```
pub fn recursive<P: Send + Sync + 'static>(
    name: impl Into<Name>,
    f: impl FnOnce(Strategy<P>) -> Strategy<P>,
) -> Strategy<P> {
    let definition = Arc::new(Definition {
        name: name.into(),
        body: OnceLock::new(),
    });
    let me = Strategy::new(SelfReference(Arc::downgrade(&definition)));
    let body = f(me);
    let _ = definition.body.set(body);
    Strategy::new(Defined(definition))
}

type Text = dyn Fn(&mut fmt::Formatter<'_>) -> fmt::Result + Send + Sync;

/// `body` under a name of its own, printed by `text` when the strategy is printed.
struct PrintedAs<P> {
    name: Name,
    text: Box<Text>,
    body: Strategy<P>,
}

impl<P: Send + Sync + 'static> StrategyImpl<P> for PrintedAs<P> {
    fn apply(&self, p: &P, cx: &mut Context) -> RewriteResult<P> {
        self.body.apply(p, cx)
    }

    fn attempt(&self, p: &P, cx: &mut Context) -> Result<Option<P>, Failure> {
        self.body.attempt(p, cx)
    }

    fn name(&self) -> Name {
        self.name.clone()
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (self.text)(f)
    }
}

/// `body`, failing as `name` and printing as `text` writes it: a strategy defined
/// in terms of others that prints as its own call, e.g. `stage(s)`.
///
/// The text is written only when the strategy is printed. Formatting a
/// sub-strategy into a name when building would cost as much as printing it, which
/// can be exponential in its size for strategies that share sub-strategies.
///
/// ```
/// use elevate_core::arith::{self, Term};
/// use elevate_strategies::{printed_as, top_down};
/// let s = arith::add_zero();
/// let arg = s.clone();
/// let everywhere = printed_as("once", move |f| write!(f, "once({arg})"), top_down(s));
/// assert_eq!(everywhere.to_string(), "once(addZero)");
/// let t: Term = "a * (b + 0)".parse().unwrap();
/// assert_eq!(everywhere.run(&t).unwrap().to_string(), "a * b");
/// ```
pub fn printed_as<P: Send + Sync + 'static>(
    name: &'static str,
    text: impl Fn(&mut fmt::Formatter<'_>) -> fmt::Result + Send + Sync + 'static,
    body: Strategy<P>,
) -> Strategy<P> {
    Strategy::new(PrintedAs {
        name: Name::new(name),
        text: Box::new(text),
        body,
    })
}
