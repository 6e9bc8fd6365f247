//! Symbolic evaluation of a low-level RISE program into loop nests.
//!
//! Arrays are index functions, as in the loop translation, but indices are symbolic
//! ([`Aff`]) and scalars are expression trees ([`ScalarExpr`]). Each computing primitive
//! records the loop it stands for, in the order the program nests them: `mapPar`,
//! `mapSeq`, `mapSeqUnroll` (one loop per element, its counter substituted by the
//! position where the element is read), `reduceSeq`, `reduceSeqUnroll` (a reduction
//! loop; the accumulator must be combined element-wise, `acc ⊕ x`, which gives the
//! closed form `init ⊕ Σ x`), and the lanes of `asVector` vectors. Anything else makes
//! the program "not structured", and the bridge translates it to explicit loops.

use super::index::{Aff, Extents, Var};
use crate::deep_rc::DeepRc;
use elevate_core::stack::guard;
use elevate_rise::nat::Nat;
use elevate_rise::prim::Prim;
use elevate_rise::term::Literal;
use elevate_rise::types::{Scalar, Type};
use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::rc::Rc;

/// Why a program is not a nest of structured operations (the bridge then emits loops).
#[derive(Debug, Clone)]
pub struct NotStructured(pub String);

pub(crate) type Structuring<T> = Result<T, NotStructured>;

pub(crate) fn not_structured<T>(why: impl Into<String>) -> Structuring<T> {
    Err(NotStructured(why.into()))
}

/// The most operations in one kernel's scalar expression: a kernel body is a few
/// operations; a longer expression (100,000 additions in a row, or a function applied
/// to itself until its expression tree is huge) is translated as loops, whose values
/// are SSA names rather than trees.
pub(crate) const MAX_EXPRESSION_SIZE: usize = 1000;

/// A constant size.
pub(crate) fn size(n: &Nat) -> Structuring<i64> {
    n.as_const()
        .ok_or_else(|| NotStructured(format!("the size {n} is not known")))
}

/// What `toMem`/`let` do with an array at the top level.
pub(crate) trait Materialize {
    fn materialize(
        &mut self,
        ex: &mut SymbolicEvaluator,
        value: SymValue,
        ty: &Type,
    ) -> Structuring<SymValue>;
}

/// Inside functions: nothing (the value is used where it is).
pub(crate) struct Inline;

impl Materialize for Inline {
    fn materialize(
        &mut self,
        _: &mut SymbolicEvaluator,
        value: SymValue,
        _: &Type,
    ) -> Structuring<SymValue> {
        Ok(value)
    }
}

/// What a recorded loop does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LoopKind {
    /// `mapPar`
    Par,
    /// `mapSeq`
    Seq,
    /// `mapSeqUnroll`
    Unroll,
    /// `reduceSeq`
    Reduce,
    /// `reduceSeqUnroll`
    ReduceUnroll,
    /// The lanes of a vector.
    Lane,
    /// `mapGlobal(d)`, `mapWorkGroup(d)`, `mapLocal(d)`: GPU threads, blocks, or
    /// threads of a block in dimension `d` (parallel loops on a CPU).
    Gpu(GpuLevel, u8),
}

/// What a GPU map's iterations run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GpuLevel {
    /// `mapGlobal`: threads across the whole grid.
    Global,
    /// `mapWorkGroup`: blocks.
    Block,
    /// `mapLocal`: the threads of a block.
    Thread,
}

impl LoopKind {
    /// Whether its iterations run in parallel (across threads, or on a GPU).
    pub(crate) fn is_parallel(self) -> bool {
        matches!(self, LoopKind::Par | LoopKind::Gpu(..))
    }

    pub(crate) fn is_reduction(self) -> bool {
        matches!(self, LoopKind::Reduce | LoopKind::ReduceUnroll)
    }
}

/// A loop of the program, as recorded.
#[derive(Clone, Debug)]
pub(crate) struct LoopRec {
    pub(crate) extent: i64,
    pub(crate) kind: LoopKind,
    /// The position its element was read at (maps and lanes).
    pub(crate) subst: Option<Aff>,
    /// A reduction whose accumulator is an array (a buffer block).
    pub(crate) array_acc: bool,
    /// Its elements are read at several positions: each read computes its element
    /// where it is read, so the loop is no loop of the kernel.
    pub(crate) shared: bool,
}

