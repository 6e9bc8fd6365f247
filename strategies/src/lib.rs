//! Elevate's strategy combinators and traversals, generic over any [`Traversable`].
//!
//! Names and meanings follow the strategy language (`spec/strategies.md`): each Rust
//! function is the snake-case form of the Elevate name (`topDown` is [`top_down`],
//! `try` is [`try_`]), and every strategy prints as its strategy text.
//!
//! `topDown(try(r1 <+ r2)) ; normalize(r3)` reads in Rust as
//!
//! ```
//! use elevate_core::arith::{self, Term};
//! use elevate_strategies::*;
//! let (r1, r2, r3) = (arith::neg_neg(), arith::mul_one(), arith::add_zero());
//! let s = top_down(try_(r1 | r2)) >> normalize(r3);
//! assert_eq!(s.to_string(), "topDown(try(negNeg <+ mulOne)) ; normalize(addZero)");
//!
//! // `try` succeeds at the root already, so `topDown(try(..))` changes nothing here.
//! let t: Term = "-(-(a + 0)) + (b + 0)".parse().unwrap();
//! assert_eq!(s.run(&t).unwrap().to_string(), "-(-a) + b");
//! ```
//!
//! Beyond Elevate: traversals recurse on a growable stack, so programs 100,000 levels
//! deep are fine; `normalize` (and `topDown`/`bottomUp` in a context with
//! [`Context::with_failure_memo`]) remembers that a traversal already failed on a
//! shared subterm and skips it, so `normalize` over `n` nodes with `k` rewrites costs
//! about `n + k * depth` rule attempts instead of `k * n`.
#![warn(missing_docs)]

mod basic;
mod location;
mod memo;
mod predicates;
mod recursive;
pub mod search;
pub mod text;
mod traversal;

pub use basic::{apply_n, fail, id, repeat, repeat_n, try_, MAX_APPLY_N};
pub use elevate_core::{choice, left_choice, rule, seq, sequence, Context, Strategy, Traversable};
pub use location::{at_path, position, skip};
pub use predicates::{contains, debug, if_then_else, inspect, is_equal_to, not, peek};
pub use recursive::{printed_as, recursive};
pub use traversal::{
    all, all_bottom_up, all_top_down, alltd, bottom_up, downup, normalize, one, some, somebu,
    sometd, top_down, try_all,
};
