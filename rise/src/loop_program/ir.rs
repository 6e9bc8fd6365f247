//! The loop program's types: buffers, kernels with their iteration dimensions,
//! operands (a buffer and its indexing in the dimensions), bodies, reductions and
//! schedules.

use super::eval::{LoopKind, ScalarExpr};
use super::from_data::checks;
use super::index::Var;
use crate::types::Scalar;
use crate::{prim::Prim, term::Literal};
use std::collections::BTreeMap;

/// A buffer's layout by the loops that write it: digit `(position, a, b)` is
/// `(position / a) mod b`, outermost first.
pub type Layout = Vec<(usize, i64, i64)>;

/// A buffer: a parameter, the result, or one a kernel writes.
#[derive(Clone, Debug)]
pub struct Buf {
    /// Its name: the argument that passes it, or the program's own.
    pub name: String,
    /// Its dimensions, outermost first (row-major).
    pub dims: Vec<i64>,
    /// Its elements.
    pub scalar: Scalar,
}

/// An iteration dimension of a kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Dim {
    /// Its iterations.
    pub extent: i64,
    /// Whether it is reduced (no output is indexed by it).
    pub reduction: bool,
}

/// `Σ coefficient * dimension + constant`: one index of an operand.
#[derive(Clone, Debug, PartialEq)]
pub struct DimExpr {
    /// `(dimension, coefficient)`
    pub terms: Vec<(usize, i64)>,
    /// The constant.
    pub c: i64,
}

/// A buffer as an operand: its dimensions possibly expanded (`memref.expand_shape`),
/// and the index of each (expanded) dimension.
#[derive(Clone, Debug, PartialEq)]
pub struct Operand {
    /// The buffer.
    pub buf: usize,
    /// For each dimension of the buffer, the sizes it is expanded into.
    pub expand: Vec<Vec<i64>>,
    /// The index of each (expanded) dimension, in the kernel's dimensions.
    pub map: Vec<DimExpr>,
    /// The part of each (expanded) dimension read: offset and size (a subview where
    /// it is not the whole).
    pub window: Vec<(i64, i64)>,
    /// Instead of the above, a view with one dimension per loop that indexes the
    /// buffer, where an index combines several (a convolution's `y + dy`).
    pub strided: Option<Strided>,
}

/// A view of a row-major buffer with one dimension per loop that indexes it: the
/// indices `Σ k * loop + c` of the buffer's dimensions are element `offset + Σ stride *
/// loop`. Loops that slide over the same buffer dimension (a pixel and a tap of a
/// window) are dimensions whose elements overlap, so that each index is one loop and
/// the operation stays a projected permutation (which vectorization needs).
#[derive(Clone, Debug, PartialEq)]
pub struct Strided {
    /// The first element, from the buffer's start.
    pub offset: i64,
    /// Each dimension's size and stride, in elements.
    pub dims: Vec<(i64, i64)>,
}

impl Operand {
    /// Whether a dimension of the buffer is expanded into several.
    pub fn expanded(&self) -> bool {
        self.strided.is_none() && self.expand.iter().any(|e| e.len() != 1)
    }

    /// Whether only part of the buffer is read.
    pub fn windowed(&self) -> bool {
        self.strided.is_none()
            && self
                .window
                .iter()
                .zip(self.shape())
                .any(|((offset, size), full)| *offset != 0 || *size != full)
    }

    /// The shape of the buffer as expanded, before any window.
    pub fn shape(&self) -> Vec<i64> {
        self.expand.iter().flatten().copied().collect()
    }

    /// Its first element (the one every dimension's index 0 reads), and how many
    /// elements it moves per step of each kernel dimension, `(dimension, elements)`: in
    /// its strided view where it has one, row-major in its (expanded) buffer elsewhere,
    /// a window's offset included.
    pub fn address(&self) -> (i64, Vec<(usize, i64)>) {
        let mut per_dim: Vec<(usize, i64)> = Vec::new();
        let mut offset = 0i64;
        let (starts, strides): (Vec<i64>, Vec<i64>) = match &self.strided {
            Some(view) => {
                offset = view.offset;
                (
                    vec![0; view.dims.len()],
                    view.dims.iter().map(|(_, s)| *s).collect(),
                )
            }
            None => {
                let shape = self.shape();
                let mut row_major = vec![1i64; shape.len()];
                for i in (0..shape.len().saturating_sub(1)).rev() {
                    row_major[i] = row_major[i + 1].saturating_mul(shape[i + 1]);
                }
                let mut starts: Vec<i64> = self.window.iter().map(|(start, _)| *start).collect();
                starts.resize(row_major.len(), 0);
                (starts, row_major)
            }
        };
        for ((e, start), stride) in self.map.iter().zip(starts).zip(strides) {
            // A plain index's offset is its window's; another's is its constant.
            offset = offset.saturating_add(e.c.saturating_add(start).saturating_mul(stride));
            for (d, k) in &e.terms {
                match per_dim.iter_mut().find(|(x, _)| x == d) {
                    Some((_, s)) => *s = s.saturating_add(k.saturating_mul(stride)),
                    None => per_dim.push((*d, k.saturating_mul(stride))),
                }
            }
        }
        (offset, per_dim)
    }

