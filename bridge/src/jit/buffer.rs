//! The memrefs of a call: storage with MLIR's descriptor, filled from [`Value`]s and
//! read back into them, one buffer per scalar leaf of a data type
//! ([`crate::boundary`]).

use crate::error::Error;
use elevate_core::stack::guard;
use elevate_rise::types::{Scalar, Type, TypeKind};
use elevate_rise::Value;
use std::collections::TryReserveError;

/// A memref's storage and descriptor (`{allocated, aligned, offset, sizes, strides}`).
pub(super) struct Buffer {
    data: Vec<u64>,
    scalar: Scalar,
    len: usize,
    pub(super) descriptor: Vec<u64>,
}

/// The dimensions and scalar of a leaf type (nested arrays of a scalar).
pub(super) fn shape(ty: &Type) -> Result<(Vec<i64>, Scalar), Error> {
    let mut dims = Vec::new();
    let mut t = ty;
    loop {
        match t.kind() {
            TypeKind::Array(n, e) => {
                dims.push(
                    n.as_const()
                        .ok_or_else(|| Error::input(format!("the size {n} is not known")))?,
                );
                t = e;
            }
            TypeKind::Scalar(s) => return Ok((dims, *s)),
            _ => return Err(Error::input(format!("unsupported data {ty}"))),
        }
    }
}

/// The bytes of a buffer of these dimensions (saturated: checked against the limits
/// before anything is allocated).
pub(super) fn bytes(dims: &[i64], s: Scalar) -> u128 {
    dims.iter()
        .fold(1u128, |n, d| {
            n.saturating_mul(u128::try_from(*d).unwrap_or(0))
        })
        .saturating_mul(u128::from(s.bytes()))
}

impl Buffer {
    /// A zeroed buffer of `dims` elements of `scalar`, whose size was checked against
    /// the limits; an error naming it (`what`) and its size where the system has not
    /// the memory.
    pub(super) fn new(dims: &[i64], scalar: Scalar, what: &str) -> Result<Buffer, Error> {
        let len: usize = dims.iter().map(|d| (*d).max(0) as usize).product();
        let bytes = len * scalar.bytes() as usize;
        let words = bytes.div_ceil(8).max(1);
        let mut data = Vec::new();
        data.try_reserve_exact(words).map_err(|_| Error::Memory {
            what: what.to_string(),
            bytes: bytes as u128,
        })?;
        data.resize(words, 0u64);
        let ptr = data.as_mut_ptr() as u64;
        let mut strides = vec![1i64; dims.len()];
        for k in (0..dims.len().saturating_sub(1)).rev() {
            strides[k] = strides[k + 1] * dims[k + 1];
        }
        let descriptor = [ptr, ptr, 0]
            .into_iter()
            .chain(dims.iter().map(|d| *d as u64))
            .chain(strides.iter().map(|s| *s as u64))
            .collect();
        Ok(Buffer {
            data,
            scalar,
            len,
            descriptor,
        })
    }

    /// The buffer's bytes (its elements, row-major).
    pub(super) fn bytes(&self) -> &[u8] {
        let len = self.len * self.scalar.bytes() as usize;
        // SAFETY: `data` holds at least `len` bytes; u8 has no alignment needs.
        unsafe { std::slice::from_raw_parts(self.data.as_ptr() as *const u8, len) }
    }

    /// The buffer's bytes, to write.
    pub(super) fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.len * self.scalar.bytes() as usize;
        // SAFETY: `data` holds at least `len` bytes; u8 has no alignment needs.
        unsafe { std::slice::from_raw_parts_mut(self.data.as_mut_ptr() as *mut u8, len) }
    }

    /// Its dimensions (row-major, contiguous).
    pub(super) fn dims(&self) -> Vec<i64> {
        let rank = (self.descriptor.len() - 3) / 2;
        self.descriptor[3..3 + rank]
            .iter()
            .map(|d| *d as i64)
            .collect()
    }

    /// Its scalar.
    pub(super) fn scalar(&self) -> Scalar {
        self.scalar
    }

    /// Writes scalar `v` at element `k`.
    fn put(&mut self, k: usize, v: &Value) -> Result<(), Error> {
        if k >= self.len {
            return Err(Error::input("an input of the wrong size"));
        }
        let (s, w) = (self.scalar, self.scalar.bytes() as usize);
        let out = &mut self.bytes_mut()[k * w..(k + 1) * w];
        write_scalar(out, s, v)
    }

    /// The scalar at element `k`.
    fn get(&self, k: usize) -> Value {
        let w = self.scalar.bytes() as usize;
        read_scalar(&self.bytes()[k * w..(k + 1) * w], self.scalar)
    }

    /// The rank-0 `i32` the buffer holds (a trap code).
    pub(super) fn code(&self) -> i32 {
        match self.get(0) {
            Value::I32(c) => c,
            _ => 0,
        }
    }

    /// Sets the rank-0 `i32` the buffer holds.
    pub(super) fn set_code(&mut self, code: i32) {
        self.bytes_mut()[..4].copy_from_slice(&code.to_ne_bytes());
    }
}

