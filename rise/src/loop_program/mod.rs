//! The loop-nest program of a low-level RISE program ([`LoopProgram`]): its
//! buffers and its kernels, each a nest of loops over iteration dimensions, its
//! operands read and written at affine indices, its body a scalar expression, its
//! schedule the loops of the program, outermost first. No MLIR here: the `linalg`
//! emitter (`elevate_bridge`'s `linalg`) writes a program's kernels and their schedule.
//!
//! The program is evaluated symbolically (`eval`, `terms`): reshaping primitives
//! are index functions (`views`: [`crate::view`] read with affine indices, a
//! padding's condition decided by an index's range where it can be), computing
//! primitives record the loops they stand for, in the order the program nests them.
//! Each materialized array (`toMem` at the top level, and the result) becomes a
//! `kernel`: its loops grouped into iteration dimensions (loops whose counters only
//! ever appear together as the digits of one index are one tiled dimension:
//! `32*ib + i`), its operands' indexing maps (a buffer dimension indexed by several
//! dimensions is expanded), its body, its schedule (one loop per loop of the program,
//! with the step the program takes and the kind of loop it is).
//!
//! Before a kernel is built (`prepare`): a reduction over a flattened window
//! (`join` of a 3x3 neighbourhood) becomes one reduction loop per digit, so that each
//! is an affine index; a reduction inside another computation (a bias added to a dot
//! product, a softmax's maximum and sum) is computed by a kernel of its own into a
//! buffer indexed by what it depends on (once, however often it is read); a read
//! guarded by its bounds (`padCst`) becomes a read of a padded copy of the region it
//! reads, which a fill and a copy into a subview make; where that copy would be large,
//! the kernel is split into boxes of its output first (`boxes`: the interior reading
//! the array in place, slabs around it reading small padded copies, each box's sides
//! multiples of its tiles, so that every box keeps the program's loops). A reduction
//! the program unrolls (a window's taps) is computed in the kernel's body. A window no
//! operand is indexed by alone (pooling) gets an operand of the window's shape, as
//! linalg's pooling operations have. An array computed once and read at several
//! positions is computed where it is read.
//!
//! `select` on data is a choice in the kernel's body; a result of pairs (an array of
//! pairs is a pair of buffers) is a kernel per component; `concat` is a kernel per
//! part, each writing a part of the buffer. A reduction whose accumulator is a pair of
//! scalars (argmax, a softmax's running maximum and sum), or whose step is no
//! `acc ⊕ x`, is a fold (`fold`): one kernel with an output per scalar of the
//! accumulator, each starting at its start value (`start`), the body computing each
//! one's next value from all of them.
//!
//! A guard between computed values (`padCst` of a computed array, `padClamp`, a
//! `concat` or an array literal read across its parts) is read from a buffer of its
//! own, written box by box so that each kernel computes one branch where it is
//! defined (`guards`). A read at an index computed from data (`natAsIndex`) is a
//! gather the kernel's body computes (`from_data`).
//!
//! A program outside this fragment (a vector of more lanes than a kernel takes, ...)
//! is reported as [`NotStructured`] with the reason; the plan then tries it stage by
//! stage ([`StageBuilder`]), and where a stage is outside the fragment too, the
//! program is an error that says why.

mod boxes;
pub mod deep_rc;
pub mod env;
mod eval;
mod fold;
mod fragment;
mod from_data;
mod guards;
mod index;
mod ir;
mod kernel;
mod materialize;
mod plan;
mod prepare;
mod print;
mod scalar;
mod signature;
pub mod stages;
mod start;
mod terms;
mod views;

pub use eval::{Gathered, GpuLevel, LoopKind, ScalarExpr};
pub use fragment::NotStructured;
pub use index::{Aff, Atom, Var};
pub use ir::{Buf, Dim, DimExpr, Kernel, Operand, Reduction, ScheduledLoop, Strided};
pub use plan::{plan, Aliases, Plan, StagedPlan};
pub use scalar::{can_trap, safe_divisor};
pub use signature::{
    check_buffer, is_array_data, storage, NameLeaf, Param, Signature, SignatureError, Storage,
    MAX_VECTOR_LANES,
};

