//! One algebra of views: where each element of a reshaped array is found.
//!
//! `take`, `drop`, `split`, `slide`, `join`, `transpose`, `padCst`, `padClamp`,
//! `concat`, `asVector` and `asScalar` move no data: every element of their result is
//! an element of their argument at another index. A [`Reshape`] says which, once, for
//! every reader of views: the interpreter reads it with numbers ([`Numbers`]), the
//! bridge with affine expressions (its structured kernels) or with MLIR index values
//! (its loops), each through an [`Indexing`] of its own. What index arithmetic cannot
//! decide (is a position in the padding, in which part of a `concat`) comes back in
//! the [`Source`] for the reader to decide: the interpreter compares numbers, the
//! bridge knows it from an index's range or generates a select.
//!
//! ```
//! use elevate_rise::view::{Numbers, Reshape, Row, Source};
//!
//! // join of 3 rows of 4: element 6 is element 2 of row 1.
//! let join = Reshape::Join { rows: 3, columns: 4 };
//! assert_eq!(join.element(&mut Numbers, &6), Source::AtNested(1, 2));
//! // split(4) of 12: element 1 is a view, elements 4.. of the source.
//! let split = Reshape::Split { chunk: 4, len: 12 };
//! let Source::Row(row) = split.element(&mut Numbers, &1) else { unreachable!() };
//! assert_eq!(row, Row::Run { start: 4, len: 4 });
//! assert_eq!(row.element(&mut Numbers, &3), Source::At(7));
//! ```

/// The index arithmetic views are read with. Indices are never negative: a view maps
/// an index within its length to an index within its source's.
pub trait Indexing {
    /// An index: a number, an affine expression, an SSA value.
    type Index: Clone;
    /// `i + k` (`k` may be negative where the result is not).
    fn offset(&mut self, i: &Self::Index, k: i64) -> Self::Index;
    /// `i * k`.
    fn scale(&mut self, i: &Self::Index, k: i64) -> Self::Index;
    /// `i + j`.
    fn add(&mut self, i: &Self::Index, j: &Self::Index) -> Self::Index;
    /// `i / k` for `k > 0`.
    fn div(&mut self, i: &Self::Index, k: i64) -> Self::Index;
    /// `i % k` for `k > 0`.
    fn rem(&mut self, i: &Self::Index, k: i64) -> Self::Index;
}

/// Indices as numbers (the interpreter's).
#[derive(Clone, Copy, Debug, Default)]
pub struct Numbers;

impl Indexing for Numbers {
    type Index = i64;
    fn offset(&mut self, i: &i64, k: i64) -> i64 {
        i + k
    }
    fn scale(&mut self, i: &i64, k: i64) -> i64 {
        i * k
    }
    fn add(&mut self, i: &i64, j: &i64) -> i64 {
        i + j
    }
    fn div(&mut self, i: &i64, k: i64) -> i64 {
        i / k
    }
    fn rem(&mut self, i: &i64, k: i64) -> i64 {
        i % k
    }
}

/// A reshaping primitive applied to arrays of known lengths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reshape {
    /// `take` and `drop`: `len` elements from `offset` on.
    Offset {
        /// The first element taken.
        offset: i64,
        /// How many.
        len: i64,
    },
    /// `split(chunk)` of `len` elements: `[i][j]` is element `i * chunk + j`.
    Split {
        /// Elements per chunk.
        chunk: i64,
        /// The source's length.
        len: i64,
    },
    /// `slide(size, step)` of `len` elements: `[i][j]` is element `i * step + j`.
    Slide {
        /// Elements per window.
        size: i64,
        /// From one window to the next.
        step: i64,
        /// The source's length.
        len: i64,
    },
    /// `join` of `rows` rows of `columns`: `[k]` is `[k / columns][k % columns]`.
    Join {
        /// The source's length.
        rows: i64,
        /// Each row's length.
        columns: i64,
    },
    /// `transpose` of `rows` rows of `columns`: `[j][i]` is `[i][j]`.
    Transpose {
        /// The source's length.
        rows: i64,
        /// Each row's length.
        columns: i64,
    },
    /// `padCst(left, right)` of `len` elements: `[i]` is element `i - left` within
    /// the source, the padding value outside.
    PadConstant {
        /// Padding before.
        left: i64,
        /// Padding after.
        right: i64,
        /// The source's length.
        len: i64,
    },
    /// `padClamp(left, right)` of `len` elements: as `padCst`, but the nearest
    /// element of the source outside it.
    PadClamp {
        /// Padding before.
        left: i64,
        /// Padding after.
        right: i64,
        /// The source's length.
        len: i64,
    },
    /// `concat` of arrays of `first` and `second` elements.
    Concat {
        /// The first array's length.
        first: i64,
        /// The second array's length.
        second: i64,
    },
    /// `asVector(width)` of `len` scalars: element `i` has lanes `i * width + k`.
    AsVector {
        /// Lanes per vector.
        width: i64,
        /// The source's length.
        len: i64,
    },
    /// `asScalar` of `len` vectors of `width`: `[k]` is lane `k % width` of element
    /// `k / width`.
    AsScalar {
        /// Lanes per vector.
        width: i64,
        /// The source's length.
        len: i64,
    },
}

