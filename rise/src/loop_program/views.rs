//! Reshaping primitives as symbolic arrays: the view algebra of [`crate::view`]
//! read with affine indices. Where an index's range decides a padding's or a
//! `concat`'s condition, the element is read from one side; elsewhere it is a guard
//! between both.

use super::deep_rc::DeepRc;
use super::eval::{not_structured, ScalarExpr, Structuring, SymArray, SymValue, SymbolicEvaluator};
use super::index::Aff;
use super::scalar::ExprRef;
use crate::view::{Indexing, Reshape, Source};
use std::rc::Rc;

impl Indexing for SymbolicEvaluator {
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
pub fn reshaped(reshape: Reshape, xs: SymArray, with: Option<SymValue>) -> Structuring<SymArray> {
    let Some(len) = reshape.len() else {
        return not_structured(format!("{reshape:?}: a length beyond any machine's"));
    };
    if matches!(reshape, Reshape::PadClamp { .. }) && xs.len == 0 {
        return not_structured("`padClamp` of an empty array");
    }
    let from = Rc::new((xs, with));
    Ok(SymArray::new(len, move |ex, i| {
        let at = reshape.element(ex, i);
        read(ex, at, &from)
    }))
}

/// `concat(a, b)`: written part by part (the parts are kept for that), read through
/// the view algebra.
pub fn concat(a: SymArray, b: SymArray) -> SymArray {
    let reshape = Reshape::Concat {
        first: a.len,
        second: b.len,
    };
    let parts = Rc::new((a, b));
    let read = parts.clone();
    SymArray {
        len: parts.0.len.saturating_add(parts.1.len),
        get: crate::loop_program::deep_rc::DeepRc::new(Rc::new(
            move |ex: &mut SymbolicEvaluator, i: &Aff| {
                let Source::Either { at, first, second } = reshape.element(ex, i) else {
                    return not_structured("`concat` read as another view");
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
            },
        )),
        parts: Some(parts),
    }
}

/// The element of `xs` that an element of its view is.
fn read(
    ex: &mut SymbolicEvaluator,
    at: Source<Aff>,
    from: &Rc<(SymArray, Option<SymValue>)>,
) -> Structuring<SymValue> {
    let (xs, with) = &**from;
    match at {
        Source::At(k) => xs.at(ex, &k),
        Source::AtNested(i, j) => xs.at(ex, &i)?.array()?.at(ex, &j),
        Source::Row(row) => {
            let from = from.clone();
            Ok(SymValue::Array(SymArray::new(row.len(), move |ex, k| {
                let at = row.element(ex, k);
                read(ex, at, &from)
            })))
        }
        Source::Padded { at, lo, hi, inside } => {
            let Some(c) = with else {
                return not_structured("`padCst` without its value");
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
        Source::Either { .. } => not_structured("`concat` read as another view"),
        Source::Lanes { base, width } => {
            let lane = ex.new_lane(width);
            match xs.at(ex, &base.add(&Aff::var(lane)))? {
                SymValue::Scalar(elem) => Ok(SymValue::Vector {
                    lane,
                    n: width,
                    elem,
                }),
                _ => not_structured("vectors of something other than scalars"),
            }
        }
        Source::Lane { at, lane: l } => match xs.at(ex, &at)? {
            SymValue::Vector { lane, elem, .. } => {
                ex.read_lane(lane, &l)?;
                Ok(SymValue::Scalar(elem.subst(lane, &l, ex).shared()))
            }
            _ => not_structured("asScalar of something other than vectors"),
        },
    }
}

/// `inside` where `cond` (`lo <= a < hi`) holds, `outside` elsewhere, element by
/// element.
fn guarded(
    ex: &mut SymbolicEvaluator,
    cond: &(Aff, i64, i64),
    inside: SymValue,
    outside: SymValue,
) -> Structuring<SymValue> {
    if ex.data.keys().any(|v| cond.0.mentions(*v)) {
        return not_structured("a guard on an index computed from data");
    }
    let cond = cond.clone();
    let guard = move |x: ExprRef, y: ExprRef| Ok(select(&cond, x, y));
    ex.zip_values(
        inside,
        outside,
        Rc::new(guard),
        "padding with a value of another shape",
    )
}

/// `Select` of one more condition: nested paddings with one constant are one guard
/// (its conditions grown in place where the guard is read nowhere else, so that
/// 100,000 paddings are not 100,000 copies).
fn select(cond: &(Aff, i64, i64), then: ExprRef, other: ExprRef) -> ExprRef {
    let merges = matches!(&*then, ScalarExpr::Select { other: inner, .. } if *inner == other);
    if merges {
        if let ScalarExpr::Select {
            mut conds,
            then,
            other,
        } = DeepRc::unwrap_or_clone(then)
        {
            conds.push(cond.clone());
            return ScalarExpr::Select { conds, then, other }.shared();
        }
        unreachable!("a guard was matched");
    }
    ScalarExpr::Select {
        conds: vec![cond.clone()],
        then,
        other,
    }
    .shared()
}