use crate::limits::Limits;
use crate::types::Type;
use eval::{not_structured, Structuring, SymArray, SymValue, SymbolicEvaluator};
use kernel::Builder;
use std::rc::Rc;

/// A program's loop nests: its buffers (parameters, stages, the result, and its own)
/// and its kernels, in the order they run.
pub struct LoopProgram {
    /// Every buffer a kernel reads or writes (a kernel names them by position).
    pub buffers: Vec<Buf>,
    /// The kernels, in the order they run.
    pub kernels: Vec<Kernel>,
    /// The buffers the program allocates itself: not a parameter, a stage or the
    /// result, and written by a kernel.
    pub own: Vec<usize>,
}

/// The loop program of the entry point `sig` as one stage, and how many kernels it
/// has; or why it has none. With `reads_in_body`, a read at an index not affine in
/// the loops is a load in its kernel's body ([`StageBuilder::stage`]).
pub fn whole(
    sig: &Signature,
    limits: &Limits,
    reads_in_body: bool,
) -> Structuring<(LoopProgram, usize)> {
    let mut stages = StageBuilder::new(sig, limits)?;
    let kernels = stages.stage(sig.body, &sig.out, reads_in_body)?.len();
    Ok((stages.into_program(), kernels))
}

/// The structured translation of a program one stage at a time
/// (the bridge's stages): a stage it cannot express is rolled back (the plan then
/// tries the program whole, its reads in the kernels' bodies).
pub struct StageBuilder {
    builder: Builder,
    env: terms::Env,
    /// The buffers that are not the program's own: parameters, stages, the result.
    external: std::collections::HashSet<String>,
}

impl StageBuilder {
    /// A builder with the parameters of `sig` bound, or why its parameters are not
    /// arrays the structured translation reads.
    pub fn new(sig: &Signature, limits: &Limits) -> Result<StageBuilder, NotStructured> {
        let mut stages = StageBuilder {
            builder: Builder::new(*limits),
            env: Default::default(),
            external: Default::default(),
        };
        for (id, ty, param) in &sig.params {
            match param {
                Param::Scalar(arg, s) => {
                    let value = SymValue::Scalar(ScalarExpr::Param(arg.clone(), *s).shared());
                    stages.env = crate::loop_program::env::bind(&stages.env, *id, value);
                }
                Param::Data(storage) => stages.bind(*id, storage, ty)?,
            }
        }
        Ok(stages)
    }

    /// Binds `id` to the array of type `ty` in `storage`.
    pub fn bind(&mut self, id: u64, storage: &Storage, ty: &Type) -> Structuring<()> {
        self.external.extend(leaf_names(storage));
        let value = data(&mut self.builder, storage, ty)?;
        self.env = crate::loop_program::env::bind(&self.env, id, value);
        Ok(())
    }

    /// Binds `alias` to what `of` is bound to.
    pub fn alias(&mut self, alias: u64, of: u64) {
        if let Some(value) = crate::loop_program::env::lookup(&self.env, of) {
            self.env = crate::loop_program::env::bind(&self.env, alias, value);
        }
    }

    /// The kernels that write `term`'s value into `out` (their numbers), or why there
    /// are none: then nothing of the stage is kept. With `reads_in_body`, a read at an
    /// index that is not affine in the loops (a position walked as digits that do not
    /// divide it) is a load in the kernel's body, which computes the index; without,
    /// it is a reason to try the program's stages apart first, whose buffers may read
    /// affinely (as they lie) where the whole program's do not (as its loops nest).
    pub fn stage(
        &mut self,
        term: &crate::Term,
        out: &Storage,
        reads_in_body: bool,
    ) -> Result<std::ops::Range<usize>, NotStructured> {
        let b = &self.builder;
        let (bufs, kernels, reductions) = (b.bufs.len(), b.kernels.len(), b.reductions.len());
        self.builder.reads_in_body = reads_in_body;
        let staged = self.try_stage(term, out);
        self.builder.reads_in_body = false;
        match staged {
            Ok(()) => Ok(kernels..self.builder.kernels.len()),
            Err(why) => {
                self.builder.bufs.truncate(bufs);
                self.builder.kernels.truncate(kernels);
                self.builder.reductions.truncate(reductions);
                self.builder.scratch.retain(|b| *b < bufs);
                self.builder.unused.retain(|b| *b < bufs);
                Err(why)
            }
        }
    }

