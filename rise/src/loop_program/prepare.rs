//! What a kernel's expression needs before it is one structured operation: reduction
//! loops over flattened windows split into their digits, inner reductions computed
//! into buffers of their own, padded reads turned into reads of padded copies.

use super::eval::{
    not_structured, LoopRec, NotStructured, ScalarExpr, Structuring, SymbolicEvaluator,
};
use super::index::{Aff, Atom, Extents, Var};
use super::ir::{Buf, Dim, DimExpr, Kernel, Layout, Operand};
use super::kernel::{Builder, Target};
use super::scalar::{ExprRef, Memo};
use crate::limits::Limits;
use crate::prim::Prim;
use crate::term::Literal;
use crate::types::Scalar;
use std::collections::{BTreeMap, BTreeSet};

/// The region of each (buffer, constant) that padded reads read, per dimension (first
/// and last index, maybe out of bounds), and the constant; the constant is keyed by
/// its text, since floats have no order.
type Pads = BTreeMap<(usize, String), (Literal, Vec<(i64, i64)>)>;

/// Padded buffers with more elements than this have their border filled, not the
/// whole buffer (4 MiB of `f32`).
pub const BORDER_FILL_ELEMENTS: i64 = 1 << 20;

/// Every index expression of `e`, conditions included (only those where `guards_only`).
fn indices<'a>(e: &'a ScalarExpr, out: &mut Vec<&'a Aff>, guards_only: bool) {
    for e in e.nodes() {
        match e {
            ScalarExpr::Load(_, idx, _) | ScalarExpr::Acc(_, idx, _) if !guards_only => {
                out.extend(idx)
            }
            ScalarExpr::Select { conds, .. } => out.extend(conds.iter().map(|(a, _, _)| a)),
            _ => {}
        }
    }
}

/// How `r` is used in `a`: the digits `(a, b)` (`(r / a) mod b`, `b` 0 for none) it
/// is read by, or `None` where it is also read whole.
fn digits_of(r: Var, a: &Aff, out: &mut BTreeSet<(i64, i64)>) -> Option<()> {
    for atom in a.terms.keys() {
        match atom {
            Atom::Var(v) if *v == r => return None,
            Atom::Var(_) => {}
            Atom::Div(inner, _) | Atom::Mod(inner, _) if inner.mentions(r) => {
                let single = Aff {
                    terms: [(atom.clone(), 1)].into(),
                    c: 0,
                };
                match single.as_digit() {
                    Some((v, d, m)) if v == r => {
                        out.insert((d, m.unwrap_or(0)));
                    }
                    _ => return None,
                }
            }
            Atom::Div(..) | Atom::Mod(..) => {}
        }
    }
    Some(())
}

/// Reduction loops read only through digits (`(r / 3) mod 3`, as a reduction over a
/// joined window reads its rows and columns) become one loop per digit, outermost
/// first, so that each digit is an affine index.
pub fn delinearize(
    ex: &mut SymbolicEvaluator,
    loops: Vec<(Var, LoopRec)>,
    mut e: ScalarExpr,
) -> (Vec<(Var, LoopRec)>, ScalarExpr) {
    let mut out = Vec::with_capacity(loops.len());
    for (r, rec) in loops {
        let split = rec
            .kind
            .is_reduction()
            .then(|| cuts(r, rec.extent, &e, false))
            .flatten();
        let Some(cuts) = split else {
            out.push((r, rec));
            continue;
        };
        // r = Σ cuts[i] * r_i, r_i < cuts[i+1] / cuts[i]; outermost first.
        let mut parts = Vec::new();
        let mut sum = Aff::cst(0);
        for w in cuts.windows(2).rev() {
            let v = ex.var(w[1] / w[0]);
            sum = sum.add(&Aff::var(v).scale(w[0]));
            let mut part = rec.clone();
            part.extent = w[1] / w[0];
            parts.push((v, part));
        }
        e = e.map_indices(&mut |a| a.subst(r, &sum, ex));
        let vars: Vec<Var> = parts.iter().map(|(v, _)| *v).collect();
        e = rename_reduction(&e, r, &vars);
        out.extend(parts);
    }
    (out, e)
}

