//! Typed RISE with concrete sizes → an MLIR payload module, as operations
//! ([`crate::ir`]) and their text: `linalg` operations and a Transform script carrying the program's schedule where the program
//! is a sequence of structured loop nests ([`crate::loop_program`], [`crate::linalg`]), explicit loops
//! otherwise ([`crate::loops`]).

use crate::boundary::{signature, Signature, Storage};
pub use crate::boundary::{Check, TrapSite, TRAP_ARGUMENT};
use crate::error::Error;
use crate::ir::{self, Op};
use crate::mlir_types::memref_type;
use elevate_rise::limits::Limits;
use elevate_rise::term::Term;
use elevate_rise::types::Type;

/// The payload of one entry point: the MLIR module (as operations and as text) and how
/// to call it.
#[derive(Debug, Clone)]
pub struct Payload {
    /// The low-level RISE program it translates.
    pub program: Term,
    /// The MLIR module (`func`, `linalg`, `scf`, `memref`, `arith`, `math`, `vector`),
    /// as text: [`Payload::operations`] printed in MLIR's generic form (with explicit
    /// loops, their text).
    pub mlir: String,
    /// The module and the Transform script as operations, which the JIT builds with
    /// MLIR's builders: each where `mlir` and `transform` are still its text (an
    /// edited text is parsed instead). The module is text alone where explicit loops
    /// compute a part of it.
    pub operations: Operations,
    /// The function's name.
    pub name: String,
    /// The parameters, in order: their types.
    pub params: Vec<Type>,
    /// The result's type (written into the memref arguments after the parameters').
    pub result: Type,
    /// The floating-point operations one call performs (arithmetic on floats, each
    /// vector lane counted): for the matmul baseline, `2 n k m`.
    pub flops: u64,
    /// The Transform-dialect script (a module with `@__transform_main`) that applies
    /// the program's schedule to the payload's `linalg` operations, when the payload is
    /// made of them.
    pub transform: Option<String>,
    /// Why the payload is explicit loops instead of `linalg` operations, if it is
    /// (all of it: see [`Payload::kernels`] for each kernel).
    pub loops_because: Option<String>,
    /// How each kernel (an array the program writes) is computed, in order: a
    /// structured payload's kernels are `linalg` operations, and where one array of the
    /// program is not expressible as one, that array alone is explicit loops.
    pub kernels: Vec<KernelForm>,
    /// The operations that may trap (integer divisions and remainders by divisors not
    /// known to be safe, numbers made indices). When there are any, the function takes
    /// one more argument, [`TRAP_ARGUMENT`], where it records `2 k + 1` when operation
    /// `k` divided by zero or made an index out of range, and `2 k + 2` when it divided
    /// the smallest integer by -1 (the largest such code when several operations
    /// trap); the divisor is replaced by 1 there and the index by 0, so the code
    /// computes on without reading outside its buffers, and the caller reports the
    /// error.
    pub traps: Vec<TrapSite>,
}

/// A payload's module and Transform script as operations, where they are.
#[derive(Debug, Clone, Default)]
pub struct Operations {
    /// The `builtin.module` of the function.
    pub module: Option<Op>,
    /// The `builtin.module` of the Transform script.
    pub script: Option<Op>,
}

/// How the payload computes one of its kernels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelForm {
    /// A `linalg` operation, which the Transform script schedules.
    Structured,
    /// Explicit loops (`scf`), and why.
    Loops(String),
}

impl Payload {
    /// Whether every kernel is a `linalg` operation.
    pub fn all_structured(&self) -> bool {
        self.kernels.iter().all(|k| *k == KernelForm::Structured)
    }

    /// The kernels computed by explicit loops, and why each is.
    pub fn loop_kernels(&self) -> impl Iterator<Item = &str> {
        self.kernels.iter().filter_map(|k| match k {
            KernelForm::Loops(why) => Some(why.as_str()),
            KernelForm::Structured => None,
        })
    }
}

