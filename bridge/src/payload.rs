//! Typed RISE with concrete sizes → an MLIR payload module, as operations
//! ([`crate::ir`]) and their text. The program is evaluated once into a loop program
//! (`loop_program`: buffers and kernels as loop nests, no MLIR); its plan is
//! decided on it (the whole program, or each stored array in turn); the loop
//! program's kernels become `linalg` operations and a Transform script carrying the
//! program's schedule (`linalg`).

use crate::boundary::{signature, signature_error, Signature};
pub use crate::boundary::{Check, TrapSite, TRAP_ARGUMENT};
use crate::error::Error;
use crate::ir::{self, Op, Value};
use elevate_rise::limits::Limits;
use elevate_rise::loop_program::{plan, Plan, StagedPlan};
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
    /// How many kernels the loop program has: each a `linalg` operation (or a few:
    /// a reduction's fill and the reduction), scheduled by the Transform script.
    pub kernels: usize,
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

/// Translates a closed, typed function `fun(x1: T1 => ... => body)` whose sizes are all
/// constants into an MLIR function `@name(x1, ..., out)` that writes its result into
/// `out`. Scalar parameters are values; any other data is one memref per scalar leaf of
/// its type ([`crate::boundary`]), the result too (a scalar result is a rank-0 memref).
/// Every buffer, at the boundary and inside, is checked against `limits`.
///
/// The payload is `linalg` operations, and the schedule the program encodes is a
/// Transform script ([`Payload::transform`]). A program that is not one loop program as
/// a whole is translated array by array: each array it materializes at the top level
/// ([`elevate_rise::loop_program::stages`]) is kernels of their own. What the loop
/// program cannot express (`scanSeq`, `iterate`) is an error, [`Error::Unsupported`],
/// located where it is and saying why.
pub fn payload(name: &str, term: &Term, limits: &Limits) -> Result<Payload, Error> {
    let sig = signature(term, limits)?;
    match plan(&sig, limits).map_err(signature_error)? {
        Plan::Whole(program, kernels) => {
            let body = crate::linalg::structured(&program, kernels);
            Ok(structured_payload(name, term, sig, body))
        }
        Plan::Staged(plan) => Ok(staged(name, term, sig, plan)),
    }
}

/// The loop program of `term` (typed, low-level, with concrete sizes) as text
/// (`--emit loops`): its buffers and kernels (see `rise/src/loop_program/print.rs`
/// for the notation).
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
        Plan::Staged(plan) => plan.program.to_string(),
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
    Error::unsupported(term, format!("the GPU target: {}", why.why))
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
        kernels: p.kernels,
        traps: p.traps,
    }
}

/// The payload of a program computed stage by stage: each stage's kernels in the
/// program's order, each stage's buffers allocated around them all.
fn staged(name: &str, term: &Term, sig: Signature, plan: StagedPlan) -> Payload {
    let structured = crate::linalg::operations(&plan.program);
    let ops = structured.ops;
    let buffers: Vec<Value> = plan
        .storages
        .iter()
        .flat_map(crate::boundary::leaf_arguments)
        .collect();
    let mut body: Vec<Op> = buffers
        .iter()
        .map(|b| ir::alloc(&b.name, &b.ty))
        .chain(ops.allocs)
        .collect();
    body.extend(ops.kernels.into_iter().flatten());
    body.extend(ops.deallocs);
    body.extend(buffers.iter().rev().map(|b| ir::dealloc(&b.name, &b.ty)));
    let module = function_module(name, with_trap(sig.arguments, &ops.traps), body);
    Payload {
        program: term.clone(),
        module,
        script: Some(structured.script),
        name: name.to_string(),
        params: sig.loops.params.iter().map(|(_, t, _)| t.clone()).collect(),
        result: sig.loops.result,
        flops: ops.flops,
        text: Texts::default(),
        kernels: plan.kernels.iter().sum(),
        traps: ops.traps,
    }
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
    fn what_has_a_payload_has_a_loop_program_the_model_costs_and_what_has_none_says_why() {
        // The matmul under the library's schedules: a payload of kernels, and loop
        // nests the model costs.
        let seven = elevate_rise::rules::matmul_strategies();
        let model = ModelCost::new(Machine::default());
        for strategy in std::iter::once("id").chain(seven.iter().map(|(name, _)| *name)) {
            let t = lowered(MATMUL, strategy);
            let payload = payload("f", &t, &Limits::default()).unwrap();
            assert!(payload.kernels >= 1, "{strategy}");
            assert!(elevate_rise::search::loop_nests::loop_nests(&t).is_ok());
            assert!(model.evaluate(&t).unwrap().cost > 0.0, "{strategy}");
        }
        // A scan has no loop program: the payload and the model both say so.
        let t = lowered(
            "def f(x: 8.f32) = x |> scanSeq(fun(a, y => a + y), 0.0)",
            "id",
        );
        let e = payload("f", &t, &Limits::default()).unwrap_err();
        assert!(
            matches!(&e, Error::Unsupported { message, span: Some(_) } if message.contains("`scanSeq`")),
            "{e}"
        );
        let why = model.evaluate(&t).unwrap_err();
        assert!(why.reason.contains("`scanSeq`"), "{why}");
    }
}