/// The most elements of an unrolled reduction computed in the kernel's body.
const MAX_BODY_UNROLL: i64 = 64;

/// The most elements of a reduction computed in its kernel's body although the
/// program does not unroll it (a 3-tap filter written with `reduceSeq`).
const TINY_REDUCTION: i64 = 3;

/// A kernel's innermost reduction that the program unrolls (`reduceSeqUnroll`: a
/// window's few taps), or that has at most [`TINY_REDUCTION`] elements, is computed in
/// its body, element after element, `((init ⊕ x0) ⊕ x1) ⊕ ...`:
/// the kernel has no reduction dimension, so its output is written once, without a
/// fill before it or a read of it at every step (a 3-tap filter over a large image
/// is then one pass over it).
fn unroll_into_body(
    ex: &mut SymbolicEvaluator,
    loops: Vec<(Var, LoopRec)>,
    e: ScalarExpr,
) -> Structuring<(Vec<(Var, LoopRec)>, ScalarExpr)> {
    let ScalarExpr::Red {
        op,
        init,
        vars,
        body,
    } = &e
    else {
        return Ok((loops, e));
    };
    let unrolled = |v: &Var| {
        loops
            .iter()
            .find(|(w, _)| w == v)
            .is_some_and(|(_, rec)| rec.kind == super::eval::LoopKind::ReduceUnroll)
    };
    let count = vars
        .iter()
        .try_fold(1i64, |n, v| n.checked_mul(ex.extent(*v)))
        .unwrap_or(i64::MAX);
    // (A reduction over the lanes of another's vector result stays one kernel with
    // it: unrolled into the body it would be a kernel per lane.)
    let innermost = body.reduction_vars().is_empty();
    // A reduction of a few elements is one too, unrolled or not: as a loop, its
    // output tile would be filled, then read and written at each of its few steps.
    let tiny = count <= TINY_REDUCTION;
    if !innermost || !(tiny || vars.iter().all(unrolled)) || count > MAX_BODY_UNROLL {
        return Ok((loops, e));
    }
    let mut value = (**init).clone();
    for k in 0..count {
        // Element `k`: the variables' digits, the last innermost.
        let mut x = (**body).clone();
        let mut rest = k;
        for v in vars.iter().rev() {
            let n = ex.extent(*v);
            x = x.subst(*v, &Aff::cst(rest % n), ex);
            rest /= n;
        }
        value = ScalarExpr::Bin(*op, value.shared(), x.shared());
    }
    let loops = loops
        .into_iter()
        .filter(|(v, _)| !vars.contains(v))
        .collect();
    Ok((loops, value))
}