/// Translates a closed, typed function `fun(x1: T1 => ... => body)` whose sizes are all
/// constants into an MLIR function `@name(x1, ..., out)` that writes its result into
/// `out`. Scalar parameters are values; any other data is one memref per scalar leaf of
/// its type ([`crate::boundary`]), the result too (a scalar result is a rank-0 memref).
/// Every buffer, at the boundary and inside, is checked against `limits`.
///
/// Where the program is a sequence of structured loop nests, the payload is `linalg`
/// operations and the schedule the program encodes is a Transform script
/// ([`Payload::transform`]). Where it is not, each array the program materializes at
/// the top level is translated on its own ([`crate::stages`]): those the structured
/// translation expresses stay `linalg` with their schedule, the others become explicit
/// loops ([`Payload::kernels`] says which and why); a program none of whose arrays is
/// structured is explicit loops ([`payload_loops`]).
pub fn payload(name: &str, term: &Term, limits: &Limits) -> Result<Payload, Error> {
    let sig = signature(term, limits)?;
    match crate::linalg::translate(&sig, limits, false) {
        Ok(p) => Ok(structured_payload(name, term, sig, p)),
        Err(why) => staged(name, term, sig, limits, why.0),
    }
}

/// Whether `term`'s payload (see [`payload`]) computes every kernel as a structured
/// operation: the same answer as `payload(..).all_structured()`, without writing the
/// module or its script, and without translating any stage as loops (the search's
/// model asks this of every candidate).
pub fn all_structured(term: &Term, limits: &Limits) -> bool {
    let Ok(sig) = signature(term, limits) else {
        return false;
    };
    if crate::loop_program::structures(&sig, limits, false) {
        return true;
    }
    let split = crate::stages::split(sig.body);
    match crate::loop_program::StageBuilder::new(&sig, limits) {
        Ok(structured) if !split.stages.is_empty() => {
            match stages(&sig, limits, structured, split, false) {
                Ok(Some(stages)) if stages.kernels.is_empty() => {
                    loops("f", term, sig, limits).is_ok()
                }
                Ok(Some(_)) => true,
                _ => false,
            }
        }
        _ => crate::loop_program::structures(&sig, limits, true),
    }
}

/// The payload of `term` for the GPU: structured as a whole, each kernel's GPU maps a
/// launch of blocks and threads in its Transform script (see
/// [`crate::jit::payload_ptx`] for its PTX). An error where the program is not
/// structured as a whole, or where a kernel is in no GPU map.
pub fn gpu_payload(name: &str, term: &Term, limits: &Limits) -> Result<Payload, Error> {
    let sig = signature(term, limits)?;
    match crate::linalg::translate_gpu(&sig, limits) {
        Ok(p) => {
            let mut p = structured_payload(name, term, sig, p);
            if let Some(module) = &mut p.operations.module {
                module.allow_contraction();
                p.mlir = module.text(0);
            }
            Ok(p)
        }
        Err(why) => Err(Error::unsupported(
            term,
            format!("the GPU target: {}", why.0),
        )),
    }
}

/// The payload of a program structured as a whole.
fn structured_payload(
    name: &str,
    term: &Term,
    sig: Signature,
    p: crate::linalg::Structured,
) -> Payload {
    let module = function_module(name, &with_trap(sig.text, &p.traps), p.ops);
    Payload {
        program: term.clone(),
        mlir: module.text(0),
        name: name.to_string(),
        params: sig.params.iter().map(|(_, t, _)| t.clone()).collect(),
        result: sig.result,
        flops: p.flops,
        transform: Some(p.script.text(0)),
        operations: Operations {
            module: Some(module),
            script: Some(p.script),
        },
        loops_because: None,
        kernels: vec![KernelForm::Structured; p.kernels],
        traps: p.traps,
    }
}

