//! The loop nests of a low-level RISE program as the cost model reads them: its loops
//! (how many times each runs, sequential, parallel, unrolled, reductions), the
//! operations each loop's body performs (scalar or on vectors of how many lanes), and
//! every memory access with how its address moves with each loop around it.
//!
//! They are read off the program's loop program ([`crate::loop_program`]), the one the
//! bridge compiles: each kernel's schedule is a nest of loops, outermost first (a
//! loop over the lanes of a vector is the lanes of its accesses and operations, not a
//! loop); each operand is an access in the innermost loop, its address the operand's
//! affine index in the kernel's dimensions, row-major in its buffer; the body's
//! operations (and a reduction's `⊕`) are the innermost loop's work. A reduction whose
//! loops have other loops inside them keeps its accumulator in a block of its output,
//! updated in place; one innermost in its kernel keeps it in a register, and the
//! output is written once, in the loop around the reduction.
//!
//! A program with no loop program (`scanSeq`, say: the bridge refuses it too), or
//! with GPU maps, has no loop nests: the model does not guess what it does not read.

use crate::limits::Limits;
use crate::loop_program::{self, Kernel, LoopProgram, Operand, Plan, ScalarExpr, Signature};
use crate::prim::Prim;
use crate::term::{Expr, Term};

/// A loop of the nests (its position in [`Nests::loops`]).
pub type LoopId = u32;

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
    /// A loop of a copy or a fill the bridge adds (a padded operand), whose schedule
    /// is the bridge's.
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
pub struct Nests {
    /// Its loops; a loop's parent comes before it.
    pub loops: Vec<Loop>,
    /// Its memory accesses.
    pub accesses: Vec<Access>,
    /// Its buffers.
    pub buffers: Vec<Buffer>,
    /// The work outside all loops.
    pub work: Work,
}

impl Nests {
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

/// Why a program has no loop nests the model reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NestsError {
    /// The program is not a closed function of concrete sizes, has no loop program
    /// (the bridge refuses it too), or has loops the CPU does not run (GPU maps).
    #[error("the cost model cannot read this program: {0}")]
    Unsupported(String),
}

/// The loop nests of `program`, a closed, typed, low-level function with concrete sizes
/// (`fun(x1 => ... => body)`): those of its loop program.
///
/// ```
/// use elevate_rise::{Program, search::loop_nests::{loop_nests, LoopKind}};
/// let p = Program::load("def f(x: 64.f32) = x |> mapSeq(fun(v => v * 2.0))", None).unwrap();
/// let t = loop_nests(&p.entry().term).unwrap();
/// assert_eq!(t.loops.len(), 1);
/// assert_eq!((t.loops[0].trips, t.loops[0].kind), (64, LoopKind::Seq));
/// assert_eq!(t.ops(), 64.0);
/// // Reads x[i] and writes out[i]: both move one element per step.
/// assert!(t.accesses.iter().all(|a| a.stride(0) == 1));
/// ```
pub fn loop_nests(program: &Term) -> Result<Nests, NestsError> {
    let limits = Limits::default();
    let unsupported = NestsError::Unsupported;
    if let Expr::NatLambda(..) = program.expr() {
        return Err(unsupported(
            "a function of sizes (instantiate it at concrete sizes)".into(),
        ));
    }
    let sig = Signature::of(program, &limits).map_err(|e| unsupported(e.to_string()))?;
    let plan = loop_program::plan(&sig, &limits).map_err(|e| unsupported(e.to_string()))?;
    let program = match plan {
        Plan::Whole(program, _) => program,
        Plan::Staged(staged) => staged.program,
    };
    from_program(&program)
}

/// The loop nests of a loop program.
pub fn from_program(program: &LoopProgram) -> Result<Nests, NestsError> {
    let mut nests = Nests {
        buffers: program
            .buffers
            .iter()
            .map(|b| Buffer {
                elements: b.dims.iter().product(),
                bytes: b.scalar.bytes() as u32,
                role: if b.name.starts_with("%arg") {
                    Role::Input
                } else if b.name.starts_with("%out") {
                    Role::Output
                } else {
                    Role::Computed
                },
            })
            .collect(),
        ..Nests::default()
    };
    for kernel in &program.kernels {
        add_kernel(&mut nests, kernel)?;
    }
    Ok(nests)
}

/// A loop of a kernel: the dimension it walks, its step in it, and what it is.
struct KernelLoop {
    dim: usize,
    step: i64,
    trips: i64,
    kind: LoopKind,
    array_acc: bool,
}

