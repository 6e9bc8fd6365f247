//! The bridge's errors: what could not be prepared, translated, compiled or run, and
//! where in the RISE program, when that is known.

use elevate_rise::limits::SizeError;
use elevate_rise::term::{Span, Term};
use elevate_rise::types::Scalar;
use std::fmt;

/// Which stage of the bridge an error comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Preparing the RISE program: sizes, types, the strategy, `defaultLowering`.
    Rise,
    /// Translating RISE to the MLIR payload.
    Payload,
    /// Parsing and verifying the MLIR module.
    Verify,
    /// Parsing the Transform-dialect script and applying it to the payload.
    Transform,
    /// Lowering to the LLVM dialect.
    Lower,
    /// Lowering GPU kernels to NVVM and serializing them as PTX.
    Ptx,
    /// Creating the JIT engine.
    Jit,
    /// Running the compiled function.
    Run,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Rise => "rise",
            Stage::Payload => "payload",
            Stage::Verify => "mlir verification",
            Stage::Transform => "transform script",
            Stage::Lower => "lowering to LLVM",
            Stage::Ptx => "lowering to PTX",
            Stage::Jit => "jit",
            Stage::Run => "run",
        })
    }
}

/// What made a compiled program stop: the cases where the interpreter reports an error
/// and the machine would trap or compute garbage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trap {
    /// An integer division or remainder by zero.
    DivisionByZero,
    /// The smallest integer of a type divided by -1: the quotient does not fit.
    Overflow(Scalar),
    /// A number made an index is outside `0..bound`.
    IndexOutOfRange {
        /// The index's bound.
        bound: i64,
    },
}

impl fmt::Display for Trap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Trap::DivisionByZero => f.write_str("division by zero"),
            Trap::Overflow(s) => write!(
                f,
                "integer overflow: the smallest {} divided by -1",
                s.name()
            ),
            Trap::IndexOutOfRange { bound } => write!(f, "a number is not an index below {bound}"),
        }
    }
}

/// An error of the bridge. Each variant says where in the RISE program it is when
/// that is known ([`Error::span`]), and from which stage it comes ([`Error::stage`]).
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// The RISE program could not be prepared: a size is missing or negative, or the
    /// program does not type-check at these sizes.
    #[error("{0}")]
    Rise(#[from] elevate_rise::Error),
    /// The strategy failed (or ran out of its budget).
    #[error("the strategy {strategy} failed: {failure}")]
    Strategy {
        /// The strategy, as text.
        strategy: String,
        /// Why it failed.
        failure: elevate_core::Failure,
    },
    /// `defaultLowering` failed (or ran out of the budget).
    #[error("defaultLowering failed: {0}")]
    Lowering(elevate_core::Failure),
    /// A construct of the program that the payload cannot express.
    #[error("unsupported construct: {message}")]
    Unsupported {
        /// Where the construct is.
        span: Option<Span>,
        /// What it is and why it is not supported.
        message: String,
    },
    /// A node without its type (the bridge translates typed terms).
    #[error("an untyped node (type-check the program first)")]
    Untyped {
        /// Where the node is.
        span: Option<Span>,
    },
    /// An array too large to allocate (checked before allocating it).
    #[error("{error}")]
    Size {
        /// The array's construct, if it is one of the program's.
        span: Option<Span>,
        /// The size and the limit.
        error: SizeError,
    },
    /// The memory for a call's buffer (or its result's values) could not be allocated:
    /// its size was within the limits, but the system refused it (`ulimit -v`).
    #[error("cannot allocate {bytes} bytes for {what}: out of memory")]
    Memory {
        /// What was to be allocated (`the buffer of input 1`, `the result's values`).
        what: String,
        /// How many bytes it takes.
        bytes: u128,
    },
    /// MLIR rejected the payload or its script, or could not lower or compile it; the
    /// message has MLIR's diagnostics.
    #[error("{stage} error: {message}")]
    Mlir {
        /// The stage that failed.
        stage: Stage,
        /// What failed, and MLIR's diagnostics.
        message: String,
    },
    /// The inputs of a call do not fit the compiled function.
    #[error("{message}")]
    Input {
        /// What does not fit.
        message: String,
    },
    /// No GPU to run on (no CUDA driver, or no device), or the CUDA driver refused a
    /// step of a run: the message says which.
    #[error("{message}")]
    Gpu {
        /// What is missing or failed.
        message: String,
    },
    /// The compiled program stopped where the interpreter reports an error.
    #[error("{trap} (`{op}`)")]
    Trap {
        /// What happened.
        trap: Trap,
        /// The primitive (`div`, `mod`, `natAsIndex`).
        op: &'static str,
        /// Where the operation is.
        span: Option<Span>,
    },
}

impl Error {
    /// Where in the RISE program the error is, if known.
    pub fn span(&self) -> Option<Span> {
        match self {
            Error::Rise(e) => e.span,
            Error::Unsupported { span, .. }
            | Error::Untyped { span }
            | Error::Size { span, .. }
            | Error::Trap { span, .. } => *span,
            Error::Strategy { .. }
            | Error::Lowering(_)
            | Error::Mlir { .. }
            | Error::Gpu { .. }
            | Error::Memory { .. }
            | Error::Input { .. } => None,
        }
    }

    /// The error as a RISE diagnostic of the program whose entry point is at `entry`:
    /// located at its construct, or at the entry point where it has no location of its
    /// own; inputs that do not fit are input errors and traps evaluation errors, as the
    /// interpreter's, the rest compile errors. A GPU error is about the machine, not
    /// the program: its message, as `Err`.
    pub fn diagnostic(self, entry: Option<Span>) -> Result<elevate_rise::Error, String> {
        use elevate_rise::ErrorKind;
        let kind = match &self {
            Error::Gpu { message } => return Err(message.clone()),
            Error::Rise(e) => {
                return Ok(elevate_rise::Error {
                    span: e.span.or(entry),
                    ..e.clone()
                })
            }
            Error::Input { .. } => ErrorKind::Input,
            // The program could not run.
            Error::Trap { .. } | Error::Memory { .. } => ErrorKind::Eval,
            _ => ErrorKind::Compile,
        };
        Ok(elevate_rise::Error {
            kind,
            span: self.span().or(entry),
            message: self.to_string(),
        })
    }

    /// The stage the error comes from.
    pub fn stage(&self) -> Stage {
        match self {
            Error::Rise(_) | Error::Strategy { .. } | Error::Lowering(_) => Stage::Rise,
            Error::Unsupported { .. } | Error::Untyped { .. } => Stage::Payload,
            Error::Size { .. } => Stage::Payload,
            Error::Mlir { stage, .. } => *stage,
            Error::Input { .. } | Error::Trap { .. } | Error::Gpu { .. } | Error::Memory { .. } => {
                Stage::Run
            }
        }
    }

    /// An MLIR stage's error.
    pub(crate) fn mlir(stage: Stage, message: impl Into<String>) -> Error {
        Error::Mlir {
            stage,
            message: message.into(),
        }
    }

    /// A construct of the program the payload cannot express.
    pub(crate) fn unsupported(at: &Term, message: impl Into<String>) -> Error {
        Error::Unsupported {
            span: at.span(),
            message: message.into(),
        }
    }

    /// Inputs that do not fit.
    #[cfg_attr(not(feature = "mlir"), allow(dead_code))]
    pub(crate) fn input(message: impl Into<String>) -> Error {
        Error::Input {
            message: message.into(),
        }
    }
}
