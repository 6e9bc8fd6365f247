//! The `linalg` emitter: a [`LoopProgram`]'s kernels as `linalg` operations
//! ([`emit`]: `linalg.matmul` or `linalg.generic`, their operands' buffers expanded,
//! windowed or strided as the kernel reads them, a padded operand a fill and a copy
//! into a subview, a fold's accumulators one output each) plus the Transform script
//! that applies the schedule the program encodes ([`script`]): one tiling per loop of
//! the program, outermost first, with the step the program takes
//! (`tile_using_forall` for `mapPar`), promotion of the output tile where the program
//! accumulates into an array, vectorization of the innermost vector lanes (with the
//! unrolled loops inside them), unrolling where the program unrolls. For the GPU,
//! [`gpu`] maps each kernel's GPU maps to blocks and threads of a launch of its own.
//!
//! Reads at indices a kernel computes, and integer divisions whose divisor may be 0,
//! are checked in the kernel's body ([`body_ops`]): the kernel stays structured, and
//! is not vectorized.

mod body_ops;
mod emit;
mod gpu;
mod script;

use crate::boundary::Signature;
use crate::loop_program::{LoopProgram, NotStructured};
use elevate_rise::limits::Limits;

/// A structured function body: its operations, the Transform script (a module), the
/// flop count.
pub(crate) struct Structured {
    pub(crate) ops: Vec<crate::ir::Op>,
    /// How many kernels it has.
    pub(crate) kernels: usize,
    pub(crate) script: crate::ir::Op,
    pub(crate) flops: u64,
    /// The operations that may trap.
    pub(crate) traps: Vec<crate::boundary::TrapSite>,
}

/// The structured body of a whole program's loop program (its `kernels` kernels),
/// scheduled by the CPU's script.
pub(crate) fn structured(program: &LoopProgram, kernels: usize) -> Structured {
    emitted(program, kernels, None)
}

/// The structured translation of a whole program for the GPU: its kernels as for the
/// CPU, its script mapping each kernel's GPU maps to blocks and threads of a launch of
/// its own ([`gpu`]); why not, where a kernel is in no GPU map or the program is not
/// structured as a whole.
pub(crate) fn translate_gpu(sig: &Signature, limits: &Limits) -> Result<Structured, NotStructured> {
    let (program, kernels) = crate::loop_program::whole(sig, limits, true)?;
    let script = gpu::gpu_script(&program.kernels).map_err(NotStructured::new)?;
    Ok(emitted(&program, kernels, Some(script)))
}

/// The program's operations, scheduled by the CPU's script or by `script`.
fn emitted(program: &LoopProgram, kernels: usize, script: Option<crate::ir::Op>) -> Structured {
    let Staged {
        mut ops,
        script: cpu,
    } = operations(program);
    Structured {
        kernels,
        flops: ops.flops,
        traps: std::mem::take(&mut ops.traps),
        ops: ops.ops(),
        script: script.unwrap_or(cpu),
    }
}

/// The structured stages: the allocations of their own buffers, each kernel's
/// operations, the deallocations, the flop count; and the Transform script.
pub(crate) struct Staged {
    pub(crate) ops: emit::PayloadOps,
    pub(crate) script: crate::ir::Op,
}

/// The operations of `program`'s kernels (with the allocations of its own buffers and
/// their deallocations), and the script that schedules them.
pub(crate) fn operations(program: &LoopProgram) -> Staged {
    Staged {
        ops: emit::payload_ops(&program.kernels, &program.buffers, &program.own),
        script: script::transform_script(&program.kernels, &program.buffers),
    }
}
