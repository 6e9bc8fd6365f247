//! The front door: what a Rust user needs to go from RISE text to a result.
//!
//! ```
//! use elevate::prelude::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let source = "def scale(x: n.f32) : n.f32 = x |> map(fun(v => v * 2.0))";
//! let scale = Program::parse(source)?.at(&[("n", 4)])?;
//! let fast = scale.rewrite("elementwise(4)")?; // the library's schedule
//! let x: Value = vec![1.0f32, 2.0, 3.0, 4.0].into();
//! let y = fast.compile()?.run(std::slice::from_ref(&x))?;
//! assert_eq!(y.to_json()?, scale.eval(&[x])?.to_json()?); // the interpreter agrees
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "mlir")]
pub use crate::Compile;
#[cfg(feature = "mlir")]
pub use elevate_bridge::jit::Compiled;
pub use elevate_bridge::Options;
pub use elevate_rise::{Instance, Program, Value};