/// A scalar computed by the program, in terms of loop variables.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ScalarExpr {
    Lit(Literal),
    /// A scalar parameter of the function (its SSA name).
    Param(String, Scalar),
    /// An element of a buffer.
    Load(usize, Vec<Aff>, Scalar),
    /// An element of a reduction's accumulator, while its step is evaluated.
    Acc(u32, Vec<Aff>, Scalar),
    Bin(Prim, Box<ScalarExpr>, Box<ScalarExpr>),
    Un(Prim, Box<ScalarExpr>),
    /// `then` where every index `a` of `conds` is in `lo..hi`, `other` elsewhere
    /// (padding: the element of the array inside its bounds, the constant outside).
    Select {
        conds: Vec<(Aff, i64, i64)>,
        then: Box<ScalarExpr>,
        other: Box<ScalarExpr>,
    },
    /// `select(cond, then, other)` on values: `then` where `cond` holds, `other`
    /// elsewhere (`arith.select`).
    Pick(Box<ScalarExpr>, Box<ScalarExpr>, Box<ScalarExpr>),
    /// An integer division or remainder (`op`) whose divisor may be 0 (or -1, of the
    /// smallest dividend): checked in the kernel's body, where a trap is recorded for
    /// `span` and 1 divides instead.
    Checked {
        op: Prim,
        x: Box<ScalarExpr>,
        y: Box<ScalarExpr>,
        span: Option<elevate_rise::Span>,
    },
    /// An element of a buffer at an index computed from data ([`Gathered`]).
    Gather(Box<Gathered>),
    /// The value of an index of the kernel's loops, an `i64` (a fold's first step).
    Position(Aff),
    /// `init ⊕ Σ_{vars} body`
    Red {
        op: Prim,
        init: Box<ScalarExpr>,
        vars: Vec<Var>,
        body: Box<ScalarExpr>,
    },
    /// A reduction whose step is any function of its accumulators, which are one or
    /// more scalars (a pair: argmax's value and position, a softmax's running maximum
    /// and sum): accumulator `k` (`Acc(id + k, [])` in the steps) starts at `inits[k]`
    /// and becomes `steps[k]` at each position of `vars`, in order. Its value is
    /// accumulator `component`.
    Fold {
        id: u32,
        inits: Vec<ScalarExpr>,
        vars: Vec<Var>,
        steps: Vec<ScalarExpr>,
        component: usize,
    },
}

/// A read of buffer `buf` at `idx`, where some variables of the index are numbers
/// computed from data (`natAsIndex`): the kernel's body reads the buffer where it
/// lies (`memref.load`), its other variables being the kernel's loops.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Gathered {
    pub(crate) buf: usize,
    pub(crate) idx: Vec<Aff>,
    pub(crate) data: Vec<DataIndex>,
    pub(crate) scalar: Scalar,
}

/// Variable `var` of an index stands for `value` (an `i64` computed from data), which
/// must lie in `0..bound`: outside, the code records a trap for `span` and reads 0.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DataIndex {
    pub(crate) var: Var,
    pub(crate) value: ScalarExpr,
    pub(crate) bound: i64,
    pub(crate) span: Option<elevate_rise::Span>,
}

impl ScalarExpr {
    /// Whether a reduction, or an accumulator left over from one (other than a fold's
    /// own, where `fold`), is inside the expression.
    pub(crate) fn contains_reduction(&self, fold: bool) -> bool {
        match self {
            ScalarExpr::Acc(..) => !fold,
            ScalarExpr::Red { .. } | ScalarExpr::Fold { .. } => true,
            ScalarExpr::Bin(..)
            | ScalarExpr::Un(..)
            | ScalarExpr::Pick(..)
            | ScalarExpr::Gather(..)
            | ScalarExpr::Checked { .. } => self
                .children()
                .into_iter()
                .any(|c| c.contains_reduction(fold)),
            _ => false,
        }
    }

