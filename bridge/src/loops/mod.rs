//! Typed RISE with concrete sizes → a function body of explicit loops (`scf`,
//! `memref`, `arith`, `math`, `vector`), as operations ([`crate::ir`]).
//!
//! The translation follows the data: array-reshaping primitives (`split`, `join`,
//! `transpose`, `slide`, `zip`, `pad*`, `take`, `drop`, `generate`, and `map` itself)
//! are *views*, index functions that cost nothing until an element is read (the
//! reshaping ones read through `elevate_rise::view`, the one view algebra the
//! interpreter and the structured translation read too); the
//! low-level primitives decide where loops and memory are: `mapSeq`/`mapPar` write
//! every element into a buffer (`scf.for`/`scf.parallel` over `memref.store`), a
//! reduction is a loop carrying its accumulator, `toMem` and `let` materialize, and
//! every buffer is freed where its region ends. The entry point takes scalars as values
//! and other data as one memref per scalar leaf ([`crate::boundary`]), and writes its
//! result into memref arguments after them. Integer divisions guard their divisor and
//! record a trap ([`crate::payload::Payload::traps`]).
//!
//! | module | holds |
//! |---|---|
//! | `value` | values (SSA scalars and vectors, array views, pairs, functions) |
//! | `emitter` | the generator's state: operations, names, regions, loops, the trap record |
//! | `gen` | buffers, and terms to values |
//! | `primitives` | each primitive as a view, a loop or an operation |
//! | `views` | the reshaping primitives' views, read with index values |
//! | `arith` | arithmetic, comparisons, casts, guarded divisions, the flop count |

mod arith;
mod emitter;
mod gen;
mod primitives;
mod value;
mod views;

use crate::boundary::TrapSite;
use crate::boundary::{Param, Signature, Storage};
use crate::error::Error;
use crate::ir::Op;
use crate::loop_program::env::bind;
use elevate_rise::limits::Limits;
use emitter::Gen;
pub use emitter::MAX_LOOP_DEPTH;
use value::{Env, Val};

/// A function body as explicit loops.
pub(crate) struct Body {
    /// Its operations (without the function around them).
    pub(crate) ops: Vec<Op>,
    /// Its floating-point operations.
    pub(crate) flops: u64,
    /// The operations that may trap, in the order of their codes.
    pub(crate) traps: Vec<TrapSite>,
}

/// The body of the entry point `sig` as explicit loops: the whole program as one
/// stage.
pub(crate) fn translate(sig: &Signature, limits: &Limits) -> Result<Body, Error> {
    let mut stages = LoopStages::new(sig, limits);
    let ops = stages.stage(sig.body, &sig.out)?;
    let (flops, traps) = stages.finish();
    Ok(Body { ops, flops, traps })
}

/// Stages of a program ([`elevate_rise::loop_program::stages`]) as explicit loops, among stages the
/// structured translation gives `linalg`: one generator for all of them, so that their
/// names and trap codes are the function's.
pub(crate) struct LoopStages {
    g: Gen,
    env: Env,
}

impl LoopStages {
    /// Stages reading the parameters of `sig`.
    pub(crate) fn new(sig: &Signature, limits: &Limits) -> LoopStages {
        let mut stages = LoopStages {
            g: Gen::new(*limits),
            env: Default::default(),
        };
        for (id, ty, param) in &sig.params {
            let value = match param {
                Param::Scalar(arg, s) => Val::Scalar(arg.clone(), *s),
                Param::Data(storage) => stages.g.view(storage, ty, Vec::new()),
            };
            stages.env = bind(&stages.env, *id, value);
        }
        stages
    }

    /// Binds `id` to the array of type `ty` in `storage`.
    pub(crate) fn bind(&mut self, id: u64, storage: &Storage, ty: &elevate_rise::types::Type) {
        let value = self.g.view(storage, ty, Vec::new());
        self.env = bind(&self.env, id, value);
    }

    /// Binds `alias` to what `of` is bound to.
    pub(crate) fn alias(&mut self, alias: u64, of: u64) {
        if let Some(value) = crate::loop_program::env::lookup(&self.env, of) {
            self.env = bind(&self.env, alias, value);
        }
    }

    /// The operations that write `term`'s value into `out` (and free what they
    /// allocate).
    pub(crate) fn stage(
        &mut self,
        term: &elevate_rise::Term,
        out: &Storage,
    ) -> Result<Vec<Op>, Error> {
        let value = self.g.expr(term, &self.env)?;
        self.g.store(&value, out, &[], term)?;
        self.g.free_region();
        if let Some(region) = self.g.allocations.first_mut() {
            region.clear();
        }
        Ok(self
            .g
            .blocks
            .first_mut()
            .map(std::mem::take)
            .unwrap_or_default())
    }

    /// The floating-point operations of the stages, and the operations that may trap.
    pub(crate) fn finish(self) -> (u64, Vec<TrapSite>) {
        (self.g.flops, self.g.traps)
    }
}
