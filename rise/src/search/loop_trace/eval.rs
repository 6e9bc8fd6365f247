//! The abstract evaluation behind [`super::trace`]: values, buffers, loops, and the
//! record of what each loop's body reads, writes and computes.

use super::index::{Idx, LoopId};
use super::{Access, Accumulator, Loop, LoopKind, Trace, TraceError, Work, MAX_STEPS};
use crate::term::Term;
use crate::types::{Scalar, Type};
use elevate_core::stack::guard;
use smallvec::SmallVec;
use std::rc::Rc;

pub(super) type R<T> = Result<T, TraceError>;

pub(super) fn unsupported<T>(what: impl Into<String>) -> R<T> {
    Err(TraceError::Unsupported(what.into()))
}

/// The most nodes one scalar expression may have when it is read (an expression that
/// reuses a shared subexpression again and again doubles at each level).
const MAX_EXPRESSION: usize = 100_000;

/// A load of a buffer element (or of a vector of lanes).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Load {
    pub(super) buf: usize,
    pub(super) off: Idx,
    pub(super) lanes: i64,
    pub(super) lane_stride: i64,
}

/// A scalar (or vector) computation: the loads it needs and its operations, as a tree
/// (shared subexpressions are shared, and read when the value is used).
#[derive(Clone, Debug)]
pub(super) struct Sc {
    node: Rc<Node>,
    /// 1 for a scalar, the lanes of a vector.
    pub(super) lanes: u32,
}

#[derive(Debug)]
enum Node {
    /// A literal, a scalar parameter, an accumulator in a register.
    Free,
    Load(Load),
    Op {
        cost: f64,
        kids: SmallVec<[Sc; 3]>,
    },
    Flat {
        loads: Vec<Load>,
        work: Work,
    },
}

impl Sc {
    pub(super) fn free(lanes: u32) -> Sc {
        Sc {
            node: Rc::new(Node::Free),
            lanes,
        }
    }

    pub(super) fn load(load: Load, lanes: u32) -> Sc {
        Sc {
            node: Rc::new(Node::Load(load)),
            lanes,
        }
    }

    /// An operation of `cost` on `kids`, as wide as the widest.
    pub(super) fn op(cost: f64, kids: &[&Sc]) -> Sc {
        let lanes = kids.iter().map(|k| k.lanes).max().unwrap_or(1);
        Sc::op_lanes(cost, lanes, kids)
    }

    pub(super) fn op_lanes(cost: f64, lanes: u32, kids: &[&Sc]) -> Sc {
        Sc {
            node: Rc::new(Node::Op {
                cost,
                kids: kids.iter().map(|k| (*k).clone()).collect(),
            }),
            lanes,
        }
    }

    pub(super) fn flat(loads: Vec<Load>, work: Work, lanes: u32) -> Sc {
        Sc {
            node: Rc::new(Node::Flat { loads, work }),
            lanes,
        }
    }
}

/// A value during the evaluation.
#[derive(Clone)]
pub(super) enum V {
    S(Sc),
    A(Arr),
    P(Rc<(V, V)>),
    F(Function),
    /// An `idx` value.
    I(Idx),
}

type Getter = Rc<dyn Fn(&mut Ev, Idx) -> R<V>>;
type Function = Rc<dyn Fn(&mut Ev, V) -> R<V>>;

/// An array: its length and how to read an element.
#[derive(Clone)]
pub(super) struct Arr {
    pub(super) len: i64,
    pub(super) get: Getter,
    /// Whether this is exactly the contents of a storage, as the loops wrote it.
    pub(super) natural: Option<Rc<Storage>>,
}

impl Arr {
    pub(super) fn new(len: i64, get: impl Fn(&mut Ev, Idx) -> R<V> + 'static) -> Arr {
        Arr {
            len,
            get: Rc::new(get),
            natural: None,
        }
    }

    pub(super) fn at(&self, ev: &mut Ev, i: Idx) -> R<V> {
        ev.tick()?;
        guard(|| (self.get)(ev, i))
    }
}

