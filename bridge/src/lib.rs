//! `elevate-bridge`: the RISE program a strategy chose, as MLIR that MLIR compiles.
//!
//! [`compile`] is the driver: a checked program, its sizes and a strategy in, a function
//! compiled to machine code out (feature `mlir`), callable on interpreter values and
//! timed; [`emit`] gives any stage's text. Underneath:
//!
//! - [`payload()`](fn@payload) evaluates a typed RISE function with concrete sizes
//!   once into a loop program (`elevate_rise::loop_program`: buffers and kernels as
//!   loop nests, no MLIR;
//!   `--emit loops` prints it: [`payload::loop_program_text`]), plans it (the whole
//!   program, or each array it stores in turn), and writes an MLIR module as
//!   operations ([`ir::Op`], pure Rust, no LLVM needed; their text is MLIR's generic
//!   form): `linalg` operations and a Transform script carrying the program's
//!   schedule. What the loop program cannot express is an error saying why;
//! - with the `mlir` feature, [`jit`] builds the payload and its Transform-dialect
//!   script with melior's builders (or parses a text edited by hand), verifies,
//!   applies the script, lowers and JIT-compiles the module, and calls it on inputs.
//!
//! Integer divisions that would trap (by zero, the smallest integer by -1) and numbers
//! made indices out of range are checked in the generated code and reported as
//! [`Error::Trap`], as the interpreter reports them; every buffer's size is checked before it is allocated; programs 100,000
//! levels deep translate without overflowing the stack.
//!
//! | module | holds |
//! |---|---|
//! | `driver` | the stages in turn: sizes, strategy, lowering, payload, JIT |
//! | [`payload`](mod@payload) | the payload, and its plan: the whole program, or each stored array in turn |
//! | `linalg` | the emitter: a loop program's kernels as `linalg` operations and its schedule as a Transform script |
//! | [`boundary`] | the function boundary: signature, leaves, size checks |
//! | [`ir`] | MLIR operations as values, printed in the generic form |
//! | `scalar_ops` | scalar operations: constants, arithmetic, casts |
//! | [`jit`] | MLIR in process: transform, lowering, JIT, calls |
//! | [`measure`] | the costs of search: the model told the bridge's translation; measured (compiled in parallel, timed one at a time, checked) |

#![warn(missing_docs)]

pub mod boundary;

mod driver;

pub mod error;
mod exp;
pub mod ir;
#[cfg(feature = "mlir")]
pub mod jit;
mod linalg;
use elevate_rise::loop_program;
pub mod measure;
pub mod payload;
mod scalar_ops;

mod trap_checks;

pub use driver::{choose, emit, rewrite, translate, Emit, Options, Target, UnknownStage};
#[cfg(feature = "mlir")]
pub use driver::{compile, compile_gpu, compile_term};
pub use error::{Error, Stage, Trap};
pub use measure::CandidateLimits;
#[cfg(feature = "mlir")]
pub use measure::WorkerCommand;
#[cfg(feature = "mlir")]
pub use measure::{CompileRate, MeasureError, Measured, ModelMeasured, RACE_FACTOR};
pub use payload::{gpu_payload, payload, Check, Payload, TrapSite, TRAP_ARGUMENT};
