//! Compiling a payload in process with melior (MLIR 22): parse and verify, apply its
//! Transform-dialect script (if any), lower to the LLVM dialect, JIT with MLIR's
//! ExecutionEngine, and call the function on JSON inputs. MLIR's diagnostics become
//! [`BridgeError`]s naming the stage.

use crate::boundary::{assemble_json, leaf_types, split_json};
use crate::error::{BridgeError, Stage};
use crate::payload::Payload;
use elevate_rise::io::json_float;
use elevate_rise::types::{Scalar, Type, TypeKind};
use melior::dialect::DialectRegistry;
use melior::ir::attribute::StringAttribute;
use melior::ir::block::BlockLike;
use melior::ir::operation::{OperationLike, OperationRef};
use melior::ir::{Module, Operation};
use melior::pass::PassManager;
use melior::utility::{
    parse_pass_pipeline, register_all_dialects, register_all_llvm_translations, register_all_passes,
};
use melior::{Context, ExecutionEngine, StringRef};
use serde_json::Value as Json;
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
pub const LOWERING: &str = "builtin.module(canonicalize,scf-forall-to-parallel,\
convert-linalg-to-loops,lower-affine,convert-scf-to-openmp,convert-vector-to-scf,\
expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-scf-to-cf,\
convert-vector-to-llvm,convert-ub-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,\
convert-index-to-llvm,convert-cf-to-llvm,convert-openmp-to-llvm,convert-func-to-llvm,\
reconcile-unrealized-casts)";

/// The entry point of a transform script: the `transform.named_sequence` applied to
/// the payload module.
pub const TRANSFORM_ENTRY: &str = "__transform_main";

/// LLVM's OpenMP runtime (Debian's `libomp-22-dev`), for parallel loops.
pub const OPENMP_RUNTIME: &str = "/usr/lib/llvm-22/lib/libomp.so";

/// A payload compiled to machine code, ready to call.
pub struct Compiled {
    // Dropped before the context it was made in.
    engine: ExecutionEngine,
    /// The module after lowering (LLVM dialect), as text.
    pub llvm_dialect: String,
    payload: Payload,
    _context: Context,
}

/// The diagnostics MLIR emitted in a context.
type Messages = Arc<Mutex<Vec<String>>>;