    /// The distinct loads of the expression, added to `out` in the order they first
    /// occur: each is a kernel operand, however often the body reads it (argmax reads
    /// its element three times).
    pub(crate) fn collect_loads(&self, out: &mut Vec<(usize, Vec<Aff>)>) {
        match self {
            ScalarExpr::Load(b, idx, _) if !out.iter().any(|(c, jdx)| c == b && jdx == idx) => {
                out.push((*b, idx.clone()));
            }
            ScalarExpr::Bin(..)
            | ScalarExpr::Un(..)
            | ScalarExpr::Pick(..)
            | ScalarExpr::Gather(..)
            | ScalarExpr::Checked { .. } => {
                for c in self.children() {
                    c.collect_loads(out);
                }
            }
            _ => {}
        }
    }

    /// The expression with each load replaced by its operand: its place in `loads`
    /// ([`ScalarExpr::collect_loads`]).
    pub(crate) fn number_loads(&self, loads: &[(usize, Vec<Aff>)]) -> ScalarExpr {
        match self {
            ScalarExpr::Load(b, idx, s) => {
                let k = loads
                    .iter()
                    .position(|(c, jdx)| c == b && jdx == idx)
                    .unwrap_or_default();
                ScalarExpr::Load(k, Vec::new(), *s)
            }
            ScalarExpr::Bin(..)
            | ScalarExpr::Un(..)
            | ScalarExpr::Pick(..)
            | ScalarExpr::Gather(..)
            | ScalarExpr::Checked { .. } => self.map_each(&mut |c| c.number_loads(loads)),
            other => other.clone(),
        }
    }

    /// `e`, if it has at most [`MAX_EXPRESSION_SIZE`] operations (counted without
    /// recursion, and no further than the limit).
    pub(crate) fn bounded(self) -> Structuring<ScalarExpr> {
        let mut pending = vec![&self];
        let mut count = 0;
        while let Some(e) = pending.pop() {
            count += 1;
            if count > MAX_EXPRESSION_SIZE {
                return not_structured(format!(
                    "a scalar expression of more than {MAX_EXPRESSION_SIZE} operations"
                ));
            }
            pending.extend(e.children());
        }
        Ok(self)
    }

    pub(crate) fn scalar(&self) -> Scalar {
        match self {
            ScalarExpr::Lit(l) => match l {
                Literal::Bool(_) => Scalar::Bool,
                Literal::I32(_) => Scalar::I32,
                Literal::I64(_) => Scalar::I64,
                Literal::F32(_) => Scalar::F32,
                Literal::F64(_) => Scalar::F64,
            },
            ScalarExpr::Position(_) => Scalar::I64,
            ScalarExpr::Param(_, s) | ScalarExpr::Load(_, _, s) | ScalarExpr::Acc(_, _, s) => *s,
            ScalarExpr::Gather(g) => g.scalar,
            ScalarExpr::Bin(p, a, _) => match p {
                Prim::Lt | Prim::Gt | Prim::Equal => Scalar::Bool,
                _ => a.scalar(),
            },
            ScalarExpr::Un(_, a) | ScalarExpr::Checked { x: a, .. } => a.scalar(),
            ScalarExpr::Red { init, .. } => init.scalar(),
            ScalarExpr::Fold {
                inits, component, ..
            } => inits[*component].scalar(),
            ScalarExpr::Select { then, .. } | ScalarExpr::Pick(_, then, _) => then.scalar(),
        }
    }

    pub(crate) fn map_indices(&self, f: &mut dyn FnMut(&Aff) -> Aff) -> ScalarExpr {
        let mapped = match self {
            ScalarExpr::Load(b, idx, s) => {
                ScalarExpr::Load(*b, idx.iter().map(&mut *f).collect(), *s)
            }
            ScalarExpr::Acc(a, idx, s) => {
                ScalarExpr::Acc(*a, idx.iter().map(&mut *f).collect(), *s)
            }
            ScalarExpr::Gather(g) => {
                let mut g = (**g).clone();
                g.idx = g.idx.iter().map(&mut *f).collect();
                for d in &mut g.data {
                    d.value = d.value.map_indices(f);
                }
                ScalarExpr::Gather(Box::new(g))
            }
            ScalarExpr::Position(a) => ScalarExpr::Position(f(a)),
            _ => self.map_each(&mut |c| c.map_indices(f)),
        };
        match mapped {
            ScalarExpr::Select { conds, then, other } => ScalarExpr::Select {
                conds: conds.iter().map(|(a, lo, hi)| (f(a), *lo, *hi)).collect(),
                then,
                other,
            },
            e => e,
        }
    }

