//! Structured payloads: a low-level RISE program as `linalg` operations plus the
//! Transform script that applies the schedule the program encodes.
//!
//! The program is evaluated symbolically ([`eval`], [`terms`]): reshaping primitives
//! are index functions, computing primitives record the loops they stand for, in the
//! order the program nests them. Each materialized array (`toMem` at the top level,
//! and the result) becomes a [`kernel`]: its loops grouped into iteration dimensions
//! (loops whose counters only ever appear together as the digits of one index are one
//! tiled dimension: `32*ib + i`), its operands' indexing maps (a buffer dimension
//! indexed by several dimensions is expanded), its body. [`emit`] writes each kernel as
//! `linalg.matmul` or `linalg.generic`, and the schedule as Transform operations:
//! one tiling per loop of the program, outermost first, with the step the program
//! takes (`tile_using_forall` for `mapPar`), promotion of the output tile where the
//! program accumulates into an array, vectorization of the innermost vector lanes
//! (with the unrolled loops inside them), unrolling where the program unrolls.
//!
//! Before a kernel is built ([`prepare`]): a reduction over a flattened window
//! (`join` of a 3x3 neighbourhood) becomes one reduction loop per digit, so that each
//! is an affine index; a reduction inside another computation (a bias added to a dot
//! product, a softmax's maximum and sum) is computed by a kernel of its own into a
//! buffer indexed by what it depends on (once, however often it is read); a read
//! guarded by its bounds (`padCst`) becomes a read of a padded copy, which a fill and
//! a copy into a subview make. A window no operand is indexed by alone (pooling) gets
//! an operand of the window's shape, as linalg's pooling operations have. An array
//! computed once and read at several positions is computed where it is read.
//!
//! A program outside this fragment (`padClamp`, `concat`, `select`, array literals,
//! pairs as results, indices computed from data, ...) is reported as
//! [`NotStructured`] with the reason, and the bridge emits explicit loops.

mod emit;
mod eval;
mod index;
mod kernel;
mod prepare;
mod terms;

pub use eval::NotStructured;

use crate::boundary::{Param, Signature, Storage};
use elevate_rise::limits::Limits;
use elevate_rise::types::Type;
use eval::{no, Ex, SExpr, SVal, R};
use index::Aff;
use kernel::{Buf, Builder};
use std::rc::Rc;

/// A structured function body: its lines, the Transform script, the flop count.
pub(crate) struct Structured {
    pub(crate) lines: Vec<String>,
    pub(crate) script: String,
    pub(crate) flops: u64,
}

/// The structured body of the entry point `sig`, or why it has none.
pub(crate) fn translate(sig: &Signature, limits: &Limits) -> Result<Structured, NotStructured> {
    let mut builder = Builder::new(*limits);
    let mut ex = Ex::default();
    let mut env: terms::Env = Default::default();
    for (id, ty, param) in &sig.params {
        let value = match param {
            Param::Scalar(arg, s) => SVal::Scalar(SExpr::Param(arg.clone(), *s)),
            Param::Data(storage) => data(&mut builder, storage, ty)?,
        };
        env = crate::env::bind(&env, *id, value);
    }
    let first_own = builder.bufs.len();
    let value = ex.expr(sig.body, &env, &mut builder)?;
    let Storage::Leaf {
        buffer,
        dims,
        scalar,
    } = &sig.out
    else {
        return no("a result of pairs");
    };
    let out = builder.bufs.len();
    builder.bufs.push(Buf {
        name: buffer.clone(),
        dims: (**dims).clone(),
        scalar: *scalar,
    });
    builder.kernel(&mut ex, value, out, false)?;
    let own: Vec<usize> = (first_own..builder.bufs.len())
        .filter(|b| *b != out)
        .collect();
    let text = emit::payload_lines(&builder.kernels, &builder.bufs, &own);
    let script = emit::transform_script(&builder.kernels, &builder.bufs);
    Ok(Structured {
        lines: text.lines,
        script,
        flops: text.flops,
    })
}

/// A parameter's data: its memrefs as buffers, read as arrays.
fn data(builder: &mut Builder, storage: &Storage, ty: &Type) -> R<SVal> {
    fn plain(ty: &Type) -> bool {
        use elevate_rise::types::TypeKind;
        match ty.kind() {
            TypeKind::Array(n, e) => n.as_const().is_some() && plain(e),
            TypeKind::Pair(a, b) => plain(a) && plain(b),
            TypeKind::Scalar(_) => true,
            _ => false,
        }
    }
    if !plain(ty) {
        return no(format!("a parameter of type {ty}"));
    }
    let bufs = buffer_ids(builder, storage);
    Ok(read(&bufs, storage, ty, Vec::new()))
}

/// The buffer numbers of a storage's leaves, registering them once.
fn buffer_ids(builder: &mut Builder, storage: &Storage) -> Rc<Vec<(String, usize)>> {
    let mut out = Vec::new();
    fn walk(builder: &mut Builder, s: &Storage, out: &mut Vec<(String, usize)>) {
        match s {
            Storage::Leaf {
                buffer,
                dims,
                scalar,
            } => {
                let id = match builder.bufs.iter().position(|b| &b.name == buffer) {
                    Some(id) => id,
                    None => {
                        builder.bufs.push(Buf {
                            name: buffer.clone(),
                            dims: (**dims).clone(),
                            scalar: *scalar,
                        });
                        builder.bufs.len() - 1
                    }
                };
                out.push((buffer.clone(), id));
            }
            Storage::Pair(a, b) => {
                walk(builder, a, out);
                walk(builder, b, out);
            }
        }
    }
    walk(builder, storage, &mut out);
    Rc::new(out)
}

/// The value of type `ty` in `storage` at `prefix`.
fn read(bufs: &Rc<Vec<(String, usize)>>, storage: &Storage, ty: &Type, prefix: Vec<Aff>) -> SVal {
    use elevate_rise::types::TypeKind;
    match (ty.kind(), storage) {
        (TypeKind::Array(n, e), _) => {
            let (bufs, storage, e) = (bufs.clone(), storage.clone(), e.clone());
            let n = n.as_const().unwrap_or(0);
            SVal::Array(eval::SArr::new(n, move |_, i| {
                let mut p = prefix.clone();
                p.push(i.clone());
                Ok(read(&bufs, &storage, &e, p))
            }))
        }
        (TypeKind::Pair(a, b), Storage::Pair(sa, sb)) => SVal::Pair(
            Box::new(read(bufs, sa, a, prefix.clone())),
            Box::new(read(bufs, sb, b, prefix)),
        ),
        (_, Storage::Leaf { buffer, scalar, .. }) => {
            let id = bufs
                .iter()
                .find(|(b, _)| b == buffer)
                .map_or(0, |(_, id)| *id);
            SVal::Scalar(SExpr::Load(id, prefix, *scalar))
        }
        _ => unreachable!("storage made for this type"),
    }
}
