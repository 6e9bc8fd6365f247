//! PTX: a module whose kernels its Transform script mapped to `gpu.launch` (blocks
//! and threads) is outlined into `gpu.module`s, lowered to NVVM and serialized to PTX
//! for `sm_90` by MLIR's GPU module serialization (the NVPTX back end of the LLVM the
//! JIT links; no CUDA is needed to make PTX, only to run it).

use super::build::transformed_payload;
use super::mlir::{apply_transform, context, parse, run_pipeline, translated, Messages};
use crate::error::{Error, Stage};
use crate::payload::Payload;
use melior::ir::attribute::{ArrayAttribute, AttributeLike, StringAttribute};
use melior::ir::block::BlockLike;
use melior::ir::operation::{OperationLike, OperationPrintingFlags, OperationRef};
use melior::ir::Module;
use melior::Context;

/// The GPU architecture PTX is generated for: the H100's.
pub const GPU_CHIP: &str = "sm_90";

/// The passes from a module with `gpu.launch` operations to PTX: what the script left
/// of each kernel's `linalg` operations to loops, each launch's body outlined into a
/// `gpu.module` of its own, subviews and affine maps to arithmetic, control flow to
/// branches, the kernels' vectors to LLVM's (each load and store of a whole vector
/// aligned to its size: the script vectorizes only whole, aligned vectors of a
/// buffer, and the runner's buffers are aligned to 256 bytes), the kernels to NVVM
/// for [`GPU_CHIP`] and serialized as PTX text
/// (`gpu.binary`), the host side keeping `gpu.launch_func`.
pub const GPU_LOWERING: &str = "builtin.module(canonicalize,\
func.func(convert-linalg-to-loops),canonicalize,gpu-launch-sink-index-computations,gpu-kernel-outlining,expand-strided-metadata,\
lower-affine,convert-scf-to-cf,nvvm-attach-target{chip=sm_90 O=3},\
gpu.module(convert-vector-to-llvm{use-vector-alignment=true},convert-gpu-to-nvvm,canonicalize,cse),reconcile-unrealized-casts,\
gpu-module-to-binary{format=isa})";

/// The PTX of one outlined kernel module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ptx {
    /// The `gpu.module`'s name (the kernel's, for `gpu-kernel-outlining`).
    pub module: String,
    /// The PTX text: `.version`, `.target sm_90`, the `.entry` of the kernel.
    pub text: String,
}

/// The PTX of every kernel of `mlir` after its Transform script (if any): each
/// `gpu.launch` the script made (or the module holds) becomes one [`Ptx`].
///
/// An error where the module does not parse or verify, the script fails, or a
/// kernel does not lower to NVVM (a `memref` allocated inside a kernel, say).
pub fn ptx(mlir: &str, transform: Option<&str>) -> Result<Vec<Ptx>, Error> {
    let (context, messages) = context();
    let mut module = parse(&context, mlir, &messages)?;
    if let Some(script) = transform {
        apply_transform(&context, &mut module, script, &messages)?;
    }
    serialize(&context, &mut module, &messages)
}

/// The PTX of every kernel of a GPU payload ([`crate::gpu_payload`]): its module
/// built (or its text parsed), its script applied, lowered to PTX.
pub fn payload_ptx(payload: &Payload) -> Result<Vec<Ptx>, Error> {
    let (context, messages) = context();
    let mut module = transformed_payload(&context, payload, &messages)?;
    serialize(&context, &mut module, &messages)
}

/// A GPU payload after its script and [`GPU_LOWERING`], as text: the host function
/// launching each kernel (`gpu.launch_func`) and the kernels as `gpu.binary`s.
pub fn gpu_lowered(payload: &Payload) -> Result<String, Error> {
    let (context, messages) = context();
    let mut module = transformed_payload(&context, payload, &messages)?;
    serialize(&context, &mut module, &messages)?;
    Ok(module.as_operation().to_string())
}

/// The address space of a GPU block's shared memory, as MLIR prints it.
const WORKGROUP: &str = "#gpu.address_space<workgroup>";

/// `module` (as text, in the generic form: a named operation printed in its custom
/// form loses the flags of its body's operations) with each buffer its script
/// allocated in shared memory (a promoted tile, `memref.alloc` inside a launch) a
/// global of its own in shared memory: NVVM takes a kernel's shared memory as globals
/// (the GPU lowering would make such an `alloc` a call of `malloc`). Their
/// `dealloc`s go.
fn shared_as_globals(module: &str) -> String {
    let mut globals = Vec::new();
    let mut out = Vec::new();
    for line in module.lines() {
        let trimmed = line.trim_start();
        if line.contains(WORKGROUP) && trimmed.starts_with("\"memref.dealloc\"(") {
            continue;
        }
        let alloc = trimmed
            .split_once(" = \"memref.alloc\"() ")
            .filter(|_| line.contains(WORKGROUP))
            .and_then(|(name, rest)| Some((name, rest.rsplit_once(" -> ")?.1)));
        match alloc {
            Some((name, ty)) => {
                let global = format!("__elevate_shared_{}", globals.len());
                let indent = &line[..line.len() - trimmed.len()];
                out.push(format!(
                    "{indent}{name} = \"memref.get_global\"() <{{name = @{global}}}> : () -> {ty}"
                ));
                globals.push(format!(
                    "  \"memref.global\"() <{{alignment = 16 : i64, sym_name = \"{global}\", \
                     sym_visibility = \"private\", type = {ty}}}> : () -> ()"
                ));
            }
            None => out.push(line.to_string()),
        }
    }
    // The globals first in the (outermost) module's body.
    if let Some(first) = out.iter_mut().find(|l| l.starts_with("\"builtin.module\"")) {
        first.push('\n');
        first.push_str(&globals.join("\n"));
    }
    out.join("\n")
}

