//! Kernels: a materialized array's loop nest as one structured operation (its
//! iteration dimensions, its operands' indexing, its body) and its schedule (the
//! program's loops, outermost first, as tiles of those dimensions).

use super::deep_rc::DeepRc;
use super::eval::{
    not_structured, size, LoopKind, LoopRec, ScalarExpr, Structuring, SymValue, SymbolicEvaluator,
};
use super::from_data::{checks, gathers, read_in_body};
use super::index::{flattened_digits, Aff, Extents, Var};
use super::ir::{Buf, Dim, DimExpr, Kernel, Layout, Operand, Reduction, ScheduledLoop};
use super::start::{constants, starting};
use crate::limits::Limits;
use crate::types::{Scalar, Type, TypeKind};
use std::collections::{BTreeMap, BTreeSet};

/// An index affine in the loops: `(Σ coefficient * loop, constant)`.
type Linear = (Vec<(Var, i64)>, i64);

/// The program's buffers and kernels, as they are found.
pub struct Builder {
    pub bufs: Vec<Buf>,
    pub kernels: Vec<Kernel>,
    /// The limits the program's own buffers are checked against.
    pub limits: Limits,
    /// Reductions computed into buffers of their own, and the reads that replace them.
    pub reductions: Vec<(ScalarExpr, ScalarExpr)>,
    /// The buffers of parameters, stages and the result, by name.
    pub by_name: std::collections::HashMap<String, usize>,
    /// Buffers a fold writes only because it carries them (an accumulator the
    /// program has not read yet), and those of them no kernel writes any more.
    pub scratch: BTreeSet<usize>,
    pub unused: BTreeSet<usize>,
    /// Whether a read at an index not affine in the loops is a load in the kernel's
    /// body: the last resort, after the program split into stages (whose buffers
    /// read affinely where the whole program's do not) has been tried without.
    pub reads_in_body: bool,
}

impl Builder {
    pub fn new(limits: Limits) -> Builder {
        Builder {
            bufs: Vec::new(),
            kernels: Vec::new(),
            limits,
            reductions: Vec::new(),
            by_name: Default::default(),
            scratch: BTreeSet::new(),
            unused: BTreeSet::new(),
            reads_in_body: false,
        }
    }
}

/// The dimensions and scalar of an array of scalars.
pub fn shape(ty: &Type) -> Structuring<(Vec<i64>, Scalar)> {
    let mut dims = Vec::new();
    let mut t = ty;
    loop {
        match t.kind() {
            TypeKind::Array(n, e) => {
                dims.push(size(n)?);
                t = e;
            }
            TypeKind::Scalar(s) => return Ok((dims, *s)),
            _ => return not_structured(format!("a buffer of type {ty} (arrays of scalars only)")),
        }
    }
}

impl Builder {
    /// The kernel that writes `value` into buffer `out`, from the loops recorded while
    /// `value` was evaluated.
    /// With `natural`, the buffer is laid out as the loops nest (returned as the digits
    /// `(position, a, b)` of the type's positions, outermost first).
    pub fn kernel(
        &mut self,
        ex: &mut SymbolicEvaluator,
        value: SymValue,
        out: usize,
        natural: bool,
    ) -> Structuring<Layout> {
        self.kernel_at(ex, value, out, natural, 0)
    }

    /// [`Builder::kernel`] for a value written from row `offset` of `out` on (a part
    /// of a `concat`), as long as it is.
    pub fn kernel_at(
        &mut self,
        ex: &mut SymbolicEvaluator,
        value: SymValue,
        out: usize,
        natural: bool,
        offset: i64,
    ) -> Structuring<Layout> {
        let mut dims = self.bufs[out].dims.clone();
        if let (Some(d), SymValue::Array(a)) = (dims.first_mut(), &value) {
            *d = a.len;
        }
        if dims.contains(&0) {
            // Nothing to write: no kernel.
            ex.loops.clear();
            return Ok((0..dims.len()).map(|k| (k, 1, dims[k])).collect());
        }
        let positions: Vec<Var> = dims.iter().map(|d| ex.var(*d)).collect();
        let mut v = value;
        for p in &positions {
            v = v.array()?.at(ex, &Aff::var(*p))?;
        }
        let SymValue::Scalar(e) = v else {
            return not_structured("an array whose elements are not scalars");
        };
        // A reduction whose result the value does not read (the other component of a
        // pair, another part of a `concat`) is no loop of this kernel.
        let reduced = e.reduction_vars();
        let loops = std::mem::take(&mut ex.loops)
            .into_iter()
            .filter(|(v, rec)| !rec.kind.is_reduction() || reduced.contains(v))
            .collect();
        let target = Target {
            buf: out,
            natural,
            offset: vec![offset],
        };
        self.build(ex, loops, &positions, DeepRc::unwrap_or_clone(e), target)
    }
}

