//! The function boundary: a parameter or result of any data type is passed as one
//! memref per scalar leaf of its type (an array of pairs as a pair of arrays); scalar
//! parameters are passed as values; a function whose operations may trap takes their
//! record last. The entry point's signature, with every buffer's size checked against
//! the memory limits.

use crate::error::Error;
use crate::ir::{self, Value};
use elevate_core::stack::guard;
use elevate_rise::limits::Limits;
use elevate_rise::loop_program::{self, SignatureError};
pub(crate) use elevate_rise::loop_program::{Param, Storage};
use elevate_rise::prim::Prim;
use elevate_rise::term::{Span, Term};
use elevate_rise::types::{Scalar, Type, TypeKind};

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

pub use elevate_rise::loop_program::MAX_VECTOR_LANES;

/// The entry point's signature as the loop program reads it, and the function's
/// arguments.
pub(crate) struct Signature<'t> {
    pub(crate) loops: loop_program::Signature<'t>,
    pub(crate) arguments: Vec<Value>,
}

impl<'t> std::ops::Deref for Signature<'t> {
    type Target = loop_program::Signature<'t>;
    fn deref(&self) -> &Self::Target {
        &self.loops
    }
}

/// The bridge's error for a signature the boundary cannot pass.
pub(crate) fn signature_error(e: SignatureError) -> Error {
    match e {
        SignatureError::Untyped(span) => Error::Untyped { span },
        SignatureError::Unsupported(span, message) => Error::Unsupported { span, message },
        SignatureError::Size(span, error) => Error::Size { span, error },
    }
}

/// The signature of the entry point `fun(x1 => ... => body)`, every buffer checked
/// against `limits`.
pub(crate) fn signature<'t>(term: &'t Term, limits: &Limits) -> Result<Signature<'t>, Error> {
    let loops = loop_program::Signature::of(term, limits).map_err(signature_error)?;
    let mut arguments = Vec::new();
    for (_, _, param) in &loops.params {
        match param {
            Param::Scalar(arg, s) => arguments.push(Value::new(arg, ir::Type::scalar(*s))),
            Param::Data(storage) => arguments.extend(leaf_arguments(storage)),
        }
    }
    arguments.extend(leaf_arguments(&loops.out));
    Ok(Signature { loops, arguments })
}

/// `%argk_j: memref<...>` for each leaf of `storage`.
pub(crate) fn leaf_arguments(storage: &Storage) -> impl Iterator<Item = Value> + '_ {
    storage
        .leaves()
        .into_iter()
        .map(|(name, dims, s)| Value::new(name, ir::Type::memref(dims, s)))
}
