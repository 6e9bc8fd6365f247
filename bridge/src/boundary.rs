//! The function boundary: a parameter or result of any data type is passed as one
//! memref per scalar leaf of its type (an array of pairs as a pair of arrays); scalar
//! parameters are passed as values; a function whose operations may trap takes their
//! record last. The entry point's signature, with every buffer's size checked against
//! the memory limits.

use crate::error::Error;
use crate::mlir_types::{memref_type, mlir_scalar, scalar_bytes};
use elevate_core::stack::guard;
use elevate_rise::limits::Limits;
use elevate_rise::nat::Nat;
use elevate_rise::prim::Prim;
use elevate_rise::term::{Expr, Span, Term};
use elevate_rise::types::{Scalar, Type, TypeKind};
use std::rc::Rc;

/// The argument after the result's memrefs where a payload with [`crate::Payload::traps`]
/// records an operation that trapped: a rank-0 `i32`, 0 while none has.
pub const TRAP_ARGUMENT: &str = "%trap";

/// An operation of the program that may trap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrapSite {
    /// The primitive (`div`, `mod`, `natAsIndex`).
    pub op: Prim,
    /// What is checked.
    pub check: Check,
    /// Where it is in the RISE program.
    pub span: Option<Span>,
}

/// What the code checks where an operation may trap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// A division of integers of this type: the divisor is not 0, and not -1 when the
    /// dividend is the smallest integer.
    Division(Scalar),
    /// A number made an index below `bound`: it is in `0..bound`.
    Index {
        /// The index's bound.
        bound: i64,
    },
}

/// The types of the leaves of `ty`, in order: nested arrays of scalars (a vector
/// counts as an array).
pub fn leaf_types(ty: &Type) -> Vec<Type> {
    guard(|| match ty.kind() {
        TypeKind::Array(n, e) | TypeKind::Vector(e, n) => leaf_types(e)
            .into_iter()
            .map(|t| Type::array(n.clone(), t))
            .collect(),
        TypeKind::Pair(a, b) => leaf_types(a).into_iter().chain(leaf_types(b)).collect(),
        _ => vec![ty.clone()],
    })
}

/// Whether `ty` is an array of data of known sizes (arrays, vectors, pairs of scalars):
/// something a buffer can hold.
pub(crate) fn is_array_data(ty: &Type) -> bool {
    fn data(ty: &Type) -> bool {
        guard(|| match ty.kind() {
            TypeKind::Array(n, e) | TypeKind::Vector(e, n) => n.as_const().is_some() && data(e),
            TypeKind::Pair(a, b) => data(a) && data(b),
            TypeKind::Scalar(_) => true,
            _ => false,
        })
    }
    matches!(ty.kind(), TypeKind::Array(..)) && data(ty)
}

/// A constant size, or an error naming the term.
pub(crate) fn size(n: &Nat, what: &Term) -> Result<i64, Error> {
    n.as_const().ok_or_else(|| {
        Error::unsupported(
            what,
            format!("the size {n} is not known (compile with concrete sizes)"),
        )
    })
}

/// The most lanes of a vector: each lane is generated (and the Transform script
/// vectorizes to these widths), so an absurd width is an error, not a hang.
pub const MAX_VECTOR_LANES: i64 = 1024;

/// `n` as the number of lanes of a vector, if it is one the bridge generates.
pub(crate) fn lanes(n: i64, what: &Term) -> Result<i64, Error> {
    if (1..=MAX_VECTOR_LANES).contains(&n) {
        Ok(n)
    } else {
        Err(Error::unsupported(
            what,
            format!("a vector of {n} lanes (from 1 to {MAX_VECTOR_LANES})"),
        ))
    }
}

/// `n`, a size the program divides by (a chunk, a step), if it is positive.
pub(crate) fn positive(n: i64, what: &Term) -> Result<i64, Error> {
    if n > 0 {
        Ok(n)
    } else {
        Err(Error::unsupported(
            what,
            format!("a size of {n} where a positive one is needed"),
        ))
    }
}

/// Checks that a buffer of `dims` elements of `s` fits the limits (and so that every
/// index into it fits in MLIR's `index`), before it is allocated: `what` names it.
pub(crate) fn check_buffer(
    limits: &Limits,
    what: &str,
    dims: &[i64],
    s: Scalar,
    at: &Term,
) -> Result<(), Error> {
    let elements = dims
        .iter()
        .try_fold(1u128, |n, d| n.checked_mul(u128::try_from(*d).ok()?))
        .unwrap_or(u128::MAX);
    let tighter = Limits::with_max_bytes(limits.max_bytes.min(i64::MAX as u64));
    tighter
        .check_array(what, elements, scalar_bytes(s))
        .map_err(|error| Error::Size {
            span: at.span(),
            error,
        })
}