/// A context with every dialect, pass and LLVM translation registered, whose
/// diagnostics are collected in the returned list.
fn context() -> (Context, Messages) {
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

fn failure(stage: Stage, what: &str, messages: &Messages) -> BridgeError {
    let detail = messages.lock().map(|m| m.join("\n")).unwrap_or_default();
    BridgeError::new(stage, format!("{what}\n{detail}").trim_end().to_string())
}

/// Parses, verifies, lowers and translates `mlir` (a module without a transform
/// script) to LLVM IR; returns its text.
pub fn llvm_ir(mlir: &str) -> Result<String, BridgeError> {
    translated(mlir, None)
}

/// The payload with its transform script applied, lowered and translated to LLVM IR,
/// as text (what `elevate compile --emit llvm` shows).
pub fn payload_llvm_ir(payload: &Payload) -> Result<String, BridgeError> {
    translated(&payload.mlir, payload.transform.as_deref())
}

fn translated(mlir: &str, transform: Option<&str>) -> Result<String, BridgeError> {
    let (context, messages) = context();
    let module = lowered(&context, mlir, transform, &messages)?;
    // SAFETY: the module is alive and lowered to the LLVM dialect; the C API returns a
    // string allocated with malloc (or null on failure), which is freed here.
    unsafe {
        let raw = mlir_sys::mlirTranslateModuleToLLVMIRToString(module.as_operation().to_raw());
        if raw.is_null() {
            return Err(failure(
                Stage::Lower,
                "the translation to LLVM IR failed",
                &messages,
            ));
        }
        let text = std::ffi::CStr::from_ptr(raw).to_string_lossy().into_owned();
        libc_free(raw as *mut std::ffi::c_void);
        Ok(text)
    }
}

unsafe extern "C" {
    #[link_name = "free"]
    fn libc_free(ptr: *mut std::ffi::c_void);
}

/// Parses, verifies and lowers `mlir` (a module without a transform script) to the
/// LLVM dialect; returns the lowered text.
pub fn lower(mlir: &str) -> Result<String, BridgeError> {
    let (context, messages) = context();
    let module = lowered(&context, mlir, None, &messages)?;
    Ok(module.as_operation().to_string())
}

/// The payload with its transform script applied, lowered to the LLVM dialect, as
/// text (what `elevate compile --emit mlir` shows).
pub fn lower_payload(payload: &Payload) -> Result<String, BridgeError> {
    let (context, messages) = context();
    let module = lowered(
        &context,
        &payload.mlir,
        payload.transform.as_deref(),
        &messages,
    )?;
    Ok(module.as_operation().to_string())
}

/// The payload module after its transform script (the module itself when it has
/// none), before the lowering, as text.
pub fn transformed(payload: &Payload) -> Result<String, BridgeError> {
    let (context, messages) = context();
    let mut module = parse(&context, &payload.mlir, &messages)?;
    if let Some(script) = &payload.transform {
        apply_transform(&context, &mut module, script, &messages)?;
    }
    Ok(module.as_operation().to_string())
}

/// Parses `text`, the `what` of `stage`, as a module whose locations name `source`
/// (`loc("payload":3:5)`), so that diagnostics tell the payload from the script.
fn parse_named<'c>(
    context: &'c Context,
    text: &str,
    source: &str,
    (stage, what): (Stage, &str),
    messages: &Messages,
) -> Result<Module<'c>, BridgeError> {
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
            BridgeError::new(
                stage,
                format!("the {what} is not one `module {{ ... }}` operation"),
            )
        })?;
    if !module.as_operation().verify() {
        return Err(failure(
            stage,
            &format!("the {what} does not verify"),
            messages,
        ));
    }
    Ok(module)
}

/// The payload module, parsed and verified.
fn parse<'c>(
    context: &'c Context,
    mlir: &str,
    messages: &Messages,
) -> Result<Module<'c>, BridgeError> {
    parse_named(
        context,
        mlir,
        "payload",
        (Stage::Verify, "module"),
        messages,
    )
}

/// `mlir` parsed and verified, with the transform script applied (if any), lowered.
fn lowered<'c>(
    context: &'c Context,
    mlir: &str,
    transform: Option<&str>,
    messages: &Messages,
) -> Result<Module<'c>, BridgeError> {
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

