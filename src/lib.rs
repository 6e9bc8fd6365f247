#![doc = include_str!("../README.md")]
//!
//! # The crates
//!
//! This facade re-exports the workspace's crates:
//! - [`core`] (`elevate-core`): strategies, failures, the traversal contract, paths,
//!   budgets, traces;
//! - [`strategies`] (`elevate-strategies`): Elevate's combinators and traversals;
//! - [`rise`] (`elevate-rise`): the RISE language: nats, types, terms, parser, printer,
//!   type inference, reference interpreter, the rewrite library and its strategies;
//! - [`bridge`] (`elevate-bridge`): RISE to MLIR, compiled and run in process (with
//!   the default feature `mlir`).
//!
//! ```
//! use elevate::core::arith::{self, Term};
//! use elevate::strategies::{normalize, top_down};
//! let t: Term = "-(-(x + 0)) * 1".parse().unwrap();
//! let s = top_down(arith::neg_neg()) >> normalize(arith::add_zero() | arith::mul_one());
//! assert_eq!(s.to_string(), "topDown(negNeg) ; normalize(addZero <+ mulOne)");
//! assert_eq!(s.run(&t).unwrap().to_string(), "x");
//! ```

pub use elevate_bridge as bridge;
pub use elevate_core as core;
pub use elevate_onnx as onnx;
pub use elevate_rise as rise;
pub use elevate_strategies as strategies;

pub mod network;
pub mod network_search;
pub mod prelude;
pub mod search_costs;
pub mod search_dir;
pub mod search_plot;
pub mod search_remote;
pub mod search_report;

/// Compiling an [`rise::Instance`] through MLIR to machine code: `defaultLowering`, the
/// payload and its Transform script, the JIT (`elevate run`'s path).
#[cfg(feature = "mlir")]
pub trait Compile {
    /// Compiled with the default [`bridge::Options`] (budget and memory limits).
    fn compile(&self) -> Result<bridge::jit::Compiled, bridge::Error> {
        self.compile_with(&bridge::Options::default())
    }

    /// Compiled with `options`.
    fn compile_with(
        &self,
        options: &bridge::Options,
    ) -> Result<bridge::jit::Compiled, bridge::Error>;
}

#[cfg(feature = "mlir")]
impl Compile for rise::Instance {
    fn compile_with(
        &self,
        options: &bridge::Options,
    ) -> Result<bridge::jit::Compiled, bridge::Error> {
        bridge::compile_term(self.name(), self.term(), None, options)
    }
}
