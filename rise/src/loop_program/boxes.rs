//! A kernel whose padded reads would copy a large array, split into boxes of its
//! output: the interior reads the array where it is, the slabs around it read padded
//! copies of the little they read (as TVM's `loop_partition` does).

use super::eval::{LoopRec, ScalarExpr, SymbolicEvaluator};
use super::index::{Aff, Atom, Extents, Var};
use super::kernel::{Builder, Target};
use super::prepare::BORDER_FILL_ELEMENTS;

/// A kernel without reductions whose padded reads would copy more elements than
/// this is split (64 KiB of `f32`).
const SPLIT_MOVES_ELEMENTS: i64 = 1 << 14;

impl Builder {
    /// A kernel whose padded reads would copy a large buffer, split into boxes of its
    /// output: the interior, whose reads are all in bounds (and read the buffer where
    /// it is), and the slabs around it, whose reads are padded copies of the little
    /// they read. Each box's sides are multiples of its dimension's outermost step,
    /// so that every box keeps the program's loops. `None` where the copy is small, a
    /// guard is no bound on an output position, or there is no interior.
    pub fn split_at_padding(
        &self,
        ex: &mut SymbolicEvaluator,
        loops: &[(Var, LoopRec)],
        positions: &[Var],
        e: &ScalarExpr,
        target: &Target,
    ) -> Option<Vec<OutputBox>> {
        if target.offset.iter().any(|o| *o != 0) {
            return None;
        }
        // The digits of the positions the loops walk, outermost first: (position,
        // minus the digit's divisor). A buffer laid out as its loops nest is split
        // only where that is the order its type reads (each box then writes it
        // row-major): a packing stays whole.
        let digits: Vec<(usize, i64)> = loops
            .iter()
            .filter(|(_, rec)| !rec.kind.is_reduction() && !rec.shared && rec.extent > 1)
            .filter_map(|(_, rec)| rec.subst.as_ref()?.as_digit())
            .filter_map(|(p, a, _)| Some((positions.iter().position(|q| *q == p)?, -a)))
            .collect();
        if target.natural && !digits.windows(2).all(|w| w[0] < w[1]) {
            return None;
        }
        // A kernel without reduction loops (a pooling whose windows are unrolled)
        // only moves memory: the copy would be most of its time, so it is split from
        // a smaller size on.
        let reduces = loops.iter().any(|(_, rec)| rec.kind.is_reduction());
        let threshold = if reduces {
            BORDER_FILL_ELEMENTS
        } else {
            SPLIT_MOVES_ELEMENTS
        };
        let mut guards = Vec::new();
        let mut large = false;
        for x in e.nodes() {
            if let ScalarExpr::Select { conds, then, .. } = x {
                guards.extend(conds.iter().cloned());
                if let ScalarExpr::Load(b, _, _) = &**then {
                    let elements = self.bufs[*b]
                        .dims
                        .iter()
                        .fold(1i64, |n, d| n.saturating_mul(*d));
                    large |= elements > threshold;
                }
            }
        }
        if !large {
            return None;
        }
        // Each position's interior: where every guard on it holds.
        let extents: Vec<i64> = positions.iter().map(|p| ex.extent(*p)).collect();
        let mut interior: Vec<(i64, i64)> = extents.iter().map(|n| (0, *n)).collect();
        for (a, lo, hi) in &guards {
            // A guard `lo <= s * p + rest < hi` on one position `p` (`s` the stride
            // of a window, 1 or more).
            let a = fold_digits(a);
            let (k, stride) = positions.iter().enumerate().find_map(|(k, p)| {
                let s = *a.terms.get(&Atom::Var(*p))?;
                (s > 0).then_some((k, s))
            })?;
            let mut rest = a.clone();
            rest.terms.remove(&Atom::Var(positions[k]));
            if positions.iter().any(|p| rest.mentions(*p)) {
                return None;
            }
            let (min, max) = rest.range(ex);
            let first = lo.saturating_sub(min);
            let last = hi.saturating_sub(max).saturating_sub(1);
            let (from, to) = &mut interior[k];
            *from =
                (*from).max(first.div_euclid(stride) + i64::from(first.rem_euclid(stride) != 0));
            *to = (*to).min(last.div_euclid(stride).saturating_add(1));
        }
        // Aligned to each dimension's outermost step (its largest digit's divisor).
        let steps: Vec<i64> = (0..positions.len())
            .map(|k| {
                let of_k = digits.iter().filter(|(q, _)| *q == k);
                of_k.map(|(_, a)| -a).max().unwrap_or(1)
            })
            .collect();
        for ((from, to), t) in interior.iter_mut().zip(&steps) {
            *from = from
                .div_euclid(*t)
                .saturating_add(i64::from(from.rem_euclid(*t) != 0))
                * t;
            *to = to.div_euclid(*t) * t;
            if from >= to {
                return None;
            }
        }
        if interior
            .iter()
            .zip(&extents)
            .all(|((from, to), n)| *from == 0 && to == n)
        {
            return None;
        }
        // The interior, then for each dimension its slabs before and after it, over the
        // interior of the dimensions before and the whole of those after.
        let mut boxes = vec![interior.clone()];
        for d in 0..positions.len() {
            let (from, to) = interior[d];
            for side in [(0, from), (to, extents[d])] {
                if side.0 == side.1 {
                    continue;
                }
                let full: Vec<(i64, i64)> = extents.iter().map(|n| (0, *n)).collect();
                boxes.push([&interior[..d], &[side], &full[d + 1..]].concat());
            }
        }
        Some(
            boxes
                .into_iter()
                .map(|range| self.output_box(ex, loops, positions, e, target, &steps, &range))
                .collect(),
        )
    }

