//! Folds: a reduction whose accumulator is several scalars is one kernel with an
//! output per scalar, whichever of them the program writes or reads.

use super::eval::{ScalarExpr, Structuring};
use super::ir::{Kernel, Operand, Reduction};
use super::kernel::Builder;
use crate::term::Literal;
use crate::types::Scalar;

/// The kernel of a fold written for accumulator `component` (its only output so far):
/// `None` where the same fold was written before for another accumulator, whose
/// kernel then writes this output too instead of the buffer it carried it in;
/// otherwise the kernel with the other accumulators in buffers of their own, shaped
/// as this output.
pub fn carried(
    builder: &mut Builder,
    mut kernel: Kernel,
    component: usize,
) -> Structuring<Option<Kernel>> {
    let Some(Reduction::Fold(inits)) = kernel.reduction.clone() else {
        return Ok(Some(kernel));
    };
    let same = |other: &Kernel| {
        (
            &other.dims,
            &other.inputs,
            &other.body,
            &other.reduction,
            &other.schedule,
        ) == (
            &kernel.dims,
            &kernel.inputs,
            &kernel.body,
            &kernel.reduction,
            &kernel.schedule,
        )
    };
    let out = kernel.outs[0].clone();
    let carried = builder.kernels.iter_mut().rev().find(|k| {
        same(k) && builder.scratch.contains(&k.outs[component].buf) && {
            let carrier = &k.outs[component];
            (&carrier.expand, &carrier.map, &carrier.window) == (&out.expand, &out.map, &out.window)
                && builder.bufs[carrier.buf].dims == builder.bufs[out.buf].dims
        }
    });
    if let Some(k) = carried {
        let freed = std::mem::replace(&mut k.outs[component], out);
        builder.scratch.remove(&freed.buf);
        builder.unused.insert(freed.buf);
        return Ok(None);
    }
    // The other accumulators in buffers of their own, shaped as this output.
    let dims = builder.bufs[out.buf].dims.clone();
    let mut outs = Vec::with_capacity(inits.len());
    for (j, init) in inits.clone().iter().enumerate() {
        if j == component {
            outs.push(out.clone());
            continue;
        }
        let buf = builder.own_buffer(dims.clone(), literal_scalar(*init))?;
        builder.scratch.insert(buf);
        outs.push(Operand { buf, ..out.clone() });
    }
    kernel.outs = outs;
    Ok(Some(kernel))
}

/// The scalar type of a constant.
fn literal_scalar(l: Literal) -> Scalar {
    ScalarExpr::Lit(l).scalar()
}
