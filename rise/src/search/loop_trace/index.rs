//! Indices at one point of the iteration space, with how they move when each loop
//! counter moves one step.

use smallvec::SmallVec;

/// A loop of a trace (its position in [`super::Trace::loops`]).
pub type LoopId = u32;

/// An index at the point where every loop counter is 0, and for each loop, how much
/// it changes when that counter alone becomes 1: a finite difference per loop.
///
/// Sums and constant multiples are exact; divisions and remainders by a constant are
/// exact differences at that point (`join` reads `k / m` and `k % m`: a step of `k`
/// moves the remainder), and clamps keep the differences of the inside (padding is
/// the border of an array: its inside is what runs most of the time).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Idx {
    /// The value at the point.
    pub value: i64,
    /// `(loop, difference)`, sorted by loop, no zero difference.
    pub steps: SmallVec<[(LoopId, i64); 4]>,
}

impl Idx {
    /// A constant.
    pub fn cst(value: i64) -> Idx {
        Idx {
            value,
            steps: SmallVec::new(),
        }
    }

    /// The counter of loop `l` (0 at the point, one more per step).
    pub fn counter(l: LoopId) -> Idx {
        let mut steps = SmallVec::new();
        steps.push((l, 1));
        Idx { value: 0, steps }
    }

    /// `self + other`.
    pub fn add(&self, other: &Idx) -> Idx {
        let (a, b) = (&self.steps, &other.steps);
        let mut steps: SmallVec<[(LoopId, i64); 4]> = SmallVec::new();
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let next = if j == b.len() || (i < a.len() && a[i].0 < b[j].0) {
                i += 1;
                a[i - 1]
            } else if i == a.len() || b[j].0 < a[i].0 {
                j += 1;
                b[j - 1]
            } else {
                i += 1;
                j += 1;
                (a[i - 1].0, a[i - 1].1.wrapping_add(b[j - 1].1))
            };
            if next.1 != 0 {
                steps.push(next);
            }
        }
        Idx {
            value: self.value.wrapping_add(other.value),
            steps,
        }
    }

    /// `self + c`.
    pub fn offset(&self, c: i64) -> Idx {
        Idx {
            value: self.value.wrapping_add(c),
            steps: self.steps.clone(),
        }
    }

    /// `self * k`.
    pub fn scale(&self, k: i64) -> Idx {
        if k == 0 {
            return Idx::cst(0);
        }
        Idx {
            value: self.value.wrapping_mul(k),
            steps: self
                .steps
                .iter()
                .map(|(l, d)| (*l, d.wrapping_mul(k)))
                .collect(),
        }
    }

    /// `self * k + other`.
    pub fn affine(&self, k: i64, other: &Idx) -> Idx {
        self.scale(k).add(other)
    }

    fn each(&self, f: impl Fn(i64) -> i64) -> Idx {
        let at = f(self.value);
        Idx {
            value: at,
            steps: self
                .steps
                .iter()
                .map(|(l, d)| (*l, f(self.value.wrapping_add(*d)).wrapping_sub(at)))
                .filter(|(_, d)| *d != 0)
                .collect(),
        }
    }

    /// `self / m` (rounding down; `m > 0`).
    pub fn div(&self, m: i64) -> Idx {
        self.each(|v| v.div_euclid(m.max(1)))
    }

    /// `self mod m` (`m > 0`).
    pub fn rem(&self, m: i64) -> Idx {
        self.each(|v| v.rem_euclid(m.max(1)))
    }

    /// `self` clamped to `lo..=hi`, moving as the inside moves.
    pub fn clamp(&self, lo: i64, hi: i64) -> Idx {
        Idx {
            value: self.value.clamp(lo, hi.max(lo)),
            steps: self.steps.clone(),
        }
    }

    /// How much it moves when loop `l` takes one step.
    pub fn step(&self, l: LoopId) -> i64 {
        self.steps
            .iter()
            .find(|(k, _)| *k == l)
            .map_or(0, |(_, d)| *d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_follow_sums_products_and_digits() {
        let (i, j) = (Idx::counter(0), Idx::counter(1));
        // A tiled index: 32 * i + j.
        let tiled = i.affine(32, &j);
        assert_eq!((tiled.step(0), tiled.step(1)), (32, 1));
        // `join` of rows of 8 read at k = tiled: the row moves every 8 steps of j.
        assert_eq!(tiled.div(8).step(1), 0);
        assert_eq!(tiled.div(8).step(0), 4);
        assert_eq!(tiled.rem(8).step(1), 1);
        // Differences cancel.
        assert!(i.add(&i.scale(-1)).steps.is_empty());
        // A clamp keeps the inside's steps.
        assert_eq!(i.offset(-1).clamp(0, 9).value, 0);
        assert_eq!(i.offset(-1).clamp(0, 9).step(0), 1);
    }
}