/// Where an element of a view is found in its source (or sources, for `concat`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source<I> {
    /// The source's element at this index.
    At(I),
    /// Element `.1` of the source's element `.0` (an array of arrays).
    AtNested(I, I),
    /// The element is a view itself: a row of the source.
    Row(Row<I>),
    /// `padCst`: the source's element at `inside` where `lo <= at < hi`, the padding
    /// value elsewhere.
    Padded {
        /// The position in the padded array.
        at: I,
        /// Where the source starts in it.
        lo: i64,
        /// Where it ends.
        hi: i64,
        /// The position in the source (meaningful where it is in it).
        inside: I,
    },
    /// `padClamp`: the source's element at `inside` where `lo <= at < hi`, its first
    /// element where `at < lo`, its last where `at >= hi`.
    Clamped {
        /// The position in the padded array.
        at: I,
        /// Where the source starts in it.
        lo: i64,
        /// Where it ends.
        hi: i64,
        /// The position in the source (meaningful where it is in it).
        inside: I,
    },
    /// `concat`: the first array's element at `at` where `at < first`, the second's
    /// at `second` elsewhere.
    Either {
        /// The position in the concatenation (and in the first array).
        at: I,
        /// The first array's length.
        first: i64,
        /// The position in the second array (meaningful where it is in it).
        second: I,
    },
    /// `asVector`: the vector of the source's elements at `base + k` for `k < width`.
    Lanes {
        /// The first lane's element.
        base: I,
        /// How many lanes.
        width: i64,
    },
    /// `asScalar`: lane `lane` of the source's element at `at`.
    Lane {
        /// The vector's position.
        at: I,
        /// The lane.
        lane: I,
    },
}

/// A row of a source that a view's element is: a run of its elements (`split`,
/// `slide`) or a column of its rows (`transpose`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Row<I> {
    /// Elements `start..start + len`.
    Run {
        /// The first.
        start: I,
        /// How many.
        len: i64,
    },
    /// Element `column` of each of the source's `len` rows.
    Column {
        /// The column.
        column: I,
        /// How many rows.
        len: i64,
    },
}

impl<I: Clone> Row<I> {
    /// The row's length.
    pub fn len(&self) -> i64 {
        match self {
            Row::Run { len, .. } | Row::Column { len, .. } => *len,
        }
    }

    /// Whether the row is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where the row's element `k` is found in the source.
    pub fn element<X: Indexing<Index = I>>(&self, x: &mut X, k: &I) -> Source<I> {
        match self {
            Row::Run { start, .. } => Source::At(x.add(start, k)),
            Row::Column { column, .. } => Source::AtNested(k.clone(), column.clone()),
        }
    }
}

