//! What a low-level RISE program does, as a cost model needs it: its loops (how many
//! times each runs, sequential, parallel, unrolled, reductions), the operations each
//! loop's body performs (scalar or on vectors of how many lanes), and every memory
//! access with how its address moves with each loop around it.
//!
//! The program is evaluated once, abstractly, as the bridge's explicit-loops
//! translation would run it: reshaping primitives are index functions, `mapSeq`,
//! `mapPar`, `mapSeqUnroll` write each element into a buffer, reductions carry their
//! accumulator (a register for scalars and vectors, a buffer for arrays), `toMem` and
//! `let` materialize, vectors are loads of lanes. Each loop's body is evaluated once,
//! at the point where every counter is 0, with indices that carry how they move when
//! each counter moves ([`Idx`]): a loop of a million iterations costs one evaluation.
//!
//! Where the bridge's `linalg` translation writes a result directly where it belongs,
//! so does this: a loop nested in another writes its part of the outer loop's buffer,
//! and an array that only rearranges the elements of one computed buffer is not copied
//! again when stored (the loops write it in their own order).

mod eval;
mod index;
mod prims;
mod run;
mod store;

pub use index::{Idx, LoopId};

use crate::term::Term;

/// How a loop runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopKind {
    /// `mapSeq`
    Seq,
    /// `mapPar`: its iterations run on the machine's cores.
    Par,
    /// `mapSeqUnroll`
    Unroll,
    /// `reduceSeq`
    Reduce,
    /// `reduceSeqUnroll`
    ReduceUnroll,
    /// An element-wise copy the program implies (storing a computed view).
    Copy,
}

impl LoopKind {
    /// Whether the compiled loop is unrolled (no loop left at run time).
    pub fn unrolled(self) -> bool {
        matches!(self, LoopKind::Unroll | LoopKind::ReduceUnroll)
    }

    /// Whether it is a reduction.
    pub fn reduction(self) -> bool {
        matches!(self, LoopKind::Reduce | LoopKind::ReduceUnroll)
    }
}

/// Where a reduction keeps its accumulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accumulator {
    /// A scalar or a vector of this many lanes, in a register.
    Register(u32),
    /// An array of `elements` elements, in (a block of) `buffer`.
    Buffer {
        /// The buffer.
        buffer: usize,
        /// The accumulator's elements.
        elements: i64,
    },
}

/// A loop of the program.
#[derive(Debug, Clone)]
pub struct Loop {
    /// The loop around it.
    pub parent: Option<LoopId>,
    /// Its iterations.
    pub trips: i64,
    /// How it runs.
    pub kind: LoopKind,
    /// For a reduction, where its accumulator lives.
    pub accumulator: Option<Accumulator>,
    /// The work of one iteration in its own body (not in loops inside it).
    pub work: Work,
}

/// Arithmetic operations.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Work {
    /// Operations on scalars.
    pub scalar: f64,
    /// Operations on vectors, and their lanes (0 when there are none).
    pub vector: f64,
    /// The lanes of the vector operations.
    pub lanes: u32,
}

impl Work {
    /// Lane operations in all: what a flop count counts.
    pub fn ops(&self) -> f64 {
        self.scalar + self.vector * f64::from(self.lanes.max(1))
    }

    fn add(&mut self, other: &Work) {
        self.scalar += other.scalar;
        self.vector += other.vector;
        self.lanes = self.lanes.max(other.lanes);
    }
}

/// A buffer: an input, the output, or one the program computes.
#[derive(Debug, Clone)]
pub struct Buffer {
    /// Its elements.
    pub elements: i64,
    /// The bytes of one element.
    pub bytes: u32,
    /// What it is.
    pub role: Role,
    /// The loop at each iteration of which it is allocated (and freed), if any.
    pub allocated_in: Option<LoopId>,
}

/// What a buffer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A parameter's data.
    Input,
    /// The result.
    Output,
    /// Computed by the program.
    Computed,
}

/// One memory access in the body of a loop (or outside all loops).
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    /// The innermost loop around it.
    pub owner: Option<LoopId>,
    /// The buffer (after the buffers written in place of a part of another are
    /// resolved to that other).
    pub buffer: usize,
    /// The buffers on the way: the one the program named first, then each it is
    /// written as a part of (an accumulator's own buffer is among them).
    pub via: Vec<usize>,
    /// The element at the point where every counter is 0.
    pub offset: i64,
    /// `(loop, elements)`: how far the address moves per step of each loop.
    pub strides: Vec<(LoopId, i64)>,
    /// Lanes accessed at once (1 for a scalar).
    pub lanes: i64,
    /// Elements between two lanes (1: a vector load or store; 0: a broadcast).
    pub lane_stride: i64,
    /// Whether it writes.
    pub write: bool,
}