/// The payload of a program the structured translation does not express whole: stage
/// by stage ([`crate::stages`]), each stage `linalg` where it can be and explicit loops
/// where it cannot.
fn staged(
    name: &str,
    term: &Term,
    sig: Signature,
    limits: &Limits,
    why: String,
) -> Result<Payload, Error> {
    let split = crate::stages::split(sig.body);
    let structured = match crate::loop_program::StageBuilder::new(&sig, limits) {
        Ok(s) if !split.stages.is_empty() => s,
        _ => {
            let why = match crate::linalg::translate(&sig, limits, true) {
                Ok(p) => return Ok(structured_payload(name, term, sig, p)),
                Err(why) => why.0,
            };
            let mut p = loops(name, term, sig, limits)?;
            p.kernels = vec![KernelForm::Loops(why.clone())];
            p.loops_because = Some(why);
            return Ok(p);
        }
    };
    let Some(translation) = stages(&sig, limits, structured, split, true)? else {
        unreachable!("with loops, every stage is translated");
    };
    let Stages {
        structured,
        loops: loop_stages,
        parts,
        kernels,
        buffers,
        ..
    } = translation;
    if !kernels.contains(&KernelForm::Structured) {
        let mut p = loops(name, term, sig, limits)?;
        p.kernels = kernels;
        p.loops_because = Some(why);
        return Ok(p);
    }
    let (loop_flops, mut traps) = loop_stages.map(|l| l.finish()).unwrap_or_default();
    // (The structured kernels' traps after the loops'.)
    let structured = crate::linalg::operations(&structured.into_program(), traps.len());
    let mut ops = structured.ops;
    traps.append(&mut ops.traps);
    // The function body: the stages' buffers, then each part in order.
    let mut kernel_ops = ops.kernels.into_iter();
    let mut body: Vec<Op> = buffers
        .iter()
        .map(|(buffer, ty)| ir::alloc(buffer, ty))
        .chain(ops.allocs)
        .collect();
    for part in parts {
        match part {
            Part::Kernels(n) => body.extend(kernel_ops.by_ref().take(n).flatten()),
            Part::Loops(loops) => body.extend(loops),
        }
    }
    body.extend(ops.deallocs);
    body.extend(
        buffers
            .iter()
            .rev()
            .map(|(buffer, ty)| ir::dealloc(buffer, ty)),
    );
    let flops = ops.flops.saturating_add(loop_flops);
    let module = function_module(name, &with_trap(sig.text, &traps), body);
    Ok(Payload {
        program: term.clone(),
        mlir: module.text(0),
        name: name.to_string(),
        params: sig.params.iter().map(|(_, t, _)| t.clone()).collect(),
        result: sig.result,
        flops,
        transform: Some(structured.script.text(0)),
        operations: Operations {
            module: Some(module),
            script: Some(structured.script),
        },
        loops_because: None,
        kernels,
        traps,
    })
}

/// The program's stages (`split`) translated in turn, each structured where it can be
/// and otherwise, `with_loops`, as explicit loops; without, `None` at the first
/// stage that is not structured. Also the stages' buffers: each name and its memref
/// type.
fn stages(
    sig: &Signature,
    limits: &Limits,
    structured: crate::loop_program::StageBuilder,
    split: crate::stages::Staged,
    with_loops: bool,
) -> Result<Option<Stages>, Error> {
    let mut translation = Stages {
        structured,
        loops: with_loops.then(|| crate::loops::LoopStages::new(sig, limits)),
        aliases: Default::default(),
        parts: Vec::new(),
        kernels: Vec::new(),
        buffers: Vec::new(),
    };
    for (alias, of) in split.aliases {
        translation.aliases.entry(of).or_default().push(alias);
    }
    for (id, _, _) in &sig.params {
        translation.resolve_aliases(*id);
    }
    for (k, stage) in split.stages.iter().enumerate() {
        let storage =
            crate::boundary::boundary_storage(&stage.ty, &stage.term, &mut |leaf, dims, s| {
                crate::boundary::check_buffer(limits, "a stage's buffer", dims, s, &stage.term)?;
                let buffer = format!("%stage{k}_{leaf}");
                translation
                    .buffers
                    .push((buffer.clone(), memref_type(dims, s)));
                Ok(buffer)
            })?;
        if !translation.stage(&stage.term, &storage)? {
            return Ok(None);
        }
        translation.bind(stage.var.id, &storage, &stage.ty);
    }
    if !translation.stage(&split.result, &sig.out)? {
        return Ok(None);
    }
    Ok(Some(translation))
}

