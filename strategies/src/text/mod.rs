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
//! strings and strategies; an argument group starts on the line of its name.
//! `applyN(n, T)(s)` (or `s @ applyN(n, T)`) is `T(T(...T(s)))` for a traversal `T`
//! written without its last argument; `applyN(n, s)` is `s` applied `n` times.
//!
//! Printing a strategy gives text that parses back to an equal strategy: the strategy
//! of a text with `def`s prints with its definitions in front, as written, and inside
//! it a reference to a definition prints as written (`simplify`, `rows(4)`), never as
//! its expansion, so definitions in terms of each other stay as small as their text.
//! Each definition is built once per distinct arguments and shared; applying a
//! reference counts as one strategy application.
//!
//! Text is checked where it is written: an unknown name, a wrong argument, a negative
//! count (`must be non-negative`), a number beyond its range (`too large`), a
//! definition in terms of itself (naming the cycle) are [`TextError`]s with the offset
//! of the culprit. A named strategy refuses its arguments with an [`ArgError`]; one
//! that carries an argument's index is reported at that argument. Depth and length are no limit: 100,000 nested strategies and
//! sequences 30,000 long parse, print, apply and drop without deep recursion.
//!
//! ```
//! use elevate_core::arith::{self, Term};
//! use elevate_strategies::text::Registry;
//! let mut registry = Registry::<Term>::with_combinators();
//! registry.rule("addZero", "x + 0 -> x", arith::add_zero);
//! registry.rule("negNeg", "-(-x) -> x", arith::neg_neg);
//! let text = "def simplify = normalize(addZero <+ negNeg)\nsimplify ; id";
//! let s = registry.parse(text).unwrap();
//! assert_eq!(s.to_string(), text);
//! let t: Term = "-(-(a + 0))".parse().unwrap();
//! assert_eq!(s.run(&t).unwrap().to_string(), "a");
//! ```

mod elaborate;
mod parser;
mod registry;

pub(crate) use parser::parse_file;
pub use parser::{Arg, ArgAst, Ast, TextError};
pub use registry::{
    arity, bounded_int_arg, int_arg, name_arg, str_arg, strategy_arg, ArgError, ArgKind, Entry,
    Registry, Value,
};
