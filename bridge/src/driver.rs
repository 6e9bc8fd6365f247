//! The library-level driver: a checked RISE program, its sizes and a strategy, to a
//! function compiled to machine code, through each stage in turn:
//!
//! 1. fix the sizes ([`Program::instantiate`]),
//! 2. rewrite with the strategy, then `defaultLowering` (one budget for both),
//! 3. translate to the MLIR payload and its Transform script ([`payload()`]),
//! 4. apply the script, lower, JIT ([`crate::jit::compile_payload`], feature `mlir`).
//!
//! [`compile`] does all of it and returns what can be called and timed; [`emit`] stops
//! at the stage asked for and returns its text (`elevate compile --emit`). Nothing here
//! prints or exits: every failure is an [`Error`] (located where it can be), so that a
//! search can compile candidate after candidate.

use crate::error::Error;
use crate::error::Stage;
use crate::payload::{gpu_payload, payload, Payload};
use elevate_core::{Budget, Context, Strategy};
use elevate_rise::limits::Limits;
use elevate_rise::{print_definition, rules, NatEnv, Program, Term};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// How to compile: the budget of the rewriting, the memory limits of the buffers.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The budget of the strategy and `defaultLowering` together (by default
    /// [`Options::DEFAULT_STEPS`] steps and [`Options::DEFAULT_TIME`]).
    pub budget: Budget,
    /// The most memory a buffer (and all the buffers of a call) may take.
    pub limits: Limits,
    /// What the payload is for: the CPU (by default) or the GPU.
    pub target: Target,
}

/// What a payload is compiled for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Target {
    /// The CPU: the JIT, parallel loops on OpenMP threads (GPU maps among them).
    #[default]
    Cpu,
    /// The GPU: each kernel a launch of blocks and threads from its GPU maps, PTX.
    Gpu,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Target::Cpu => "cpu",
            Target::Gpu => "gpu",
        })
    }
}

impl FromStr for Target {
    type Err = String;

    fn from_str(s: &str) -> Result<Target, String> {
        match s {
            "cpu" => Ok(Target::Cpu),
            "gpu" => Ok(Target::Gpu),
            _ => Err(format!("unknown target `{s}` (cpu, gpu)")),
        }
    }
}

impl Options {
    /// The default budget's rewrite steps (as `elevate rewrite`'s).
    pub const DEFAULT_STEPS: u64 = elevate_rise::Instance::STEPS;
    /// The default budget's time (as `elevate rewrite`'s).
    pub const DEFAULT_TIME: Duration = elevate_rise::Instance::TIME;
}

impl Default for Options {
    fn default() -> Self {
        Options {
            budget: Budget::unlimited()
                .steps(Options::DEFAULT_STEPS)
                .time(Options::DEFAULT_TIME),
            limits: Limits::default(),
            target: Target::Cpu,
        }
    }
}

/// A stage whose text [`emit`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emit {
    /// The low-level RISE program compiled (after the strategy and `defaultLowering`).
    Rise,
    /// Its loop program: buffers and kernels as loop nests, with their schedule
    /// ([`crate::payload::loop_program_text`]).
    Loops,
    /// The MLIR payload module.
    Payload,
    /// Its Transform-dialect script ([`Payload::transform_text`]).
    Transform,
    /// The payload after the script, lowered to the LLVM dialect.
    Mlir,
    /// LLVM IR.
    Llvm,
    /// PTX, for the GPU target.
    Ptx,
    /// The GPU target's launch manifest (JSON): each kernel's grid, block and
    /// parameters ([`crate::jit::payload_manifest`]).
    Launch,
}

impl Emit {
    /// Every stage, in order.
    pub const ALL: [Emit; 8] = [
        Emit::Rise,
        Emit::Loops,
        Emit::Payload,
        Emit::Transform,
        Emit::Mlir,
        Emit::Llvm,
        Emit::Ptx,
        Emit::Launch,
    ];
}

impl fmt::Display for Emit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Emit::Rise => "rise",
            Emit::Loops => "loops",
            Emit::Payload => "payload",
            Emit::Transform => "transform",
            Emit::Mlir => "mlir",
            Emit::Llvm => "llvm",
            Emit::Ptx => "ptx",
            Emit::Launch => "launch",
        })
    }
}

/// A stage name that is not one of [`Emit::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown stage `{0}` (rise, loops, payload, transform, mlir, llvm, ptx, launch)")]
pub struct UnknownStage(pub String);

impl FromStr for Emit {
    type Err = UnknownStage;

    fn from_str(s: &str) -> Result<Emit, UnknownStage> {
        Emit::ALL
            .into_iter()
            .find(|e| e.to_string() == s)
            .ok_or_else(|| UnknownStage(s.to_string()))
    }
}

