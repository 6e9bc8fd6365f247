//! The plan of a program, decided on its loop program before anything is emitted:
//! one loop program for all of it; or, where it is not one as a whole, its stages
//! ([`super::stages`]), each its kernels of one loop program; or, where neither is,
//! the reason, an error.

use super::stages::{split, Lets, Staged};
use super::{check_buffer, storage, whole, LoopProgram, Signature, SignatureError, StageBuilder};
use super::{NotStructured, Storage};
use crate::limits::Limits;
use crate::term::Term;
use std::collections::HashMap;

/// What a program becomes.
pub enum Plan {
    /// The whole program: its loop program, and how many kernels it has.
    Whole(LoopProgram, usize),
    /// Stage by stage.
    Staged(StagedPlan),
}

/// A program's stages and the form each takes.
pub struct StagedPlan {
    /// Why the program is not one loop program as a whole.
    pub why: String,
    /// The stages.
    pub split: Staged,
    /// Where each stage is stored (its buffers are named `%stageK_J`).
    pub storages: Vec<Storage>,
    /// How many kernels each stage has, in order, then the result.
    pub kernels: Vec<usize>,
    /// The loop program of the stages that have one.
    pub program: LoopProgram,
}

/// The [`Plan`] of the entry point `sig`: the whole program as one loop program if it
/// is one; if not, and it has stages, each stage in turn; else (or where a stage is
/// none) the whole program with reads at indices not affine in the loops computed in
/// the kernels' bodies (which its stages apart might have read affinely); else each
/// array bound by a top-level `let` a stage too ([`Lets::Stored`]: layers that are
/// no loop program fused, a convolution of a computed image, are one each). An error
/// where a stage's buffer is over the limits, or where the program is none of these
/// (`scanSeq`, say): [`SignatureError::Unsupported`], with the reason.
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
        Err(why) => why,
    };
    let stages = |lets| {
        let split = split(sig.body, lets);
        match StageBuilder::new(sig, limits) {
            Ok(s) if !split.stages.is_empty() => Some(staged(sig, limits, s, split, &why.why)),
            _ => None,
        }
    };
    let staged = stages(Lets::Inlined).unwrap_or_else(|| Err(refused(sig.body, why.clone())));
    match staged {
        Err(SignatureError::Unsupported(span, why)) => match whole(true) {
            Ok((program, kernels)) => Ok(Plan::Whole(program, kernels)),
            Err(_) => match stages(Lets::Stored) {
                Some(Ok(plan)) => Ok(plan),
                _ => Err(SignatureError::Unsupported(span, why)),
            },
        },
        other => other,
    }
}

/// The plan of `split`'s stages, each in turn; `why` the whole program is not one.
fn staged(
    sig: &Signature,
    limits: &Limits,
    mut structured: StageBuilder,
    split: Staged,
    why: &str,
) -> Result<Plan, SignatureError> {
    let mut aliases = Aliases::new(&split.aliases);
    for (id, _, _) in &sig.params {
        aliases.resolve(*id, |alias, of| structured.alias(alias, of));
    }
    let (mut storages, mut kernels) = (Vec::new(), Vec::new());
    for (k, stage) in split.stages.iter().enumerate() {
        let at = &stage.term;
        let storage = storage(&stage.ty, at, &mut |leaf, dims, s| {
            check_buffer(limits, "a stage's buffer", dims, s)
                .map_err(|e| SignatureError::Size(at.span(), e))?;
            Ok(format!("%stage{k}_{leaf}"))
        })?;
        kernels.push(stage_kernels(&mut structured, &stage.term, &storage)?);
        // A stage's array is plain data of known sizes, which the loop program
        // reads; were it not, a later stage reading it would be loops.
        let _ = structured.bind(stage.var.id, &storage, &stage.ty);
        aliases.resolve(stage.var.id, |alias, of| structured.alias(alias, of));
        storages.push(storage);
    }
    kernels.push(stage_kernels(&mut structured, &split.result, &sig.out)?);
    Ok(Plan::Staged(StagedPlan {
        why: why.to_string(),
        split,
        storages,
        kernels,
        program: structured.into_program(),
    }))
}

/// How many kernels one stage has in the loop program (reads at indices not affine in
/// the loops computed in their bodies where they must be), or why it has none.
fn stage_kernels(
    structured: &mut StageBuilder,
    term: &Term,
    out: &Storage,
) -> Result<usize, SignatureError> {
    match structured
        .stage(term, out, false)
        .or_else(|_| structured.stage(term, out, true))
    {
        Ok(kernels) => Ok(kernels.len()),
        Err(why) => Err(refused(term, why)),
    }
}

/// Why `at` has no loop program, as the signature's error: a buffer over the limits
/// is that error.
fn refused(at: &Term, why: NotStructured) -> SignatureError {
    match why.too_large {
        Some(e) => SignatureError::Size(at.span(), e),
        None => SignatureError::Unsupported(at.span(), why.why),
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
