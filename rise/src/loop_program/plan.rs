//! The plan of a program, decided on its loop program before anything is emitted:
//! one loop program for all of it; or, where it is not one as a whole, its stages
//! ([`super::stages`]), each in the loop program where it can be and left to explicit
//! loops where it cannot; or explicit loops for all of it.

use super::stages::{split, Staged};
use super::Storage;
use super::{check_buffer, storage, whole, LoopProgram, Signature, SignatureError, StageBuilder};
use crate::limits::Limits;
use crate::term::Term;
use std::collections::HashMap;

/// What a program becomes.
pub enum Plan {
    /// The whole program: its loop program, and how many kernels it has.
    Whole(LoopProgram, usize),
    /// Stage by stage.
    Staged(StagedPlan),
    /// Explicit loops for all of it, and why.
    Loops(String),
}

/// A program's stages and the form each takes.
pub struct StagedPlan {
    /// Why the program is not one loop program as a whole.
    pub why: String,
    /// The stages.
    pub split: Staged,
    /// Where each stage is stored (its buffers are named `%stageK_J`).
    pub storages: Vec<Storage>,
    /// The form of each stage, in order, then of the result.
    pub forms: Vec<StageForm>,
    /// The loop program of the stages that have one.
    pub program: LoopProgram,
}

/// A stage as the plan computes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StageForm {
    /// So many kernels of the loop program.
    Kernels(usize),
    /// Explicit loops, and why.
    Loops(String),
}

/// The [`Plan`] of the entry point `sig`: the whole program as one loop program if it
/// is one; if not, and it has stages, each stage in turn; else the whole program with
/// reads at indices not affine in the loops computed in the kernels' bodies (which
/// its stages apart might have read affinely). An error where a stage's buffer is
/// over the limits.
///
/// ```
/// use elevate_rise::{limits::Limits, loop_program::{plan, Plan, Signature}, Program};
/// let p = Program::load("def f(x: 64.f32) = x |> mapSeq(fun(v => v * 2.0))", None).unwrap();
/// let sig = Signature::of(&p.entry().term, &Limits::default()).unwrap();
/// let Ok(Plan::Whole(program, kernels)) = plan(&sig, &Limits::default()) else { panic!() };
/// assert_eq!((program.kernels.len(), kernels), (1, 1));
/// ```
pub fn plan(sig: &Signature, limits: &Limits) -> Result<Plan, SignatureError> {
    let whole = |reads_in_body| whole(sig, limits, reads_in_body);
    let why = match whole(false) {
        Ok((program, kernels)) => return Ok(Plan::Whole(program, kernels)),
        Err(why) => why.0,
    };
    let split = split(sig.body);
    let mut structured = match StageBuilder::new(sig, limits) {
        Ok(s) if !split.stages.is_empty() => s,
        _ => {
            return Ok(match whole(true) {
                Ok((program, kernels)) => Plan::Whole(program, kernels),
                Err(why) => Plan::Loops(why.0),
            })
        }
    };
    let mut aliases = Aliases::new(&split.aliases);
    for (id, _, _) in &sig.params {
        aliases.resolve(*id, |alias, of| structured.alias(alias, of));
    }
    let (mut storages, mut forms) = (Vec::new(), Vec::new());
    for (k, stage) in split.stages.iter().enumerate() {
        let at = &stage.term;
        let storage = storage(&stage.ty, at, &mut |leaf, dims, s| {
            check_buffer(limits, "a stage's buffer", dims, s)
                .map_err(|e| SignatureError::Size(at.span(), e))?;
            Ok(format!("%stage{k}_{leaf}"))
        })?;
        forms.push(stage_form(&mut structured, &stage.term, &storage));
        // A stage's array is plain data of known sizes, which the loop program
        // reads; were it not, a later stage reading it would be loops.
        let _ = structured.bind(stage.var.id, &storage, &stage.ty);
        aliases.resolve(stage.var.id, |alias, of| structured.alias(alias, of));
        storages.push(storage);
    }
    forms.push(stage_form(&mut structured, &split.result, &sig.out));
    Ok(Plan::Staged(StagedPlan {
        why,
        split,
        storages,
        forms,
        program: structured.into_program(),
    }))
}

/// The form of one stage: its kernels in the loop program (reads at indices not
/// affine in the loops computed in their bodies where they must be), or why it has
/// none.
fn stage_form(structured: &mut StageBuilder, term: &Term, out: &Storage) -> StageForm {
    match structured
        .stage(term, out, false)
        .or_else(|_| structured.stage(term, out, true))
    {
        Ok(kernels) => StageForm::Kernels(kernels.len()),
        Err(why) => StageForm::Loops(why.0),
    }
}

/// Variables bound by a top-level `let` to another variable, each waiting for that one
/// to be bound: they stand for the same array.
pub struct Aliases(HashMap<u64, Vec<u64>>);

impl Aliases {
    /// The aliases of `pairs` (`(alias, variable)`), none bound yet.
    pub fn new(pairs: &[(u64, u64)]) -> Aliases {
        let mut waiting = HashMap::<u64, Vec<u64>>::new();
        for (alias, of) in pairs {
            waiting.entry(*of).or_default().push(*alias);
        }
        Aliases(waiting)
    }

    /// Binds (by `bind(alias, of)`) the aliases of `id` and theirs, now that `id` is
    /// bound.
    pub fn resolve(&mut self, id: u64, mut bind: impl FnMut(u64, u64)) {
        let mut ready = vec![id];
        while let Some(of) = ready.pop() {
            for alias in self.0.remove(&of).unwrap_or_default() {
                bind(alias, of);
                ready.push(alias);
            }
        }
    }
}
