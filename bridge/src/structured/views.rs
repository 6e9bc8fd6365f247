//! Reshaping primitives as symbolic arrays: the view algebra of `elevate_rise::view`
//! read with affine indices. Where an index's range decides a padding's or a
//! `concat`'s condition, the element is read from one side; elsewhere it is a guard
//! between both.

use super::eval::{no, Ex, SArr, SExpr, SVal, R};
use super::index::Aff;
use elevate_rise::view::{Indexing, Reshape, Source};
use std::rc::Rc;

impl Indexing for Ex {
    type Index = Aff;
    fn offset(&mut self, i: &Aff, k: i64) -> Aff {
        i.plus(k)
    }
    fn scale(&mut self, i: &Aff, k: i64) -> Aff {
        i.scale(k)
    }
    fn add(&mut self, i: &Aff, j: &Aff) -> Aff {
        i.add(j)
    }
    fn div(&mut self, i: &Aff, k: i64) -> Aff {
        i.div(k, self)
    }
    fn rem(&mut self, i: &Aff, k: i64) -> Aff {
        i.rem(k, self)
    }
}

/// `xs` reshaped; `with` is a `padCst`'s value.
pub(crate) fn reshaped(reshape: Reshape, xs: SArr, with: Option<SVal>) -> R<SArr> {
    let Some(len) = reshape.len() else {
        return no(format!("{reshape:?}: a length beyond any machine's"));
    };
    if matches!(reshape, Reshape::PadClamp { .. }) && xs.len == 0 {
        return no("`padClamp` of an empty array");
    }
    let from = Rc::new((xs, with));
    Ok(SArr::new(len, move |ex, i| {
        let at = reshape.element(ex, i);
        read(ex, at, &from)
    }))
}

/// `concat(a, b)`: written part by part (the parts are kept for that), read through
/// the view algebra.
pub(crate) fn concat(a: SArr, b: SArr) -> SArr {
    let reshape = Reshape::Concat {
        first: a.len,
        second: b.len,
    };
    let parts = Rc::new((a, b));
    let read = parts.clone();
    SArr {
        len: parts.0.len.saturating_add(parts.1.len),
        get: crate::shared::Shared::new(Rc::new(move |ex: &mut Ex, i: &Aff| {
            let Source::Either { at, first, second } = reshape.element(ex, i) else {
                return no("`concat` read as another view");
            };
            let (a, b) = &*read;
            match at.range(ex) {
                (_, hi) if hi < first => a.at(ex, &at),
                (lo, _) if lo >= first => b.at(ex, &second),
                // Across both parts: a guard between them (which the kernel reads
                // from a buffer the parts are written into).
                _ => {
                    let (x, y) = (a.at(ex, &at)?, b.at(ex, &second)?);
                    guarded(ex, &(at, 0, first), x, y)
                }
            }
        })),
        parts: Some(parts),
    }
}

/// The element of `xs` that an element of its view is.
fn read(ex: &mut Ex, at: Source<Aff>, from: &Rc<(SArr, Option<SVal>)>) -> R<SVal> {
    let (xs, with) = &**from;
    match at {
        Source::At(k) => xs.at(ex, &k),
        Source::AtNested(i, j) => xs.at(ex, &i)?.array()?.at(ex, &j),
        Source::Row(row) => {
            let from = from.clone();
            Ok(SVal::Array(SArr::new(row.len(), move |ex, k| {
                let at = row.element(ex, k);
                read(ex, at, &from)
            })))
        }
        Source::Padded { at, lo, hi, inside } => {
            let Some(c) = with else {
                return no("`padCst` without its value");
            };
            match at.range(ex) {
                (l, h) if l >= lo && h < hi => xs.at(ex, &inside),
                (l, h) if h < lo || l >= hi => Ok(c.clone()),
                _ => {
                    let x = xs.at(ex, &inside)?;
                    guarded(ex, &(at, lo, hi), x, c.clone())
                }
            }
        }
        Source::Clamped { at, lo, hi, inside } => {
            let (first, last) = (Aff::cst(0), Aff::cst(xs.len - 1));
            match at.range(ex) {
                (l, h) if l >= lo && h < hi => xs.at(ex, &inside),
                (_, h) if h < lo => xs.at(ex, &first),
                (l, _) if l >= hi => xs.at(ex, &last),
                // The first element left of the array, the last right of it.
                _ => {
                    let x = xs.at(ex, &inside)?;
                    let (first, last) = (xs.at(ex, &first)?, xs.at(ex, &last)?);
                    let outside = guarded(ex, &(at.clone(), 0, lo), first, last)?;
                    guarded(ex, &(at, lo, hi), x, outside)
                }
            }
        }
        Source::Either { .. } => no("`concat` read as another view"),
        Source::Lanes { base, width } => {
            let lane = ex.new_lane(width);
            match xs.at(ex, &base.add(&Aff::var(lane)))? {
                SVal::Scalar(elem) => Ok(SVal::Vector {
                    lane,
                    n: width,
                    elem,
                }),
                _ => no("vectors of something other than scalars"),
            }
        }
        Source::Lane { at, lane: l } => match xs.at(ex, &at)? {
            SVal::Vector { lane, elem, .. } => {
                ex.read_lane(lane, &l)?;
                Ok(SVal::Scalar(elem.subst(lane, &l, ex)))
            }
            _ => no("asScalar of something other than vectors"),
        },
    }
}

/// `inside` where `cond` (`lo <= a < hi`) holds, `outside` elsewhere, element by
/// element.
fn guarded(ex: &mut Ex, cond: &(Aff, i64, i64), inside: SVal, outside: SVal) -> R<SVal> {
    if ex.data.keys().any(|v| cond.0.mentions(*v)) {
        return no("a guard on an index computed from data");
    }
    let cond = cond.clone();
    let guard = move |x: SExpr, y: SExpr| select(&cond, x, y).bounded();
    ex.zip_values(
        inside,
        outside,
        Rc::new(guard),
        "padding with a value of another shape",
    )
}

/// `Select` of one more condition: nested paddings with one constant are one guard.
fn select(cond: &(Aff, i64, i64), then: SExpr, other: SExpr) -> SExpr {
    match then {
        SExpr::Select {
            mut conds,
            then,
            other: inner,
        } if *inner == other => {
            conds.push(cond.clone());
            SExpr::Select {
                conds,
                then,
                other: inner,
            }
        }
        then => SExpr::Select {
            conds: vec![cond.clone()],
            then: Box::new(then),
            other: Box::new(other),
        },
    }
}