/// Output positions that `e` reads only through digits (a packed or blocked buffer
/// read back in the program's order: `(x / 7) mod 2`; a `join`ed array mapped over,
/// `x[p / 6][p mod 6]`; a `join`ed `concat` of rows, guarded at `p / 2` and
/// `p mod 2`) get one loop per digit, and `e` reads the digits' loops, so that each
/// read and each guard is affine; the output is expanded into the digits. A position
/// no loop walks gets them outermost; where maps walk it as digits that cover it (a
/// map of rows `join`ed: `p / 6` and `p mod 6`), each map's digit is cut into the
/// finer digits in its place, the outermost of its kind (`mapPar` stays parallel),
/// the others sequential.
pub fn split_positions(
    ex: &mut SymbolicEvaluator,
    mut loops: Vec<(Var, LoopRec)>,
    positions: &[Var],
    mut e: ScalarExpr,
) -> (Vec<(Var, LoopRec)>, ScalarExpr) {
    use super::eval::LoopKind;
    let mut outer = Vec::new();
    for p in positions {
        let extent = ex.extent(*p);
        // The maps walking a digit of `p`: (index in `loops`, step, its digit's size).
        let mut walking = Vec::new();
        for (i, (_, rec)) in loops.iter().enumerate() {
            let digit = rec.subst.as_ref().and_then(|s| s.as_digit());
            if let Some((q, a, b)) = digit.filter(|(q, _, _)| q == p) {
                let plain = rec.kind == LoopKind::Seq || rec.kind.is_parallel();
                let size = b.unwrap_or(extent / a.max(1));
                walking.push((i, a, size, plain && size == rec.extent && q == *p));
            }
        }
        // They must be maps that together walk the position once, digit by digit.
        walking.sort_by_key(|(_, a, _, _)| *a);
        let mut covered = 1i64;
        let chained = walking.iter().all(|(_, a, size, plain)| {
            let ok = *plain && *a == covered;
            covered = covered.saturating_mul(*size);
            ok
        });
        if !chained || (!walking.is_empty() && covered != extent) {
            continue;
        }
        // Where maps walk it, only its guards need cutting: reads through the maps'
        // digits are affine already, or read flat (`flattened_digits`).
        let Some(cuts) = cuts(*p, extent, &e, !walking.is_empty()) else {
            continue;
        };
        let bounds: Vec<i64> = walking.iter().map(|(_, a, _, _)| *a).collect();
        if bounds.iter().any(|a| !cuts.contains(a)) {
            continue;
        }
        if walking.is_empty() {
            bounds_to_loops(ex, *p, &cuts, LoopKind::Seq, &mut outer);
        }
        // Innermost digit first, so that the indices of the maps still to replace hold.
        let mut by_place = walking.clone();
        by_place.sort_by_key(|(i, _, _, _)| std::cmp::Reverse(*i));
        for (i, a, size, _) in by_place {
            let mine: Vec<i64> = cuts
                .iter()
                .copied()
                .filter(|c| *c >= a && *c <= a.saturating_mul(size))
                .collect();
            let mut digits = Vec::new();
            bounds_to_loops(ex, *p, &mine, loops[i].1.kind, &mut digits);
            loops.splice(i..=i, digits);
        }
        let mut sum = Aff::cst(0);
        for (v, rec) in outer.iter().chain(&loops) {
            if let Some((q, a, _)) = rec.subst.as_ref().and_then(|s| s.as_digit()) {
                if q == *p {
                    sum = sum.add(&Aff::var(*v).scale(a));
                }
            }
        }
        e = e.map_indices(&mut |x| x.subst(*p, &sum, ex));
    }
    outer.append(&mut loops);
    (outer, e)
}

/// One loop per digit of position `p` between consecutive `cuts`, outermost first,
/// each reading its digit of `p`; the outermost is of `kind`, the others sequential.
fn bounds_to_loops(
    ex: &mut SymbolicEvaluator,
    p: Var,
    cuts: &[i64],
    kind: super::eval::LoopKind,
    out: &mut Vec<(Var, LoopRec)>,
) {
    for (k, w) in cuts.windows(2).rev().enumerate() {
        let extent = w[1] / w[0];
        let v = ex.var(extent);
        out.push((
            v,
            LoopRec {
                extent,
                kind: if k == 0 {
                    kind
                } else {
                    super::eval::LoopKind::Seq
                },
                subst: Some(Aff::var(p).div(w[0], ex).rem(extent, ex)),
                array_acc: false,
                shared: false,
            },
        ));
    }
}

/// The points at which reduction `r` of `extent` is cut into digits, from 1 to
/// `extent`, each dividing the next; `None` where it is read whole or not in digits.
/// Only the indices of guards where `guards_only`.
fn cuts(r: Var, extent: i64, e: &ScalarExpr, guards_only: bool) -> Option<Vec<i64>> {
    let mut idx = Vec::new();
    indices(e, &mut idx, guards_only);
    let mut digits = BTreeSet::new();
    for a in idx {
        digits_of(r, a, &mut digits)?;
    }
    let mut cuts: BTreeSet<i64> = [1, extent].into();
    for (d, m) in digits {
        cuts.insert(d);
        if m > 0 {
            cuts.insert(d.checked_mul(m)?);
        }
    }
    let cuts: Vec<i64> = cuts.into_iter().collect();
    let chained = cuts.windows(2).all(|w| w[0] > 0 && w[1] % w[0] == 0);
    (chained && cuts.len() > 2 && *cuts.last()? == extent).then_some(cuts)
}

