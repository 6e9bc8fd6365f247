//! A payload compiled to machine code by MLIR's ExecutionEngine, with the OpenMP
//! runtime for its parallel loops.

use super::build::lowered_payload;
use super::engine::{Engine, PackedFunction};
use super::mlir::{context, failure, llvm_ir_text, parse_named};
use crate::error::{Error, Stage};
use crate::payload::Payload;
use elevate_rise::limits::Limits;
use melior::ir::operation::{OperationLike, WalkOrder, WalkResult};
use melior::ir::Module;
use melior::Context;

/// LLVM's OpenMP runtime (Debian's `libomp-22-dev`), for parallel loops.
pub const OPENMP_RUNTIME: &str = "/usr/lib/llvm-22/lib/libomp.so";

/// A payload compiled to machine code, ready to call ([`Compiled::prepare`],
/// [`Compiled::run`]).
pub struct Compiled {
    // Holds the compiled code; dropped before the context it was made in.
    _engine: Engine,
    /// The function's packed wrapper in `engine`.
    pub(super) packed: PackedFunction,
    llvm_dialect: String,
    pub(super) payload: Payload,
    pub(super) limits: Limits,
    _context: Context,
}

impl Compiled {
    /// The payload it was compiled from (with the RISE program it translates).
    pub fn payload(&self) -> &Payload {
        &self.payload
    }

    /// The limits its buffers are checked against.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The module after the transform script and the lowering (the LLVM dialect), as
    /// text.
    pub fn llvm_dialect(&self) -> &str {
        &self.llvm_dialect
    }

    /// The module translated to LLVM IR, as text.
    pub fn llvm_ir(&self) -> Result<String, Error> {
        let (context, messages) = context();
        let module = parse_named(
            &context,
            &self.llvm_dialect,
            "lowered",
            (Stage::Lower, "lowered module"),
            &messages,
        )?;
        llvm_ir_text(&module, &messages)
    }
}

/// Compiles a payload: parse, verify, apply the transform script (if any), lower, JIT
/// (LLVM optimization level 3). Calls check their buffers against `limits`.
pub fn compile_payload(payload: &Payload, limits: &Limits) -> Result<Compiled, Error> {
    let (context, messages) = context();
    let module = lowered_payload(&context, payload, &messages)?;
    let llvm_dialect = module.as_operation().to_string();
    // The OpenMP runtime, when the lowered module has parallel regions (the path
    // resolved: Debian's is a chain of relative symbolic links, which the JIT's loader
    // does not follow). MLIR's C API reads each path up to a NUL byte, whatever its
    // length says: the path is given with one after it.
    let runtime: String;
    let libraries: Vec<&str> = if has_parallel_regions(&module) {
        let path = std::fs::canonicalize(OPENMP_RUNTIME).map_err(|e| {
            Error::mlir(
                Stage::Jit,
                format!(
                    "the OpenMP runtime {OPENMP_RUNTIME} is missing ({e}): install libomp-22-dev"
                ),
            )
        })?;
        runtime = format!("{}\0", path.to_str().unwrap_or(OPENMP_RUNTIME));
        vec![&runtime[..runtime.len() - 1]]
    } else {
        Vec::new()
    };
    let Some(engine) = Engine::new(&module, 3, &libraries) else {
        return Err(failure(
            Stage::Jit,
            "LLVM could not translate or compile the lowered module",
            &messages,
        ));
    };
    // The C interface's packed wrapper, as MLIR's C API calls it.
    let Some(packed) = engine.lookup_packed(&format!("_mlir_ciface_{}", payload.name)) else {
        return Err(failure(
            Stage::Jit,
            "the compiled function is missing",
            &messages,
        ));
    };
    drop(module);
    Ok(Compiled {
        _engine: engine,
        packed,
        llvm_dialect,
        payload: payload.clone(),
        limits: *limits,
        _context: context,
    })
}

/// Whether `module` has an operation of the OpenMP dialect (a parallel region, which
/// calls the OpenMP runtime).
fn has_parallel_regions(module: &Module) -> bool {
    let mut found = false;
    module.as_operation().walk(WalkOrder::PreOrder, |op| {
        let name = op.name();
        let dialect = name
            .as_string_ref()
            .as_str()
            .ok()
            .and_then(|n| n.split_once('.'));
        if dialect.is_some_and(|(d, _)| d == "omp") {
            found = true;
            return WalkResult::Interrupt;
        }
        WalkResult::Advance
    });
    found
}