impl Payload {
    /// The Transform script, or for a payload whose script was taken away
    /// ([`Payload::with_transform`]) a comment saying so and a script that does
    /// nothing, so that the text is always a valid transform module (for `mlir-opt
    /// --transform-interpreter`, or to start one from).
    pub fn transform_text(&self) -> String {
        match self.transform() {
            Some(script) => script.to_string(),
            None => "// no transform script: it was taken away from the payload; this script does nothing
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    transform.yield
  }
}
"
            .to_string(),
        }
    }
}

/// `term` (typed, with concrete sizes) rewritten by `strategy` (if any), then made
/// low-level by `defaultLowering`, both within `options.budget`.
pub fn rewrite(
    term: &Term,
    strategy: Option<&Strategy<Term>>,
    options: &Options,
) -> Result<Term, Error> {
    let mut cx = Context::new(options.budget);
    let term = match strategy {
        Some(s) => s.apply(term, &mut cx).map_err(|failure| Error::Strategy {
            strategy: s.to_string(),
            failure,
        })?,
        None => term.clone(),
    };
    rules::default_lowering()
        .apply(&term, &mut cx)
        .map_err(Error::Lowering)
}

/// The program to compile: `program`'s entry point at the sizes `nats`, rewritten by
/// `strategy` (if any) and `defaultLowering`.
pub fn choose(
    program: &Program,
    nats: &NatEnv,
    strategy: Option<&Strategy<Term>>,
    options: &Options,
) -> Result<Term, Error> {
    let term = program.instantiate(nats)?;
    rewrite(&term, strategy, options)
}

/// The payload of `program`'s entry point at the sizes `nats`, rewritten by `strategy`
/// (if any) and `defaultLowering`: named after the entry point.
pub fn translate(
    program: &Program,
    nats: &NatEnv,
    strategy: Option<&Strategy<Term>>,
    options: &Options,
) -> Result<Payload, Error> {
    let term = choose(program, nats, strategy, options)?;
    payload(&program.entry().name, &term, &options.limits)
}

/// `program`'s entry point at the sizes `nats`, rewritten by `strategy` (if any) and
/// `defaultLowering`, compiled to machine code: ready to call on inputs
/// ([`crate::jit::Compiled::run`]) and to time ([`crate::jit::Compiled::prepare`]),
/// with each stage's text ([`crate::jit::Compiled::text`]).
#[cfg(feature = "mlir")]
pub fn compile(
    program: &Program,
    nats: &NatEnv,
    strategy: Option<&Strategy<Term>>,
    options: &Options,
) -> Result<crate::jit::Compiled, Error> {
    crate::jit::compile_payload(
        &translate(program, nats, strategy, options)?,
        &options.limits,
    )
}

/// `program`'s entry point at the sizes `nats`, rewritten by `strategy` (if any) and
/// `defaultLowering`, compiled for the GPU: each kernel's PTX and its launches, to run
/// where a GPU is ([`crate::jit::GpuCompiled::prepare`]) or to bundle for a runner
/// elsewhere ([`crate::jit::GpuCompiled::bundle`]).
#[cfg(feature = "mlir")]
pub fn compile_gpu(
    program: &Program,
    nats: &NatEnv,
    strategy: Option<&Strategy<Term>>,
    options: &Options,
) -> Result<crate::jit::GpuCompiled, Error> {
    let term = choose(program, nats, strategy, options)?;
    let payload = gpu_payload(&program.entry().name, &term, &options.limits)?;
    crate::jit::compile_gpu(&payload, &options.limits)
}

/// `term` (typed, closed, with concrete sizes: a strategy's or an e-graph's choice)
/// rewritten by `strategy` (if any) and `defaultLowering`, compiled as the function
/// `name`.
#[cfg(feature = "mlir")]
pub fn compile_term(
    name: &str,
    term: &Term,
    strategy: Option<&Strategy<Term>>,
    options: &Options,
) -> Result<crate::jit::Compiled, Error> {
    let chosen = rewrite(term, strategy, options)?;
    crate::jit::compile_payload(&payload(name, &chosen, &options.limits)?, &options.limits)
}

#[cfg(feature = "mlir")]
impl crate::jit::Compiled {
    /// The text of a stage.
    pub fn text(&self, stage: Emit) -> Result<String, Error> {
        let p = self.payload();
        Ok(match stage {
            Emit::Rise => print_definition(&p.name, &p.program),
            Emit::Loops => crate::payload::loop_program_text(&p.program, &self.limits())?,
            Emit::Payload => crate::jit::printed(p)?.0,
            Emit::Transform => match crate::jit::printed(p)?.1 {
                Some(script) => script,
                None => p.transform_text(),
            },
            Emit::Mlir => self.llvm_dialect().to_string(),
            Emit::Llvm => self.llvm_ir()?,
            Emit::Ptx | Emit::Launch => return Err(cpu_has_no_ptx()),
        })
    }
}

