//! Typed RISE with concrete sizes → an MLIR payload module, as operations
//! ([`crate::ir`]) and their text. The program is evaluated once into a loop program
//! (`loop_program`: buffers and kernels as loop nests, no MLIR); its plan is
//! decided on it (the whole program, or each stored array, in the loop program where
//! it can be, explicit loops where it cannot); the loop program's kernels become
//! `linalg` operations and a Transform script carrying the program's schedule
//! (`linalg`), the rest explicit loops (`loops`).

use crate::boundary::{signature, signature_error, Signature};
pub use crate::boundary::{Check, TrapSite, TRAP_ARGUMENT};
use crate::error::Error;
use crate::ir::{self, Op, Value};
use elevate_rise::limits::Limits;
use elevate_rise::loop_program::{plan, Aliases, Plan, StageForm, StagedPlan};
use elevate_rise::term::Term;
use elevate_rise::types::Type;
use std::sync::OnceLock;

/// The payload of one entry point: the MLIR module and its Transform script, as
/// operations (which the JIT builds with MLIR's builders), and how to call it. Their
/// text ([`Payload::mlir`], [`Payload::transform`]) is printed from the operations
/// when it is asked for; a text given instead ([`Payload::with_mlir`],
/// [`Payload::with_transform`]: an edited module, a script written by hand) is what
/// the JIT then parses and compiles.
#[derive(Debug, Clone)]
pub struct Payload {
    /// The low-level RISE program it translates.
    pub program: Term,
    /// The module's operations ([`Payload::module`]): private, so that the text
    /// printed from them never goes stale.
    module: Op,
    /// The script's operations ([`Payload::script`]).
    script: Option<Op>,
    /// The function's name.
    pub name: String,
    /// The parameters, in order: their types.
    pub params: Vec<Type>,
    /// The result's type (written into the memref arguments after the parameters').
    pub result: Type,
    /// The floating-point operations one call performs (arithmetic on floats, each
    /// vector lane counted): for the matmul baseline, `2 n k m`.
    pub flops: u64,
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
    /// The module's and the script's texts: given, or printed once asked for.
    text: Texts,
}

/// A payload's texts: each given in place of its operations, or printed from them
/// (once, when first asked for).
#[derive(Debug, Clone, Default)]
struct Texts {
    module: OnceLock<String>,
    script: OnceLock<Option<String>>,
    module_given: bool,
    script_given: bool,
}

impl Payload {
    /// The `builtin.module` of the function (`func`, `linalg`, `scf`, `memref`,
    /// `arith`, `math`, `vector`), as operations.
    pub fn module(&self) -> &Op {
        &self.module
    }

    /// The `builtin.module` of the Transform-dialect script (with `@__transform_main`)
    /// that applies the program's schedule to the payload's `linalg` operations, when
    /// the payload is made of them, as operations.
    pub fn script(&self) -> Option<&Op> {
        self.script.as_ref()
    }

    /// The MLIR module as text: the one given ([`Payload::with_mlir`]), or its
    /// operations printed in MLIR's generic form.
    ///
    /// ```
    /// use elevate_rise::{limits::Limits, Program};
    /// let p = Program::load("def f(x: 8.f32) = x |> mapSeq(fun(v => v * 2.0))", None).unwrap();
    /// let payload = elevate_bridge::payload("f", &p.entry().term, &Limits::default()).unwrap();
    /// assert!(payload.mlir().contains("\"linalg.generic\""));
    /// let renamed = payload.mlir().replace("sym_name = \"f\"", "sym_name = \"g\"");
    /// assert!(payload.with_mlir(renamed).mlir().contains("sym_name = \"g\""));
    /// ```
    pub fn mlir(&self) -> &str {
        self.text.module.get_or_init(|| self.module.text(0))
    }

    /// The Transform script as text, where there is one: the one given
    /// ([`Payload::with_transform`]), or its operations printed.
    pub fn transform(&self) -> Option<&str> {
        self.text
            .script
            .get_or_init(|| self.script.as_ref().map(|s| s.text(0)))
            .as_deref()
    }

    /// The payload whose module is `text` (MLIR, in any form MLIR parses), which the
    /// JIT parses instead of building the operations.
    pub fn with_mlir(mut self, text: impl Into<String>) -> Payload {
        self.text.module = OnceLock::from(text.into());
        self.text.module_given = true;
        self
    }