    pub(crate) fn subst(&self, v: Var, e: &Aff, x: &dyn Extents) -> ScalarExpr {
        self.map_indices(&mut |a| a.subst(v, e, x))
    }

    /// The loops the reductions inside `self` (itself included) reduce over.
    pub(crate) fn reduction_vars(&self) -> BTreeSet<Var> {
        let mut vars = BTreeSet::new();
        let mut pending = vec![self];
        while let Some(e) = pending.pop() {
            if let ScalarExpr::Red { vars: vs, .. } | ScalarExpr::Fold { vars: vs, .. } = e {
                vars.extend(vs.iter().copied());
            }
            pending.extend(e.children());
        }
        vars
    }

    fn mentions_acc(&self, id: u32) -> bool {
        match self {
            ScalarExpr::Acc(a, _, _) => *a == id,
            e => e.children().into_iter().any(|c| c.mentions_acc(id)),
        }
    }

    /// The expressions directly inside `self`.
    pub(crate) fn children(&self) -> Vec<&ScalarExpr> {
        match self {
            ScalarExpr::Bin(_, a, b) | ScalarExpr::Checked { x: a, y: b, .. } => vec![a, b],
            ScalarExpr::Un(_, a) => vec![a],
            ScalarExpr::Red { init, body, .. } => vec![init, body],
            ScalarExpr::Fold { inits, steps, .. } => inits.iter().chain(steps).collect(),
            ScalarExpr::Select { then, other, .. } => vec![then, other],
            ScalarExpr::Pick(c, a, b) => vec![c, a, b],
            ScalarExpr::Gather(g) => g.data.iter().map(|d| &d.value).collect(),
            ScalarExpr::Lit(_)
            | ScalarExpr::Param(..)
            | ScalarExpr::Load(..)
            | ScalarExpr::Acc(..)
            | ScalarExpr::Position(_) => Vec::new(),
        }
    }

    /// [`ScalarExpr::map_children`] for an `f` that cannot fail.
    pub(crate) fn map_each(&self, f: &mut dyn FnMut(&ScalarExpr) -> ScalarExpr) -> ScalarExpr {
        self.map_children(&mut |c| Ok::<_, Infallible>(f(c)))
            .unwrap_or_else(|never| match never {})
    }

    /// `self` with each expression directly inside replaced by `f` of it.
    pub(crate) fn map_children<E>(
        &self,
        f: &mut dyn FnMut(&ScalarExpr) -> Result<ScalarExpr, E>,
    ) -> Result<ScalarExpr, E> {
        Ok(match self {
            ScalarExpr::Bin(p, a, b) => ScalarExpr::Bin(*p, Box::new(f(a)?), Box::new(f(b)?)),
            ScalarExpr::Un(p, a) => ScalarExpr::Un(*p, Box::new(f(a)?)),
            ScalarExpr::Checked { op, x, y, span } => ScalarExpr::Checked {
                op: *op,
                x: Box::new(f(x)?),
                y: Box::new(f(y)?),
                span: *span,
            },
            ScalarExpr::Red {
                op,
                init,
                vars,
                body,
            } => ScalarExpr::Red {
                op: *op,
                init: Box::new(f(init)?),
                vars: vars.clone(),
                body: Box::new(f(body)?),
            },
            ScalarExpr::Fold {
                id,
                inits,
                vars,
                steps,
                component,
            } => ScalarExpr::Fold {
                id: *id,
                inits: inits.iter().map(&mut *f).collect::<Result<_, E>>()?,
                vars: vars.clone(),
                steps: steps.iter().map(&mut *f).collect::<Result<_, E>>()?,
                component: *component,
            },
            ScalarExpr::Select { conds, then, other } => ScalarExpr::Select {
                conds: conds.clone(),
                then: Box::new(f(then)?),
                other: Box::new(f(other)?),
            },
            ScalarExpr::Pick(c, a, b) => {
                ScalarExpr::Pick(Box::new(f(c)?), Box::new(f(a)?), Box::new(f(b)?))
            }
            ScalarExpr::Gather(g) => {
                let mut g = (**g).clone();
                for d in &mut g.data {
                    d.value = f(&d.value)?;
                }
                ScalarExpr::Gather(Box::new(g))
            }
            ScalarExpr::Lit(_)
            | ScalarExpr::Param(..)
            | ScalarExpr::Load(..)
            | ScalarExpr::Acc(..)
            | ScalarExpr::Position(_) => self.clone(),
        })
    }
}

