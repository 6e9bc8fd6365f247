//! RISE's side of search over strategies (`spec/search.md`): the fingerprint a
//! search's cache is keyed by, the loop nests of a low-level program, the analytical cost
//! model that reads it, `auto`, the space derived from a program's loop nests, and
//! the loop-nest features a learning agent sees.

pub mod auto;
pub mod features;
mod fingerprint;
pub mod library;
pub mod loop_nests;
pub mod model;

pub use auto::Auto;
pub use features::LoopNests;
pub use fingerprint::fingerprint;
pub use library::padded_tile;
pub use model::{Machine, ModelCost};

#[cfg(test)]
mod tests;