/// `e` with reduction variable `r` replaced by `vars` in every `Red`.
fn rename_reduction(e: &ScalarExpr, r: Var, vars: &[Var]) -> ScalarExpr {
    e.rewrite(&mut |e| match e {
        ScalarExpr::Red {
            op,
            init,
            vars: vs,
            body,
        } if vs.contains(&r) => ScalarExpr::Red {
            op,
            init,
            vars: renamed(&vs, r, vars),
            body,
        },
        ScalarExpr::Fold {
            id,
            inits,
            vars: vs,
            steps,
            component,
        } if vs.contains(&r) => ScalarExpr::Fold {
            id,
            inits,
            vars: renamed(&vs, r, vars),
            steps,
            component,
        },
        other => other,
    })
}

/// `vs` with `r` replaced by `vars`.
fn renamed(vs: &[Var], r: Var, vars: &[Var]) -> Vec<Var> {
    vs.iter()
        .flat_map(|v| if *v == r { vars.to_vec() } else { vec![*v] })
        .collect()
}

/// `e` with each reduction that starts from a value other than a constant (a sum
/// from a bias, a maximum from a parameter) that value combined with the reduction
/// from the operation's identity: the reduction is then a kernel of its own that
/// starts from a constant, and the value is combined where it is read. (Exact for
/// maxima, minima and integers; a sum of floats is reassociated, as a vectorized
/// reduction is.)
fn from_identity(e: &ScalarExpr) -> ScalarExpr {
    e.rewrite(&mut identity_started)
}

/// [`from_identity`] of one reduction.
fn identity_started(e: ScalarExpr) -> ScalarExpr {
    let ScalarExpr::Red {
        op,
        init,
        vars,
        body,
    } = &e
    else {
        return e;
    };
    let Some(identity) =
        identity(*op, init.scalar()).filter(|_| !matches!(**init, ScalarExpr::Lit(_)))
    else {
        return e;
    };
    let reduction = ScalarExpr::Red {
        op: *op,
        init: ScalarExpr::Lit(identity).shared(),
        vars: vars.clone(),
        body: body.clone(),
    };
    ScalarExpr::Bin(*op, init.clone(), reduction.shared())
}

/// The value `x` for which `x op y = y` for every `y` of type `s`, where there is one.
fn identity(op: Prim, s: Scalar) -> Option<Literal> {
    use Literal::{F32, F64, I32, I64};
    Some(match (op, s) {
        (Prim::Add, Scalar::F32) => F32(0.0),
        (Prim::Add, Scalar::F64) => F64(0.0),
        (Prim::Add, Scalar::I32) => I32(0),
        (Prim::Add, Scalar::I64) => I64(0),
        (Prim::Mul, Scalar::F32) => F32(1.0),
        (Prim::Mul, Scalar::F64) => F64(1.0),
        (Prim::Mul, Scalar::I32) => I32(1),
        (Prim::Mul, Scalar::I64) => I64(1),
        (Prim::Max, Scalar::F32) => F32(f32::NEG_INFINITY),
        (Prim::Max, Scalar::F64) => F64(f64::NEG_INFINITY),
        (Prim::Max, Scalar::I32) => I32(i32::MIN),
        (Prim::Max, Scalar::I64) => I64(i64::MIN),
        (Prim::Min, Scalar::F32) => F32(f32::INFINITY),
        (Prim::Min, Scalar::F64) => F64(f64::INFINITY),
        (Prim::Min, Scalar::I32) => I32(i32::MAX),
        (Prim::Min, Scalar::I64) => I64(i64::MAX),
        _ => return None,
    })
}

/// The variables `e`'s indices read (its loads' and its guards' conditions').
/// Numbers from data stand for the variables their values read ([`ScalarExpr::Gather`]).
pub fn variables(e: &ScalarExpr) -> BTreeSet<Var> {
    let mut idx = Vec::new();
    indices(e, &mut idx, false);
    let mut vars: BTreeSet<Var> = idx.into_iter().flat_map(|a| a.vars()).collect();
    for e in e.nodes() {
        if let ScalarExpr::Gather(g) = e {
            vars.extend(g.idx.iter().flat_map(|a| a.vars()));
            for d in &g.data {
                vars.remove(&d.var);
            }
        }
    }
    vars
}

