//! Compiling a payload in process with melior (MLIR 22): build it with melior's
//! builders (or parse an edited text) and verify, apply its
//! Transform-dialect script (if any), lower to the LLVM dialect, JIT with MLIR's
//! ExecutionEngine, and call the function on inputs.
//!
//! | module | holds |
//! |---|---|
//! | `build` | the payload's operations and script built with melior's builders |
//! | `scopes` | stack buffers (promoted tiles) freed at each step of their loop |
//! | `mlir` | the context and its diagnostics, parsing, the transform interpreter, the lowering, translation to LLVM IR |
//! | `gpu` | kernels mapped to `gpu.launch`, lowered to NVVM and serialized as PTX |
//! | `launch` | the launch manifest of a GPU payload: each kernel's grid, block and parameters |
//! | `compiled` | a payload compiled by the JIT |
//! | `buffer` | the memrefs of a call, filled from values and read back |
//! | `args` | the arguments of a call: buffers filled from values, the result read back |
//! | `call` | calling the compiled function, and its trap record |
//! | `cuda` | the CUDA driver, loaded at run time: modules, device memory, launches, events |
//! | `device` | a GPU payload run: its PTX loaded, its buffers on the device, its launches |
//! | `bundle` | the PTX, manifest, inputs and expected result for a runner without LLVM |
//! | `openmp` | the thread count of parallel loops |
//! | `alloc` | the allocator of compiled code: blocks kept per thread for the next call |

mod alloc;
mod args;
mod buffer;
mod build;
mod bundle;
mod call;
mod compiled;
mod cuda;
mod device;
mod engine;
mod gpu;
mod launch;
mod mlir;
mod openmp;
mod raw;
mod scopes;

pub use build::printed;
pub use bundle::{Bundle, BUNDLE_FORMAT};
pub use call::Call;
pub use compiled::{compile_payload, Compiled, OPENMP_RUNTIME};
pub use cuda::CUDA_DRIVER_ENV;
pub use device::{compile_gpu, GpuCall, GpuCompiled};
pub use gpu::{
    gpu_lowered, payload_kernels_llvm_ir, payload_ptx, ptx, Ptx, GPU_CHIP, GPU_LOWERING,
};
pub use launch::{payload_launches, payload_manifest, Launch, Param};
pub use mlir::{LOWERING, TRANSFORM_ENTRY};
pub use openmp::OpenMp;
pub use raw::{ArrayShape, Interface, RawArg, Slot};

use crate::error::Error;
use crate::payload::Payload;
use build::{lowered_payload, transformed_payload};
use mlir::{context, llvm_ir_text, lowered};

/// Parses, verifies and lowers `mlir` (a module without a transform script) to the
/// LLVM dialect; returns the lowered text.
pub fn lower(mlir: &str) -> Result<String, Error> {
    let (context, messages) = context();
    let module = lowered(&context, mlir, None, &messages)?;
    Ok(module.as_operation().to_string())
}

/// The payload with its transform script applied, lowered to the LLVM dialect, as
/// text (what `elevate compile --emit mlir` shows).
pub fn lower_payload(payload: &Payload) -> Result<String, Error> {
    let (context, messages) = context();
    let module = lowered_payload(&context, payload, &messages)?;
    Ok(module.as_operation().to_string())
}

/// Parses, verifies, lowers and translates `mlir` (a module without a transform
/// script) to LLVM IR; returns its text.
pub fn llvm_ir(mlir: &str) -> Result<String, Error> {
    let (context, messages) = context();
    let module = lowered(&context, mlir, None, &messages)?;
    llvm_ir_text(&module, &messages)
}

/// The payload with its transform script applied, lowered and translated to LLVM IR,
/// as text (what `elevate compile --emit llvm` shows).
pub fn payload_llvm_ir(payload: &Payload) -> Result<String, Error> {
    let (context, messages) = context();
    let module = lowered_payload(&context, payload, &messages)?;
    llvm_ir_text(&module, &messages)
}

/// The payload module after its transform script (the module itself when it has
/// none), before the lowering, as text.
pub fn transformed(payload: &Payload) -> Result<String, Error> {
    let (context, messages) = context();
    let module = transformed_payload(&context, payload, &messages)?;
    Ok(module.as_operation().to_string())
}