/// A loop of the nest, in terms of output positions or a reduction.
struct Nested {
    var: Var,
    rec: LoopRec,
}

/// Where a kernel writes: buffer `buf`, laid out as the kernel's loops nest
/// (`natural`) or as its type reads, its positions shifted by `offset` in each
/// dimension (a part of a `concat`, a box of an output split at its padding; a
/// dimension without an offset is not shifted).
#[derive(Clone, Debug)]
pub struct Target {
    pub buf: usize,
    pub natural: bool,
    pub offset: Vec<i64>,
}

/// `loops` are the loops recorded, outermost first.
pub fn analyze(
    ex: &mut SymbolicEvaluator,
    loops: Vec<(Var, LoopRec)>,
    positions: &[Var],
    e: ScalarExpr,
    target: Target,
    builder: &mut Builder,
) -> Structuring<(Kernel, Layout, usize)> {
    let Target {
        buf: out,
        natural,
        offset,
    } = target;
    let reads_in_body = builder.reads_in_body;
    let bufs = &mut builder.bufs;
    let kinds: BTreeMap<Var, LoopKind> = loops.iter().map(|(v, r)| (*v, r.kind)).collect();
    // 1. Map loops that are digits of an output position (`(p / a) mod b`), and the
    //    reductions.
    let mut nest = Vec::new();
    let mut digits: BTreeMap<Var, Vec<(i64, Var)>> = BTreeMap::new();
    for (v, rec) in &loops {
        if rec.kind.is_reduction() {
            nest.push(Nested {
                var: *v,
                rec: rec.clone(),
            });
            continue;
        }
        if rec.extent == 1 || rec.shared {
            continue;
        }
        // A loop whose elements are never read contributes nothing to the result.
        let Some(s) = &rec.subst else {
            continue;
        };
        if let Some(w) = s.as_var() {
            if rec.kind == LoopKind::Lane && kinds.get(&w) == Some(&LoopKind::Lane) {
                continue; // the same lanes as another vector's
            }
        }
        // A loop read at a digit of an output position is a loop of the nest; one read
        // elsewhere (at a reduction's counter, inside a window) is fused into the loops
        // that read it: its counter is already replaced in what it computes.
        let digit = s.as_digit().filter(|(p, a, b)| {
            positions.contains(p) && b.unwrap_or(ex.extent(*p) / a) == rec.extent
        });
        let Some((p, a, _)) = digit else {
            continue;
        };
        // Two loops of one digit (the maps of a pair's two components) are one loop.
        let ds = digits.entry(p).or_default();
        if ds.iter().any(|(b, _)| *b == a) {
            continue;
        }
        ds.push((a, *v));
        nest.push(Nested {
            var: *v,
            rec: rec.clone(),
        });
    }
    // 2. Each output position as the sum of its digits' loops; positions without a
    //    loop get one (outermost).
    let mut implicit = Vec::new();
    let mut expansion = Vec::new();
    let mut digit_of: BTreeMap<Var, (usize, i64)> = BTreeMap::new();
    for (k, p) in positions.iter().enumerate() {
        let ds = digits.entry(*p).or_default();
        if ds.is_empty() {
            let v = ex.var(ex.extent(*p));
            implicit.push(Nested {
                var: v,
                rec: LoopRec {
                    extent: ex.extent(*p),
                    kind: LoopKind::Seq,
                    subst: None,
                    array_acc: false,
                    shared: false,
                },
            });
            ds.push((1, v));
        }
        ds.sort_by_key(|(a, _)| std::cmp::Reverse(*a));
        let mut sum = Aff::cst(0);
        let mut covered = 1;
        // Digits no loop walks (the rows of a `join`ed `generate`): (step, count).
        let mut gaps = Vec::new();
        let digits = ds.iter().rev().map(|(a, v)| (*a, Some(*v)));
        for (a, v) in digits.chain([(ex.extent(*p), None)]) {
            if a != covered {
                if a < covered || a % covered != 0 {
                    return not_structured("an output position not covered once by its loops");
                }
                gaps.push((covered, a / covered));
                covered = a;
            }
            let Some(v) = v else { break };
            digit_of.insert(v, (k, a));
            covered = ex.extent(v).saturating_mul(covered);
            sum = sum.add(&Aff::var(v).scale(a));
        }
        // Each such digit gets a loop of its own (outermost).
        for (a, n) in gaps {
            let v = ex.var(n);
            implicit.push(Nested {
                var: v,
                rec: LoopRec {
                    extent: n,
                    kind: LoopKind::Seq,
                    subst: None,
                    array_acc: false,
                    shared: false,
                },
            });
            digit_of.insert(v, (k, a));
            sum = sum.add(&Aff::var(v).scale(a));
        }
        expansion.push((*p, sum));
    }
    let free = nest.is_empty();
    // A vector's lanes are innermost, wherever the vector was made (a scalar broadcast
    // before the loop that reads it, `mul(vectorFromScalar(a))`).
    let (lanes, nest): (Vec<Nested>, Vec<Nested>) =
        nest.into_iter().partition(|l| l.rec.kind == LoopKind::Lane);
    implicit.extend(nest);
    implicit.extend(lanes);
    let nest = implicit;
    let in_loops = |e: &Aff| -> Aff {
        let mut a = e.clone();
        for (p, sum) in &expansion {
            a = a.subst(*p, sum, ex);
        }
        a
    };
    let e = e.map_indices(&mut |a| in_loops(a));
    // A buffer of the program's own is laid out as its loops nest: a copy's loops are
    // its packing, and a computation whose innermost loop (its vector lanes) walks an
    // outer dimension of its type (a convolution's output channels) writes it blocked,
    // with those lanes contiguous. A computation (a reduction) whose innermost loop
    // walks its last dimension is stored as its type reads, row-major, so that what
    // reads it in part (the first rows and columns of a padded product) indexes it
    // affinely.
    let innermost_is_last = nest
        .iter()
        .rev()
        .find(|l| !l.rec.kind.is_reduction())
        .is_none_or(|l| digit_of.get(&l.var) == Some(&(positions.len() - 1, 1)));
    let row_major =
        matches!(e, ScalarExpr::Red { .. } | ScalarExpr::Fold { .. }) && innermost_is_last;
    let by_loops = natural && !row_major;
    if by_loops && offset.iter().any(|o| *o != 0) {
        return not_structured("a part of a buffer laid out as its loops nest");
    }
    let mut layout = Vec::new();
    let out_index: Vec<Aff> = if by_loops {
        // One buffer dimension per loop that writes it, in the order they nest.
        let mut index = Vec::new();
        let mut dims = Vec::new();
        for l in nest.iter().filter(|l| !l.rec.kind.is_reduction()) {
            let (k, a) = digit_of[&l.var];
            layout.push((k, a, l.rec.extent));
            index.push(Aff::var(l.var));
            dims.push(l.rec.extent);
        }
        bufs[out].dims = dims;
        index
    } else {
        let dims = &bufs[out].dims;
        layout = (0..positions.len()).map(|k| (k, 1, dims[k])).collect();
        positions
            .iter()
            .enumerate()
            .map(|(k, p)| in_loops(&Aff::var(*p)).plus(offset.get(k).copied().unwrap_or(0)))
            .collect()
    };

    // 3. The body: `init ⊕ Σ body`, a fold's steps (which output this kernel is
    //    for), or a plain expression.
    let (reduction, body, reduced, component) = match e {
        ScalarExpr::Red {
            op,
            init,
            vars,
            body,
        } => {
            let ScalarExpr::Lit(init) = *init else {
                return not_structured(
                    "a reduction that starts from something other than a constant",
                );
            };
            (
                Some(Reduction::Combine(op, init)),
                vec![(*body).clone()],
                vars,
                0,
            )
        }
        ScalarExpr::Fold {
            id,
            inits,
            vars,
            steps,
            component,
        } => {
            // Accumulator `id + j` is output `j`; one that starts from a value reads
            // it at the first step.
            let steps = starting(steps, &inits, id, &vars)
                .iter()
                .map(|s| renumber_accs(s, id))
                .collect::<Structuring<_>>()?;
            (
                Some(Reduction::Fold(constants(&inits))),
                steps,
                vars,
                component,
            )
        }
        e => (None, vec![e], Vec::new(), 0),
    };
    let fold = matches!(reduction, Some(Reduction::Fold(_)));
    if body.iter().any(|b| b.contains_reduction(fold)) {
        return not_structured("a reduction inside another computation");
    }
    for l in &nest {
        if l.rec.kind.is_reduction() != reduced.contains(&l.var) {
            return not_structured("a reduction loop that is not the kernel's reduction");
        }
    }

    // 4. The accesses, affine in the loops; a read at an index that is not (a position
    // walked as digits that do not divide it) is a load in the body.
    let linear = |idx: &[Aff]| -> Structuring<Vec<Linear>> {
        idx.iter()
            .map(|a| {
                let a = a.recombined();
                match a.linear() {
                    Some(t) => Ok((t, a.c)),
                    None => not_structured("an index that is not affine in the loops"),
                }
            })
            .collect()
    };
    let affine = |b: usize, idx: &[Aff]| {
        let flat = flattened_digits(idx, &bufs[b].dims, ex);
        !reads_in_body || linear(flat.as_deref().unwrap_or(idx)).is_ok()
    };
    let body: Vec<ScalarExpr> = body.iter().map(|b| read_in_body(b, &affine)).collect();
    let mut loads: Vec<(usize, Vec<Aff>)> = Vec::new();
    for b in &body {
        b.collect_loads(&mut loads);
    }
    let out_lin = linear(&out_index)?;
    // (A `join`ed buffer read at a sum of loops is read through a strided view.)
    let loads_lin: Vec<_> = loads
        .iter()
        .map(|(b, idx)| match flattened_digits(idx, &bufs[*b].dims, ex) {
            Some(flat) => linear(&flat),
            None => linear(idx),
        })
        .collect::<Structuring<_>>()?;
    // Reads at indices computed from data: affine in the loops besides, which they
    // group into dimensions as operands do (each variable of an index that is not
    // affine is a component of its own).
    let mut gathered = Vec::new();
    body.iter().for_each(|b| gathers(b, &mut gathered));
    let gathers_lin: Vec<Vec<Linear>> = gathered
        .iter()
        .map(|idx| {
            linear(idx).or_else(|_| {
                let vars = idx.iter().flat_map(Aff::vars).collect::<BTreeSet<_>>();
                Ok(vars.into_iter().map(|v| (vec![(v, 1)], 0)).collect())
            })
        })
        .collect::<Structuring<_>>()?;
    let components: Vec<&(Vec<(Var, i64)>, i64)> = out_lin
        .iter()
        .chain(loads_lin.iter().flatten())
        .chain(gathers_lin.iter().flatten())
        .collect();

    // 5. Dimensions: loops that appear only together, as the digits of one index.
    let coef = |v: Var, c: &(Vec<(Var, i64)>, i64)| {
        c.0.iter().find(|(w, _)| *w == v).map_or(0, |(_, k)| *k)
    };
    let signature =
        |v: Var| -> Vec<i64> { components.iter().map(|c| coef(v, c)).collect::<Vec<_>>() };
    let mut groups: Vec<Vec<Var>> = Vec::new();
    for l in &nest {
        let s = signature(l.var);
        let joined = groups.iter_mut().find(|g| {
            let r = signature(g[0]);
            let same_kind = loops_kind(&nest, g[0]).is_reduction() == l.rec.kind.is_reduction();
            same_kind && proportional(&r, &s)
        });
        match joined {
            Some(g) => g.push(l.var),
            None => groups.push(vec![l.var]),
        }
    }
    let mut dims = Vec::new();
    // For each loop: its dimension and its stride in it.
    let mut place: BTreeMap<Var, (usize, i64)> = BTreeMap::new();
    for g in groups {
        let first = |v: Var| signature(v).into_iter().find(|k| *k != 0).unwrap_or(1);
        let min = g.iter().map(|v| first(*v).abs()).min().unwrap_or(1);
        let mut strides: Vec<(i64, Var)> = g
            .iter()
            .map(|v| (first(*v).abs() / min.max(1), *v))
            .collect();
        strides.sort_by_key(|(s, _)| std::cmp::Reverse(*s));
        let mixed_radix = {
            let mut covered = 1;
            strides.iter().rev().all(|(s, v)| {
                let ok = *s == covered;
                covered = ex.extent(*v).saturating_mul(covered);
                ok
            })
        };
        let parts: Vec<Vec<(i64, Var)>> = if mixed_radix {
            vec![strides]
        } else {
            g.iter().map(|v| vec![(1, *v)]).collect()
        };
        for part in parts {
            let d = dims.len();
            let extent = part
                .iter()
                .fold(1i64, |n, (_, v)| n.saturating_mul(ex.extent(*v)));
            let reduction = loops_kind(&nest, part[0].1).is_reduction();
            dims.push(Dim { extent, reduction });
            for (s, v) in &part {
                place.insert(*v, (d, *s));
            }
        }
    }

    // 6. The schedule: each dimension's loops from the largest step to the smallest.
    let mut schedule = Vec::new();
    let mut last_step: BTreeMap<usize, i64> = BTreeMap::new();
    for l in &nest {
        let (dim, step) = place[&l.var];
        if let Some(prev) = last_step.get(&dim) {
            if *prev <= step {
                return not_structured("a loop order that tiling cannot express");
            }
        }
        last_step.insert(dim, step);
        schedule.push(ScheduledLoop {
            dim,
            step,
            trips: l.rec.extent,
            kind: l.rec.kind,
            array_acc: l.rec.array_acc,
        });
    }

    // 7. Operands: each index in terms of dimensions, expanding buffer dimensions
    //    that are split into several.
    let in_dims = |c: &(Vec<(Var, i64)>, i64)| -> DimExpr {
        // A loop's coefficient is its dimension's times its step.
        let mut terms: Vec<(usize, i64)> = Vec::new();
        for (v, k) in &c.0 {
            let (d, s) = place[v];
            if !terms.iter().any(|(e, _)| *e == d) {
                terms.push((d, k / s));
            }
        }
        terms.retain(|(_, k)| *k != 0);
        DimExpr { terms, c: c.1 }
    };
    let operand = |buf: usize,
                   comps: &[(Vec<(Var, i64)>, i64)],
                   output: bool|
     -> Structuring<Operand> {
        let mut expand = Vec::new();
        let mut map = Vec::new();
        let mut window = Vec::new();
        for (k, c) in comps.iter().enumerate() {
            let de = in_dims(c);
            let size = bufs[buf].dims[k];
            if de.terms.len() == 1 && de.terms[0].1 == 1 {
                // One dimension, maybe offset: a window of the buffer dimension.
                let d = de.terms[0].0;
                expand.push(vec![size]);
                window.push((de.c, dims[d].extent));
                map.push(DimExpr {
                    terms: de.terms.clone(),
                    c: 0,
                });
                continue;
            }
            // A mixed-radix combination of dimensions covering the buffer dimension.
            let mut ts = de.terms.clone();
            ts.sort_by_key(|(_, k)| std::cmp::Reverse(*k));
            let mut covered = 1i64;
            let chained = !ts.is_empty()
                && ts.iter().rev().all(|(d, k)| {
                    let ok = *k == covered;
                    covered = dims[*d].extent.saturating_mul(covered);
                    ok
                });
            let radix = chained && de.c == 0 && covered == size;
            if radix {
                expand.push(ts.iter().map(|(d, _)| dims[*d].extent).collect());
                for (d, _) in &ts {
                    map.push(DimExpr {
                        terms: vec![(*d, 1)],
                        c: 0,
                    });
                    window.push((0, dims[*d].extent));
                }
            } else if output && !(chained && de.c >= 0 && de.c.saturating_add(covered) <= size) {
                return not_structured("an output index that is not a permutation of the loops");
            } else {
                // (An output written at a mixed-radix combination of dimensions that
                // covers part of the buffer dimension, a part of a `concat` of a
                // `join`ed array: a strided view, each element once.)
                expand.push(vec![size]);
                map.push(de);
                window.push((0, size));
            }
        }
        let operand = Operand {
            buf,
            expand,
            map,
            window,
            strided: None,
        };
        // (Staged in a GPU block's shared memory: the buffer's own elements, once.)
        if ex.shared.contains(&buf) {
            return Ok(operand);
        }
        Ok(operand.into_strided(
            |d| dims[d].extent,
            |d| schedule.iter().rposition(|l| l.dim == d).unwrap_or(0),
        ))
    };
    let out_operand = operand(out, &out_lin, true)?;
    let mut inputs = Vec::new();
    for ((buf, _), comps) in loads.iter().zip(&loads_lin) {
        if bufs[*buf].dims.contains(&0) {
            return not_structured("an empty array");
        }
        inputs.push(operand(*buf, comps, false)?);
    }
    // linalg infers each dimension's range from an operand indexed by it alone.
    let alone = |d: usize| {
        inputs.iter().chain([&out_operand]).any(|o| {
            o.map
                .iter()
                .any(|e| e.c == 0 && e.terms.as_slice() == [(d, 1)])
        })
    };
    let window: Vec<usize> = (0..dims.len()).filter(|d| !alone(*d)).collect();
    if !window.is_empty() {
        // A sliding window's dimensions: an operand of the window's shape, which the
        // body never reads, gives linalg their ranges (as pooling operations have).
        let shape: Vec<i64> = window.iter().map(|d| dims[*d].extent).collect();
        let buf = builder.own_buffer(shape.clone(), Scalar::F32)?;
        inputs.push(Operand {
            buf,
            expand: shape.iter().map(|n| vec![*n]).collect(),
            map: window
                .iter()
                .map(|d| DimExpr {
                    terms: vec![(*d, 1)],
                    c: 0,
                })
                .collect(),
            window: shape.iter().map(|n| (0, *n)).collect(),
            strided: None,
        });
    }
    let body: Vec<ScalarExpr> = body.iter().map(|b| b.number_loads(&loads)).collect();
    // Where the body computes indices, each loop's place, for its counter.
    let counters = match body.iter().any(checks) {
        false => BTreeMap::new(),
        true => place
            .iter()
            .map(|(v, (d, step))| (*v, (*d, *step, ex.extent(*v))))
            .collect(),
    };
    let kernel = Kernel {
        dims,
        inputs,
        outs: vec![out_operand],
        body,
        reduction,
        schedule,
        free,
        counters,
        shared: Vec::new(),
    };
    Ok((kernel, layout, component))
}