    /// The payload whose Transform script is `text` (parsed instead of built), or
    /// which has none.
    pub fn with_transform(mut self, text: Option<String>) -> Payload {
        if text.is_none() {
            self.script = None;
        }
        self.text.script = OnceLock::from(text);
        self.text.script_given = true;
        self
    }

    /// The module's text where one was given in place of its operations.
    pub fn given_mlir(&self) -> Option<&str> {
        self.text.module_given.then(|| self.mlir())
    }

    /// The script's text where one was given in place of its operations (`None`
    /// inside where it was taken away).
    pub fn given_transform(&self) -> Option<Option<&str>> {
        self.text.script_given.then(|| self.transform())
    }
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
/// the top level is translated on its own ([`elevate_rise::loop_program::stages`]): those the structured
/// translation expresses stay `linalg` with their schedule, the others become explicit
/// loops ([`Payload::kernels`] says which and why); a program none of whose arrays is
/// structured is explicit loops ([`payload_loops`]).
pub fn payload(name: &str, term: &Term, limits: &Limits) -> Result<Payload, Error> {
    let sig = signature(term, limits)?;
    match plan(&sig, limits).map_err(signature_error)? {
        Plan::Whole(program, kernels) => {
            let body = crate::linalg::structured(&program, kernels);
            Ok(structured_payload(name, term, sig, body))
        }
        Plan::Staged(plan) => staged(name, term, sig, limits, plan),
        Plan::Loops(why) => {
            let mut p = loops(name, term, sig, limits)?;
            p.kernels = vec![KernelForm::Loops(why.clone())];
            p.loops_because = Some(why);
            Ok(p)
        }
    }
}

/// Whether `term`'s payload (see [`payload`]) computes every kernel as a structured
/// operation: the same answer as `payload(..).all_structured()`, from the program's
/// plan, without writing any MLIR (the search's model asks this of every
/// candidate).
pub fn all_structured(term: &Term, limits: &Limits) -> bool {
    let Ok(sig) = signature(term, limits) else {
        return false;
    };
    match plan(&sig, limits) {
        Ok(Plan::Whole(..)) => true,
        Ok(Plan::Staged(plan)) => {
            let kernels = kernel_forms(&plan);
            match kernels.is_empty() {
                // (Nothing to compute: the payload is the loops', without a kernel.)
                true => loops("f", term, sig, limits).is_ok(),
                false => kernels.iter().all(|k| *k == KernelForm::Structured),
            }
        }
        Ok(Plan::Loops(_)) | Err(_) => false,
    }
}

/// The loop program of `term` (typed, low-level, with concrete sizes) as text
/// (`--emit loops`): its buffers and kernels (see `bridge/src/loop_program/print.rs`
/// for the notation), with the stages the program leaves to explicit loops, and why,
/// where there are any.
///
/// ```
/// use elevate_rise::{limits::Limits, Program};
/// let p = Program::load("def f(x: 64.f32) : 64.f32 = x |> mapSeq(fun(v => v * 2.0))", None).unwrap();
/// let text = elevate_bridge::payload::loop_program_text(&p.entry().term, &Limits::default()).unwrap();
/// assert!(text.contains("kernel 0: %out0[d0] = (in0 * 2.0)"), "{text}");
/// assert!(text.contains("schedule  seq d0 by 1 (64 trips)"), "{text}");
/// ```
pub fn loop_program_text(term: &Term, limits: &Limits) -> Result<String, Error> {
    let sig = signature(term, limits)?;
    Ok(match plan(&sig, limits).map_err(signature_error)? {
        Plan::Whole(program, _) => program.to_string(),
        Plan::Staged(plan) => {
            let mut text = plan.program.to_string();
            let names = plan.split.stages.iter().map(|s| &*s.var.name);
            for (form, name) in plan.forms.iter().zip(names.chain(["the result"])) {
                if let StageForm::Loops(why) = form {
                    text.push_str(&format!("// {name}: explicit loops ({why})\n"));
                }
            }
            text
        }
        Plan::Loops(why) => format!("// no loop program: explicit loops ({why})\n"),
    })
}

/// The loop program of `term` as the GPU target compiles it ([`gpu_payload`]): the
/// whole program, reads at indices not affine in the loops computed in the kernels'
/// bodies; an error where it has none.
pub fn gpu_loop_program_text(term: &Term, limits: &Limits) -> Result<String, Error> {
    let sig = signature(term, limits)?;
    match crate::loop_program::whole(&sig, limits, true) {
        Ok((program, _)) => Ok(program.to_string()),
        Err(why) => Err(not_for_the_gpu(term, why)),
    }
}

/// Why `term` has no GPU payload, as an error.
fn not_for_the_gpu(term: &Term, why: crate::loop_program::NotStructured) -> Error {
    Error::unsupported(term, format!("the GPU target: {}", why.0))
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
            p.module.allow_contraction();
            Ok(p)
        }
        Err(why) => Err(not_for_the_gpu(term, why)),
    }
}

