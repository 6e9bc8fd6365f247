//! Guards between computed values: `padCst` of an array that is no buffer of the
//! program's (a padded `relu`), and a `concat` (an array literal) read across its
//! parts. Each such guard is read from a buffer of its own, which kernels write box
//! by box: in each box every condition is decided, so that each kernel computes one
//! branch, and only where that branch is defined (a padded array's element is never
//! computed at a position outside it).

use super::boxes::{drop_decided_guards, fold_digits};
use super::eval::{not_structured, ScalarExpr, Structuring, SymbolicEvaluator};
use super::index::{Aff, Atom, Extents, Var};
use super::kernel::{Builder, Target};
use super::prepare::variables;
use super::scalar::{ExprRef, Memo};
use std::collections::{BTreeMap, BTreeSet};

/// The most kernels one guarded value is written by (an array literal read at
/// computed positions is a kernel per item): past it, compiling them would take
/// longer than a user waits for, and the program is refused.
const MAX_BOXES: usize = 1024;

/// The most conditions (on different positions) of a guard written box by box.
const MAX_CONDITIONS: usize = 8;

/// A box of a guarded value's buffer still to write: its expression in terms of its
/// positions (one per buffer dimension, each counting from the box's corner), and
/// where the box starts in the buffer.
struct Pending {
    e: ScalarExpr,
    positions: Vec<Var>,
    corner: Vec<i64>,
}

/// Guards that differ only by a shift of their positions (a stencil's neighbours of
/// one padded image): one buffer holds them all, over the union of what they read.
struct Group {
    /// The first guard found, digits folded.
    first: ScalarExpr,
    /// Each condition's own variable and the rest of its index.
    own: Vec<(Var, Aff)>,
    /// Each condition's index: the least and the greatest value any guard reads.
    ranges: Vec<(i64, i64)>,
}

impl Group {
    fn new(e: ScalarExpr, ex: &SymbolicEvaluator) -> Structuring<Group> {
        let ScalarExpr::Select { conds, .. } = &e else {
            return not_structured("a guard that is no guard");
        };
        if mentions_accumulator(&e) {
            return not_structured("a guarded value read by a reduction's step");
        }
        if conds.len() > MAX_CONDITIONS {
            return not_structured(format!(
                "a guard of more than {MAX_CONDITIONS} conditions on different positions"
            ));
        }
        let mut own: Vec<(Var, Aff)> = Vec::new();
        for (a, _, _) in conds {
            let v = a.terms.iter().find_map(|(atom, k)| match atom {
                Atom::Var(v)
                    if *k == 1 && conds.iter().filter(|(b, _, _)| b.mentions(*v)).count() == 1 =>
                {
                    Some(*v)
                }
                _ => None,
            });
            let Some(v) = v else {
                let digits = a.terms.keys().any(|t| !matches!(t, Atom::Var(_)));
                return not_structured(match digits {
                    // (a `join`ed `concat` read across its parts)
                    true => "a guard on a position's digits (`p / d`, `p mod d`)",
                    false => "a guard on a position shared with another guard",
                });
            };
            let mut rest = a.clone();
            rest.terms.remove(&Atom::Var(v));
            own.push((v, rest));
        }
        let ranges = conds.iter().map(|(a, _, _)| a.range(ex)).collect();
        Ok(Group {
            first: e,
            own,
            ranges,
        })
    }

    /// The shift of each condition's position that makes the first guard `e`, if one
    /// does.
    fn shifts(&self, e: &ScalarExpr, ex: &SymbolicEvaluator) -> Option<Vec<i64>> {
        let (ScalarExpr::Select { conds: mine, .. }, ScalarExpr::Select { conds: theirs, .. }) =
            (&self.first, e)
        else {
            return None;
        };
        if mine.len() != theirs.len() {
            return None;
        }
        let mut shifted = self.first.clone();
        let mut shifts = Vec::with_capacity(mine.len());
        for (((a, lo, hi), (b, lo2, hi2)), (v, _)) in mine.iter().zip(theirs).zip(&self.own) {
            let d = b.c - a.c;
            if (lo, hi) != (lo2, hi2) || a.plus(d) != *b {
                return None;
            }
            shifted = shifted.subst(*v, &Aff::var(*v).plus(d), ex);
            shifts.push(d);
        }
        (shifted == *e).then_some(shifts)
    }
}

/// Where a group's guards are read from: its buffer, the least value of each
/// condition's index, the variables its branches read besides.
struct Written {
    buf: usize,
    mins: Vec<i64>,
    free: Vec<Var>,
}

