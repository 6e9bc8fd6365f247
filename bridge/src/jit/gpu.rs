//! PTX: a module whose kernels its Transform script mapped to `gpu.launch` (blocks
//! and threads) is outlined into `gpu.module`s, lowered to NVVM and serialized to PTX
//! for `sm_90` by MLIR's GPU module serialization (the NVPTX back end of the LLVM the
//! JIT links; no CUDA is needed to make PTX, only to run it).

use super::build::transformed_payload;
use super::mlir::{apply_transform, context, parse, run_pipeline, translated, Messages};
use crate::error::{Error, Stage};
use crate::payload::Payload;
use melior::ir::attribute::{
    ArrayAttribute, AttributeLike, FlatSymbolRefAttribute, IntegerAttribute, StringAttribute,
    TypeAttribute,
};
use melior::ir::block::BlockLike;
use melior::ir::operation::{OperationBuilder, OperationLike, OperationRef, WalkOrder, WalkResult};
use melior::ir::r#type::{IntegerType, MemRefType};
use melior::ir::{Attribute, Identifier, Module, ValueLike};
use melior::{Context, IrRewriter};

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

/// `module` with each buffer its script allocated in shared memory (a promoted tile,
/// a `memref.alloc` of the workgroup address space inside a launch) a global of its
/// own in shared memory, `memref.get_global` where the allocation was: NVVM takes a
/// kernel's shared memory as globals (the GPU lowering would make such an `alloc` a
/// call of `malloc`). Their `dealloc`s go.
fn shared_memory_as_globals<'c>(
    context: &'c Context,
    module: &mut Module<'c>,
) -> Result<(), Error> {
    // (The address space of a block's shared memory, as the scripts name it.)
    let workgroup = crate::ir::MemorySpace::Workgroup.to_string();
    let workgroup = Attribute::parse(context, &workgroup)
        .ok_or_else(|| Error::mlir(Stage::Ptx, "the workgroup address space does not parse"))?
        .to_raw();
    let shared = |ty: melior::ir::Type| {
        MemRefType::try_from(ty)
            .ok()
            .and_then(|m| m.memory_space())
            // SAFETY: both attributes belong to this live context.
            .is_some_and(|space| unsafe { mlir_sys::mlirAttributeEqual(space.to_raw(), workgroup) })
    };
    let (mut allocs, mut deallocs) = (Vec::new(), Vec::new());
    module.as_operation().walk(WalkOrder::PreOrder, |op| {
        match op.name().as_string_ref().as_str() {
            Ok("memref.alloc") if op.result(0).is_ok_and(|r| shared(r.r#type())) => {
                allocs.push(op.to_raw())
            }
            Ok("memref.dealloc") if op.operand(0).is_ok_and(|v| shared(v.r#type())) => {
                deallocs.push(op.to_raw())
            }
            _ => {}
        }
        WalkResult::Advance
    });
    let owner = IrRewriter::new(context);
    let rewriter = owner.as_rewriter_base();
    for dealloc in deallocs {
        // SAFETY: an operation of `module`, found above; nothing erased it since.
        rewriter.erase_op(unsafe { OperationRef::from_raw(dealloc) });
    }
    let failed = |e: melior::Error| Error::mlir(Stage::Ptx, e.to_string());
    for (k, alloc) in allocs.into_iter().enumerate() {
        // SAFETY: as above; each allocation is replaced and erased once.
        let alloc = unsafe { OperationRef::from_raw(alloc) };
        let buffer = alloc.result(0).map_err(failed)?;
        let (ty, location) = (buffer.r#type(), alloc.location());
        let global = format!("__elevate_shared_{k}");
        let read = OperationBuilder::new("memref.get_global", location)
            .add_attributes(&[(
                Identifier::new(context, "name"),
                FlatSymbolRefAttribute::new(context, &global).into(),
            )])
            .add_results(&[ty])
            .build()
            .map_err(failed)?;
        let block = alloc
            .block()
            .ok_or_else(|| Error::mlir(Stage::Ptx, "a shared allocation outside a block"))?;
        let read = block.insert_operation_before(alloc, read);
        rewriter.replace_op_with_operation(alloc, read);
        let declaration = OperationBuilder::new("memref.global", location)
            .add_attributes(&[
                (
                    Identifier::new(context, "alignment"),
                    IntegerAttribute::new(IntegerType::new(context, 64).into(), 16).into(),
                ),
                (
                    Identifier::new(context, "sym_name"),
                    StringAttribute::new(context, &global).into(),
                ),
                (
                    Identifier::new(context, "sym_visibility"),
                    StringAttribute::new(context, "private").into(),
                ),
                (
                    Identifier::new(context, "type"),
                    TypeAttribute::new(ty).into(),
                ),
            ])
            .build()
            .map_err(failed)?;
        // The globals first in the module's body, in order.
        module.body().insert_operation(k, declaration);
    }
    Ok(())
}

/// The LLVM IR of each kernel of a GPU payload (what [`GPU_LOWERING`] serializes as
/// PTX: the NVVM module of each outlined kernel, translated), each after a line
/// `; kernel module NAME`.
pub fn payload_kernels_llvm_ir(payload: &Payload) -> Result<String, Error> {
    let (context, messages) = context();
    let mut module = transformed_payload(&context, payload, &messages)?;
    shared_memory_as_globals(&context, &mut module)?;
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
    shared_memory_as_globals(context, module)?;
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
        let module = "module {
  func.func @f() -> i8 {
    %c0 = arith.constant 0 : index
    %0 = memref.alloc() : memref<4096xi8, #gpu.address_space<workgroup>>
    %1 = memref.alloc() : memref<16xf32>
    %2 = memref.alloc() : memref<8xf32, #gpu.address_space<workgroup>>
    %x = memref.load %0[%c0] : memref<4096xi8, #gpu.address_space<workgroup>>
    memref.dealloc %0 : memref<4096xi8, #gpu.address_space<workgroup>>
    memref.dealloc %1 : memref<16xf32>
    memref.dealloc %2 : memref<8xf32, #gpu.address_space<workgroup>>
    return %x : i8
  }
}";
        let (context, messages) = context();
        let mut parsed = parse(&context, module, &messages).unwrap();
        shared_memory_as_globals(&context, &mut parsed).unwrap();
        assert!(parsed.as_operation().verify());
        let generic =
            melior::ir::operation::OperationPrintingFlags::new().print_generic_operation_form();
        let out = parsed.as_operation().to_string_with_flags(generic).unwrap();
        let lines: Vec<&str> = out.lines().map(str::trim).collect();
        // The globals first in the module, in the order of their allocations.
        assert_eq!(lines[0], "\"builtin.module\"() ({", "{out}");
        for (line, (k, ty)) in lines[1..3]
            .iter()
            .zip([(0, "memref<4096xi8"), (1, "memref<8xf32")])
        {
            assert!(
                line.starts_with("\"memref.global\"()")
                    && line.contains(&format!("sym_name = \"__elevate_shared_{k}\""))
                    && line.contains(&format!("type = {ty}, #gpu.address_space<workgroup>>"))
                    && line.contains("alignment = 16 : i64")
                    && line.contains("sym_visibility = \"private\""),
                "{out}"
            );
        }
        // Each allocation read from its global, and its reads from that.
        let read = lines
            .iter()
            .find(|l| l.contains("\"memref.get_global\"() <{name = @__elevate_shared_0}>"))
            .unwrap_or_else(|| panic!("{out}"));
        let value = read.split(" = ").next().unwrap();
        assert!(out.contains(&format!("\"memref.load\"({value}, ")), "{out}");
        assert!(
            out.contains("\"memref.get_global\"() <{name = @__elevate_shared_1}>"),
            "{out}"
        );
        // Memory other than shared stays as it is; the shared buffers' deallocations go.
        assert_eq!(out.matches("\"memref.alloc\"()").count(), 1, "{out}");
        assert_eq!(out.matches("\"memref.dealloc\"(").count(), 1, "{out}");
        assert!(out.contains("memref<16xf32>) -> ()"), "{out}");
    }
}