/// The payload of a program structured as a whole.
fn structured_payload(
    name: &str,
    term: &Term,
    sig: Signature,
    p: crate::linalg::Structured,
) -> Payload {
    let module = function_module(name, with_trap(sig.arguments, &p.traps), p.ops);
    let script = Some(p.script);
    Payload {
        program: term.clone(),
        module,
        script,
        name: name.to_string(),
        params: sig.loops.params.iter().map(|(_, t, _)| t.clone()).collect(),
        result: sig.loops.result,
        flops: p.flops,
        text: Texts::default(),
        loops_because: None,
        kernels: vec![KernelForm::Structured; p.kernels],
        traps: p.traps,
    }
}

/// The payload of a program computed stage by stage: the loop program's kernels as
/// `linalg`, the other stages as explicit loops, in the program's order.
fn staged(
    name: &str,
    term: &Term,
    sig: Signature,
    limits: &Limits,
    plan: StagedPlan,
) -> Result<Payload, Error> {
    let kernels = kernel_forms(&plan);
    if !kernels.contains(&KernelForm::Structured) {
        let mut p = loops(name, term, sig, limits)?;
        p.kernels = kernels;
        p.loops_because = Some(plan.why);
        return Ok(p);
    }
    // The explicit loops of the stages outside the loop program, by one generator in
    // the program's order (so that their names and trap codes are the function's),
    // each stage's array bound once it is computed.
    let mut loop_stages = crate::loops::LoopStages::new(&sig, limits);
    let mut aliases = Aliases::new(&plan.split.aliases);
    for (id, _, _) in &sig.params {
        aliases.resolve(*id, |alias, of| loop_stages.alias(alias, of));
    }
    let stages = plan.split.stages.iter().map(Some).chain([None]);
    let terms = plan.split.stages.iter().map(|s| &s.term);
    let terms = terms.chain([&plan.split.result]);
    let outs = plan.storages.iter().chain([&sig.out]);
    let mut parts = Vec::new();
    for (((form, term), out), stage) in plan.forms.iter().zip(terms).zip(outs).zip(stages) {
        parts.push(match form {
            StageForm::Kernels(n) => Part::Kernels(*n),
            StageForm::Loops(_) => Part::Loops(loop_stages.stage(term, out)?),
        });
        if let Some(stage) = stage {
            loop_stages.bind(stage.var.id, out, &stage.ty);
            aliases.resolve(stage.var.id, |alias, of| loop_stages.alias(alias, of));
        }
    }
    let (loop_flops, mut traps) = loop_stages.finish();
    // (The structured kernels' traps after the loops'.)
    let structured = crate::linalg::operations(&plan.program, traps.len());
    let mut ops = structured.ops;
    traps.append(&mut ops.traps);
    // The function body: the stages' buffers, then each part in order.
    let buffers: Vec<Value> = plan
        .storages
        .iter()
        .flat_map(crate::boundary::leaf_arguments)
        .collect();
    let mut kernel_ops = ops.kernels.into_iter();
    let mut body: Vec<Op> = buffers
        .iter()
        .map(|b| ir::alloc(&b.name, &b.ty))
        .chain(ops.allocs)
        .collect();
    for part in parts {
        match part {
            Part::Kernels(n) => body.extend(kernel_ops.by_ref().take(n).flatten()),
            Part::Loops(loops) => body.extend(loops),
        }
    }
    body.extend(ops.deallocs);
    body.extend(buffers.iter().rev().map(|b| ir::dealloc(&b.name, &b.ty)));
    let flops = ops.flops.saturating_add(loop_flops);
    let module = function_module(name, with_trap(sig.arguments, &traps), body);
    let script = Some(structured.script);
    Ok(Payload {
        program: term.clone(),
        module,
        script,
        name: name.to_string(),
        params: sig.loops.params.iter().map(|(_, t, _)| t.clone()).collect(),
        result: sig.loops.result,
        flops,
        text: Texts::default(),
        loops_because: None,
        kernels,
        traps,
    })
}