/// A value during symbolic evaluation.
#[derive(Clone)]
pub(crate) enum SymValue {
    Scalar(ScalarExpr),
    /// A vector: its lanes are the values of `elem` for `lane` in `0..n`.
    Vector {
        lane: Var,
        n: i64,
        elem: ScalarExpr,
    },
    Index(Aff),
    Array(SymArray),
    Pair(Box<SymValue>, Box<SymValue>),
    Fun(DeepRc<SFun>),
}

/// A function value.
pub(crate) fn sfun(
    f: impl Fn(&mut SymbolicEvaluator, SymValue) -> Structuring<SymValue> + 'static,
) -> SymValue {
    SymValue::Fun(DeepRc::new(Rc::new(f)))
}

pub(crate) type SFun = dyn Fn(&mut SymbolicEvaluator, SymValue) -> Structuring<SymValue>;
type SGet = dyn Fn(&mut SymbolicEvaluator, &Aff) -> Structuring<SymValue>;

/// An array: its length and its elements as a function of a symbolic index.
#[derive(Clone)]
pub(crate) struct SymArray {
    pub(crate) len: i64,
    pub(crate) get: DeepRc<SGet>,
    /// For `concat(a, b)`: its two parts, written into the two parts of a buffer by
    /// kernels of their own (an element read at a symbolic index is in neither part).
    pub(crate) parts: Option<Rc<(SymArray, SymArray)>>,
}

impl SymArray {
    pub(crate) fn new(
        len: i64,
        get: impl Fn(&mut SymbolicEvaluator, &Aff) -> Structuring<SymValue> + 'static,
    ) -> SymArray {
        SymArray {
            len,
            get: DeepRc::new(Rc::new(get)),
            parts: None,
        }
    }

    /// The element at `i`: views of views read through each other, as deep as the
    /// program nests them.
    pub(crate) fn at(&self, ex: &mut SymbolicEvaluator, i: &Aff) -> Structuring<SymValue> {
        guard(|| (self.get)(ex, i))
    }
}

impl SymValue {
    fn subst(&self, v: Var, e: &Aff, x: &dyn Extents) -> SymValue {
        match self {
            SymValue::Scalar(s) => SymValue::Scalar(s.subst(v, e, x)),
            SymValue::Vector { lane, n, elem } => SymValue::Vector {
                lane: *lane,
                n: *n,
                elem: elem.subst(v, e, x),
            },
            SymValue::Index(a) => SymValue::Index(a.subst(v, e, x)),
            SymValue::Array(arr) => {
                let (arr, e) = (arr.clone(), e.clone());
                SymValue::Array(SymArray::new(arr.len, move |ex, i| {
                    let y = arr.at(ex, i)?;
                    Ok(y.subst(v, &e, ex))
                }))
            }
            SymValue::Pair(a, b) => {
                SymValue::Pair(Box::new(a.subst(v, e, x)), Box::new(b.subst(v, e, x)))
            }
            SymValue::Fun(f) => {
                let (f, e) = (f.clone(), e.clone());
                sfun(move |ex, arg| {
                    let y = f(ex, arg)?;
                    Ok(y.subst(v, &e, ex))
                })
            }
        }
    }

    pub(crate) fn array(&self) -> Structuring<SymArray> {
        match self {
            SymValue::Array(a) => Ok(a.clone()),
            _ => not_structured("expected an array"),
        }
    }
}