    fn try_stage(&mut self, term: &crate::Term, out: &Storage) -> Structuring<()> {
        self.external.extend(leaf_names(out));
        let mut ex = SymbolicEvaluator::default();
        let value = ex.expr(term, &self.env, &mut self.builder)?;
        self.write(&mut ex, value, out)
    }

    /// The kernels that write `value` into `out`: one per leaf of a value of pairs
    /// (each computes its component; the loops recorded are each kernel's).
    fn write(
        &mut self,
        ex: &mut SymbolicEvaluator,
        value: SymValue,
        out: &Storage,
    ) -> Structuring<()> {
        elevate_core::stack::guard(|| self.write_leaves(ex, value, out))
    }

    fn write_leaves(
        &mut self,
        ex: &mut SymbolicEvaluator,
        value: SymValue,
        out: &Storage,
    ) -> Structuring<()> {
        match out {
            Storage::Leaf { .. } => {
                let out = buffer_ids(&mut self.builder, out)[0].1;
                self.write_part(ex, value, out, 0)
            }
            Storage::Pair(a, b) => {
                let loops = ex.loops.clone();
                self.write(ex, component(&value, true)?, a)?;
                ex.loops = loops;
                self.write(ex, component(&value, false)?, b)
            }
        }
    }

    /// The program of every stage kept.
    pub fn into_program(self) -> LoopProgram {
        let own = (0..self.builder.bufs.len())
            .filter(|b| !self.external.contains(&self.builder.bufs[*b].name))
            .filter(|b| !self.builder.unused.contains(b))
            .collect();
        LoopProgram {
            buffers: self.builder.bufs,
            kernels: self.builder.kernels,
            own,
        }
    }
}

impl StageBuilder {
    /// The kernels that write `value` into buffer `out` from row `offset` on: a
    /// `concat` part by part, each a kernel into its rows (the loops recorded are each
    /// part's).
    fn write_part(
        &mut self,
        ex: &mut SymbolicEvaluator,
        value: SymValue,
        out: usize,
        offset: i64,
    ) -> Structuring<()> {
        // As deep as the program nests its `concat`s.
        elevate_core::stack::guard(|| self.write_part_at(ex, value, out, offset))
    }

    fn write_part_at(
        &mut self,
        ex: &mut SymbolicEvaluator,
        value: SymValue,
        out: usize,
        offset: i64,
    ) -> Structuring<()> {
        match &value {
            SymValue::Array(SymArray {
                parts: Some(parts), ..
            }) => {
                let (a, b) = (**parts).clone();
                let loops = ex.loops.clone();
                let after = offset.saturating_add(a.len);
                self.write_part(ex, SymValue::Array(a), out, offset)?;
                ex.loops = loops;
                self.write_part(ex, SymValue::Array(b), out, after)
            }
            _ => {
                self.builder.kernel_at(ex, value, out, false, offset)?;
                Ok(())
            }
        }
    }
}

/// The first or second component of a pair, or of each element of an array of pairs.
fn component(value: &SymValue, first: bool) -> Structuring<SymValue> {
    match value {
        SymValue::Pair(a, b) => Ok(if first { (**a).clone() } else { (**b).clone() }),
        SymValue::Array(xs) => {
            let xs = xs.clone();
            Ok(SymValue::Array(eval::SymArray::new(
                xs.len,
                move |ex, i| component(&xs.at(ex, i)?, first),
            )))
        }
        _ => not_structured("a component of something other than pairs"),
    }
}

