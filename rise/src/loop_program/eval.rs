//! Symbolic evaluation of a low-level RISE program into loop nests.
//!
//! Arrays are index functions, as in the loop translation, but indices are symbolic
//! ([`Aff`]) and scalars are expression trees ([`ScalarExpr`]). Each computing primitive
//! records the loop it stands for, in the order the program nests them: `mapPar`,
//! `mapSeq`, `mapSeqUnroll` (one loop per element, its counter substituted by the
//! position where the element is read), `reduceSeq`, `reduceSeqUnroll` (a reduction
//! loop; the accumulator must be combined element-wise, `acc ⊕ x`, which gives the
//! closed form `init ⊕ Σ x`), and the lanes of `asVector` vectors. Anything else makes
//! the program "not structured", with the reason, which the bridge reports.

pub use super::fragment::{not_structured, size, NotStructured, Structuring};
use super::index::{Aff, Extents, Var};
pub use super::scalar::{DataIndex, ExprRef, Gathered, ScalarExpr};
use crate::loop_program::deep_rc::DeepRc;
use crate::prim::Prim;
use crate::types::Type;
use elevate_core::stack::guard;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// What `toMem`/`let` do with an array at the top level.
pub trait Materialize {
    fn materialize(
        &mut self,
        ex: &mut SymbolicEvaluator,
        value: SymValue,
        ty: &Type,
    ) -> Structuring<SymValue>;
}

/// Inside functions: nothing (the value is used where it is).
pub struct Inline;

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
pub enum LoopKind {
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

pub use crate::prim::GpuLevel;

impl LoopKind {
    /// Whether its iterations run in parallel (across threads, or on a GPU).
    pub fn is_parallel(self) -> bool {
        matches!(self, LoopKind::Par | LoopKind::Gpu(..))
    }

    /// Whether it is a reduction (`reduceSeq`, unrolled or not).
    pub fn is_reduction(self) -> bool {
        matches!(self, LoopKind::Reduce | LoopKind::ReduceUnroll)
    }
}

/// A loop of the program, as recorded.
#[derive(Clone, Debug)]
pub struct LoopRec {
    pub extent: i64,
    pub kind: LoopKind,
    /// The position its element was read at (maps and lanes).
    pub subst: Option<Aff>,
    /// A reduction whose accumulator is an array (a buffer block).
    pub array_acc: bool,
    /// Its elements are read at several positions: each read computes its element
    /// where it is read, so the loop is no loop of the kernel.
    pub shared: bool,
}

/// A value during symbolic evaluation.
#[derive(Clone)]
pub enum SymValue {
    /// A number: shared, so that a value read several times (bound by `let`, or an
    /// argument used twice) is one node of the expressions that read it.
    Scalar(ExprRef),
    /// A vector: its lanes are the values of `elem` for `lane` in `0..n`.
    Vector {
        lane: Var,
        n: i64,
        elem: ExprRef,
    },
    Index(Aff),
    Array(SymArray),
    Pair(Box<SymValue>, Box<SymValue>),
    Fun(DeepRc<SFun>),
}

/// A function value.
pub fn sfun(
    f: impl Fn(&mut SymbolicEvaluator, SymValue) -> Structuring<SymValue> + 'static,
) -> SymValue {
    SymValue::Fun(DeepRc::new(Rc::new(f)))
}

pub type SFun = dyn Fn(&mut SymbolicEvaluator, SymValue) -> Structuring<SymValue>;
type SGet = dyn Fn(&mut SymbolicEvaluator, &Aff) -> Structuring<SymValue>;

/// An array: its length and its elements as a function of a symbolic index.
#[derive(Clone)]
pub struct SymArray {
    pub len: i64,
    pub get: DeepRc<SGet>,
    /// For `concat(a, b)`: its two parts, written into the two parts of a buffer by
    /// kernels of their own (an element read at a symbolic index is in neither part).
    pub parts: Option<Rc<(SymArray, SymArray)>>,
}

impl SymArray {
    pub fn new(
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
    pub fn at(&self, ex: &mut SymbolicEvaluator, i: &Aff) -> Structuring<SymValue> {
        guard(|| (self.get)(ex, i))
    }
}

impl SymValue {
    fn subst(&self, v: Var, e: &Aff, x: &dyn Extents) -> SymValue {
        match self {
            SymValue::Scalar(s) => SymValue::Scalar(s.subst(v, e, x).shared()),
            SymValue::Vector { lane, n, elem } => SymValue::Vector {
                lane: *lane,
                n: *n,
                elem: elem.subst(v, e, x).shared(),
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

    pub fn array(&self) -> Structuring<SymArray> {
        match self {
            SymValue::Array(a) => Ok(a.clone()),
            _ => not_structured("expected an array"),
        }
    }
}

/// The evaluator's state: variables, the loops recorded for the kernel being built.
#[derive(Default)]
pub struct SymbolicEvaluator {
    pub extents: Vec<i64>,
    pub loops: BTreeMap<Var, LoopRec>,
    /// How deep in computing loops the evaluation is (0: top level, where `toMem`
    /// materializes a buffer).
    pub depth: usize,
    next_acc: u32,
    /// The variables that stand for numbers computed from data (`natAsIndex`).
    pub data: BTreeMap<Var, DataIndex>,
    /// The buffers read through `toShared` (staged in a GPU block's shared memory).
    pub shared: BTreeSet<usize>,
    /// The operations of the elements substituted into each other so far
    /// ([`SymbolicEvaluator::charge_substitution`]).
    substituted: usize,
}

/// The most operations the elements of maps fused into each other may be rewritten
/// through, in all: a map of a map reads its source's element at its own position,
/// rewriting it, so a pipeline of `n` maps costs `n²/2` and 100,000 of them would
/// take hours. Ordinary programs stay far below (a few hundred maps of a few
/// operations each).
pub const MAX_SUBSTITUTED: usize = 10_000_000;

impl Extents for SymbolicEvaluator {
    fn extent(&self, v: Var) -> i64 {
        self.extents[v as usize]
    }
}

impl SymbolicEvaluator {
    pub fn var(&mut self, extent: i64) -> Var {
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

    /// Counts the operations of `y`, about to be read at another position, against
    /// [`MAX_SUBSTITUTED`].
    fn charge_substitution(&mut self, y: &SymValue) -> Structuring<()> {
        let mut pending = vec![y];
        while let Some(y) = pending.pop() {
            match y {
                SymValue::Scalar(e) | SymValue::Vector { elem: e, .. } => {
                    self.substituted = self.substituted.saturating_add(e.size());
                }
                SymValue::Pair(a, b) => pending.extend([&**a, &**b]),
                SymValue::Index(_) | SymValue::Array(_) | SymValue::Fun(_) => {}
            }
        }
        if self.substituted > MAX_SUBSTITUTED {
            return not_structured(format!(
                "maps fused into each other through more than {MAX_SUBSTITUTED} operations \
                 (store a stage with `toMem`)"
            ));
        }
        Ok(())
    }

    /// A vector's lanes, as a loop.
    pub fn new_lane(&mut self, n: i64) -> Var {
        self.new_loop(n, LoopKind::Lane)
    }

    /// Records that lane loop `lane` is read at `i`.
    pub fn read_lane(&mut self, lane: Var, i: &Aff) -> Structuring<()> {
        self.record(lane, i)
    }

    /// Records that the element of loop `v` was read at `i`; a loop read at two
    /// positions is shared (each read computes its element).
    fn record(&mut self, v: Var, i: &Aff) -> Structuring<()> {
        let rec = self
            .loops
            .get_mut(&v)
            .ok_or_else(|| NotStructured::new("a loop read outside its kernel"))?;
        match &rec.subst {
            Some(prev) if prev != i => rec.shared = true,
            _ => rec.subst = Some(i.clone()),
        }
        Ok(())
    }

    pub fn apply(&mut self, f: &SymValue, x: SymValue) -> Structuring<SymValue> {
        match f {
            SymValue::Fun(f) => f(self, x),
            _ => not_structured("applying a value that is not a function"),
        }
    }

    /// `mapSeq`/`mapPar`/`mapSeqUnroll`: a loop whose element is `f(xs[v])`.
    pub fn computed_map(
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
            ex.charge_substitution(&y)?;
            Ok(y.subst(v, i, ex))
        })))
    }