impl Builder {
    /// The kernel that writes `out[positions] = e`, after the kernels it needs: its
    /// inner reductions' (each into a buffer of its own) and its padded operands'.
    pub fn build(
        &mut self,
        ex: &mut SymbolicEvaluator,
        loops: Vec<(Var, LoopRec)>,
        positions: &[Var],
        e: ScalarExpr,
        target: Target,
    ) -> Structuring<Layout> {
        let e = from_identity(&ex.with_gathers(&e)?);
        let (loops, e) = unroll_into_body(ex, loops, e)?;
        let (loops, e) = delinearize(ex, loops, e);
        let (loops, e) = split_positions(ex, loops, positions, e);
        let (loops, e) = self.extract_reductions(ex, loops, positions, e)?;
        let Some(boxes) = self.split_at_padding(ex, &loops, positions, &e, &target) else {
            return self.padded_kernel(ex, loops, positions, e, target);
        };
        let mut layout = Vec::new();
        for b in boxes {
            layout = self.padded_kernel(ex, b.loops, &b.positions, b.e, b.target)?;
        }
        Ok(layout)
    }

    /// The kernel of `e`, its padded reads reading padded copies.
    fn padded_kernel(
        &mut self,
        ex: &mut SymbolicEvaluator,
        loops: Vec<(Var, LoopRec)>,
        positions: &[Var],
        e: ScalarExpr,
        target: Target,
    ) -> Structuring<Layout> {
        let e = self.hoist_padding(ex, e)?;
        let (mut kernel, layout, component) =
            super::kernel::analyze(ex, loops, positions, e, target, self)?;
        kernel.shared = (0..kernel.inputs.len())
            .filter(|k| ex.shared.contains(&kernel.inputs[*k].buf))
            .collect();
        // (None: a fold's accumulator written by the kernel of another.)
        let kernel = super::fold::carried(self, kernel, component)?;
        self.kernels.extend(kernel);
        Ok(layout)
    }

    /// A new buffer of the program's own, checked against the limits.
    pub fn own_buffer(&mut self, dims: Vec<i64>, scalar: Scalar) -> Structuring<usize> {
        let elements = dims
            .iter()
            .try_fold(1u128, |n, d| n.checked_mul(u128::try_from(*d).ok()?))
            .unwrap_or(u128::MAX);
        let limits = Limits::with_max_bytes(self.limits.max_bytes.min(i64::MAX as u64));
        if let Err(e) = limits.check_array("a buffer", elements, scalar.bytes()) {
            return Err(NotStructured {
                why: e.to_string(),
                too_large: Some(e),
            });
        }
        self.bufs.push(Buf {
            name: format!("%buf{}", self.bufs.len()),
            dims,
            scalar,
        });
        Ok(self.bufs.len() - 1)
    }

    /// Each reduction inside another computation (a bias added to a dot product, a
    /// sum divided by a maximum) computed by a kernel of its own into a buffer
    /// indexed by the variables it depends on, and read from there.
    pub fn extract_reductions(
        &mut self,
        ex: &mut SymbolicEvaluator,
        loops: Vec<(Var, LoopRec)>,
        positions: &[Var],
        e: ScalarExpr,
    ) -> Structuring<(Vec<(Var, LoopRec)>, ScalarExpr)> {
        let mut done = std::mem::take(&mut self.reductions);
        let mut moved = BTreeSet::new();
        let ranges = BTreeMap::new();
        let mut memo = Memo::default();
        let mut lift = |c: &ScalarExpr, memo: &mut Memo<ExprRef>| {
            self.lift(
                ex, &loops, positions, c, &ranges, &mut done, &mut moved, memo,
            )
        };
        // The kernel's own reduction stays; reductions inside it move.
        let e = match e {
            ScalarExpr::Red { .. } | ScalarExpr::Fold { .. } => {
                e.map_children(&mut |c| lift(c, &mut memo).map(ScalarExpr::shared))?
            }
            e => lift(&e, &mut memo)?,
        };
        self.reductions.extend(done);
        let loops = loops
            .into_iter()
            .filter(|(v, _)| !moved.contains(v))
            .collect();
        Ok((loops, e))
    }

