//! Recursive strategies defined in Rust, as Elevate defines its traversals.

use elevate_core::{Context, Failure, Name, RewriteResult, Strategy, StrategyImpl};
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
