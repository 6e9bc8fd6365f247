//! Reshaping primitives as arrays read in loops: the view algebra of
//! `elevate_rise::view` read with MLIR index values. A padding's or a `concat`'s
//! condition is a select between reads clamped into their arrays; a run of a
//! buffer's elements (a chunk, a window) stays known as one, so that vectors of it
//! are loaded at once.

use super::emitter::Gen;
use super::value::{arith_of, array_of, elem_of, scalar_of, select_val, ArrayVal, Contiguous, Val};
use crate::error::Error;
use crate::ir::{self, Op};
use elevate_rise::term::Term;
use elevate_rise::types::{Scalar, Type, TypeKind};
use elevate_rise::view::{Indexing, Reshape, Row, Source};
use std::rc::Rc;

impl Indexing for Gen {
    type Index = String;
    fn offset(&mut self, i: &String, k: i64) -> String {
        if k == 0 {
            return i.clone();
        }
        let c = self.index(k);
        self.op(ir::same("arith.addi", &[i, &c], &ir::Type::Index))
    }
    fn scale(&mut self, i: &String, k: i64) -> String {
        let c = self.index(k);
        self.op(ir::same("arith.muli", &[i, &c], &ir::Type::Index))
    }
    fn add(&mut self, i: &String, j: &String) -> String {
        self.op(ir::same("arith.addi", &[i, j], &ir::Type::Index))
    }
    fn div(&mut self, i: &String, k: i64) -> String {
        let c = self.index(k);
        self.op(ir::same("arith.divui", &[i, &c], &ir::Type::Index))
    }
    fn rem(&mut self, i: &String, k: i64) -> String {
        let c = self.index(k);
        self.op(ir::same("arith.remui", &[i, &c], &ir::Type::Index))
    }
}

/// What a view reads: its source, a `concat`'s second array or a `padCst`'s value,
/// and the type of its elements.
struct From {
    xs: ArrayVal,
    with: Option<Val>,
    elem: Type,
    at: Term,
}

/// `xs` reshaped into an array of `elem`s; `with` is a `concat`'s second array or a
/// `padCst`'s value.
pub(super) fn reshaped(
    reshape: Reshape,
    xs: ArrayVal,
    with: Option<Val>,
    elem: Type,
    at: &Term,
) -> Result<ArrayVal, Error> {
    let len = reshape
        .len()
        .ok_or_else(|| Error::unsupported(at, "a length beyond any machine's"))?;
    let padded = matches!(
        reshape,
        Reshape::PadConstant { .. } | Reshape::PadClamp { .. }
    );
    if padded && xs.len == 0 {
        // Nothing to read: the value everywhere, and nothing to clamp to.
        return match with {
            Some(v) => Ok(ArrayVal::new(len, elem, move |_, _| Ok(v.clone()))),
            None => Err(Error::unsupported(at, "padding an empty array by clamping")),
        };
    }
    let from = Rc::new(From {
        xs,
        with,
        elem: elem.clone(),
        at: at.clone(),
    });
    Ok(ArrayVal::new(len, elem, move |g, i| {
        let source = reshape.element(g, &i.to_string());
        read(g, source, &from)
    }))
}