/// The evaluator's state: variables, the loops recorded for the kernel being built.
#[derive(Default)]
pub(crate) struct SymbolicEvaluator {
    pub(crate) extents: Vec<i64>,
    pub(crate) loops: BTreeMap<Var, LoopRec>,
    /// How deep in computing loops the evaluation is (0: top level, where `toMem`
    /// materializes a buffer).
    pub(crate) depth: usize,
    next_acc: u32,
    /// The variables that stand for numbers computed from data (`natAsIndex`).
    pub(crate) data: BTreeMap<Var, DataIndex>,
    /// The buffers read through `toShared` (staged in a GPU block's shared memory).
    pub(crate) shared: BTreeSet<usize>,
}

impl Extents for SymbolicEvaluator {
    fn extent(&self, v: Var) -> i64 {
        self.extents[v as usize]
    }
}

impl SymbolicEvaluator {
    pub(crate) fn var(&mut self, extent: i64) -> Var {
        self.extents.push(extent.max(1));
        (self.extents.len() - 1) as Var
    }

    fn new_loop(&mut self, extent: i64, kind: LoopKind) -> Var {
        let v = self.var(extent);
        self.loops.insert(
            v,
            LoopRec {
                extent,
                kind,
                subst: None,
                array_acc: false,
                shared: false,
            },
        );
        v
    }

    /// A vector's lanes, as a loop.
    pub(crate) fn new_lane(&mut self, n: i64) -> Var {
        self.new_loop(n, LoopKind::Lane)
    }

    /// Records that lane loop `lane` is read at `i`.
    pub(crate) fn read_lane(&mut self, lane: Var, i: &Aff) -> Structuring<()> {
        self.record(lane, i)
    }

    /// Records that the element of loop `v` was read at `i`; a loop read at two
    /// positions is shared (each read computes its element).
    fn record(&mut self, v: Var, i: &Aff) -> Structuring<()> {
        let rec = self
            .loops
            .get_mut(&v)
            .ok_or_else(|| NotStructured("a loop read outside its kernel".into()))?;
        match &rec.subst {
            Some(prev) if prev != i => rec.shared = true,
            _ => rec.subst = Some(i.clone()),
        }
        Ok(())
    }

    pub(crate) fn apply(&mut self, f: &SymValue, x: SymValue) -> Structuring<SymValue> {
        match f {
            SymValue::Fun(f) => f(self, x),
            _ => not_structured("applying a value that is not a function"),
        }
    }

    /// `mapSeq`/`mapPar`/`mapSeqUnroll`: a loop whose element is `f(xs[v])`.
    pub(crate) fn computed_map(
        &mut self,
        kind: LoopKind,
        f: &SymValue,
        xs: &SymArray,
    ) -> Structuring<SymValue> {
        let v = self.new_loop(xs.len, kind);
        self.depth += 1;
        let x = xs.at(self, &Aff::var(v));
        let y = x.and_then(|x| self.apply(f, x));
        self.depth -= 1;
        let y = y?;
        Ok(SymValue::Array(SymArray::new(xs.len, move |ex, i| {
            ex.record(v, i)?;
            Ok(y.subst(v, i, ex))
        })))
    }

    /// A placeholder accumulator shaped like `like`: its elements are `Acc(id, path)`.
    fn placeholder(&mut self, id: u32, like: &SymValue, path: Vec<Aff>) -> Structuring<SymValue> {
        match like {
            SymValue::Scalar(e) => Ok(SymValue::Scalar(ScalarExpr::Acc(id, path, e.scalar()))),
            SymValue::Vector { n, elem, .. } => {
                let lane = self.new_loop(*n, LoopKind::Lane);
                let mut path = path;
                path.push(Aff::var(lane));
                Ok(SymValue::Vector {
                    lane,
                    n: *n,
                    elem: ScalarExpr::Acc(id, path, elem.scalar()),
                })
            }
            SymValue::Array(a) => {
                // The shape of an element, read at a fresh position.
                let probe = self.var(a.len);
                let elem = a.at(self, &Aff::var(probe))?;
                let elem = Rc::new(elem);
                Ok(SymValue::Array(SymArray::new(a.len, move |ex, i| {
                    let mut p = path.clone();
                    p.push(i.clone());
                    ex.placeholder(id, &elem, p)
                })))
            }
            _ => not_structured("a reduction whose accumulator is not numbers or arrays of them"),
        }
    }