impl Access {
    /// How far the address moves per step of loop `l`, in elements.
    pub fn stride(&self, l: LoopId) -> i64 {
        self.strides
            .iter()
            .find(|(k, _)| *k == l)
            .map_or(0, |(_, s)| *s)
    }
}

/// What a program does (see the [module](self) documentation).
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// Its loops; a loop's parent comes before it.
    pub loops: Vec<Loop>,
    /// Its memory accesses.
    pub accesses: Vec<Access>,
    /// Its buffers.
    pub buffers: Vec<Buffer>,
    /// The work outside all loops.
    pub work: Work,
}

impl Trace {
    /// How many times loop `l`'s body runs in all (its trips times those of the loops
    /// around it).
    pub fn iterations(&self, l: LoopId) -> f64 {
        let mut n = 1.0;
        let mut at = Some(l);
        while let Some(k) = at {
            let lp = &self.loops[k as usize];
            n *= lp.trips as f64;
            at = lp.parent;
        }
        n
    }

    /// The loops from `l` out to the outermost.
    pub fn path(&self, l: Option<LoopId>) -> Vec<LoopId> {
        let mut out = Vec::new();
        let mut at = l;
        while let Some(k) = at {
            out.push(k);
            at = self.loops[k as usize].parent;
        }
        out
    }

    /// The lane operations of the whole program.
    pub fn ops(&self) -> f64 {
        let loops: f64 = (0..self.loops.len())
            .map(|l| self.loops[l].work.ops() * self.iterations(l as LoopId))
            .sum();
        loops + self.work.ops()
    }
}

/// Why a program has no trace.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    /// The program is not a closed function of concrete sizes, or uses something the
    /// CPU code has no loops for.
    #[error("the cost model cannot read this program: {0}")]
    Unsupported(String),
    /// Reading it would take too long.
    #[error("the program is too large for the cost model ({0} evaluation steps)")]
    TooLarge(u64),
}

/// The most evaluation steps a trace may take (a program's body is evaluated once,
/// so this is about the size of the program times the depth of its views).
pub const MAX_STEPS: u64 = 5_000_000;

/// The trace of `program`, a closed, typed, low-level function with concrete sizes
/// (`fun(x1 => ... => body)`).
///
/// ```
/// use elevate_rise::{Program, search::loop_trace::{trace, LoopKind}};
/// let p = Program::load("def f(x: 64.f32) = x |> mapSeq(fun(v => v * 2.0))", None).unwrap();
/// let t = trace(&p.entry().term).unwrap();
/// assert_eq!(t.loops.len(), 1);
/// assert_eq!((t.loops[0].trips, t.loops[0].kind), (64, LoopKind::Seq));
/// assert_eq!(t.ops(), 64.0);
/// // Reads x[i] and writes out[i]: both move one element per step.
/// assert!(t.accesses.iter().all(|a| a.stride(0) == 1));
/// ```
pub fn trace(program: &Term) -> Result<Trace, TraceError> {
    trace_as(program, Translation::Structured)
}

/// Which of the bridge's two translations the trace follows where they differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Translation {
    /// `linalg` and a Transform script: each loop writes its results where they
    /// belong (a loop nested in another writes its part of the outer result, an array
    /// that only rearranges a computed buffer is not copied), an array accumulator is
    /// updated in place, starting from the block it starts from.
    Structured,
    /// Explicit loops: each loop writes a buffer of its own, storing an array copies
    /// it, `toMem` copies, and an array accumulator is computed into a buffer and
    /// copied back at each step.
    Loops,
}

/// The trace of `program` as the translation `translation` runs it.
///
/// ```
/// use elevate_rise::{Program, search::loop_trace::{trace_as, LoopKind, Translation}};
/// let p = Program::load("def f(x: 4.8.f32) = x |> mapSeq(mapSeq(fun(v => v * 2.0)))", None).unwrap();
/// let copies = |t: Translation| {
///     let t = trace_as(&p.entry().term, t).unwrap();
///     t.loops.iter().filter(|l| l.kind == LoopKind::Copy).count()
/// };
/// // Explicit loops copy each row the inner loop computes into the outer loop's
/// // buffer (one loop), and that buffer into the output (two).
/// assert_eq!((copies(Translation::Structured), copies(Translation::Loops)), (0, 3));
/// ```
pub fn trace_as(program: &Term, translation: Translation) -> Result<Trace, TraceError> {
    run::run(program, translation == Translation::Structured)
}