/// `module` with its promoted shared buffers as globals ([`shared_as_globals`]).
fn shared_memory_as_globals<'c>(
    context: &'c Context,
    module: &mut Module<'c>,
    messages: &Messages,
) -> Result<(), Error> {
    let generic = OperationPrintingFlags::new().print_generic_operation_form();
    let text = module
        .as_operation()
        .to_string_with_flags(generic)
        .map_err(|e| Error::mlir(Stage::Ptx, e.to_string()))?;
    if text.contains(WORKGROUP) {
        *module = parse(context, &shared_as_globals(&text), messages)?;
    }
    Ok(())
}

/// The LLVM IR of each kernel of a GPU payload (what [`GPU_LOWERING`] serializes as
/// PTX: the NVVM module of each outlined kernel, translated), each after a line
/// `; kernel module NAME`.
pub fn payload_kernels_llvm_ir(payload: &Payload) -> Result<String, Error> {
    let (context, messages) = context();
    let mut module = transformed_payload(&context, payload, &messages)?;
    shared_memory_as_globals(&context, &mut module, &messages)?;
    let to_nvvm = GPU_LOWERING.replace(",gpu-module-to-binary{format=isa})", ")");
    let stage = (Stage::Ptx, "the lowering to NVVM failed");
    run_pipeline(&context, &mut module, &to_nvvm, stage, &messages)?;
    let mut out = String::new();
    let mut next = module.body().first_operation();
    while let Some(op) = next {
        if op.name().as_string_ref().as_str() == Ok("gpu.module") {
            let name = symbol_name(op);
            let text = translated(op.to_raw()).ok_or_else(|| {
                Error::mlir(
                    Stage::Ptx,
                    format!("the kernel module {name} does not translate to LLVM IR"),
                )
            })?;
            out.push_str(&format!("; kernel module {name}\n{text}"));
        }
        next = op.next_in_block();
    }
    Ok(out)
}

/// The symbol name of `op` (a `gpu.module`, a `gpu.binary`), or "" where it has none.
fn symbol_name(op: OperationRef) -> String {
    op.attribute("sym_name")
        .ok()
        .and_then(|a| StringAttribute::try_from(a).ok())
        .map(|s| s.value().to_string())
        .unwrap_or_default()
}

/// Lowers `module` through [`GPU_LOWERING`] and reads the PTX of its `gpu.binary`s.
pub(super) fn serialize<'c>(
    context: &'c Context,
    module: &mut Module<'c>,
    messages: &Messages,
) -> Result<Vec<Ptx>, Error> {
    shared_memory_as_globals(context, module, messages)?;
    let stage = (Stage::Ptx, "the lowering to PTX failed");
    run_pipeline(context, module, GPU_LOWERING, stage, messages)?;
    let body = module.body();
    let mut kernels = Vec::new();
    let mut next = body.first_operation();
    while let Some(op) = next {
        if op.name().as_string_ref().as_str() == Ok("gpu.binary") {
            let name = symbol_name(op);
            let objects = op
                .attribute("objects")
                .ok()
                .and_then(|a| ArrayAttribute::try_from(a).ok())
                .ok_or_else(|| Error::mlir(Stage::Ptx, "a gpu.binary without objects"))?;
            for k in 0..objects.len() {
                let object = objects
                    .element(k)
                    .map_err(|e| Error::mlir(Stage::Ptx, e.to_string()))?;
                // SAFETY: `object` is a `#gpu.object` of this live context (the
                // serialization makes nothing else); its string is copied at once.
                let text = unsafe {
                    let s = mlir_sys::mlirGPUObjectAttrGetObject(object.to_raw());
                    let bytes = std::slice::from_raw_parts(s.data as *const u8, s.length);
                    String::from_utf8_lossy(bytes).into_owned()
                };
                kernels.push(Ptx {
                    module: name.clone(),
                    text,
                });
            }
        }
        next = op.next_in_block();
    }
    Ok(kernels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_allocations_become_globals_and_lose_their_deallocations() {
        let module = "#map = affine_map<(d0) -> (d0)>
\"builtin.module\"() ({
  \"func.func\"() <{sym_name = \"f\"}> ({
    %0 = \"memref.alloc\"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> memref<4096xi8, #gpu.address_space<workgroup>>
    %1 = \"memref.alloc\"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> memref<16xf32>
    \"memref.dealloc\"(%0) : (memref<4096xi8, #gpu.address_space<workgroup>>) -> ()
    \"memref.dealloc\"(%1) : (memref<16xf32>) -> ()
  }) : () -> ()
}) : () -> ()";
        let out = shared_as_globals(module);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "#map = affine_map<(d0) -> (d0)>");
        assert_eq!(lines[1], "\"builtin.module\"() ({");
        assert!(
            lines[2].contains("sym_name = \"__elevate_shared_0\"")
                && lines[2].contains("type = memref<4096xi8, #gpu.address_space<workgroup>>")
                && lines[2].contains("alignment = 16"),
            "{out}"
        );
        assert!(out.contains(
            "%0 = \"memref.get_global\"() <{name = @__elevate_shared_0}> : () -> memref<4096xi8, #gpu.address_space<workgroup>>"
        ));
        // Memory other than shared stays as it is.
        assert!(out.contains("%1 = \"memref.alloc\"()"), "{out}");
        assert!(out.contains("\"memref.dealloc\"(%1)"), "{out}");
        assert!(!out.contains("\"memref.dealloc\"(%0)"), "{out}");
    }
}
