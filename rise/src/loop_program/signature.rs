//! The function boundary a loop program reads and writes: a parameter or result of
//! any data type is one buffer per scalar leaf of its type (an array of pairs is a
//! pair of arrays), a scalar parameter a value; each buffer's size checked against the
//! memory limits.

use crate::limits::{Limits, SizeError};
use crate::nat::Nat;
use crate::term::{Expr, Span, Term};
use crate::types::{Scalar, Type, TypeKind};
use elevate_core::stack::guard;
use std::rc::Rc;

/// The most lanes of a vector: each lane is generated (and the Transform script
/// vectorizes to these widths), so an absurd width is an error, not a hang.
pub const MAX_VECTOR_LANES: i64 = 1024;

/// Where a value of a data type lives: one buffer per scalar leaf of the type, an
/// array of pairs as a pair of arrays.
#[derive(Debug, Clone)]
pub enum Storage {
    /// A buffer of scalars.
    Leaf {
        /// Its name (the function argument that passes it).
        buffer: String,
        /// Its dimensions, outermost first.
        dims: Rc<Vec<i64>>,
        /// Its elements.
        scalar: Scalar,
    },
    /// The two components of a pair.
    Pair(Rc<Storage>, Rc<Storage>),
}

impl Storage {
    /// Its leaves, in order.
    pub fn leaves(&self) -> Vec<(&str, &[i64], Scalar)> {
        let mut out = Vec::new();
        let mut pending = vec![self];
        while let Some(s) = pending.pop() {
            match s {
                Storage::Leaf {
                    buffer,
                    dims,
                    scalar,
                } => out.push((buffer.as_str(), dims.as_slice(), *scalar)),
                Storage::Pair(a, b) => pending.extend([&**b, &**a]),
            }
        }
        out
    }
}

/// A parameter of the entry point: a scalar value (named), or data in buffers.
#[derive(Debug, Clone)]
pub enum Param {
    /// A scalar passed as a value.
    Scalar(String, Scalar),
    /// Data in buffers.
    Data(Storage),
}

/// The entry point's parameters (term variable, type, how it is passed), its result's
/// storage and type, and its body.
#[derive(Debug, Clone)]
pub struct Signature<'t> {
    /// The parameters, in order.
    pub params: Vec<(u64, Type, Param)>,
    /// Where the result is written.
    pub out: Storage,
    /// The result's type.
    pub result: Type,
    /// The body, inside the parameters' lambdas.
    pub body: &'t Term,
}

/// Why a term has no [`Signature`], and where in the program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignatureError {
    /// A node without a type (the term was not inferred).
    Untyped(Option<Span>),
    /// A parameter or result the boundary cannot pass, and why.
    Unsupported(Option<Span>, String),
    /// A buffer over the memory limit.
    Size(Option<Span>, SizeError),
}

impl std::fmt::Display for SignatureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SignatureError::Untyped(_) => write!(f, "a node without its type"),
            SignatureError::Unsupported(_, why) => write!(f, "{why}"),
            SignatureError::Size(_, e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SignatureError {}

impl<'t> Signature<'t> {
    /// The signature of the entry point `fun(x1 => ... => body)`: a scalar parameter
    /// `k` is named `%argk`, the leaf `j` of data parameter `k` `%argk_j`, the result's
    /// leaf `j` `%outj`; every buffer is checked against `limits`.
    ///
    /// ```
    /// use elevate_rise::{Program, limits::Limits, loop_program::Signature};
    /// let p = Program::load("def f(a: f32, x: 8.(f32, i32)) = x", None).unwrap();
    /// let sig = Signature::of(&p.entry().term, &Limits::default()).unwrap();
    /// assert_eq!(sig.params.len(), 2);
    /// let names: Vec<&str> = sig.out.leaves().iter().map(|l| l.0).collect();
    /// assert_eq!(names, ["%out0", "%out1"]);
    /// ```
    pub fn of(term: &'t Term, limits: &Limits) -> Result<Signature<'t>, SignatureError> {
        let mut params = Vec::new();
        let mut body = term;
        while let Expr::Lambda(x, _, b) = body.expr() {
            let ty = match body.ty().map(Type::kind) {
                Some(TypeKind::Fun(param, _)) => param.clone(),
                _ => return Err(SignatureError::Untyped(body.span())),
            };
            let k = params.len();
            let param = match ty.kind() {
                TypeKind::Scalar(s) => Param::Scalar(format!("%arg{k}"), *s),
                _ => {
                    let what = format!("parameter `{}`", x.name);
                    Param::Data(storage(&ty, body, &mut |leaf, dims, s| {
                        check_buffer(limits, &what, dims, s)
                            .map_err(|e| SignatureError::Size(body.span(), e))?;
                        Ok(format!("%arg{k}_{leaf}"))
                    })?)
                }
            };
            params.push((x.id, ty, param));
            body = b;
        }
        let result = body
            .ty()
            .cloned()
            .ok_or(SignatureError::Untyped(body.span()))?;
        let out = storage(&result, body, &mut |leaf, dims, s| {
            check_buffer(limits, "the result", dims, s)
                .map_err(|e| SignatureError::Size(body.span(), e))?;
            Ok(format!("%out{leaf}"))
        })?;
        Ok(Signature {
            params,
            out,
            result,
            body,
        })
    }
}

/// Whether `ty` is an array of data of known sizes (arrays, vectors, pairs of scalars):
/// something a buffer can hold.
pub fn is_array_data(ty: &Type) -> bool {
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

/// Checks that a buffer of `dims` elements of `s` fits the limits (and so that every
/// index into it fits in a signed 64-bit index), before it is allocated: `what` names
/// it.
pub fn check_buffer(limits: &Limits, what: &str, dims: &[i64], s: Scalar) -> Result<(), SizeError> {
    let elements = dims
        .iter()
        .try_fold(1u128, |n, d| n.checked_mul(u128::try_from(*d).ok()?))
        .unwrap_or(u128::MAX);
    let tighter = Limits::with_max_bytes(limits.max_bytes.min(i64::MAX as u64));
    tighter.check_array(what, elements, s.bytes())
}

/// A function naming each leaf's buffer: `(leaf number, dims, scalar)` to its name.
pub type NameLeaf<'a> = dyn FnMut(usize, &[i64], Scalar) -> Result<String, SignatureError> + 'a;

/// The storage of a parameter or result of type `ty` (at `what`): one buffer per
/// scalar leaf, named by `name`.
pub fn storage(ty: &Type, what: &Term, name: &mut NameLeaf) -> Result<Storage, SignatureError> {
    fn size(n: &Nat, what: &Term) -> Result<i64, SignatureError> {
        n.as_const().ok_or_else(|| {
            SignatureError::Unsupported(
                what.span(),
                format!("the size {n} is not known (compile with concrete sizes)"),
            )
        })
    }
    fn walk(
        ty: &Type,
        dims: Vec<i64>,
        what: &Term,
        leaf: &mut usize,
        name: &mut NameLeaf,
    ) -> Result<Storage, SignatureError> {
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
            _ => Err(SignatureError::Unsupported(
                what.span(),
                format!("a parameter or result of type {ty} (data only)"),
            )),
        })
    }
    walk(ty, Vec::new(), what, &mut 0, name)
}