impl Reshape {
    /// The view's length; `None` where it overflows or the reshape does not fit its
    /// source (a chunk or a step of 0, a window longer than the source).
    pub fn len(&self) -> Option<i64> {
        match *self {
            Reshape::Offset { len, .. } => Some(len),
            Reshape::Split { chunk, len } => (chunk > 0).then(|| len / chunk),
            Reshape::Slide { size, step, len } => {
                (step > 0 && size <= len).then(|| (len - size) / step + 1)
            }
            Reshape::Join { rows, columns } => rows.checked_mul(columns),
            Reshape::Transpose { columns, .. } => Some(columns),
            Reshape::PadConstant { left, right, len } | Reshape::PadClamp { left, right, len } => {
                left.checked_add(len)?.checked_add(right)
            }
            Reshape::Concat { first, second } => first.checked_add(second),
            Reshape::AsVector { width, len } => (width > 0).then(|| len / width),
            Reshape::AsScalar { width, len } => len.checked_mul(width),
        }
    }

    /// Whether the view is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// Whether the reshape applies to a source of `len` elements (and, for `concat`,
    /// a second array of `second`): every element of the view is then in its source.
    pub fn fits(&self, len: i64, second: Option<i64>) -> bool {
        match *self {
            Reshape::Offset { offset, len: n } => offset
                .checked_add(n)
                .is_some_and(|end| offset >= 0 && n >= 0 && end <= len),
            Reshape::Concat { first, second: n } => first == len && second == Some(n),
            Reshape::Split { len: n, .. }
            | Reshape::Slide { len: n, .. }
            | Reshape::PadConstant { len: n, .. }
            | Reshape::PadClamp { len: n, .. }
            | Reshape::AsVector { len: n, .. }
            | Reshape::AsScalar { len: n, .. }
            | Reshape::Join { rows: n, .. }
            | Reshape::Transpose { rows: n, .. } => n == len,
        }
    }

