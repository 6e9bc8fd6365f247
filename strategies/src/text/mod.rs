//! The strategy text language of `spec/strategies.md`: parse strategy text (and `.elv`
//! files with `def`s) into strategies, using a [`Registry`] of named strategies.
//!
//! ```text
//! S ::= NAME | NAME(ARG, ...)(ARG, ...)... | S ; S | S <+ S | S ;; S | S @ T | (S)
//! FILE ::= (def NAME [(PARAM, ...)] = S)* S
//! ```
//! `;` binds tighter than `<+`, `@` tighter than both; `S ;; T` is `S ; DFNF ; T`;
//! `S @ T` passes `S` as the last argument of `T` (`tile(32, 32) @ outermost(mapNest(2))`
//! is `outermost(mapNest(2))(tile(32, 32))`). Arguments are integers, lists of integers,
//! strings and strategies. Printing a strategy gives text that parses back to it.
//!
//! ```
//! use elevate_core::arith::{self, Term};
//! use elevate_strategies::text::Registry;
//! let mut registry = Registry::<Term>::with_combinators();
//! registry.rule("addZero", "x + 0 -> x", arith::add_zero);
//! registry.rule("negNeg", "-(-x) -> x", arith::neg_neg);
//! let s = registry.parse("def simplify = normalize(addZero <+ negNeg)\nsimplify ; id").unwrap();
//! assert_eq!(s.to_string(), "normalize(addZero <+ negNeg) ; id");
//! let t: Term = "-(-(a + 0))".parse().unwrap();
//! assert_eq!(s.run(&t).unwrap().to_string(), "a");
//! ```

mod elaborate;
mod parser;
mod registry;

pub use parser::{Arg, ArgAst, Ast, TextError};
pub use registry::{
    bounded_int_arg, int_arg, name_arg, str_arg, strategy_arg, Entry, Registry, Value,
};