    /// `e` with its reductions read from buffers (`done` remembers those computed).
    /// `ranges` narrows variables where `e` is read only inside guards (the first
    /// elements of a `padClamp` read a reduction at `p - 2` only where `p >= 2`): a
    /// reduction is computed only there, where its reads are in bounds.
    #[allow(clippy::too_many_arguments)]
    fn lift(
        &mut self,
        ex: &mut SymbolicEvaluator,
        loops: &[(Var, LoopRec)],
        positions: &[Var],
        e: &ScalarExpr,
        ranges: &BTreeMap<Var, (i64, i64)>,
        done: &mut Vec<(ScalarExpr, ScalarExpr)>,
        moved: &mut BTreeSet<Var>,
        memo: &mut Memo<ExprRef>,
    ) -> Structuring<ScalarExpr> {
        if let ScalarExpr::Select { conds, then, other } = e {
            let mut inner = ranges.clone();
            for (a, lo, hi) in conds {
                let mut v = a.clone();
                v.c = 0;
                let Some(v) = v.as_var() else { continue };
                let (from, to) = inner.get(&v).copied().unwrap_or((0, ex.extent(v)));
                inner.insert(v, (from.max(lo - a.c), to.min(hi - a.c)));
            }
            // (What is made under narrower ranges is another walk's.)
            // (Guards nest as deep as paddings do: on a stack that grows.)
            let narrower = &mut Memo::default();
            let then = elevate_core::stack::guard(|| {
                self.lift(ex, loops, positions, then, &inner, done, moved, narrower)
            })?;
            let other = memo.made(other, |memo| {
                elevate_core::stack::guard(|| {
                    self.lift(ex, loops, positions, other, ranges, done, moved, memo)
                })
            })?;
            return Ok(ScalarExpr::Select {
                conds: conds.clone(),
                then: then.shared(),
                other,
            });
        }
        if !matches!(e, ScalarExpr::Red { .. } | ScalarExpr::Fold { .. }) {
            return e.map_children(&mut |c| {
                memo.made(c, |memo| {
                    self.lift(ex, loops, positions, c, ranges, done, moved, memo)
                })
            });
        }
        let own = e.reduction_vars();
        if let Some((_, load)) = done.iter().find(|(r, _)| r == e) {
            moved.extend(own);
            return Ok(load.clone());
        }
        // Its buffer's dimensions: the output positions it reads, in order, then any
        // other variable (an enclosing reduction's); one element if none.
        let used = variables(e);
        let mut free: Vec<Var> = positions
            .iter()
            .filter(|p| used.contains(p))
            .copied()
            .collect();
        free.extend(
            used.iter()
                .filter(|v| !own.contains(v) && !positions.contains(v)),
        );
        let mut index: Vec<Aff> = free.iter().map(|v| Aff::var(*v)).collect();
        let mut sub_loops: Vec<(Var, LoopRec)> = loops
            .iter()
            .filter(|(v, r)| !r.kind.is_reduction() || own.contains(v))
            .cloned()
            .collect();
        // A variable the guards around it narrow to `from..to` is a new one over that
        // range, `v = q + from` (and the map that walks `v` walks `q`).
        let mut computed = e.clone();
        let mut narrowed = false;
        for (k, v) in free.iter_mut().enumerate() {
            let Some(&(from, to)) = ranges.get(v) else {
                continue;
            };
            if from <= 0 && to >= ex.extent(*v) {
                continue;
            }
            if from >= to {
                return not_structured("a reduction read nowhere");
            }
            let q = ex.var(to - from);
            let shifted = Aff::var(q).plus(from);
            computed = computed.subst(*v, &shifted, ex);
            for (_, rec) in &mut sub_loops {
                if rec.subst.as_ref().and_then(|s| s.as_var()) == Some(*v) {
                    rec.extent = to - from;
                    rec.subst = Some(Aff::var(q));
                }
            }
            index[k] = Aff::var(*v).plus(-from);
            *v = q;
            narrowed = true;
        }
        let (dims, index, sub_positions) = if free.is_empty() {
            (vec![1], vec![Aff::cst(0)], vec![ex.var(1)])
        } else {
            let dims = free.iter().map(|v| ex.extent(*v)).collect();
            (dims, index, free.clone())
        };
        let scalar = e.scalar();
        let buf = self.own_buffer(dims, scalar)?;
        // Its kernel sees the reductions computed so far (the maximum a softmax's sum
        // reads is the one its quotient reads).
        self.reductions.append(done);
        let target = Target {
            buf,
            natural: false,
            offset: Vec::new(),
        };
        let built = self.build(ex, sub_loops, &sub_positions, computed, target);
        done.append(&mut self.reductions);
        built?;
        moved.extend(own);
        let load = ScalarExpr::Load(buf, index, scalar);
        // (Computed in part, it is no value for reads elsewhere.)
        if !narrowed {
            done.push((e.clone(), load.clone()));
        }
        Ok(load)
    }