/// The function's arguments, with the trap record where an operation may trap.
fn with_trap(mut args: Vec<String>, traps: &[TrapSite]) -> Vec<String> {
    if !traps.is_empty() {
        args.push(format!("{TRAP_ARGUMENT}: memref<i32>"));
    }
    args
}

/// The module of function `name`, of the arguments `signature` (their text,
/// `%x: f32`), whose body is `ops`.
fn function_module(name: &str, signature: &[String], ops: Vec<Op>) -> Op {
    let arguments = signature
        .iter()
        .map(|a| match a.split_once(": ") {
            Some((name, ty)) => (name.to_string(), ty.to_string()),
            None => (a.clone(), String::new()),
        })
        .collect();
    ir::module(vec![ir::function(name, arguments, ops)], &[])
}

/// A stage's place in the function body: so many structured kernels, or loops.
enum Part {
    Kernels(usize),
    Loops(Vec<Op>),
}

/// The two translations of a program's stages, side by side.
struct Stages {
    structured: crate::loop_program::StageBuilder,
    /// The explicit loops of the stages that are not structured, where they are
    /// translated.
    loops: Option<crate::loops::LoopStages>,
    /// The aliases of each variable not bound yet.
    aliases: std::collections::HashMap<u64, Vec<u64>>,
    parts: Vec<Part>,
    kernels: Vec<KernelForm>,
    /// The stages' buffers: each name and its memref type.
    buffers: Vec<(String, String)>,
}

impl Stages {
    /// Translates one stage, structured if it can be; `false` where it cannot be and
    /// no loops are translated.
    fn stage(&mut self, term: &Term, out: &Storage) -> Result<bool, Error> {
        let structured = self
            .structured
            .stage(term, out, false)
            .or_else(|_| self.structured.stage(term, out, true));
        match structured {
            Ok(kernels) => {
                self.kernels
                    .extend(kernels.clone().map(|_| KernelForm::Structured));
                self.parts.push(Part::Kernels(kernels.len()));
            }
            Err(why) => {
                let Some(loops) = &mut self.loops else {
                    return Ok(false);
                };
                self.parts.push(Part::Loops(loops.stage(term, out)?));
                self.kernels.push(KernelForm::Loops(why.0));
            }
        }
        Ok(true)
    }

    /// Binds a stage's variable to its buffers in both translations.
    fn bind(&mut self, id: u64, storage: &Storage, ty: &Type) {
        // A stage's array is plain data of known sizes, which the structured
        // translation reads; were it not, a later stage reading it would be loops.
        let _ = self.structured.bind(id, storage, ty);
        if let Some(loops) = &mut self.loops {
            loops.bind(id, storage, ty);
        }
        self.resolve_aliases(id);
    }

    /// Binds the aliases of `id` (and theirs) now that it is bound.
    fn resolve_aliases(&mut self, id: u64) {
        let mut ready = vec![id];
        while let Some(of) = ready.pop() {
            for alias in self.aliases.remove(&of).unwrap_or_default() {
                self.structured.alias(alias, of);
                if let Some(loops) = &mut self.loops {
                    loops.alias(alias, of);
                }
                ready.push(alias);
            }
        }
    }
}

/// The payload as explicit loops (`scf`, `memref`, `arith`, `vector`): the schedule is
/// in the loops themselves, and there is no Transform script.
pub fn payload_loops(name: &str, term: &Term, limits: &Limits) -> Result<Payload, Error> {
    loops(name, term, signature(term, limits)?, limits)
}

fn loops(name: &str, term: &Term, sig: Signature, limits: &Limits) -> Result<Payload, Error> {
    let body = crate::loops::translate(&sig, limits)?;
    let module = function_module(name, &with_trap(sig.text, &body.traps), body.ops);
    Ok(Payload {
        program: term.clone(),
        mlir: module.text(0),
        name: name.to_string(),
        params: sig.params.iter().map(|(_, t, _)| t.clone()).collect(),
        result: sig.result,
        flops: body.flops,
        transform: None,
        operations: Operations {
            module: Some(module),
            script: None,
        },
        loops_because: None,
        kernels: vec![KernelForm::Loops("explicit loops".to_string())],
        traps: body.traps,
    })
}