/// The element of a view's source that an element of the view is.
fn read(g: &mut Gen, source: Source<String>, from: &Rc<From>) -> Result<Val, Error> {
    let (xs, at) = (&from.xs, &from.at);
    match source {
        Source::At(k) => xs.at(g, &k),
        Source::AtNested(i, j) => array_of(&xs.at(g, &i)?, at)?.at(g, &j),
        Source::Row(row) => Ok(Val::Array(row_of(g, row, from))),
        Source::Padded { inside, .. } | Source::Clamped { inside, .. } => {
            // The position in xs clamped into it, with signed arithmetic on index.
            let (zero, last) = (g.index(0), g.index(xs.len - 1));
            let low = g.op(ir::same("arith.maxsi", &[&inside, &zero], &ir::Type::Index));
            let clamped = g.op(ir::same("arith.minsi", &[&low, &last], &ir::Type::Index));
            let inner = xs.at(g, &clamped)?;
            let Some(value) = &from.with else {
                return Ok(inner);
            };
            let below = g.op(ir::compare(false, "slt", &inside, &zero, &ir::Type::Index));
            let above = g.op(ir::compare(false, "sgt", &inside, &last, &ir::Type::Index));
            let outside = g.op(ir::same("arith.ori", &[&below, &above], &ir::Type::BOOL));
            select_val(g, &outside, value, &inner, at)
        }
        Source::Either {
            at: i,
            first,
            second,
        } => {
            let Some(Val::Array(b)) = &from.with else {
                return Err(Error::unsupported(at, "`concat` without its second array"));
            };
            // Both reads in range (clamped), then the one that applies.
            let (split, zero) = (g.index(first), g.index(0));
            let last_a = g.index((first - 1).max(0));
            let in_a = g.op(ir::same("arith.minsi", &[&i, &last_a], &ir::Type::Index));
            let in_b = g.op(ir::same("arith.maxsi", &[&second, &zero], &ir::Type::Index));
            let from_a = g.op(ir::compare(false, "slt", &i, &split, &ir::Type::Index));
            let (x, y) = match (first, b.len) {
                (0, _) => return b.at(g, &in_b),
                (_, 0) => return xs.at(g, &in_a),
                _ => (xs.at(g, &in_a)?, b.at(g, &in_b)?),
            };
            select_val(g, &from_a, &x, &y, at)
        }
        Source::Lanes { base, width } => lanes(g, &base, width, from),
        Source::Lane { at: i, lane } => {
            let (v, s, lanes) = arith_of(&xs.at(g, &i)?, at)?;
            let t = ir::Type::lanes(s, lanes);
            let x = g.op(Op::new("vector.extract")
                .operand(&v, &t)
                .operand(&lane, &ir::Type::Index)
                .prop("static_position", ir::Attr::I64s(vec![i64::MIN]))
                .returns(&ir::Type::scalar(s)));
            Ok(Val::Scalar(x, s))
        }
    }
}

/// A row of the source as an array: a run of a buffer's elements stays one.
fn row_of(g: &mut Gen, row: Row<String>, from: &Rc<From>) -> ArrayVal {
    let contiguous = match (&row, &from.xs.contiguous) {
        (Row::Run { start, .. }, Some(c)) => {
            let offset = match &c.offset {
                Some(base) => g.add(base, start),
                None => start.clone(),
            };
            Some(Rc::new(Contiguous {
                buffer: c.buffer.clone(),
                dims: c.dims.clone(),
                scalar: c.scalar,
                prefix: c.prefix.clone(),
                offset: Some(offset),
            }))
        }
        _ => None,
    };
    let (len, from) = (row.len(), from.clone());
    let mut array = ArrayVal::new(len, elem_of(&from.elem), move |g, k| {
        let source = row.element(g, &k.to_string());
        read(g, source, &from)
    });
    array.contiguous = contiguous;
    array
}

/// The vector of `width` elements from `base` on: one load where they lie in a row of
/// a buffer, one read each elsewhere.
fn lanes(g: &mut Gen, base: &String, width: i64, from: &From) -> Result<Val, Error> {
    let (xs, at) = (&from.xs, &from.at);
    let TypeKind::Scalar(s) = xs.elem.kind() else {
        return Err(Error::unsupported(
            at,
            "vectors of something other than scalars",
        ));
    };
    let s: Scalar = *s;
    if let Some(c) = &xs.contiguous {
        let start = match &c.offset {
            Some(offset) => g.add(base, offset),
            None => base.clone(),
        };
        let at = c.prefix.iter().cloned().chain([start]).collect::<Vec<_>>();
        let v = g.op(Op::new("vector.load")
            .operand(&c.buffer, &ir::Type::memref(&c.dims, c.scalar))
            .operands_of(&at, &ir::Type::Index)
            .returns(&ir::Type::lanes(s, Some(width))));
        return Ok(Val::Vector(v, s, width));
    }
    let mut elements = Vec::new();
    for k in 0..width {
        let i = g.offset(base, k);
        let (x, _) = scalar_of(&xs.at(g, &i)?, at)?;
        elements.push(x);
    }
    let v = g.op(Op::new("vector.from_elements")
        .operands_of(&elements, &ir::Type::scalar(s))
        .returns(&ir::Type::lanes(s, Some(width))));
    Ok(Val::Vector(v, s, width))
}