pub(super) fn fun(f: impl Fn(&mut Ev, V) -> R<V> + 'static) -> V {
    V::F(Rc::new(f))
}

pub(super) fn array(v: V) -> R<Arr> {
    match v {
        V::A(a) => Ok(a),
        _ => unsupported("an array was expected"),
    }
}

pub(super) fn scalar(v: V) -> R<Sc> {
    match v {
        V::S(s) => Ok(s),
        _ => unsupported("a scalar was expected"),
    }
}

/// Where data lives: one buffer per scalar leaf of its type, in row-major order of
/// the arrays above the leaf (and the lanes of a vector last).
#[derive(Debug)]
pub(super) enum Storage {
    /// A row-major block of `dims` starting at element `base` of a buffer.
    Leaf {
        buf: usize,
        dims: Rc<[i64]>,
        base: Idx,
    },
    Pair(Rc<Storage>, Rc<Storage>),
}

impl Storage {
    pub(super) fn leaves(&self, out: &mut Vec<(usize, Rc<[i64]>, Idx)>) {
        match self {
            Storage::Leaf { buf, dims, base } => out.push((*buf, dims.clone(), base.clone())),
            Storage::Pair(a, b) => {
                a.leaves(out);
                b.leaves(out);
            }
        }
    }
}

/// The element at `prefix` (outer positions first) of a row-major block of `dims`
/// starting at `base`.
pub(super) fn linear(base: &Idx, dims: &[i64], prefix: &[Idx]) -> Idx {
    let mut offset = base.clone();
    let mut stride: i64 = dims.iter().product();
    for (k, i) in prefix.iter().enumerate() {
        stride /= dims.get(k).copied().unwrap_or(1).max(1);
        offset = i.affine(stride, &offset);
    }
    offset
}

pub(super) fn scalar_bytes(s: Scalar) -> u32 {
    match s {
        Scalar::Bool => 1,
        Scalar::I32 | Scalar::F32 => 4,
        Scalar::I64 | Scalar::F64 => 8,
    }
}

/// A constant size.
pub(super) fn size(n: &crate::nat::Nat) -> R<i64> {
    n.as_const()
        .filter(|n| *n >= 0)
        .ok_or_else(|| TraceError::Unsupported(format!("the size {n} is not a known constant")))
}

struct RawAccess {
    owner: Option<LoopId>,
    buf: usize,
    off: Idx,
    lanes: i64,
    lane_stride: i64,
    write: bool,
}

/// The evaluation's state: what has been recorded so far.
pub(super) struct Ev {
    pub(super) trace: Trace,
    raw: Vec<RawAccess>,
    /// A buffer written as part of another: that one, and where the part starts.
    pub(super) alias: Vec<Option<(usize, Idx)>>,
    pub(super) stack: Vec<LoopId>,
    pub(super) steps: u64,
    /// Whether results are written where they belong and accumulators updated in
    /// place ([`super::Translation::Structured`]), rather than copied.
    pub(super) in_place: bool,
}

/// What [`Ev::restore`] goes back to.
pub(super) struct Snapshot {
    loops: usize,
    raw: usize,
    buffers: usize,
    alias: Vec<Option<(usize, Idx)>>,
    works: Vec<Work>,
    work: Work,
}

impl Ev {
    pub(super) fn new(in_place: bool) -> Ev {
        Ev {
            in_place,
            trace: Trace::default(),
            raw: Vec::new(),
            alias: Vec::new(),
            stack: Vec::new(),
            steps: 0,
        }
    }