    /// Reads of a buffer guarded by its bounds (`padCst`) become reads of a padded copy
    /// of the part of it they read: a kernel fills the copy's border with the constant,
    /// another copies the buffer's part into its interior.
    pub fn hoist_padding(
        &mut self,
        ex: &mut SymbolicEvaluator,
        e: ScalarExpr,
    ) -> Structuring<ScalarExpr> {
        // Guards between computed values first: each read from a buffer of its own.
        let e = self.materialize_guards(ex, &e)?;
        // The region each (buffer, constant) is read in, per dimension (first and last
        // index, either maybe out of bounds), for all its reads.
        let mut pads: Pads = BTreeMap::new();
        for x in e.nodes_where(|x| self.padding_of(x).is_none()) {
            if let Some((b, idx, c)) = self.padding_of(x) {
                let (_, entry) = pads
                    .entry((b, format!("{c:?}")))
                    .or_insert_with(|| (c, vec![(i64::MAX, i64::MIN); idx.len()]));
                for ((first, last), a) in entry.iter_mut().zip(idx) {
                    let (min, max) = a.range(ex);
                    *first = (*first).min(min);
                    *last = (*last).max(max);
                }
            }
        }
        let mut copies: BTreeMap<(usize, String), usize> = BTreeMap::new();
        for ((b, key), (c, region)) in &pads {
            let padded = self.padded_copy(*b, region, *c)?;
            copies.insert((*b, key.clone()), padded);
        }
        self.replace_guarded(&e, &pads, &copies, &mut Memo::default())
    }