    /// `reduceSeq(f)(init)(xs)` in closed form, `init ⊕ Σ_r x(r)` element-wise; a
    /// reduction of scalars whose step is no `acc ⊕ x`, or of pairs of scalars, as a
    /// fold ([`ScalarExpr::Fold`] per scalar).
    pub(crate) fn reduction(
        &mut self,
        kind: LoopKind,
        f: &SymValue,
        init: SymValue,
        xs: &SymArray,
    ) -> Structuring<SymValue> {
        // Of no element: its start.
        if xs.len == 0 {
            return Ok(init);
        }
        if !matches!(init, SymValue::Scalar(_) | SymValue::Pair(..)) {
            return self.closed_reduction(kind, f, init, xs);
        }
        let inits = scalar_leaves(&init)?;
        let r = self.new_loop(xs.len, kind);
        let id = self.next_acc;
        self.next_acc = self.next_acc.saturating_add(inits.len() as u32);
        // Accumulator `k` is `Acc(id + k)` (a scalar's is what `placeholder` makes).
        let mut k = 0;
        let acc = rebuild(&init, &mut |s: &ScalarExpr| {
            k += 1;
            ScalarExpr::Acc(id + k as u32 - 1, Vec::new(), s.scalar())
        });
        let step = self.step(f, acc, xs, r)?;
        if let (SymValue::Scalar(i0), SymValue::Scalar(e)) = (&init, &step) {
            if let Ok(closed) = fold(id, r, i0.clone(), e.clone(), &[]) {
                return Ok(SymValue::Scalar(closed));
            }
        }
        let steps = scalar_leaves(&step)?;
        if steps.len() != inits.len()
            || steps
                .iter()
                .zip(&inits)
                .any(|(s, i)| s.scalar() != i.scalar())
        {
            return not_structured("a reduction step that changes the accumulator's type");
        }
        if steps.iter().any(|s| !s.reduction_vars().is_empty()) {
            return not_structured("a reduction step of pairs that reduces");
        }
        let mut component = 0;
        Ok(rebuild(&init, &mut |_| {
            component += 1;
            ScalarExpr::Fold {
                id,
                inits: inits.clone(),
                vars: vec![r],
                steps: steps.clone(),
                component: component - 1,
            }
        }))
    }

    /// A reduction of vectors or arrays: `init ⊕ Σ_r x(r)` element-wise.
    fn closed_reduction(
        &mut self,
        kind: LoopKind,
        f: &SymValue,
        init: SymValue,
        xs: &SymArray,
    ) -> Structuring<SymValue> {
        let r = self.new_loop(xs.len, kind);
        let id = self.next_acc;
        self.next_acc += 1;
        if let Some(rec) = self.loops.get_mut(&r) {
            rec.array_acc = matches!(init, SymValue::Array(_));
        }
        let acc = self.placeholder(id, &init, Vec::new())?;
        let step = self.step(f, acc, xs, r)?;
        closed(self, id, r, init, step, Vec::new())
    }

    /// A reduction's step, `f(acc)(x(r))`, inside its loop.
    fn step(
        &mut self,
        f: &SymValue,
        acc: SymValue,
        xs: &SymArray,
        r: Var,
    ) -> Structuring<SymValue> {
        self.depth += 1;
        let step = (|| {
            let x = xs.at(self, &Aff::var(r))?;
            let g = self.apply(f, acc)?;
            self.apply(&g, x)
        })();
        self.depth -= 1;
        step
    }
}

/// The scalars of a value of scalars and pairs of them, in order.
fn scalar_leaves(v: &SymValue) -> Structuring<Vec<ScalarExpr>> {
    let mut out = Vec::new();
    let mut pending = vec![v];
    while let Some(v) = pending.pop() {
        match v {
            SymValue::Scalar(e) => out.push(e.clone()),
            SymValue::Pair(a, b) => pending.extend([&**b, &**a]),
            _ => {
                return not_structured(
                    "a reduction whose accumulator mixes scalars with vectors or arrays",
                )
            }
        }
    }
    Ok(out)
}