    pub(super) fn tick(&mut self) -> R<()> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(TraceError::TooLarge(MAX_STEPS));
        }
        Ok(())
    }

    /// The state now, to evaluate something only to look at it.
    pub(super) fn snapshot(&self) -> Snapshot {
        Snapshot {
            loops: self.trace.loops.len(),
            raw: self.raw.len(),
            buffers: self.trace.buffers.len(),
            alias: self.alias.clone(),
            works: self.trace.loops.iter().map(|l| l.work).collect(),
            work: self.trace.work,
        }
    }

    pub(super) fn restore(&mut self, s: Snapshot) {
        self.trace.loops.truncate(s.loops);
        for (l, w) in self.trace.loops.iter_mut().zip(s.works) {
            l.work = w;
        }
        self.trace.work = s.work;
        self.raw.truncate(s.raw);
        self.trace.buffers.truncate(s.buffers);
        self.alias = s.alias;
    }

    /// Starts a loop of `trips` iterations inside the current one; its counter.
    pub(super) fn enter(&mut self, kind: LoopKind, trips: i64, acc: Option<Accumulator>) -> Idx {
        let id = self.trace.loops.len() as LoopId;
        self.trace.loops.push(Loop {
            parent: self.stack.last().copied(),
            trips,
            kind,
            accumulator: acc,
            work: Work::default(),
        });
        self.stack.push(id);
        Idx::counter(id)
    }

    pub(super) fn leave(&mut self) {
        self.stack.pop();
    }

    /// The loads and operations of `s`, each distinct load once.
    pub(super) fn flatten(&mut self, s: &Sc) -> R<(Vec<Load>, Work)> {
        let mut loads: Vec<Load> = Vec::new();
        let mut work = Work::default();
        let mut pending: Vec<&Sc> = vec![s];
        let mut seen = 0usize;
        while let Some(sc) = pending.pop() {
            seen += 1;
            if seen > MAX_EXPRESSION {
                return Err(TraceError::TooLarge(MAX_EXPRESSION as u64));
            }
            match &*sc.node {
                Node::Free => {}
                Node::Load(l) => {
                    if !loads.contains(l) {
                        loads.push(l.clone());
                    }
                }
                Node::Op { cost, kids } => {
                    if sc.lanes > 1 {
                        work.vector += cost;
                        work.lanes = work.lanes.max(sc.lanes);
                    } else {
                        work.scalar += cost;
                    }
                    pending.extend(kids.iter());
                }
                Node::Flat { loads: ls, work: w } => {
                    for l in ls {
                        if !loads.contains(l) {
                            loads.push(l.clone());
                        }
                    }
                    work.add(w);
                }
            }
        }
        Ok((loads, work))
    }

    /// Records that the current loop's body computes `s`: its loads and operations.
    pub(super) fn consume(&mut self, s: &Sc) -> R<()> {
        let (loads, work) = self.flatten(s)?;
        match self.stack.last() {
            Some(l) => self.trace.loops[*l as usize].work.add(&work),
            None => self.trace.work.add(&work),
        }
        for l in loads {
            self.record(l.buf, l.off, l.lanes, l.lane_stride, false);
        }
        Ok(())
    }

    pub(super) fn record(
        &mut self,
        buf: usize,
        off: Idx,
        lanes: i64,
        lane_stride: i64,
        write: bool,
    ) {
        self.raw.push(RawAccess {
            owner: self.stack.last().copied(),
            buf,
            off,
            lanes,
            lane_stride,
            write,
        });
    }
}

impl Ev {
    /// The trace, each access resolved to the buffer it is finally part of.
    pub(super) fn finish(mut self) -> Trace {
        let limit = self.alias.len();
        for raw in std::mem::take(&mut self.raw) {
            let (mut buf, mut off) = (raw.buf, raw.off);
            let mut via = vec![buf];
            for _ in 0..limit {
                let Some((to, base)) = &self.alias[buf] else {
                    break;
                };
                off = base.add(&off);
                buf = *to;
                via.push(buf);
            }
            self.trace.accesses.push(Access {
                owner: raw.owner,
                buffer: buf,
                via,
                offset: off.value,
                strides: off.steps.into_vec(),
                lanes: raw.lanes,
                lane_stride: raw.lane_stride,
                write: raw.write,
            });
        }
        self.trace
    }
}

/// The type inference gave `t`.
pub(super) fn typed(t: &Term) -> R<Type> {
    t.ty().cloned().ok_or_else(|| {
        TraceError::Unsupported("a node without a type (type-check it first)".into())
    })
}