/// How each kernel of a staged plan is computed, in order (an explicit-loops stage is
/// one).
fn kernel_forms(plan: &StagedPlan) -> Vec<KernelForm> {
    plan.forms
        .iter()
        .flat_map(|form| match form {
            StageForm::Kernels(n) => vec![KernelForm::Structured; *n],
            StageForm::Loops(why) => vec![KernelForm::Loops(why.clone())],
        })
        .collect()
}

/// The function's arguments, with the trap record where an operation may trap.
fn with_trap(mut args: Vec<Value>, traps: &[TrapSite]) -> Vec<Value> {
    if !traps.is_empty() {
        args.push(Value::new(TRAP_ARGUMENT, trap_record_type()));
    }
    args
}

/// The trap record's type: a rank-0 `i32`.
pub(crate) fn trap_record_type() -> ir::Type {
    ir::Type::memref(&[], elevate_rise::types::Scalar::I32)
}

/// The module of function `name`, of `arguments`, whose body is `ops`.
fn function_module(name: &str, arguments: Vec<Value>, ops: Vec<Op>) -> Op {
    ir::module(vec![ir::function(name, arguments, ops)], Vec::new())
}

/// A stage's place in the function body: so many structured kernels, or loops.
enum Part {
    Kernels(usize),
    Loops(Vec<Op>),
}

/// The payload as explicit loops (`scf`, `memref`, `arith`, `vector`): the schedule is
/// in the loops themselves, and there is no Transform script.
pub fn payload_loops(name: &str, term: &Term, limits: &Limits) -> Result<Payload, Error> {
    loops(name, term, signature(term, limits)?, limits)
}

fn loops(name: &str, term: &Term, sig: Signature, limits: &Limits) -> Result<Payload, Error> {
    let body = crate::loops::translate(&sig, limits)?;
    let module = function_module(name, with_trap(sig.arguments, &body.traps), body.ops);
    let script = None;
    Ok(Payload {
        program: term.clone(),
        module,
        script,
        name: name.to_string(),
        params: sig.loops.params.iter().map(|(_, t, _)| t.clone()).collect(),
        result: sig.loops.result,
        flops: body.flops,
        text: Texts::default(),
        loops_because: None,
        kernels: vec![KernelForm::Loops("explicit loops".to_string())],
        traps: body.traps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use elevate_core::Context;
    use elevate_rise::search::{Machine, ModelCost};
    use elevate_rise::{registry, Program};
    use elevate_strategies::search::Cost;

    fn lowered(source: &str, strategy: &str) -> Term {
        let program = Program::load(source, None).unwrap();
        registry()
            .parse(&format!("{strategy} ; defaultLowering"))
            .unwrap()
            .apply(&program.entry().term, &mut Context::default())
            .unwrap()
    }

    const MATMUL: &str = "def mm(a: 256.256.f32, b: 256.256.f32) : 256.256.f32 = a |> map(fun(arow => transpose(b) |> map(fun(bcol => zip(arow, bcol) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))";

    #[test]
    fn the_quick_answer_is_the_payload_s_and_the_model_reads_what_has_a_loop_program() {
        // The matmul, and the same with a product of more operations than a kernel's
        // body takes, under the library's schedules: structured, or not, in every
        // mixture of stages.
        let long = MATMUL.replace(
            "fst(p) * snd(p)",
            &format!("fst(p) * snd(p){}", " + 0.0".repeat(1001)),
        );
        let seven = elevate_rise::rules::matmul_strategies();
        let model = ModelCost::new(Machine::default());
        let mut answers = std::collections::BTreeSet::new();
        for source in [MATMUL, &long] {
            for strategy in std::iter::once("id").chain(seven.iter().map(|(name, _)| *name)) {
                let t = lowered(source, strategy);
                let payload = payload("f", &t, &Limits::default()).unwrap();
                let quick = all_structured(&t, &Limits::default());
                assert_eq!(
                    quick,
                    payload.all_structured(),
                    "{strategy}: {:?}",
                    payload.kernels
                );
                answers.insert((quick, payload.kernels.len() > 1));
                // The model costs what the loop program holds, and says why not where
                // a stage is explicit loops.
                match model.evaluate(&t) {
                    Ok(m) => assert!(quick && m.cost > 0.0, "{strategy}"),
                    Err(e) => assert!(!quick && e.reason.contains("explicit loops"), "{e}"),
                }
            }
        }
        let mixtures = [(true, false), (true, true), (false, false), (false, true)];
        assert!(mixtures.iter().all(|m| answers.contains(m)), "{answers:?}");
    }
}