impl Builder {
    /// `e` with each guard that is not a buffer's padding (the buffer's element
    /// within its bounds, a constant outside) read from a buffer of its own, one per
    /// group of guards that differ by a shift.
    pub fn materialize_guards(
        &mut self,
        ex: &mut SymbolicEvaluator,
        e: &ScalarExpr,
    ) -> Structuring<ScalarExpr> {
        // (A guard at a constant position, an unrolled reduction's, is decided.)
        let e = &drop_decided_guards(e, ex);
        let guard =
            |x: &ScalarExpr| matches!(x, ScalarExpr::Select { .. }) && self.padding_of(x).is_none();
        let found: Vec<&ScalarExpr> = e
            .nodes_where(|x| !guard(x))
            .into_iter()
            .filter(|x| guard(x))
            .collect();
        if found.is_empty() {
            return Ok(e.clone());
        }
        let mut groups: Vec<Group> = Vec::new();
        for x in found {
            let x = normalized(x);
            let known = groups.iter_mut().find_map(|g| Some((g.shifts(&x, ex)?, g)));
            match known {
                Some((_, g)) => {
                    let ScalarExpr::Select { conds, .. } = &x else {
                        unreachable!("a group holds guards")
                    };
                    for ((a, _, _), (min, max)) in conds.iter().zip(&mut g.ranges) {
                        let (lo, hi) = a.range(ex);
                        (*min, *max) = ((*min).min(lo), (*max).max(hi));
                    }
                }
                None => groups.push(Group::new(x, ex)?),
            }
        }
        let written = groups
            .iter()
            .map(|g| self.write_group(ex, g))
            .collect::<Structuring<Vec<_>>>()?;
        self.read_guards(ex, e, &groups, &written, &mut Memo::default())
    }

    /// `e` with each guard read from its group's buffer.
    fn read_guards(
        &mut self,
        ex: &mut SymbolicEvaluator,
        e: &ScalarExpr,
        groups: &[Group],
        written: &[Written],
        memo: &mut Memo<ExprRef>,
    ) -> Structuring<ScalarExpr> {
        if let ScalarExpr::Select { .. } = e {
            if self.padding_of(e).is_none() {
                let x = normalized(e);
                let ScalarExpr::Select { conds, .. } = &x else {
                    unreachable!("folding keeps a guard")
                };
                let Some(w) = groups
                    .iter()
                    .zip(written)
                    .find_map(|(g, w)| g.shifts(&x, ex).map(|_| w))
                else {
                    return not_structured("a guard of no group");
                };
                let index = conds
                    .iter()
                    .zip(&w.mins)
                    .map(|((a, _, _), min)| a.plus(-min))
                    .chain(w.free.iter().map(|f| Aff::var(*f)))
                    .collect();
                return Ok(ScalarExpr::Load(w.buf, index, x.scalar()));
            }
        }
        e.map_children(&mut |c| memo.made(c, |memo| self.read_guards(ex, c, groups, written, memo)))
    }

    /// The buffer of a group of guards, indexed by their conditions' positions and
    /// the variables their branches read besides: each condition `lo <= a < hi` has a
    /// variable `v` of its own in `a = v + rest`, which the branches read only through
    /// `a` (they are read at `v = p - rest`: a position `p` of the buffer, over the
    /// range `a` takes).
    fn write_group(&mut self, ex: &mut SymbolicEvaluator, g: &Group) -> Structuring<Written> {
        let guarded: BTreeSet<Var> = match &g.first {
            ScalarExpr::Select { conds, .. } => {
                conds.iter().flat_map(|(a, _, _)| a.vars()).collect()
            }
            _ => BTreeSet::new(),
        };
        let mut positions: Vec<Var> = g
            .ranges
            .iter()
            .map(|(min, max)| ex.var(max.saturating_sub(*min).saturating_add(1)))
            .collect();
        let mut body = g.first.clone();
        for ((v, rest), (p, (min, _))) in g.own.iter().zip(positions.iter().zip(&g.ranges)) {
            let at = Aff::var(*p).plus(*min).add(&rest.scale(-1));
            body = body.subst(*v, &at, ex);
        }
        let free: Vec<Var> = variables(&body)
            .into_iter()
            .filter(|v| !positions.contains(v))
            .collect();
        if free.iter().any(|v| guarded.contains(v)) {
            return not_structured(
                "a guarded value that reads its position other than through its guard",
            );
        }
        for f in &free {
            let p = ex.var(ex.extent(*f));
            body = body.subst(*f, &Aff::var(p), ex);
            positions.push(p);
        }
        let dims: Vec<i64> = positions.iter().map(|p| ex.extent(*p)).collect();
        let buf = self.own_buffer(dims, g.first.scalar())?;
        self.write_boxes(ex, buf, body, positions)?;
        Ok(Written {
            buf,
            mins: g.ranges.iter().map(|(min, _)| *min).collect(),
            free,
        })
    }

    /// The kernels that write `e` (over `positions`) into `buf`, box by box: a box
    /// whose expression is a guard on its own positions is split where each
    /// condition changes, until each box computes one branch.
    fn write_boxes(
        &mut self,
        ex: &mut SymbolicEvaluator,
        buf: usize,
        e: ScalarExpr,
        positions: Vec<Var>,
    ) -> Structuring<()> {
        let corner = vec![0; positions.len()];
        let mut pending = vec![Pending {
            e,
            positions,
            corner,
        }];
        let mut written = 0;
        while let Some(b) = pending.pop() {
            let e = drop_decided_guards(&b.e, ex);
            if let Some(split) = split_box(ex, &e, &b)? {
                pending.extend(split);
                continue;
            }
            written += 1;
            if written > MAX_BOXES {
                return not_structured(format!(
                    "a guarded value written by more than {MAX_BOXES} kernels (an array literal read at computed positions)"
                ));
            }
            let target = Target {
                buf,
                natural: false,
                offset: b.corner,
            };
            self.build(ex, Vec::new(), &b.positions, e, target)?;
        }
        Ok(())
    }
}

