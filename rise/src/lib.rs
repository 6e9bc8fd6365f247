//! RISE for `elevate`: a functional, data-parallel array language.
//!
//! - [`nat`]: symbolic natural numbers (array sizes) with a normal form and a solver;
//! - [`types`]: scalars, indices, vectors, arrays, pairs, functions, dependent functions;
//! - [`term`]: immutable, shared terms with capture-avoiding substitution;
//! - [`prim`]: every primitive, high- and low-level, with its type;
//! - [`parse_program`], [`print_term`]: RISE text to terms and back;
//! - [`infer()`]: type inference, after which every node carries its type;
//! - [`Program`] and [`Instance`]: a program's definitions, and its entry point at
//!   fixed sizes, rewritten by strategies and evaluated;
//! - [`evaluate`]: the reference interpreter, the oracle of every rule and every
//!   compiled program ([`value`]: its values);
//! - [`rules`] and [`registry()`]: the rule library and the strategy names;
//! - [`search`]: the cost model, the `auto` space, the environment's features;
//! - `egraph` (feature `egraph`): equality saturation.
//!
//! ```
//! use elevate_rise::{parse_program, infer_program};
//! let defs = parse_program("def scal(alpha: f32, x: n.f32) = x |> map(fun(v => alpha * v))").unwrap();
//! let typed = infer_program(&defs).unwrap();
//! assert_eq!(typed[0].ty.to_string(), "f32 -> n.f32 -> n.f32");
//! ```
#![warn(missing_docs)]

mod definition;
#[cfg(feature = "egraph")]
pub mod egraph;
mod error;
pub mod generate;
mod infer;
mod instance;
mod instantiate;
mod interp;
pub mod io;
mod lexer;
pub mod limits;
pub mod loop_program;
pub mod nat;
mod parser;
pub mod prim;
mod print;
mod program;
mod registry;
pub mod rules;
pub mod search;
pub mod term;
pub mod types;
pub mod value;
pub mod view;

pub use definition::Definition;
pub use error::{Error, ErrorKind, Span};
pub use infer::{infer, infer_program, retype, type_of, TypedDefinition};
pub use instance::Instance;
pub use instantiate::instantiate;
pub use interp::{evaluate, evaluate_with, NatEnv};
pub use parser::{parse_nat, parse_pattern, parse_program, parse_term, parse_type};
pub use print::{print_definition, print_definitions, print_term};
pub use program::Program;
pub use registry::registry;
pub use term::{Expr, Ident, Literal, Term};
pub use types::{Scalar, Type, TypeKind};
pub use value::{Array, EvalError, Value};
