//! The program-representation contract of `elevate`.
//!
//! - [`Strategy`]: a value that rewrites a program or fails with a [`Failure`] naming
//!   the strategy and the location; [`Rule`]s and closures ([`rule`]) are strategies.
//! - [`Traversable`]: the one-level traversal contract an IR implements (children, rebuild
//!   with sharing). [`Node`] gives an IR cheap clones, cached hashes and fast equality.
//! - [`Path`]s name locations; a [`Cursor`] edits locally without re-walking.
//! - [`Context`]: what a run owns: counters, trace, [`Budget`], memo tables, and the
//!   [`NameSupply`] its rules take fresh names from.
//!
//! The combinators and traversals live in `elevate-strategies`; [`arith`] is a tiny IR
//! that shows how to plug in your own.
//!
//! ```
//! use elevate_core::{arith::{self, Term}, Budget, Context};
//! let t: Term = "(x + 0) * 1".parse().unwrap();
//! let s = arith::mul_one() >> arith::add_zero();
//! let mut cx = Context::new(Budget::unlimited().steps(10)).with_trace();
//! let result = s.apply(&t, &mut cx).unwrap();
//! assert_eq!(result.to_string(), "x");
//! assert_eq!(cx.stats().steps, 2);
//! assert_eq!(cx.trace().unwrap()[0].to_string(), "mulOne @ []");
//! ```
#![warn(missing_docs)]

pub mod arith;
mod context;
mod cursor;
mod failure;
mod name;
mod names;
mod node;
mod path;
pub mod stack;
mod strategy;
mod traversable;

pub use context::{Budget, Context, Log, Stats, TraceEntry};
pub use cursor::{Cursor, NoSuchChild};
pub use failure::{BudgetLimit, Failure, FailureKind, RewriteResult};
pub use name::Name;
pub use names::NameSupply;
pub use node::Node;
pub use path::{ParsePathError, Path};
pub use strategy::{
    choice, left_choice, rule, rule_with_names, seq, sequence, Precedence, Rule, Strategy,
    StrategyImpl,
};
pub use traversable::{NodeId, Traversable};