/// `b` split where the conditions of its guard `e` change, if `e` is a guard whose
/// conditions are each on one of the box's positions (`p + c`): a box per range of
/// each, the guard's branch in it.
fn split_box(
    ex: &mut SymbolicEvaluator,
    e: &ScalarExpr,
    b: &Pending,
) -> Structuring<Option<Vec<Pending>>> {
    let ScalarExpr::Select { conds, then, other } = e else {
        return Ok(None);
    };
    // For each position, the (lo, hi) of its condition in the box's own counting.
    let mut bounds: Vec<Option<(i64, i64)>> = vec![None; b.positions.len()];
    for (a, lo, hi) in conds {
        let k = match (a.terms.len(), a.terms.iter().next()) {
            (1, Some((Atom::Var(v), 1))) => b.positions.iter().position(|p| p == v),
            _ => None,
        };
        let Some(k) = k else {
            return Ok(None);
        };
        let (lo, hi) = (lo.saturating_sub(a.c), hi.saturating_sub(a.c));
        bounds[k] = Some(match bounds[k] {
            Some((l, h)) => (l.max(lo), h.min(hi)),
            None => (lo, hi),
        });
    }
    // Each position's ranges: (start, length, inside its condition).
    let ranges: Vec<Vec<(i64, i64, bool)>> = b
        .positions
        .iter()
        .zip(&bounds)
        .map(|(p, bound)| {
            let n = ex.extent(*p);
            match bound {
                None => vec![(0, n, true)],
                Some((lo, hi)) => {
                    let (lo, hi) = ((*lo).clamp(0, n), (*hi).clamp(0, n));
                    let cuts = [
                        (0, lo, false),
                        (lo, hi.max(lo), true),
                        (hi.max(lo), n, false),
                    ];
                    cuts.into_iter()
                        .filter(|(s, e, _)| s < e)
                        .map(|(s, e, inside)| (s, e - s, inside))
                        .collect()
                }
            }
        })
        .collect();
    let count = ranges
        .iter()
        .try_fold(1usize, |n, r| n.checked_mul(r.len()));
    if count.is_none_or(|n| n > MAX_BOXES) {
        return not_structured(format!("a guard of more than {MAX_BOXES} boxes"));
    }
    // Every combination of the positions' ranges.
    let mut boxes = vec![(Vec::new(), true)];
    for r in &ranges {
        boxes = boxes
            .into_iter()
            .flat_map(|(picked, inside): (Vec<(i64, i64)>, bool)| {
                r.iter().map(move |(s, n, ins)| {
                    let mut picked = picked.clone();
                    picked.push((*s, *n));
                    (picked, inside && *ins)
                })
            })
            .collect();
    }
    let mut out = Vec::with_capacity(boxes.len());
    for (picked, inside) in boxes {
        let mut e = if inside {
            (**then).clone()
        } else {
            (**other).clone()
        };
        let mut positions = Vec::with_capacity(picked.len());
        let mut corner = b.corner.clone();
        for ((p, (start, n)), c) in b.positions.iter().zip(&picked).zip(&mut corner) {
            let q = ex.var(*n);
            e = e.subst(*p, &Aff::var(q).plus(*start), ex);
            positions.push(q);
            *c += start;
        }
        out.push(Pending {
            e,
            positions,
            corner,
        });
    }
    Ok(Some(out))
}

/// The guard `e` with its positions' digits put back together, and its conditions
/// on one index (up to a constant: paddings of paddings) as one.
fn normalized(e: &ScalarExpr) -> ScalarExpr {
    let e = e.map_indices(&mut fold_digits);
    let ScalarExpr::Select { conds, then, other } = e else {
        return e;
    };
    // Each index without its constant: the index, and the range it must be in.
    let mut merged: BTreeMap<Aff, (Aff, i64, i64)> = BTreeMap::new();
    for (a, lo, hi) in conds {
        let mut key = a.clone();
        key.c = 0;
        match merged.get_mut(&key) {
            Some((first, l, h)) => {
                let d = a.c - first.c;
                (*l, *h) = (
                    (*l).max(lo.saturating_sub(d)),
                    (*h).min(hi.saturating_sub(d)),
                );
            }
            None => {
                merged.insert(key, (a, lo, hi));
            }
        }
    }
    ScalarExpr::Select {
        conds: merged.into_values().collect(),
        then,
        other,
    }
}

fn mentions_accumulator(e: &ScalarExpr) -> bool {
    e.nodes().into_iter().any(|x| {
        matches!(
            x,
            ScalarExpr::Acc(..) | ScalarExpr::Red { .. } | ScalarExpr::Fold { .. }
        )
    })
}