/// Where a value of a data type lives: one memref per scalar leaf of the type, an
/// array of pairs as a pair of arrays.
#[derive(Clone)]
pub(crate) enum Storage {
    Leaf {
        buffer: String,
        dims: Rc<Vec<i64>>,
        scalar: Scalar,
    },
    Pair(Rc<Storage>, Rc<Storage>),
}

/// A parameter of the entry point: a scalar value, or data in memrefs.
pub(crate) enum Param {
    Scalar(String, Scalar),
    Data(Storage),
}

/// The entry point's parameters (term variable, type, how it is passed), its result's
/// storage and type, its body, and the function's arguments as MLIR text.
pub(crate) struct Signature<'t> {
    pub(crate) params: Vec<(u64, Type, Param)>,
    pub(crate) out: Storage,
    pub(crate) result: Type,
    pub(crate) body: &'t Term,
    pub(crate) text: Vec<String>,
}

/// The signature of the entry point `fun(x1 => ... => body)`, every buffer checked
/// against `limits`.
pub(crate) fn signature<'t>(term: &'t Term, limits: &Limits) -> Result<Signature<'t>, Error> {
    let mut params = Vec::new();
    let mut text = Vec::new();
    let mut body = term;
    while let Expr::Lambda(x, _, b) = body.expr() {
        let ty = match body.ty().map(Type::kind) {
            Some(TypeKind::Fun(param, _)) => param.clone(),
            _ => return Err(Error::untyped(body)),
        };
        let k = params.len();
        let param = match ty.kind() {
            TypeKind::Scalar(s) => {
                let arg = format!("%arg{k}");
                text.push(format!("{arg}: {}", mlir_scalar(*s)));
                Param::Scalar(arg, *s)
            }
            _ => {
                let what = format!("parameter `{}`", x.name);
                Param::Data(boundary_storage(&ty, body, &mut |leaf, dims, s| {
                    check_buffer(limits, &what, dims, s, body)?;
                    let arg = format!("%arg{k}_{leaf}");
                    text.push(format!("{arg}: {}", memref_type(dims, s)));
                    Ok(arg)
                })?)
            }
        };
        params.push((x.id, ty, param));
        body = b;
    }
    let result = body.ty().cloned().ok_or_else(|| Error::untyped(body))?;
    let out = boundary_storage(&result, body, &mut |leaf, dims, s| {
        check_buffer(limits, "the result", dims, s, body)?;
        let arg = format!("%out{leaf}");
        text.push(format!("{arg}: {}", memref_type(dims, s)));
        Ok(arg)
    })?;
    Ok(Signature {
        params,
        out,
        result,
        body,
        text,
    })
}

/// A function naming each leaf's buffer: `(leaf number, dims, scalar)` to its name.
pub(crate) type NameLeaf<'a> = dyn FnMut(usize, &[i64], Scalar) -> Result<String, Error> + 'a;

/// The storage of a parameter or result of type `ty`: one memref argument per scalar
/// leaf, named by `name`.
pub(crate) fn boundary_storage(
    ty: &Type,
    what: &Term,
    name: &mut NameLeaf,
) -> Result<Storage, Error> {
    fn walk(
        ty: &Type,
        dims: Vec<i64>,
        what: &Term,
        leaf: &mut usize,
        name: &mut NameLeaf,
    ) -> Result<Storage, Error> {
        guard(|| match ty.kind() {
            TypeKind::Array(n, e) | TypeKind::Vector(e, n) => {
                let mut dims = dims;
                dims.push(size(n, what)?);
                walk(e, dims, what, leaf, name)
            }
            TypeKind::Pair(a, b) => Ok(Storage::Pair(
                Rc::new(walk(a, dims.clone(), what, leaf, name)?),
                Rc::new(walk(b, dims, what, leaf, name)?),
            )),
            TypeKind::Scalar(s) => {
                let buffer = name(*leaf, &dims, *s)?;
                *leaf += 1;
                Ok(Storage::Leaf {
                    buffer,
                    dims: Rc::new(dims),
                    scalar: *s,
                })
            }
            _ => Err(Error::unsupported(
                what,
                format!("a parameter or result of type {ty} (data only)"),
            )),
        })
    }
    walk(ty, Vec::new(), what, &mut 0, name)
}