    /// `Select(in bounds, buffer[idx], constant)`: the buffer, the index, the constant
    /// (`None` for any other guard: one between computed values, or on part of a
    /// buffer).
    pub fn padding_of<'a>(&self, e: &'a ScalarExpr) -> Option<(usize, &'a [Aff], Literal)> {
        let ScalarExpr::Select { conds, then, other } = e else {
            return None;
        };
        let (ScalarExpr::Load(b, idx, _), ScalarExpr::Lit(c)) = (&**then, &**other) else {
            return None;
        };
        let dims = &self.bufs[*b].dims;
        let bounds = conds.iter().all(|(a, lo, hi)| {
            (0..idx.len()).any(|k| idx[k].plus(*lo) == *a && hi - lo == dims[k])
        });
        bounds.then_some((*b, idx, *c))
    }

    /// A copy of the `region` (first and last index in each dimension, maybe out of
    /// its bounds) of buffer `b`, `c` where it is out of bounds: kernels filling the
    /// border, one copying the part in bounds.
    fn padded_copy(&mut self, b: usize, region: &[(i64, i64)], c: Literal) -> Structuring<usize> {
        let src = self.bufs[b].clone();
        let dims: Vec<i64> = region
            .iter()
            .map(|(first, last)| last.saturating_sub(*first).saturating_add(1).max(1))
            .collect();
        // The part in bounds: where it starts in the buffer and in the copy, its size.
        let inside: Vec<(i64, i64, i64)> = region
            .iter()
            .zip(&src.dims)
            .map(|((first, last), n)| {
                let (from, to) = ((*first).max(0), (*last).min(n - 1));
                (from, from - first, (to - from + 1).max(0))
            })
            .collect();
        let padded = self.own_buffer(dims.clone(), src.scalar)?;
        let identity = |buf: usize, dims: &[i64], offsets: &[i64], sizes: &[i64]| Operand {
            buf,
            expand: dims.iter().map(|n| vec![*n]).collect(),
            map: (0..dims.len())
                .map(|d| DimExpr {
                    terms: vec![(d, 1)],
                    c: 0,
                })
                .collect(),
            window: offsets.iter().copied().zip(sizes.iter().copied()).collect(),
            strided: None,
        };
        let parallel = |dims: &[i64]| -> Vec<Dim> {
            dims.iter()
                .map(|n| Dim {
                    extent: *n,
                    reduction: false,
                })
                .collect()
        };
        // In a large copy the border alone is filled (the interior is written once,
        // by the copy): for each dimension, its slabs before and after the interior,
        // over the interior of the dimensions before it and the whole of those after
        // it. A small one is filled whole: its slabs' loops, short and strided, are
        // what LLVM unrolls into blocks so large that compiling them took a second (a
        // 64-channel 56 x 56 convolution), for a fill that costs little.
        let zeros = vec![0; dims.len()];
        let at: Vec<i64> = inside.iter().map(|(_, at, _)| *at).collect();
        let sizes: Vec<i64> = inside.iter().map(|(_, _, size)| *size).collect();
        let from: Vec<i64> = inside.iter().map(|(from, _, _)| *from).collect();
        let elements = dims.iter().fold(1i64, |n, d| n.saturating_mul(*d));
        let empty = sizes.contains(&0);
        // The windows filled: (where each starts, its size).
        let mut fills: Vec<(Vec<i64>, Vec<i64>)> = Vec::new();
        if elements <= BORDER_FILL_ELEMENTS || empty {
            fills.push((zeros.clone(), dims.clone()));
        } else {
            for d in 0..dims.len() {
                let after = at[d] + sizes[d];
                for (start, size) in [(0, at[d]), (after, dims[d] - after)] {
                    if size == 0 {
                        continue;
                    }
                    let corner = [&at[..d], &[start], &zeros[d + 1..]].concat();
                    let window = [&sizes[..d], &[size], &dims[d + 1..]].concat();
                    fills.push((corner, window));
                }
            }
        }
        for (corner, window) in fills {
            self.kernels.push(Kernel {
                shared: Vec::new(),
                counters: Default::default(),
                dims: parallel(&window),
                inputs: Vec::new(),
                outs: vec![identity(padded, &dims, &corner, &window)],
                body: vec![ScalarExpr::Lit(c)],
                reduction: None,
                schedule: Vec::new(),
                free: true,
            });
        }
        if !empty {
            self.kernels.push(Kernel {
                shared: Vec::new(),
                counters: Default::default(),
                dims: parallel(&sizes),
                inputs: vec![identity(b, &src.dims, &from, &sizes)],
                outs: vec![identity(padded, &dims, &at, &sizes)],
                body: vec![ScalarExpr::Load(0, Vec::new(), src.scalar)],
                reduction: None,
                schedule: Vec::new(),
                free: true,
            });
        }
        Ok(padded)
    }

    fn replace_guarded(
        &self,
        e: &ScalarExpr,
        pads: &Pads,
        copies: &BTreeMap<(usize, String), usize>,
        memo: &mut Memo<ExprRef>,
    ) -> Structuring<ScalarExpr> {
        if let Some((b, idx, c)) = self.padding_of(e) {
            let key = (b, format!("{c:?}"));
            let index = idx
                .iter()
                .zip(&pads[&key].1)
                .map(|(a, (first, _))| a.plus(-first))
                .collect();
            return Ok(ScalarExpr::Load(copies[&key], index, self.bufs[b].scalar));
        }
        e.map_children(&mut |c| memo.made(c, |memo| self.replace_guarded(c, pads, copies, memo)))
    }
}
