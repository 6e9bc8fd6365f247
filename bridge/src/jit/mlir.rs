//! MLIR in process, through melior: a context that collects diagnostics, parsing and
//! verifying the payload, applying its Transform script, lowering to the LLVM dialect,
//! translating to LLVM IR. MLIR's diagnostics become [`Error`]s naming the stage.

use super::scopes::scope_stack_buffers;
use crate::error::{Error, Stage};
use melior::dialect::DialectRegistry;
use melior::ir::attribute::StringAttribute;
use melior::ir::block::BlockLike;
use melior::ir::operation::{OperationLike, OperationMutLike, OperationRef};
use melior::ir::{Attribute, Module, Operation};
use melior::pass::PassManager;
use melior::utility::{
    parse_pass_pipeline, register_all_dialects, register_all_llvm_translations, register_all_passes,
};
use melior::{Context, StringRef};
use std::ffi::CString;
use std::sync::{Arc, Mutex};

/// The passes from the payload's dialects to the LLVM dialect, for the generated loops
/// and for what a transform script leaves: `linalg` ops it did not tile (to loops),
/// `scf.forall` (to `scf.parallel`), `affine.apply`/`affine.min`, subviews and
/// reshapes, `vector` transfers, contractions and outer products, `ub.poison`.
/// `scf.parallel` loops (from `mapPar` or `tile_using_forall`) become OpenMP
/// work-sharing loops, run by the OpenMP runtime the JIT loads ([`OPENMP_RUNTIME`]).
/// Memrefs are lowered before the structured control flow, since the OpenMP
/// conversion wraps loop bodies in `memref.alloca_scope`, which must keep one block;
/// `lower-affine` runs again after `expand-strided-metadata`, which makes affine maps.
/// Allocations call the JIT's own allocator (`super::alloc`), through MLIR's generic
/// allocation functions.
pub const LOWERING: &str = "builtin.module(canonicalize,scf-forall-to-parallel,\
convert-linalg-to-loops,lower-affine,convert-scf-to-openmp,convert-vector-to-scf,\
expand-strided-metadata,lower-affine,finalize-memref-to-llvm{use-generic-functions=true},\
convert-scf-to-cf,\
convert-vector-to-llvm,convert-ub-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,\
convert-index-to-llvm,convert-cf-to-llvm,convert-openmp-to-llvm,convert-func-to-llvm,\
reconcile-unrealized-casts)";

pub use crate::ir::TRANSFORM_ENTRY;

/// The diagnostics MLIR emitted in a context.
pub(super) type Messages = Arc<Mutex<Vec<String>>>;

/// A context with every dialect, pass and LLVM translation registered, whose
/// diagnostics are collected in the returned list.
pub(super) fn context() -> (Context, Messages) {
    let registry = DialectRegistry::new();
    register_all_dialects(&registry);
    register_all_passes();
    let context = Context::new();
    context.append_dialect_registry(&registry);
    context.load_all_available_dialects();
    register_all_llvm_translations(&context);
    let messages = Arc::new(Mutex::new(Vec::new()));
    let sink = messages.clone();
    context.attach_diagnostic_handler(move |d| {
        if let Ok(mut m) = sink.lock() {
            m.push(format!("{}: {}", d.location(), d));
            // Notes, such as the payload operation a transform failed on, but not the
            // whole operation in generic form that MLIR attaches to some errors.
            for note in (0..d.note_count()).filter_map(|k| d.note(k).ok()) {
                let text = note.to_string();
                if !text.starts_with("see current operation") {
                    m.push(format!("{}: note: {text}", note.location()));
                }
            }
        }
        true
    });
    (context, messages)
}

pub(super) fn failure(stage: Stage, what: &str, messages: &Messages) -> Error {
    let detail = messages.lock().map(|m| m.join("\n")).unwrap_or_default();
    Error::mlir(stage, format!("{what}\n{detail}").trim_end().to_string())
}

/// `module` (in the LLVM dialect) translated to LLVM IR, as text.
pub(super) fn llvm_ir_text(module: &Module, messages: &Messages) -> Result<String, Error> {
    translated(module.as_operation().to_raw())
        .ok_or_else(|| failure(Stage::Lower, "the translation to LLVM IR failed", messages))
}

