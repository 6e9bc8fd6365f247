//! The bridge's errors: what could not be translated or compiled, and where.

use elevate_rise::term::{Span, Term};
use std::fmt;

/// Which stage failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Preparing the RISE program (sizes, types).
    Rise,
    /// Translating RISE to the MLIR payload.
    Payload,
    /// Parsing and verifying the MLIR module.
    Verify,
    /// Parsing the Transform-dialect script and applying it to the payload.
    Transform,
    /// Lowering to the LLVM dialect.
    Lower,
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
            Stage::Jit => "jit",
            Stage::Run => "run",
        })
    }
}

/// An error of the bridge: the stage, where in the RISE program (if known), and why.
#[derive(Debug, Clone)]
pub struct BridgeError {
    /// The stage that failed.
    pub stage: Stage,
    /// The RISE source span, if the error is about a construct of the program.
    pub span: Option<Span>,
    /// The explanation (MLIR's diagnostics for MLIR stages).
    pub message: String,
}

impl BridgeError {
    /// An error of `stage`.
    pub fn new(stage: Stage, message: impl Into<String>) -> BridgeError {
        BridgeError {
            stage,
            span: None,
            message: message.into(),
        }
    }

    /// A construct of the program the payload cannot express.
    pub(crate) fn unsupported(at: &Term, message: impl Into<String>) -> BridgeError {
        BridgeError {
            stage: Stage::Payload,
            span: at.span(),
            message: format!("unsupported construct: {}", message.into()),
        }
    }

    /// A node without its type (the bridge needs typed terms).
    pub(crate) fn untyped(at: &Term) -> BridgeError {
        BridgeError {
            stage: Stage::Payload,
            span: at.span(),
            message: "an untyped node (type-check the program first)".into(),
        }
    }
}

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} error: {}", self.stage, self.message)
    }
}

impl std::error::Error for BridgeError {}