/// The text of `stage` for `program`'s entry point at the sizes `nats`, rewritten by
/// `strategy` (if any) and `defaultLowering`: only the stages up to it are run (`rise`
/// needs no translation, `mlir` and `llvm` no JIT).
pub fn emit(
    program: &Program,
    nats: &NatEnv,
    strategy: Option<&Strategy<Term>>,
    options: &Options,
    stage: Emit,
) -> Result<String, Error> {
    let name = &program.entry().name;
    let term = choose(program, nats, strategy, options)?;
    match stage {
        Emit::Rise => return Ok(print_definition(name, &term)),
        Emit::Loops => {
            return match options.target {
                Target::Cpu => crate::payload::loop_program_text(&term, &options.limits),
                Target::Gpu => crate::payload::gpu_loop_program_text(&term, &options.limits),
            }
        }
        _ => {}
    }
    let payload = match options.target {
        Target::Cpu => payload(name, &term, &options.limits)?,
        Target::Gpu => gpu_payload(name, &term, &options.limits)?,
    };
    match (stage, options.target) {
        (Emit::Rise | Emit::Loops | Emit::Payload | Emit::Transform, _) => printed(&payload, stage),
        (Emit::Mlir | Emit::Llvm, Target::Cpu) => lowered(&payload, stage == Emit::Llvm),
        (Emit::Ptx | Emit::Launch, Target::Cpu) => Err(cpu_has_no_ptx()),
        (Emit::Launch, Target::Gpu) => gpu_manifest(&payload),
        (Emit::Llvm, Target::Gpu) => gpu_llvm_ir(&payload),
        (Emit::Mlir | Emit::Ptx, Target::Gpu) => gpu_text(&payload, stage == Emit::Ptx),
    }
}

/// The error of asking PTX of the CPU target.
fn cpu_has_no_ptx() -> Error {
    Error::mlir(
        Stage::Ptx,
        "PTX and its launches are the GPU target's (`--target gpu`)",
    )
}

/// The GPU payload lowered: its kernels' PTX, each after a comment line naming it, or
/// the module after the lowering (the host side launching `gpu.binary`s).
#[cfg(feature = "mlir")]
fn gpu_text(payload: &Payload, ptx: bool) -> Result<String, Error> {
    if !ptx {
        return crate::jit::gpu_lowered(payload);
    }
    let kernels = crate::jit::payload_ptx(payload)?;
    Ok(kernels
        .iter()
        .map(|k| format!("// kernel module {}\n{}", k.module, k.text))
        .collect())
}

#[cfg(not(feature = "mlir"))]
fn gpu_text(payload: &Payload, _: bool) -> Result<String, Error> {
    lowered(payload, false)
}

/// The LLVM IR of the GPU payload's kernels (NVVM).
#[cfg(feature = "mlir")]
fn gpu_llvm_ir(payload: &Payload) -> Result<String, Error> {
    crate::jit::payload_kernels_llvm_ir(payload)
}

#[cfg(not(feature = "mlir"))]
fn gpu_llvm_ir(payload: &Payload) -> Result<String, Error> {
    lowered(payload, true)
}

/// The GPU payload's launch manifest, as indented JSON.
#[cfg(feature = "mlir")]
fn gpu_manifest(payload: &Payload) -> Result<String, Error> {
    let manifest = crate::jit::payload_manifest(payload)?;
    Ok(format!("{manifest:#}\n"))
}

#[cfg(not(feature = "mlir"))]
fn gpu_manifest(payload: &Payload) -> Result<String, Error> {
    lowered(payload, false)
}

#[cfg(feature = "mlir")]
fn lowered(payload: &Payload, llvm_ir: bool) -> Result<String, Error> {
    if llvm_ir {
        crate::jit::payload_llvm_ir(payload)
    } else {
        crate::jit::lower_payload(payload)
    }
}

/// The payload or its script as MLIR prints them (custom forms).
#[cfg(feature = "mlir")]
fn printed(payload: &Payload, stage: Emit) -> Result<String, Error> {
    let (module, script) = crate::jit::printed(payload)?;
    Ok(match (stage, script) {
        (Emit::Transform, Some(script)) => script,
        (Emit::Transform, None) => payload.transform_text(),
        _ => module,
    })
}

/// The payload or its script in MLIR's generic form (without MLIR to print them).
#[cfg(not(feature = "mlir"))]
fn printed(payload: &Payload, stage: Emit) -> Result<String, Error> {
    Ok(match stage {
        Emit::Transform => payload.transform_text(),
        _ => payload.mlir().to_string(),
    })
}

#[cfg(not(feature = "mlir"))]
fn lowered(_: &Payload, _: bool) -> Result<String, Error> {
    Err(Error::mlir(
        crate::error::Stage::Lower,
        "this elevate was built without MLIR (feature `mlir`)",
    ))
}