/// The LLVM IR of `op` (a module, or a GPU kernel module, in the LLVM dialect and its
/// target's), as text; `None` where the translation fails.
pub(super) fn translated(op: mlir_sys::MlirOperation) -> Option<String> {
    // SAFETY: `op` is a live operation; the C API returns a string allocated with
    // malloc (or null on failure), which is freed here.
    unsafe {
        let raw = mlir_sys::mlirTranslateModuleToLLVMIRToString(op);
        if raw.is_null() {
            return None;
        }
        let text = std::ffi::CStr::from_ptr(raw).to_string_lossy().into_owned();
        libc_free(raw as *mut std::ffi::c_void);
        Some(text)
    }
}

unsafe extern "C" {
    #[link_name = "free"]
    fn libc_free(ptr: *mut std::ffi::c_void);
}

/// Parses `text`, the `what` of `stage`, as a module whose locations name `source`
/// (`loc("payload":3:5)`), so that diagnostics tell the payload from the script.
pub(super) fn parse_named<'c>(
    context: &'c Context,
    text: &str,
    source: &str,
    (stage, what): (Stage, &str),
    messages: &Messages,
) -> Result<Module<'c>, Error> {
    let unparsed = || failure(stage, &format!("the {what} does not parse"), messages);
    // MLIR's lexer reads up to a terminating zero.
    let text = CString::new(text).map_err(|_| unparsed())?;
    // SAFETY: the context is alive and both strings outlive the call, which copies
    // what it keeps; the result is an operation owned by the caller, or null.
    let operation = unsafe {
        Operation::from_option_raw(mlir_sys::mlirOperationCreateParse(
            context.to_raw(),
            StringRef::from_c_str(&text).to_raw(),
            StringRef::new(source).to_raw(),
        ))
    }
    .ok_or_else(unparsed)?;
    let module = (operation.name().as_string_ref().as_str() == Ok("builtin.module"))
        .then(|| Module::from_operation(operation))
        .flatten()
        .ok_or_else(|| {
            Error::mlir(
                stage,
                format!("the {what} is not one `module {{ ... }}` operation"),
            )
        })?;
    verified(module, stage, what, messages)
}

/// `module`, if it verifies; otherwise an error of `stage` saying that `what` does not,
/// with MLIR's diagnostics.
pub(super) fn verified<'c>(
    module: Module<'c>,
    stage: Stage,
    what: &str,
    messages: &Messages,
) -> Result<Module<'c>, Error> {
    if module.as_operation().verify() {
        Ok(module)
    } else {
        Err(failure(
            stage,
            &format!("the {what} does not verify"),
            messages,
        ))
    }
}

/// The payload module, parsed and verified.
pub(super) fn parse<'c>(
    context: &'c Context,
    mlir: &str,
    messages: &Messages,
) -> Result<Module<'c>, Error> {
    parse_named(
        context,
        mlir,
        "payload",
        (Stage::Verify, "module"),
        messages,
    )
}

/// `mlir` parsed and verified, with the transform script applied (if any), lowered.
pub(super) fn lowered<'c>(
    context: &'c Context,
    mlir: &str,
    transform: Option<&str>,
    messages: &Messages,
) -> Result<Module<'c>, Error> {
    let mut module = parse(context, mlir, messages)?;
    if let Some(script) = transform {
        apply_transform(context, &mut module, script, messages)?;
    }
    lower_module(context, &mut module, messages)?;
    Ok(module)
}

/// The `transform.named_sequence @__transform_main` at the top of a script module.
fn transform_entry<'c, 'a>(script: &'a Module<'c>) -> Option<OperationRef<'c, 'a>> {
    std::iter::successors(script.body().first_operation(), |op| op.next_in_block()).find(|op| {
        op.name().as_string_ref().as_str() == Ok("transform.named_sequence")
            && op
                .attribute("sym_name")
                .ok()
                .and_then(|a| StringAttribute::try_from(a).ok())
                .is_some_and(|name| name.value() == TRANSFORM_ENTRY)
    })
}

/// The Transform-dialect `script`, parsed and verified.
pub(super) fn parse_script<'c>(
    context: &'c Context,
    script: &str,
    messages: &Messages,
) -> Result<Module<'c>, Error> {
    parse_named(
        context,
        script,
        "transform",
        (Stage::Transform, "transform script"),
        messages,
    )
}

