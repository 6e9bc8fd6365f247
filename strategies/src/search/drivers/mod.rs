//! Drivers: how a search explores its space. Each is deterministic for a given seed
//! when the cost is (the model cost; measured times vary).
//!
//! A driver works on decisions through the [`Explorer`]: it walks [`State`]s from the
//! root, has final states evaluated (in batches, which the cost may evaluate in
//! parallel), and stops when [`Explorer::exhausted`] says the budget is spent.
//!
//! [`State`]: super::State

mod exhaustive;
mod random;

use super::cost::Fingerprint;
use super::explorer::Explorer;
use elevate_core::Traversable;

pub use exhaustive::Exhaustive;
pub use random::Random;

/// How many final states a driver hands to the cost at once, at most: enough for
/// every core to compile one.
pub const BATCH: usize = 32;

/// A way to explore a space.
pub trait Driver<P>: Send {
    /// The driver as text, e.g. `beam(8)`.
    fn name(&self) -> String;

    /// Explores until the space is done or the budget is spent.
    fn explore(&mut self, explorer: &mut Explorer<'_, P>);
}

/// Every point, depth first, in the order of the options.
pub fn exhaustive<P: Traversable + Fingerprint>() -> Box<dyn Driver<P>> {
    Box::new(Exhaustive)
}

/// Points with uniformly random decisions.
pub fn random<P: Traversable + Fingerprint>() -> Box<dyn Driver<P>> {
    Box::new(Random)
}

/// A driver named in text that does not exist or has bad arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DriverError(pub String);

/// The driver `text` names: `exhaustive`, `random`.
pub fn from_text<P: Traversable + Fingerprint>(
    text: &str,
) -> Result<Box<dyn Driver<P>>, DriverError> {
    let text = text.trim();
    let (name, args) = match text.split_once('(') {
        Some((name, rest)) => {
            let Some(args) = rest.trim_end().strip_suffix(')') else {
                return Err(DriverError(format!("`{text}`: expected `)` at the end")));
            };
            (name.trim(), Some(args))
        }
        None => (text, None),
    };
    let no_args = |d: Box<dyn Driver<P>>| match args {
        None => Ok(d),
        Some(_) => Err(DriverError(format!("`{name}` takes no arguments"))),
    };
    match name {
        "exhaustive" => no_args(exhaustive()),
        "random" => no_args(random()),
        _ => Err(DriverError(format!(
            "unknown driver `{name}` (exhaustive, random)"
        ))),
    }
}