    /// The kernel of `e` restricted to the box `range` of its positions (each from
    /// and to, multiples of the dimension's outermost step `steps`).
    #[allow(clippy::too_many_arguments)]
    fn output_box(
        &self,
        ex: &mut SymbolicEvaluator,
        loops: &[(Var, LoopRec)],
        positions: &[Var],
        e: &ScalarExpr,
        target: &Target,
        steps: &[i64],
        range: &[(i64, i64)],
    ) -> OutputBox {
        let mut e = e.clone();
        let mut loops = loops.to_vec();
        let mut new_positions = Vec::with_capacity(positions.len());
        for (k, p) in positions.iter().enumerate() {
            let (from, to) = range[k];
            if from == 0 && to == ex.extent(*p) {
                new_positions.push(*p);
                continue;
            }
            let q = ex.var(to - from);
            new_positions.push(q);
            let shifted = Aff::var(q).plus(from);
            e = e.subst(*p, &shifted, ex);
            for (v, rec) in loops.iter_mut() {
                let Some((r, a, _)) = rec.subst.as_ref().and_then(Aff::as_digit) else {
                    continue;
                };
                if r != *p || rec.kind.is_reduction() {
                    continue;
                }
                if a == steps[k] {
                    // The outermost loop: as many trips as the box has steps.
                    *v = ex.var((to - from) / a);
                    rec.extent = (to - from) / a;
                    rec.subst = Some(Aff::var(q).div(a, ex));
                } else {
                    // An inner digit is the same digit of the box's position (`from` is
                    // a multiple of the outermost step).
                    rec.subst = rec.subst.as_ref().map(|s| s.subst(*p, &Aff::var(q), ex));
                }
            }
        }
        OutputBox {
            loops,
            positions: new_positions,
            e: drop_decided_guards(&e, ex),
            target: Target {
                buf: target.buf,
                natural: false,
                offset: range.iter().map(|(from, _)| *from).collect(),
            },
        }
    }
}

/// A box of a kernel's output: its loops, positions and value, where it writes.
pub struct OutputBox {
    pub loops: Vec<(Var, LoopRec)>,
    pub positions: Vec<Var>,
    pub e: ScalarExpr,
    pub target: Target,
}

/// `a` with the digits of a position put back together (a position read through the
/// digits its tiles split it into): `k*d*(x / d) + k*(x mod d)` is `k*x`, and
/// `k*d*((x / d) mod b) + k*(x mod d)` is `k*(x mod (d*b))`.
pub fn fold_digits(a: &Aff) -> Aff {
    let mut a = a.clone();
    loop {
        // (the outer digit, its low part, what the two make)
        let pair = a.terms.iter().find_map(|(atom, k)| {
            let (x, d, whole) = match atom {
                Atom::Div(x, d) => ((**x).clone(), *d, (**x).clone()),
                Atom::Mod(inner, b) => match inner.terms.iter().next() {
                    Some((Atom::Div(x, d), 1)) if inner.c == 0 && inner.terms.len() == 1 => {
                        let whole = Aff {
                            terms: [(Atom::Mod(x.clone(), d.checked_mul(*b)?), 1)].into(),
                            c: 0,
                        };
                        ((**x).clone(), *d, whole)
                    }
                    _ => return None,
                },
                Atom::Var(_) => return None,
            };
            let low = Atom::Mod(std::rc::Rc::new(x), d);
            let kl = *a.terms.get(&low)?;
            (kl.checked_mul(d) == Some(*k)).then(|| (atom.clone(), low, whole, kl))
        });
        let Some((high, low, whole, k)) = pair else {
            return a;
        };
        a.terms.remove(&high);
        a.terms.remove(&low);
        a = a.add(&whole.scale(k));
    }
}

/// `e` with each padding guard that always holds, or never, decided.
pub fn drop_decided_guards(e: &ScalarExpr, ex: &SymbolicEvaluator) -> ScalarExpr {
    e.rewrite(&mut |e| {
        let ScalarExpr::Select { conds, then, other } = e else {
            return e;
        };
        let mut open = Vec::new();
        for (a, lo, hi) in conds {
            let (min, max) = a.range(ex);
            if max < lo || min >= hi {
                return (*other).clone();
            }
            if !(min >= lo && max < hi) {
                open.push((a, lo, hi));
            }
        }
        match open.is_empty() {
            true => (*then).clone(),
            false => ScalarExpr::Select {
                conds: open,
                then,
                other,
            },
        }
    })
}