    /// The operand as a [`Strided`] view, where an index combines several loops or
    /// scales one, every coefficient is positive and `extent` gives each loop's range:
    /// its map becomes one loop per dimension, largest stride first; of dimensions
    /// with the same stride (a pixel and its window's tap), the one `depth` puts
    /// innermost in the schedule last, so that vector lanes over it read contiguous
    /// elements of the view's last dimension.
    pub fn into_strided(
        mut self,
        extent: impl Fn(usize) -> i64,
        depth: impl Fn(usize) -> usize,
    ) -> Operand {
        let plain = self
            .map
            .iter()
            .all(|e| e.terms.len() == 1 && e.terms[0].1 == 1);
        let positive = self.map.iter().all(|e| e.terms.iter().all(|(_, k)| *k > 0));
        if plain || !positive {
            return self;
        }
        let (offset, mut strides) = self.address();
        strides.sort_by_key(|(d, s)| (std::cmp::Reverse(*s), depth(*d)));
        self.map = strides
            .iter()
            .map(|(d, _)| DimExpr {
                terms: vec![(*d, 1)],
                c: 0,
            })
            .collect();
        self.strided = Some(Strided {
            offset,
            dims: strides.iter().map(|(d, s)| (extent(*d), *s)).collect(),
        });
        self
    }
}

/// One loop of the schedule: it walks dimension `dim` in steps of `step`.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduledLoop {
    /// The kernel dimension it walks.
    pub dim: usize,
    /// The dimension's elements per iteration.
    pub step: i64,
    /// Its iterations.
    pub trips: i64,
    /// How it runs.
    pub kind: LoopKind,
    /// Whether it is a reduction whose accumulator is an array (a block of the output).
    pub array_acc: bool,
}

/// A kernel: `out[...] = init ⊕ Σ body` (or `out[...] = body`, or a fold's
/// accumulators), its schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// Its iteration dimensions.
    pub dims: Vec<Dim>,
    /// What it reads.
    pub inputs: Vec<Operand>,
    /// What it writes: one buffer, or one per accumulator of a fold.
    pub outs: Vec<Operand>,
    /// Each output's value: `ScalarExpr::Load(k, [], _)` is input operand `k`; in a fold,
    /// `ScalarExpr::Acc(j, [], _)` is accumulator `j` before the step.
    pub body: Vec<ScalarExpr>,
    /// How its reduction dimensions combine, if it has any.
    pub reduction: Option<Reduction>,
    /// Its loops, outermost first.
    pub schedule: Vec<ScheduledLoop>,
    /// No loop of the program writes it (a copy or a fill the bridge adds: a padded
    /// operand, a result's rows read from a larger buffer): its schedule is the
    /// bridge's to choose.
    pub free: bool,
    /// Where the body reads at indices it computes ([`ScalarExpr::Gather`]: from data, or
    /// not affine in the loops): each loop's dimension, step and trip count (its counter
    /// is `(index(d) / step) mod trips`); empty elsewhere.
    pub counters: BTreeMap<Var, (usize, i64, i64)>,
    /// The inputs read through `toShared`: on the GPU, staged in each block's shared
    /// memory a tile of the reduction at a time.
    pub shared: Vec<usize>,
}

impl Kernel {
    /// Whether the body computes indices it reads at, or checks a division:
    /// operations the vectorizer does not take.
    pub fn checks(&self) -> bool {
        !self.counters.is_empty() || self.body.iter().any(checks)
    }

    /// The output of a kernel that is not a fold.
    pub fn out(&self) -> &Operand {
        &self.outs[0]
    }
}

/// How a kernel's reduction combines its elements.
#[derive(Clone, Debug, PartialEq)]
pub enum Reduction {
    /// `out = init ⊕ Σ body`: the operation and the start value.
    Combine(Prim, Literal),
    /// Each output starts at its constant and becomes its body at each step, in the
    /// order of the reduction loops (argmax's value and position).
    Fold(Vec<Literal>),
}