/// `v` (scalars and pairs of them) with each scalar, in order, replaced by `f` of it.
fn rebuild(v: &SymValue, f: &mut dyn FnMut(&ScalarExpr) -> ScalarExpr) -> SymValue {
    match v {
        SymValue::Pair(a, b) => {
            let a = rebuild(a, f);
            SymValue::Pair(Box::new(a), Box::new(rebuild(b, f)))
        }
        SymValue::Scalar(e) => SymValue::Scalar(f(e)),
        other => other.clone(),
    }
}

/// The reduction's result at `path`: `init ⊕ Σ_r x` where the step is `acc ⊕ x`.
fn closed(
    ex: &mut SymbolicEvaluator,
    id: u32,
    r: Var,
    init: SymValue,
    step: SymValue,
    path: Vec<Aff>,
) -> Structuring<SymValue> {
    match (init, step) {
        (SymValue::Scalar(i0), SymValue::Scalar(e)) => {
            Ok(SymValue::Scalar(fold(id, r, i0, e, &path)?))
        }
        (
            SymValue::Vector {
                lane: l0,
                n,
                elem: e0,
            },
            SymValue::Vector { lane, elem, .. },
        ) => {
            // Lanes are one loop: the step's.
            let e0 = e0.subst(l0, &Aff::var(lane), ex);
            if let Some(rec) = ex.loops.get_mut(&l0) {
                rec.subst = Some(Aff::var(lane));
            }
            let mut p = path;
            p.push(Aff::var(lane));
            let acc_lane = acc_lane(&elem, id);
            let elem = match acc_lane {
                Some(la) if la != lane => {
                    if let Some(rec) = ex.loops.get_mut(&la) {
                        rec.subst = Some(Aff::var(lane));
                    }
                    elem.subst(la, &Aff::var(lane), ex)
                }
                _ => elem,
            };
            Ok(SymValue::Vector {
                lane,
                n,
                elem: fold(id, r, e0, elem, &p)?,
            })
        }
        (SymValue::Array(a0), SymValue::Array(s)) => {
            Ok(SymValue::Array(SymArray::new(a0.len, move |ex, i| {
                let (x0, y) = (a0.at(ex, i)?, s.at(ex, i)?);
                let mut p = path.clone();
                p.push(i.clone());
                closed(ex, id, r, x0, y, p)
            })))
        }
        _ => not_structured("a reduction whose step changes the accumulator's shape"),
    }
}

/// The lane variable of the accumulator's element in a vector step, if any.
fn acc_lane(e: &ScalarExpr, id: u32) -> Option<Var> {
    match e {
        ScalarExpr::Acc(a, idx, _) if *a == id => idx.last().and_then(Aff::as_var),
        e => e.children().into_iter().find_map(|c| acc_lane(c, id)),
    }
}

fn is_acc(e: &ScalarExpr, id: u32, path: &[Aff]) -> bool {
    matches!(e, ScalarExpr::Acc(a, idx, _) if *a == id && idx.as_slice() == path)
}

/// `acc ⊕ x` (or a reduction starting from `acc`) becomes `init ⊕ Σ_r x`.
fn fold(id: u32, r: Var, init: ScalarExpr, e: ScalarExpr, path: &[Aff]) -> Structuring<ScalarExpr> {
    let associative = |p: Prim| matches!(p, Prim::Add | Prim::Mul | Prim::Max | Prim::Min);
    match e {
        ScalarExpr::Bin(op, a, b) if associative(op) => {
            let x = if is_acc(&a, id, path) {
                b
            } else if is_acc(&b, id, path) {
                a
            } else {
                return not_structured("a reduction step that is not `acc ⊕ x`");
            };
            if x.mentions_acc(id) {
                return not_structured("a reduction step that reads the accumulator twice");
            }
            Ok(ScalarExpr::Red {
                op,
                init: Box::new(init),
                vars: vec![r],
                body: x,
            })
        }
        ScalarExpr::Red {
            op,
            init: inner,
            vars,
            body,
        } if is_acc(&inner, id, path) && !body.mentions_acc(id) => {
            let mut all = vec![r];
            all.extend(vars);
            Ok(ScalarExpr::Red {
                op,
                init: Box::new(init),
                vars: all,
                body,
            })
        }
        _ => not_structured("a reduction step that is not `acc ⊕ x`"),
    }
}