/// A kernel's vector lanes: the dimension, the step and how many.
type Lanes = Option<(usize, i64, i64)>;

/// The loops of `k`, outermost first, and its vector lanes, if it has any.
fn kernel_loops(k: &Kernel) -> Result<(Vec<KernelLoop>, Lanes), NestsError> {
    use loop_program::LoopKind as K;
    let mut loops = Vec::new();
    let mut lanes = None;
    for s in &k.schedule {
        let kind = match s.kind {
            K::Seq => LoopKind::Seq,
            K::Par => LoopKind::Par,
            K::Unroll => LoopKind::Unroll,
            K::Reduce => LoopKind::Reduce,
            K::ReduceUnroll => LoopKind::ReduceUnroll,
            K::Lane => {
                lanes = Some((s.dim, s.step, s.trips));
                continue;
            }
            K::Gpu(level, _) => {
                return Err(NestsError::Unsupported(format!(
                    "`{}` is a GPU map, which no CPU loop runs",
                    level.map()
                )));
            }
        };
        loops.push(KernelLoop {
            dim: s.dim,
            step: s.step,
            trips: s.trips,
            kind,
            array_acc: s.array_acc,
        });
    }
    // What the schedule does not walk (a copy the bridge adds has no schedule), inside.
    for (d, dim) in k.dims.iter().enumerate() {
        let walked: i64 = k
            .schedule
            .iter()
            .filter(|s| s.dim == d)
            .map(|s| s.trips.max(1))
            .fold(1, i64::saturating_mul);
        if walked < dim.extent {
            let kind = match (k.free, dim.reduction) {
                (true, _) => LoopKind::Copy,
                (false, true) => LoopKind::Reduce,
                (false, false) => LoopKind::Seq,
            };
            let trips = (dim.extent + walked - 1) / walked;
            loops.push(KernelLoop {
                dim: d,
                step: 1,
                trips,
                kind,
                array_acc: false,
            });
        }
    }
    Ok((loops, lanes))
}

fn add_kernel(t: &mut Nests, k: &Kernel) -> Result<(), NestsError> {
    let (loops, lanes) = kernel_loops(k)?;
    let first = t.loops.len() as LoopId;
    let ids: Vec<LoopId> = (0..loops.len() as LoopId).map(|i| first + i).collect();
    let lane_count = lanes.map_or(1, |(_, _, n)| n);
    for (i, l) in loops.iter().enumerate() {
        let accumulator = l.kind.reduction().then(|| {
            let inside = &loops[i + 1..];
            match l.array_acc || inside.iter().any(|m| !m.kind.reduction()) {
                true => Accumulator::Buffer {
                    buffer: k.out().buf,
                    elements: inside
                        .iter()
                        .filter(|m| !m.kind.reduction())
                        .map(|m| m.trips)
                        .fold(lane_count, i64::saturating_mul),
                },
                false => Accumulator::Register(lane_count as u32),
            }
        });
        t.loops.push(Loop {
            parent: i.checked_sub(1).map(|p| ids[p]),
            trips: l.trips,
            kind: l.kind,
            accumulator,
            work: Work::default(),
        });
    }
    let innermost = ids.last().copied();
    // Each loop of the kernel as an access sees it: its id, dimension and step.
    let walks: Vec<(LoopId, usize, i64)> = loops
        .iter()
        .zip(&ids)
        .map(|(l, id)| (*id, l.dim, l.step))
        .collect();
    let access = |o: &Operand, around: &[(LoopId, usize, i64)], write: bool| {
        operand_access(o, around, lanes, write)
    };
    for o in &k.inputs {
        t.accesses.push(access(o, &walks, false));
    }
    let register_acc = loops
        .iter()
        .position(|l| l.kind.reduction())
        .filter(|r| loops[*r..].iter().all(|l| l.kind.reduction()));
    for o in &k.outs {
        match register_acc {
            // Written once, around the reduction.
            Some(r) => t.accesses.push(access(o, &walks[..r], true)),
            None => {
                if k.reduction.is_some() {
                    t.accesses.push(access(o, &walks, false));
                }
                t.accesses.push(access(o, &walks, true));
            }
        }
    }
    // An accumulator block: filled with its start before the outermost reduction, and
    // loaded before and stored after an inner one (held in registers in between, where
    // it fits): a copy of its elements around each of those reductions.
    let mut outer_reduction = true;
    for (i, l) in loops.iter().enumerate() {
        if !matches!(
            t.loops[ids[i] as usize].accumulator,
            Some(Accumulator::Buffer { .. })
        ) {
            continue;
        }
        let mut around = walks[..i].to_vec();
        let mut parent = i.checked_sub(1).map(|p| ids[p]);
        for inner in loops[i + 1..].iter().filter(|m| !m.kind.reduction()) {
            t.loops.push(Loop {
                parent,
                trips: inner.trips,
                kind: LoopKind::Copy,
                accumulator: None,
                work: Work::default(),
            });
            let id = (t.loops.len() - 1) as LoopId;
            around.push((id, inner.dim, inner.step));
            parent = Some(id);
        }
        for o in &k.outs {
            if !outer_reduction {
                t.accesses.push(access(o, &around, false));
            }
            t.accesses.push(access(o, &around, true));
        }
        outer_reduction = outer_reduction && !l.kind.reduction();
    }
    // The body's operations, and each output's `⊕`.
    let mut ops = k.body.iter().map(operations).sum::<f64>();
    if let Some(loop_program::Reduction::Combine(..)) = k.reduction {
        ops += k.outs.len() as f64;
    }
    for e in &k.body {
        gathers(e, &mut |buf| {
            t.accesses.push(Access {
                owner: innermost,
                buffer: buf,
                via: vec![buf],
                offset: 0,
                strides: Vec::new(),
                lanes: 1,
                lane_stride: 1,
                write: false,
            })
        });
    }
    let work = match lanes {
        Some(_) => Work {
            scalar: 0.0,
            vector: ops,
            lanes: lane_count as u32,
        },
        None => Work {
            scalar: ops,
            ..Work::default()
        },
    };
    match innermost {
        Some(l) => t.loops[l as usize].work.add(&work),
        None => t.work.add(&work),
    }
    Ok(())
}