/// The buffer names of a storage's leaves.
fn leaf_names(storage: &Storage) -> Vec<String> {
    elevate_core::stack::guard(|| match storage {
        Storage::Leaf { buffer, .. } => vec![buffer.clone()],
        Storage::Pair(a, b) => {
            let mut names = leaf_names(a);
            names.extend(leaf_names(b));
            names
        }
    })
}

/// A parameter's data: its memrefs as buffers, read as arrays.
fn data(builder: &mut Builder, storage: &Storage, ty: &Type) -> Structuring<SymValue> {
    fn plain(ty: &Type) -> bool {
        use crate::types::TypeKind;
        match ty.kind() {
            TypeKind::Array(n, e) => n.as_const().is_some() && plain(e),
            TypeKind::Pair(a, b) => plain(a) && plain(b),
            TypeKind::Scalar(_) => true,
            _ => false,
        }
    }
    if !plain(ty) {
        return not_structured(format!("a parameter of type {ty}"));
    }
    let bufs = buffer_ids(builder, storage);
    Ok(read(
        &SymbolicEvaluator::default(),
        &bufs,
        storage,
        ty,
        Vec::new(),
    ))
}

/// The buffer numbers of a storage's leaves, registering them once.
fn buffer_ids(builder: &mut Builder, storage: &Storage) -> Rc<Vec<(String, usize)>> {
    let mut out = Vec::new();
    fn walk(builder: &mut Builder, s: &Storage, out: &mut Vec<(String, usize)>) {
        match s {
            Storage::Leaf {
                buffer,
                dims,
                scalar,
            } => {
                // (An entry left by a stage that was rolled back names another buffer
                // or none.)
                let known = builder
                    .by_name
                    .get(buffer)
                    .copied()
                    .filter(|id| builder.bufs.get(*id).is_some_and(|b| &b.name == buffer));
                let id = match known {
                    Some(id) => id,
                    None => {
                        builder.bufs.push(Buf {
                            name: buffer.clone(),
                            dims: (**dims).clone(),
                            scalar: *scalar,
                        });
                        let id = builder.bufs.len() - 1;
                        builder.by_name.insert(buffer.clone(), id);
                        id
                    }
                };
                out.push((buffer.clone(), id));
            }
            Storage::Pair(a, b) => {
                walk(builder, a, out);
                walk(builder, b, out);
            }
        }
    }
    walk(builder, storage, &mut out);
    Rc::new(out)
}

/// The value of type `ty` in `storage` at `prefix`.
fn read(
    ex: &SymbolicEvaluator,
    bufs: &Rc<Vec<(String, usize)>>,
    storage: &Storage,
    ty: &Type,
    prefix: Vec<Aff>,
) -> SymValue {
    use crate::types::TypeKind;
    match (ty.kind(), storage) {
        (TypeKind::Array(n, e), _) => {
            let (bufs, storage, e) = (bufs.clone(), storage.clone(), e.clone());
            let n = n.as_const().unwrap_or(0);
            SymValue::Array(eval::SymArray::new(n, move |ex, i| {
                let mut p = prefix.clone();
                p.push(i.clone());
                Ok(read(ex, &bufs, &storage, &e, p))
            }))
        }
        (TypeKind::Pair(a, b), Storage::Pair(sa, sb)) => SymValue::Pair(
            Box::new(read(ex, bufs, sa, a, prefix.clone())),
            Box::new(read(ex, bufs, sb, b, prefix)),
        ),
        (_, Storage::Leaf { buffer, scalar, .. }) => {
            let id = bufs
                .iter()
                .find(|(b, _)| b == buffer)
                .map_or(0, |(_, id)| *id);
            SymValue::Scalar(ex.load(id, prefix, *scalar).shared())
        }
        _ => unreachable!("storage made for this type"),
    }
}