/// Applies the Transform-dialect `script` (a module of its own, parsed in the same
/// context) to `module` with MLIR's transform interpreter: its `@__transform_main`,
/// whose `%root` is the payload module.
pub(super) fn apply_transform(
    context: &Context,
    module: &mut Module,
    script: &str,
    messages: &Messages,
) -> Result<(), Error> {
    let script = parse_script(context, script, messages)?;
    apply_script(module, &script, messages)
}

/// Applies the script module `script` (of the same context) to `module`.
pub(super) fn apply_script(
    module: &mut Module,
    script: &Module,
    messages: &Messages,
) -> Result<(), Error> {
    let entry = transform_entry(script).ok_or_else(|| {
        Error::mlir(
            Stage::Transform,
            format!(
                "the transform script has no `transform.named_sequence @{TRANSFORM_ENTRY}` at its top"
            ),
        )
    })?;
    // SAFETY: the payload module, the script module and its entry sequence are alive
    // and belong to the same context; the options are created and destroyed here.
    let applied = unsafe {
        let options = mlir_sys::mlirTransformOptionsCreate();
        let result = mlir_sys::mlirTransformApplyNamedSequence(
            module.as_operation().to_raw(),
            entry.to_raw(),
            script.as_operation().to_raw(),
            options,
        );
        mlir_sys::mlirTransformOptionsDestroy(options);
        result.value != 0
    };
    if !applied {
        return Err(failure(
            Stage::Transform,
            "the transform script failed",
            messages,
        ));
    }
    scope_stack_buffers(module);
    if module.as_operation().verify() {
        Ok(())
    } else {
        Err(failure(
            Stage::Transform,
            "the module after the transform script does not verify",
            messages,
        ))
    }
}

pub(super) fn lower_module(
    context: &Context,
    module: &mut Module,
    messages: &Messages,
) -> Result<(), Error> {
    let stage = (Stage::Lower, "the lowering passes failed");
    run_pipeline(context, module, LOWERING, stage, messages)?;
    mark_allocations_noalias(context, module);
    Ok(())
}

/// Runs the pass `pipeline` on `module`; its failure an error of `stage` saying
/// `what`, with MLIR's diagnostics.
pub(super) fn run_pipeline(
    context: &Context,
    module: &mut Module,
    pipeline: &str,
    (stage, what): (Stage, &str),
    messages: &Messages,
) -> Result<(), Error> {
    let passes = PassManager::new(context);
    parse_pass_pipeline(passes.as_operation_pass_manager(), pipeline)
        .map_err(|e| Error::mlir(stage, e.to_string()))?;
    passes
        .run(module)
        .map_err(|_| failure(stage, what, messages))
}

/// Declares what LLVM knows of `malloc` and `free` of the allocation functions: that
/// the memory returned is new (nothing else points to it) and that freeing does not
/// keep the pointer. Without it, a register tile's accumulators in a promoted buffer
/// may alias what the tile reads, and stay in memory.
fn mark_allocations_noalias(context: &Context, module: &mut Module) {
    let declarations = [
        (
            "_mlir_memref_to_llvm_alloc",
            "res_attrs",
            "[{llvm.noalias}]",
        ),
        (
            "_mlir_memref_to_llvm_aligned_alloc",
            "res_attrs",
            "[{llvm.noalias}]",
        ),
        (
            "_mlir_memref_to_llvm_free",
            "arg_attrs",
            "[{llvm.nocapture}]",
        ),
    ];
    let mut op = module.body().first_operation_mut();
    while let Some(mut o) = op {
        let name = o
            .attribute("sym_name")
            .ok()
            .and_then(|a| StringAttribute::try_from(a).ok())
            .map(|a| a.value().to_string());
        let found = declarations
            .iter()
            .find(|(n, _, _)| name.as_deref() == Some(*n));
        if let (Ok("llvm.func"), Some((_, key, text))) = (o.name().as_string_ref().as_str(), found)
        {
            if let Some(attribute) = Attribute::parse(context, text) {
                o.set_attribute(key, attribute);
            }
        }
        op = o.next_in_block_mut();
    }
}