/// The access of operand `o` inside the loops `around` (`(loop, dimension, step)`,
/// outermost first: the last is its owner), `lanes` of it at once where the kernel has
/// vector lanes (`(dimension, step, lanes)`).
fn operand_access(
    o: &Operand,
    around: &[(LoopId, usize, i64)],
    lanes: Lanes,
    write: bool,
) -> Access {
    let (offset, per_dim) = o.address();
    let moves = |dim: usize, step: i64| {
        per_dim
            .iter()
            .filter(|(d, _)| *d == dim)
            .map(|(_, k)| k.saturating_mul(step))
            .sum::<i64>()
    };
    let strides = around
        .iter()
        .map(|(id, dim, step)| (*id, moves(*dim, *step)))
        .filter(|(_, s)| *s != 0)
        .collect();
    Access {
        owner: around.last().map(|(id, _, _)| *id),
        buffer: o.buf,
        via: vec![o.buf],
        offset,
        strides,
        lanes: lanes.map_or(1, |(_, _, n)| n),
        lane_stride: lanes.map_or(1, |(d, s, _)| moves(d, s)),
        write,
    }
}

/// The arithmetic operations of a kernel body's expression, each in operations of its
/// width: a division or a square root costs 4, an exponential 10 (the bridge computes
/// `exp` as a polynomial), a cast 1 (a float's to an integer 8: the bridge saturates
/// it to the integer's range), any other operation 1.
fn operations(e: &ScalarExpr) -> f64 {
    let cost = |p: Prim| match p {
        Prim::Div | Prim::Mod | Prim::Sqrt => 4.0,
        Prim::Exp => 10.0,
        _ => 1.0,
    };
    let mut n = 0.0;
    // (Each distinct operation once: the kernel computes a shared value once.)
    for e in e.nodes() {
        n += match e {
            ScalarExpr::Bin(p, ..) | ScalarExpr::Un(p, _) | ScalarExpr::Checked { op: p, .. } => {
                cost(*p)
            }
            ScalarExpr::Pick(..) => 1.0,
            ScalarExpr::Cast(x, to) if x.scalar().is_float() && !to.is_float() => 8.0,
            ScalarExpr::Cast(..) => 1.0,
            _ => 0.0,
        };
    }
    n
}

/// Calls `read` with the buffer of each gather in `e` (a read at an index computed
/// from data).
fn gathers(e: &ScalarExpr, read: &mut dyn FnMut(usize)) {
    for e in e.nodes() {
        if let ScalarExpr::Gather(g) = e {
            read(g.buf);
        }
    }
}