fn write_scalar(out: &mut [u8], s: Scalar, v: &Value) -> Result<(), Error> {
    match (s, v) {
        (Scalar::Bool, Value::Bool(b)) => out[0] = u8::from(*b),
        (Scalar::I32, Value::I32(x)) => out.copy_from_slice(&x.to_ne_bytes()),
        (Scalar::I64, Value::I64(x)) => out.copy_from_slice(&x.to_ne_bytes()),
        (Scalar::F32, Value::F32(x)) => out.copy_from_slice(&x.to_ne_bytes()),
        (Scalar::F64, Value::F64(x)) => out.copy_from_slice(&x.to_ne_bytes()),
        _ => {
            return Err(Error::input(format!(
                "expected a {}, found {}",
                s.name(),
                describe(v)
            )))
        }
    }
    Ok(())
}

fn read_scalar(c: &[u8], s: Scalar) -> Value {
    let mut word = [0u8; 8];
    word[..c.len()].copy_from_slice(c);
    let [a, b, c, d, ..] = word;
    match s {
        Scalar::Bool => Value::Bool(a != 0),
        Scalar::I32 => Value::I32(i32::from_ne_bytes([a, b, c, d])),
        Scalar::I64 => Value::I64(i64::from_ne_bytes(word)),
        Scalar::F32 => Value::F32(f32::from_ne_bytes([a, b, c, d])),
        Scalar::F64 => Value::F64(f64::from_ne_bytes(word)),
    }
}

/// What `v` is, briefly (not its elements: inputs can be large).
fn describe(v: &Value) -> String {
    match v {
        Value::Array(a) => format!("an array of {}", a.len()),
        Value::Vector(items) => format!("a vector of {}", items.len()),
        Value::Pair(_) => "a pair".into(),
        Value::Function(_) => "a function".into(),
        scalar => format!("{scalar:?}"),
    }
}

/// A scalar argument's storage (eight bytes, the value in the low bytes).
pub(super) fn scalar_argument(s: Scalar, v: &Value) -> Result<u64, Error> {
    let mut word = [0u8; 8];
    write_scalar(&mut word[..s.bytes() as usize], s, v)?;
    Ok(u64::from_ne_bytes(word))
}

/// How many leaves `ty` has.
fn leaf_count(ty: &Type) -> usize {
    guard(|| match ty.kind() {
        TypeKind::Array(_, e) | TypeKind::Vector(e, _) => leaf_count(e),
        TypeKind::Pair(a, b) => leaf_count(a) + leaf_count(b),
        _ => 1,
    })
}

/// Writes `v`, of type `ty`, into the buffers of its leaves (from `leaves[0]`), each at
/// its next position (`next`): row-major, as the loops over `ty` visit its scalars.
pub(super) fn scatter(
    ty: &Type,
    v: &Value,
    leaves: &mut [Buffer],
    next: &mut [usize],
) -> Result<(), Error> {
    guard(|| match ty.kind() {
        TypeKind::Array(n, e) | TypeKind::Vector(e, n) => {
            let n = n.as_const().unwrap_or(0).max(0) as usize;
            match v {
                Value::Array(a) if a.len() == n => {
                    for i in 0..n {
                        let x = a.get(i).map_err(Error::input)?;
                        scatter(e, &x, leaves, next)?;
                    }
                }
                Value::Vector(items) if items.len() == n => {
                    for x in items.iter() {
                        scatter(e, x, leaves, next)?;
                    }
                }
                _ => {
                    return Err(Error::input(format!(
                        "expected {ty}, found {}",
                        describe(v)
                    )))
                }
            }
            Ok(())
        }
        TypeKind::Pair(a, b) => {
            let Value::Pair(p) = v else {
                return Err(Error::input(format!(
                    "expected {ty}, found {}",
                    describe(v)
                )));
            };
            let k = leaf_count(a);
            scatter(a, &p.0, &mut leaves[..k], &mut next[..k])?;
            scatter(b, &p.1, &mut leaves[k..], &mut next[k..])
        }
        _ => {
            leaves[0].put(next[0], v)?;
            next[0] += 1;
            Ok(())
        }
    })
}

/// The value of type `ty` in the buffers of its leaves, each read from its next
/// position (the inverse of [`scatter`]); an error, not an abort, where the memory
/// for its arrays is not there.
pub(super) fn gather(
    ty: &Type,
    leaves: &[Buffer],
    next: &mut [usize],
) -> Result<Value, TryReserveError> {
    guard(|| match ty.kind() {
        TypeKind::Array(n, e) | TypeKind::Vector(e, n) => {
            let n = n.as_const().unwrap_or(0).max(0) as usize;
            let mut items = Vec::new();
            items.try_reserve_exact(n)?;
            for _ in 0..n {
                items.push(gather(e, leaves, next)?);
            }
            Ok(match ty.kind() {
                TypeKind::Vector(..) => Value::Vector(items.into()),
                _ => Value::array(items),
            })
        }
        TypeKind::Pair(a, b) => {
            let k = leaf_count(a);
            let x = gather(a, &leaves[..k], &mut next[..k])?;
            let y = gather(b, &leaves[k..], &mut next[k..])?;
            Ok(Value::pair(x, y))
        }
        _ => {
            let v = leaves[0].get(next[0]);
            next[0] += 1;
            Ok(v)
        }
    })
}
