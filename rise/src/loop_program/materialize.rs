//! Materialization: a value the program stores (`toMem`) written into a buffer of
//! its own by a kernel, and read back through its type's shape; or, where it already
//! lies in one of the program's buffers, read from there.

use super::eval::{Materialize, ScalarExpr, Structuring, SymValue, SymbolicEvaluator};
use super::index::Aff;
use super::ir::{Kernel, Layout, Operand};
use super::kernel::{shape, Builder};
use crate::types::{Scalar, Type};
use std::rc::Rc;

impl Materialize for Builder {
    /// A buffer of the program's own: laid out as the loops that write it nest (the
    /// layout of a packed array is the packing), read back through its type's shape.
    fn materialize(
        &mut self,
        ex: &mut SymbolicEvaluator,
        value: SymValue,
        ty: &Type,
    ) -> Structuring<SymValue> {
        let (dims, scalar) = shape(ty)?;
        // Over the limits, the loops translation reports it, located.
        let b = self.own_buffer(dims.clone(), scalar)?;
        let before = self.kernels.len();
        let layout = self.kernel(ex, value, b, true)?;
        // A value that already lies in a buffer of the program's own, as it would
        // lie in this one (a padded operand its guard wrote), is read from there:
        // the copy would only cost a pass over memory, outside any parallel loop.
        let copied = self.kernels[before..]
            .last()
            .and_then(|k| self.whole_copy_of(k));
        if let Some(src) = copied.filter(|src| *src != b) {
            self.kernels.pop();
            self.unused.insert(b);
            return Ok(laid_out(src, Rc::new(layout), &dims, scalar, Vec::new()));
        }
        Ok(laid_out(b, Rc::new(layout), &dims, scalar, Vec::new()))
    }
}

impl Builder {
    /// The buffer kernel `k` copies, element by element and as it lies, into a
    /// buffer of the same shape, if that is all `k` does and the source is one of the
    /// program's own buffers, written once (no parameter, stage or accumulator).
    fn whole_copy_of(&self, k: &Kernel) -> Option<usize> {
        let ([input], [out], [ScalarExpr::Load(0, index, _)], None) =
            (&k.inputs[..], &k.outs[..], &k.body[..], &k.reduction)
        else {
            return None;
        };
        let in_order = |o: &Operand| {
            o.strided.is_none()
                && !o.expanded()
                && !o.windowed()
                && o.map.len() == k.dims.len()
                && o.map
                    .iter()
                    .enumerate()
                    .all(|(d, e)| e.c == 0 && e.terms == [(d, 1)])
        };
        let own =
            !self.scratch.contains(&input.buf) && !self.by_name.values().any(|b| *b == input.buf);
        (index.is_empty()
            && own
            && in_order(input)
            && in_order(out)
            && self.bufs[input.buf].dims == self.bufs[out.buf].dims)
            .then_some(input.buf)
    }
}

/// Element `position` of a buffer laid out as `layout`: digit `(p, a, b)` of the
/// layout is `(position[p] / a) mod b`.
fn laid_out(buf: usize, layout: Rc<Layout>, dims: &[i64], s: Scalar, prefix: Vec<Aff>) -> SymValue {
    let dims2 = dims.to_vec();
    SymValue::Array(super::eval::SymArray::new(
        dims[prefix.len()],
        move |ex, i| {
            let mut p = prefix.clone();
            p.push(i.clone());
            if p.len() < dims2.len() {
                return Ok(laid_out(buf, layout.clone(), &dims2, s, p));
            }
            // A digit that is a whole position is the position: read out of range only
            // where a guard (padding) discards the value, it stays affine.
            let index = layout
                .iter()
                .map(|(k, a, b)| match (*a, a.saturating_mul(*b) == dims2[*k]) {
                    (1, true) => p[*k].clone(),
                    (_, true) => p[*k].div(*a, ex),
                    _ => p[*k].div(*a, ex).rem(*b, ex),
                })
                .collect();
            Ok(SymValue::Scalar(ex.load(buf, index, s).shared()))
        },
    ))
}