fn loops_kind(nest: &[Nested], v: Var) -> LoopKind {
    nest.iter()
        .find(|l| l.var == v)
        .map_or(LoopKind::Seq, |l| l.rec.kind)
}

/// Whether `b` is a multiple of `a` (both non-zero in the same places).
fn proportional(a: &[i64], b: &[i64]) -> bool {
    let Some(i) = a.iter().position(|k| *k != 0) else {
        return false;
    };
    if b[i] == 0 {
        return false;
    }
    a.iter().zip(b).all(|(x, y)| {
        i128::from(*x) * i128::from(b[i]) == i128::from(*y) * i128::from(a[i])
            && (*x == 0) == (*y == 0)
    })
}

/// A fold's step with its accumulators `id..` numbered from 0 (its outputs); an
/// accumulator of another reduction is no part of this kernel.
fn renumber_accs(e: &ScalarExpr, id: u32) -> Structuring<ScalarExpr> {
    let own = |a: u32, idx: &[Aff]| a >= id && idx.is_empty();
    let others = e.nodes().into_iter().any(|x| match x {
        ScalarExpr::Acc(a, idx, _) => !own(*a, idx),
        _ => false,
    });
    if others {
        return not_structured("a reduction inside another computation");
    }
    Ok(e.rewrite(&mut |x| match x {
        ScalarExpr::Acc(a, idx, s) if own(a, &idx) => ScalarExpr::Acc(a - id, idx, s),
        x => x,
    }))
}