/// Applies the Transform-dialect `script` (a module of its own, parsed in the same
/// context) to `module` with MLIR's transform interpreter: its `@__transform_main`,
/// whose `%root` is the payload module.
fn apply_transform(
    context: &Context,
    module: &mut Module,
    script: &str,
    messages: &Messages,
) -> Result<(), BridgeError> {
    let script = parse_named(
        context,
        script,
        "transform",
        (Stage::Transform, "transform script"),
        messages,
    )?;
    let entry = transform_entry(&script).ok_or_else(|| {
        BridgeError::new(
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
    if !module.as_operation().verify() {
        return Err(failure(
            Stage::Transform,
            "the module after the transform script does not verify",
            messages,
        ));
    }
    Ok(())
}

fn lower_module(
    context: &Context,
    module: &mut Module,
    messages: &Messages,
) -> Result<(), BridgeError> {
    let passes = PassManager::new(context);
    parse_pass_pipeline(passes.as_operation_pass_manager(), LOWERING)
        .map_err(|e| BridgeError::new(Stage::Lower, e.to_string()))?;
    passes
        .run(module)
        .map_err(|_| failure(Stage::Lower, "the lowering passes failed", messages))
}

/// Compiles a payload: parse, verify, apply the transform script (if any), lower, JIT
/// (LLVM optimization level 3).
pub fn compile(payload: &Payload) -> Result<Compiled, BridgeError> {
    let (context, messages) = context();
    let module = lowered(
        &context,
        &payload.mlir,
        payload.transform.as_deref(),
        &messages,
    )?;
    let llvm_dialect = module.as_operation().to_string();
    // The OpenMP runtime, when the lowered module has parallel regions (the path
    // resolved: Debian's is a chain of relative symbolic links, which the JIT's loader
    // does not follow).
    let runtime;
    let libraries: Vec<&str> = if llvm_dialect.contains("omp.") {
        runtime = std::fs::canonicalize(OPENMP_RUNTIME).map_err(|e| {
            BridgeError::new(
                Stage::Jit,
                format!(
                    "the OpenMP runtime {OPENMP_RUNTIME} is missing ({e}): install libomp-22-dev"
                ),
            )
        })?;
        vec![runtime.to_str().unwrap_or(OPENMP_RUNTIME)]
    } else {
        Vec::new()
    };
    let engine = ExecutionEngine::new(&module, 3, &libraries, false, false);
    if engine
        .lookup(&format!("_mlir_ciface_{}", payload.name))
        .is_null()
    {
        return Err(failure(
            Stage::Jit,
            "the compiled function is missing",
            &messages,
        ));
    }
    drop(module);
    Ok(Compiled {
        engine,
        llvm_dialect,
        payload: payload.clone(),
        _context: context,
    })
}

/// A memref's storage and descriptor (`{allocated, aligned, offset, sizes, strides}`).
struct Buffer {
    data: Vec<u64>,
    scalar: Scalar,
    dims: Vec<i64>,
    descriptor: Vec<u64>,
}

fn width(s: Scalar) -> usize {
    match s {
        Scalar::Bool => 1,
        Scalar::I32 | Scalar::F32 => 4,
        Scalar::I64 | Scalar::F64 => 8,
    }
}

fn shape(ty: &Type) -> Result<(Vec<i64>, Scalar), BridgeError> {
    let mut dims = Vec::new();
    let mut t = ty;
    loop {
        match t.kind() {
            TypeKind::Array(n, e) => {
                dims.push(n.as_const().ok_or_else(|| {
                    BridgeError::new(Stage::Run, format!("the size {n} is not known"))
                })?);
                t = e;
            }
            TypeKind::Scalar(s) => return Ok((dims, *s)),
            _ => {
                return Err(BridgeError::new(
                    Stage::Run,
                    format!("unsupported data {ty}"),
                ))
            }
        }
    }
}

impl Buffer {
    fn new(ty: &Type) -> Result<Buffer, BridgeError> {
        let (dims, scalar) = shape(ty)?;
        let count: i64 = dims.iter().product();
        let bytes = count as usize * width(scalar);
        let mut buffer = Buffer {
            data: vec![0u64; bytes.div_ceil(8).max(1)],
            scalar,
            dims,
            descriptor: Vec::new(),
        };
        let ptr = buffer.data.as_mut_ptr() as u64;
        let mut strides = vec![1i64; buffer.dims.len()];
        for k in (0..buffer.dims.len().saturating_sub(1)).rev() {
            strides[k] = strides[k + 1] * buffer.dims[k + 1];
        }
        buffer.descriptor = [ptr, ptr, 0]
            .into_iter()
            .chain(buffer.dims.iter().map(|d| *d as u64))
            .chain(strides.iter().map(|s| *s as u64))
            .collect();
        Ok(buffer)
    }

    fn len_bytes(&self) -> usize {
        self.dims.iter().product::<i64>() as usize * width(self.scalar)
    }

    fn bytes_ref(&self) -> &[u8] {
        // SAFETY: `data` holds at least `len_bytes()` bytes; u8 has no alignment needs.
        unsafe { std::slice::from_raw_parts(self.data.as_ptr() as *const u8, self.len_bytes()) }
    }

    fn bytes(&mut self) -> &mut [u8] {
        let len = self.dims.iter().product::<i64>() as usize * width(self.scalar);
        // SAFETY: `data` holds at least `len` bytes; u8 has no alignment needs.
        unsafe { std::slice::from_raw_parts_mut(self.data.as_mut_ptr() as *mut u8, len) }
    }

    /// Fills the buffer from nested JSON arrays, row-major.
    fn fill(&mut self, json: &Json) -> Result<(), BridgeError> {
        let mut flat = Vec::new();
        flatten(json, &mut flat);
        let (s, w) = (self.scalar, width(self.scalar));
        let bytes = self.bytes();
        if flat.len() * w != bytes.len() {
            return Err(BridgeError::new(Stage::Run, "an input of the wrong size"));
        }
        for (k, v) in flat.iter().enumerate() {
            let chunk = &mut bytes[k * w..(k + 1) * w];
            write_scalar(chunk, s, v)?;
        }
        Ok(())
    }

    /// The contents as nested JSON arrays.
    fn to_json(&self) -> Json {
        let (s, w) = (self.scalar, width(self.scalar));
        let scalars: Vec<Json> = self
            .bytes_ref()
            .chunks(w)
            .map(|c| read_scalar(c, s))
            .collect();
        nest(&scalars, &self.dims)
    }
}

fn flatten(json: &Json, out: &mut Vec<Json>) {
    match json {
        Json::Array(items) => items.iter().for_each(|i| flatten(i, out)),
        other => out.push(other.clone()),
    }
}

fn nest(scalars: &[Json], dims: &[i64]) -> Json {
    match dims.split_first() {
        None => scalars.first().cloned().unwrap_or(Json::Null),
        Some((&n, rest)) => {
            let chunk = scalars.len() / n.max(1) as usize;
            Json::Array(
                (0..n as usize)
                    .map(|i| nest(&scalars[i * chunk..(i + 1) * chunk], rest))
                    .collect(),
            )
        }
    }
}

fn write_scalar(out: &mut [u8], s: Scalar, v: &Json) -> Result<(), BridgeError> {
    let bad = || BridgeError::new(Stage::Run, format!("{v} is not a {}", s.name()));
    match s {
        Scalar::Bool => out[0] = u8::from(v.as_bool().ok_or_else(bad)?),
        Scalar::I32 => out.copy_from_slice(&(v.as_i64().ok_or_else(bad)? as i32).to_ne_bytes()),
        Scalar::I64 => out.copy_from_slice(&v.as_i64().ok_or_else(bad)?.to_ne_bytes()),
        // Floats as the interpreter writes them: numbers, "NaN", "Infinity", "-Infinity".
        Scalar::F32 => out.copy_from_slice(&(json_float(v).ok_or_else(bad)? as f32).to_ne_bytes()),
        Scalar::F64 => out.copy_from_slice(&json_float(v).ok_or_else(bad)?.to_ne_bytes()),
    }
    Ok(())
}

fn read_scalar(c: &[u8], s: Scalar) -> Json {
    let float = elevate_rise::io::float_json;
    match s {
        Scalar::Bool => Json::Bool(c[0] != 0),
        Scalar::I32 => Json::from(i32::from_ne_bytes(c.try_into().unwrap())),
        Scalar::I64 => Json::from(i64::from_ne_bytes(c.try_into().unwrap())),
        // Printed as f32 prints, then read as f64, so that values match the
        // interpreter's JSON.
        Scalar::F32 => float(
            f32::from_ne_bytes(c.try_into().unwrap())
                .to_string()
                .parse()
                .unwrap_or(f64::NAN),
        ),
        Scalar::F64 => float(f64::from_ne_bytes(c.try_into().unwrap())),
    }
}

/// A scalar argument's storage (eight bytes, the value in the low bytes).
fn scalar_argument(s: Scalar, v: &Json) -> Result<u64, BridgeError> {
    let mut word = [0u8; 8];
    write_scalar(&mut word[..width(s)], s, v)?;
    Ok(u64::from_ne_bytes(word))
}

/// The arguments of one call, in the buffers the compiled function reads and writes.
pub struct Call<'a> {
    compiled: &'a Compiled,
    buffers: Vec<Buffer>,
    scalars: Vec<u64>,
    order: Vec<Arg>,
    /// Where the result's buffers start.
    outputs: usize,
}

enum Arg {
    Buffer(usize),
    Scalar(usize),
}

impl Compiled {
    /// Puts `inputs` (one JSON value per parameter, as `elevate eval` reads them) into
    /// buffers for calling the function, with a buffer for its result.
    pub fn prepare(&self, inputs: &[Json]) -> Result<Call<'_>, BridgeError> {
        let params = &self.payload.params;
        if inputs.len() != params.len() {
            return Err(BridgeError::new(
                Stage::Run,
                format!("{} inputs for {} parameters", inputs.len(), params.len()),
            ));
        }
        let mut call = Call {
            compiled: self,
            buffers: Vec::new(),
            scalars: Vec::new(),
            order: Vec::new(),
            outputs: 0,
        };
        for (ty, json) in params.iter().zip(inputs) {
            match ty.kind() {
                TypeKind::Scalar(s) => {
                    call.scalars.push(scalar_argument(*s, json)?);
                    call.order.push(Arg::Scalar(call.scalars.len() - 1));
                }
                _ => {
                    let leaves = split_json(ty, json);
                    for (leaf_ty, leaf) in leaf_types(ty).iter().zip(&leaves) {
                        let mut b = Buffer::new(leaf_ty)?;
                        b.fill(leaf)?;
                        call.buffers.push(b);
                        call.order.push(Arg::Buffer(call.buffers.len() - 1));
                    }
                }
            }
        }
        call.outputs = call.buffers.len();
        for leaf_ty in leaf_types(&self.payload.result) {
            call.buffers.push(Buffer::new(&leaf_ty)?);
            call.order.push(Arg::Buffer(call.buffers.len() - 1));
        }
        Ok(call)
    }

    /// Calls the function on `inputs` and returns its result as JSON.
    pub fn run(&self, inputs: &[Json]) -> Result<Json, BridgeError> {
        let mut call = self.prepare(inputs)?;
        call.invoke()?;
        Ok(call.output())
    }
}

impl Call<'_> {
    /// Calls the compiled function once (the result buffer is overwritten).
    pub fn invoke(&mut self) -> Result<(), BridgeError> {
        // MLIR's C API calls the function's C interface (`_mlir_ciface_NAME`, from
        // `llvm.emit_c_interface`) through its packed wrapper, which takes a pointer
        // to each argument: for a memref, a pointer to its descriptor's address.
        let mut descriptor_pointers: Vec<*mut u64> = self
            .buffers
            .iter_mut()
            .map(|b| b.descriptor.as_mut_ptr())
            .collect();
        let mut arguments: Vec<*mut ()> = Vec::new();
        for a in &self.order {
            match a {
                Arg::Buffer(k) => {
                    arguments.push(&mut descriptor_pointers[*k] as *mut *mut u64 as *mut ())
                }
                Arg::Scalar(k) => arguments.push(&mut self.scalars[*k] as *mut u64 as *mut ()),
            }
        }
        // SAFETY: every pointer points to live storage of the type the C interface
        // expects (descriptors built for these shapes, scalars by value in the low
        // bytes of eight).
        unsafe {
            self.compiled
                .engine
                .invoke_packed(&self.compiled.payload.name, &mut arguments)
        }
        .map_err(|e| BridgeError::new(Stage::Run, e.to_string()))
    }

    /// The result of the last call, as JSON.
    pub fn output(&self) -> Json {
        let leaves: Vec<Json> = self.buffers[self.outputs..]
            .iter()
            .map(Buffer::to_json)
            .collect();
        assemble_json(&self.compiled.payload.result, &leaves)
    }
}