    /// A placeholder accumulator shaped like `like`: its elements are `Acc(id, path)`.
    fn placeholder(&mut self, id: u32, like: &SymValue, path: Vec<Aff>) -> Structuring<SymValue> {
        match like {
            SymValue::Scalar(e) => Ok(SymValue::Scalar(
                ScalarExpr::Acc(id, path, e.scalar()).shared(),
            )),
            SymValue::Vector { n, elem, .. } => {
                let lane = self.new_loop(*n, LoopKind::Lane);
                let mut path = path;
                path.push(Aff::var(lane));
                Ok(SymValue::Vector {
                    lane,
                    n: *n,
                    elem: ScalarExpr::Acc(id, path, elem.scalar()).shared(),
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
    pub fn reduction(
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
fn scalar_leaves(v: &SymValue) -> Structuring<Vec<ExprRef>> {
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
        SymValue::Scalar(e) => SymValue::Scalar(f(e).shared()),
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
            let e0 = e0.subst(l0, &Aff::var(lane), ex).shared();
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
                    elem.subst(la, &Aff::var(lane), ex).shared()
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
    e.nodes().into_iter().find_map(|e| match e {
        ScalarExpr::Acc(a, idx, _) if *a == id => idx.last().and_then(Aff::as_var),
        _ => None,
    })
}

/// Whether `e` is the accumulator's element at `path` (its indices compared with
/// their digits merged: an element read through vectors of its row is the element).
fn is_acc(e: &ScalarExpr, id: u32, path: &[Aff]) -> bool {
    matches!(e, ScalarExpr::Acc(a, idx, _) if *a == id
        && idx.len() == path.len()
        && idx.iter().zip(path).all(|(i, p)| i == p || i.merged_digits() == p.merged_digits()))
}

/// `acc ⊕ x` (or a reduction starting from `acc`) becomes `init ⊕ Σ_r x`.
fn fold(id: u32, r: Var, init: ExprRef, e: ExprRef, path: &[Aff]) -> Structuring<ExprRef> {
    let associative = |p: Prim| matches!(p, Prim::Add | Prim::Mul | Prim::Max | Prim::Min);
    match &*e {
        ScalarExpr::Bin(op, a, b) if associative(*op) => {
            let x = if is_acc(a, id, path) {
                b
            } else if is_acc(b, id, path) {
                a
            } else {
                return not_structured("a reduction step that is not `acc ⊕ x`");
            };
            if x.mentions_acc(id) {
                return not_structured("a reduction step that reads the accumulator twice");
            }
            Ok(ScalarExpr::Red {
                op: *op,
                init,
                vars: vec![r],
                body: x.clone(),
            }
            .shared())
        }
        ScalarExpr::Red {
            op,
            init: inner,
            vars,
            body,
        } if is_acc(inner, id, path) && !body.mentions_acc(id) => {
            let mut all = vec![r];
            all.extend(vars);
            Ok(ScalarExpr::Red {
                op: *op,
                init,
                vars: all,
                body: body.clone(),
            }
            .shared())
        }
        _ => not_structured("a reduction step that is not `acc ⊕ x`"),
    }
}
