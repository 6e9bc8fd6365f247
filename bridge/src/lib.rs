//! `elevate-bridge`: the RISE program a strategy chose, as MLIR that MLIR compiles.
//!
//! [`payload()`](fn@payload) translates a typed RISE function with concrete sizes into an MLIR module
//! (pure Rust, no LLVM needed): `linalg` operations and a Transform script carrying the
//! program's schedule where the program is a sequence of structured loop nests, explicit
//! loops otherwise ([`payload_loops`], with [`Payload::loops_because`] saying why); with the `mlir` feature, `jit` parses, verifies,
//! applies the payload's Transform-dialect script (if any), lowers and JIT-compiles it
//! through melior and calls it on inputs.

#![warn(missing_docs)]

pub mod boundary;
mod env;
pub mod error;
#[cfg(feature = "mlir")]
pub mod jit;
pub mod payload;
mod structured;

pub use error::{BridgeError, Stage};
pub use payload::{instantiate, payload, payload_loops, Payload};