    /// Where the view's element `i` is found.
    pub fn element<X: Indexing>(&self, x: &mut X, i: &X::Index) -> Source<X::Index> {
        match *self {
            Reshape::Offset { offset, .. } => Source::At(x.offset(i, offset)),
            Reshape::Split { chunk, .. } => Source::Row(Row::Run {
                start: x.scale(i, chunk),
                len: chunk,
            }),
            Reshape::Slide { size, step, .. } => Source::Row(Row::Run {
                start: x.scale(i, step),
                len: size,
            }),
            Reshape::Join { columns, .. } => Source::AtNested(x.div(i, columns), x.rem(i, columns)),
            Reshape::Transpose { rows, .. } => Source::Row(Row::Column {
                column: i.clone(),
                len: rows,
            }),
            Reshape::PadConstant { left, len, .. } => Source::Padded {
                at: i.clone(),
                lo: left,
                hi: left + len,
                inside: x.offset(i, -left),
            },
            Reshape::PadClamp { left, len, .. } => Source::Clamped {
                at: i.clone(),
                lo: left,
                hi: left + len,
                inside: x.offset(i, -left),
            },
            Reshape::Concat { first, .. } => Source::Either {
                at: i.clone(),
                first,
                second: x.offset(i, -first),
            },
            Reshape::AsVector { width, .. } => Source::Lanes {
                base: x.scale(i, width),
                width,
            },
            Reshape::AsScalar { width, .. } => Source::Lane {
                at: x.div(i, width),
                lane: x.rem(i, width),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::{QuickCheck, TestResult};

    /// Every reshape of small sizes, built from three numbers.
    fn reshapes(a: u8, b: u8, c: u8) -> Vec<(Reshape, i64, i64)> {
        let (a, b, c) = (i64::from(a % 9), i64::from(b % 9) + 1, i64::from(c % 9));
        // (the reshape, its source's length, each source row's length)
        vec![
            (Reshape::Offset { offset: a, len: c }, a + c + b, 1),
            (
                Reshape::Split {
                    chunk: b,
                    len: b * c,
                },
                b * c,
                1,
            ),
            (
                Reshape::Slide {
                    size: a,
                    step: b,
                    len: a + b * c,
                },
                a + b * c,
                1,
            ),
            (
                Reshape::Join {
                    rows: a,
                    columns: c,
                },
                a,
                c,
            ),
            (
                Reshape::Transpose {
                    rows: a,
                    columns: c,
                },
                a,
                c,
            ),
            (
                Reshape::PadConstant {
                    left: a,
                    right: c,
                    len: b,
                },
                b,
                1,
            ),
            (
                Reshape::PadClamp {
                    left: a,
                    right: c,
                    len: b,
                },
                b,
                1,
            ),
            (
                Reshape::Concat {
                    first: a,
                    second: c,
                },
                a,
                1,
            ),
            (
                Reshape::AsVector {
                    width: b,
                    len: b * c,
                },
                b * c,
                1,
            ),
            (Reshape::AsScalar { width: b, len: c }, c, b),
        ]
    }

    /// Where each element of a view is read, as (source, row, column) triples: every
    /// one lies within its source, and each element of a view that moves no data is
    /// read once.
    fn reads(reshape: &Reshape) -> Vec<(u8, i64, i64)> {
        let mut out = Vec::new();
        let mut x = Numbers;
        for i in 0..reshape.len().unwrap() {
            let mut sources = vec![reshape.element(&mut x, &i)];
            while let Some(source) = sources.pop() {
                match source {
                    Source::At(k) => out.push((0, k, 0)),
                    Source::AtNested(k, l) | Source::Lane { at: k, lane: l } => out.push((0, k, l)),
                    Source::Row(row) => {
                        sources.extend((0..row.len()).map(|k| row.element(&mut x, &k)))
                    }
                    Source::Padded { at, lo, hi, inside }
                    | Source::Clamped { at, lo, hi, inside } => {
                        if (lo..hi).contains(&at) {
                            out.push((0, inside, 0));
                        }
                    }
                    Source::Either { at, first, second } => match at < first {
                        true => out.push((0, at, 0)),
                        false => out.push((1, second, 0)),
                    },
                    Source::Lanes { base, width } => {
                        out.extend((base..base + width).map(|k| (0, k, 0)))
                    }
                }
            }
        }
        out
    }

    #[test]
    fn every_element_of_a_view_is_read_within_its_source() {
        fn prop(a: u8, b: u8, c: u8) -> TestResult {
            for (reshape, len, row) in reshapes(a, b, c) {
                let second = match reshape {
                    Reshape::Concat { second, .. } => Some(second),
                    _ => None,
                };
                assert!(reshape.fits(len, second), "{reshape:?}");
                let len_of = |source| if source == 0 { len } else { second.unwrap() };
                for (source, k, l) in reads(&reshape) {
                    let within = (0..len_of(source)).contains(&k) && (0..row).contains(&l);
                    if !within {
                        return TestResult::error(format!("{reshape:?} reads {source}:[{k}][{l}]"));
                    }
                }
            }
            TestResult::passed()
        }
        QuickCheck::new()
            .tests(300)
            .quickcheck(prop as fn(u8, u8, u8) -> TestResult);
    }

    #[test]
    fn reshapes_that_move_no_data_read_each_element_once() {
        for (a, b, c) in [(0, 0, 0), (3, 4, 5), (8, 2, 7)] {
            for (reshape, len, row) in reshapes(a, b, c) {
                let once = matches!(
                    reshape,
                    Reshape::Split { .. }
                        | Reshape::Join { .. }
                        | Reshape::Transpose { .. }
                        | Reshape::Concat { .. }
                        | Reshape::AsVector { .. }
                        | Reshape::AsScalar { .. }
                );
                if !once {
                    continue;
                }
                let second = match reshape {
                    Reshape::Concat { second, .. } => second,
                    _ => 0,
                };
                let mut read = reads(&reshape);
                assert_eq!(read.len() as i64, len * row + second, "{reshape:?}");
                read.sort();
                read.dedup();
                assert_eq!(read.len() as i64, len * row + second, "{reshape:?}");
            }
        }
    }

    #[test]
    fn lengths_that_overflow_and_reshapes_that_do_not_fit_are_refused() {
        let join = Reshape::Join {
            rows: 2,
            columns: i64::MAX,
        };
        assert_eq!(join.len(), None);
        let pad = Reshape::PadClamp {
            left: i64::MAX,
            right: 1,
            len: 1,
        };
        assert_eq!(pad.len(), None);
        assert_eq!(Reshape::Split { chunk: 0, len: 4 }.len(), None);
        let take = Reshape::Offset { offset: 2, len: 3 };
        assert!(take.fits(5, None) && !take.fits(4, None));
        let concat = Reshape::Concat {
            first: 2,
            second: 3,
        };
        assert!(concat.fits(2, Some(3)) && !concat.fits(2, None));
    }
}
