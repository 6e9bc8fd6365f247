//! PTX: a module whose kernels its Transform script mapped to `gpu.launch` (blocks
//! and threads) is outlined into `gpu.module`s, lowered to NVVM and serialized to PTX
//! for `sm_90` by MLIR's GPU module serialization (the NVPTX back end of the LLVM the
//! JIT links; no CUDA is needed to make PTX, only to run it).

use super::build::transformed_payload;
use super::mlir::{apply_transform, context, parse, run_pipeline, Messages};
use crate::error::{Error, Stage};
use crate::payload::Payload;
use melior::ir::attribute::{ArrayAttribute, AttributeLike, StringAttribute};
use melior::ir::block::BlockLike;
use melior::ir::operation::OperationLike;
use melior::ir::Module;
use melior::Context;

/// The GPU architecture PTX is generated for: the H100's.
pub const GPU_CHIP: &str = "sm_90";

/// The passes from a module with `gpu.launch` operations to PTX: what the script left
/// of each kernel's `linalg` operations to loops, each launch's body outlined into a
/// `gpu.module` of its own, subviews and affine maps to arithmetic, control flow to
/// branches, the kernels to NVVM for [`GPU_CHIP`] and serialized as PTX text
/// (`gpu.binary`), the host side keeping `gpu.launch_func`.
pub const GPU_LOWERING: &str = "builtin.module(canonicalize,\
func.func(convert-linalg-to-loops),canonicalize,gpu-launch-sink-index-computations,gpu-kernel-outlining,expand-strided-metadata,\
lower-affine,convert-scf-to-cf,nvvm-attach-target{chip=sm_90 O=3},\
gpu.module(convert-gpu-to-nvvm,canonicalize,cse),reconcile-unrealized-casts,\
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

/// Lowers `module` through [`GPU_LOWERING`] and reads the PTX of its `gpu.binary`s.
pub(super) fn serialize(
    context: &Context,
    module: &mut Module,
    messages: &Messages,
) -> Result<Vec<Ptx>, Error> {
    let stage = (Stage::Ptx, "the lowering to PTX failed");
    run_pipeline(context, module, GPU_LOWERING, stage, messages)?;
    let body = module.body();
    let mut kernels = Vec::new();
    let mut next = body.first_operation();
    while let Some(op) = next {
        if op.name().as_string_ref().as_str() == Ok("gpu.binary") {
            let name = op
                .attribute("sym_name")
                .ok()
                .and_then(|a| StringAttribute::try_from(a).ok())
                .map(|s| s.value().to_string())
                .unwrap_or_default();
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
