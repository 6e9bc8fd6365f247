//! Calling a compiled function on memory its caller owns (NumPy arrays, say): the
//! inputs are read where they are and the result is written where the caller wants it,
//! without a copy either way.

use super::buffer::{scalar_argument, shape};
use super::compiled::Compiled;
use crate::boundary::leaf_types;
use crate::error::Error;
use elevate_rise::types::{Scalar, TypeKind};
use elevate_rise::Value;

/// A C-contiguous (row-major) array: its dimensions and its scalar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayShape {
    /// The dimensions, outermost first.
    pub dims: Vec<i64>,
    /// The element type.
    pub scalar: Scalar,
}

impl ArrayShape {
    /// The number of elements (dimensions were checked against the limits when the
    /// program was compiled).
    pub fn elements(&self) -> usize {
        self.dims.iter().map(|d| (*d).max(0) as usize).product()
    }
}

/// One parameter of a compiled function, as [`Compiled::invoke_raw`] takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slot {
    /// An array, passed by address.
    Array(ArrayShape),
    /// A scalar, passed by value.
    Scalar(Scalar),
}

/// What a compiled function takes and gives, for callers that own the memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    /// One slot per parameter, in order.
    pub inputs: Vec<Slot>,
    /// The result: one array (a scalar result is an array of no dimensions).
    pub output: ArrayShape,
}

/// An argument of [`Compiled::invoke_raw`].
#[derive(Debug, Clone)]
pub enum RawArg {
    /// The address of an array of its slot's shape.
    Array(*mut u8),
    /// A scalar of its slot's type.
    Scalar(Value),
}

impl Compiled {
    /// The function's parameters and result as plain arrays and scalars; an error
    /// for a parameter or a result that is a pair (several arrays of the function's).
    pub fn interface(&self) -> Result<Interface, Error> {
        let payload = self.payload();
        let array = |ty: &elevate_rise::Type, what: &str| -> Result<ArrayShape, Error> {
            let leaves = leaf_types(ty);
            match leaves.as_slice() {
                [leaf] => {
                    let (dims, scalar) = shape(leaf)?;
                    Ok(ArrayShape { dims, scalar })
                }
                _ => Err(Error::input(format!(
                    "{what} of type {ty} is {} arrays: only arrays and scalars can be \
                     passed as memory (`Compiled::run` takes values of any type)",
                    leaves.len()
                ))),
            }
        };
        let inputs = payload
            .params
            .iter()
            .enumerate()
            .map(|(k, ty)| match ty.kind() {
                TypeKind::Scalar(s) => Ok(Slot::Scalar(*s)),
                _ => Ok(Slot::Array(array(ty, &format!("parameter {}", k + 1))?)),
            })
            .collect::<Result<_, Error>>()?;
        Ok(Interface {
            inputs,
            output: array(&payload.result, "the result")?,
        })
    }

    /// Calls the function with its arrays where `inputs` and `output` point.
    ///
    /// # Safety
    ///
    /// `inputs` follow [`interface`](Self::interface): each array address points to
    /// live, C-contiguous memory of its slot's shape, aligned for its scalar, not
    /// written by anyone else during the call; `output` points to such writable memory
    /// of the result's shape, which overlaps no input.
    pub unsafe fn invoke_raw(&self, inputs: &[RawArg], output: *mut u8) -> Result<(), Error> {
        let payload = self.payload();
        if inputs.len() != payload.params.len() {
            return Err(Error::input(format!(
                "{} inputs for {} parameters",
                inputs.len(),
                payload.params.len()
            )));
        }
        let mut trap_code = 0i32;
        // Descriptors first (they must not move while the call reads them), then the
        // arguments that point at them.
        let mut descriptors: Vec<Vec<u64>> = Vec::with_capacity(inputs.len() + 2);
        let mut scalars: Vec<u64> = Vec::with_capacity(inputs.len());
        let mut order = Vec::with_capacity(inputs.len() + 2);
        for (ty, arg) in payload.params.iter().zip(inputs) {
            match (ty.kind(), arg) {
                (TypeKind::Scalar(s), RawArg::Scalar(v)) => {
                    scalars.push(scalar_argument(*s, v)?);
                    order.push((false, scalars.len() - 1));
                }
                (TypeKind::Scalar(s), RawArg::Array(_)) => {
                    return Err(Error::input(format!(
                        "expected a {}, found an array",
                        s.name()
                    )))
                }
                (_, RawArg::Array(address)) => {
                    let (dims, _) = shape(&single_leaf(ty)?)?;
                    descriptors.push(descriptor(*address, &dims));
                    order.push((true, descriptors.len() - 1));
                }
                (_, RawArg::Scalar(_)) => {
                    return Err(Error::input(format!(
                        "expected an array of type {ty}, found a scalar"
                    )))
                }
            }
        }
        let (dims, _) = shape(&single_leaf(&payload.result)?)?;
        descriptors.push(descriptor(output, &dims));
        order.push((true, descriptors.len() - 1));
        if !payload.traps.is_empty() {
            descriptors.push(descriptor(&mut trap_code as *mut i32 as *mut u8, &[]));
            order.push((true, descriptors.len() - 1));
        }
        let mut pointers: Vec<*mut u64> = descriptors.iter_mut().map(|d| d.as_mut_ptr()).collect();
        let mut arguments: Vec<*mut ()> = order
            .iter()
            .map(|&(is_array, k)| match is_array {
                true => &mut pointers[k] as *mut *mut u64 as *mut (),
                false => &mut scalars[k] as *mut u64 as *mut (),
            })
            .collect();
        // SAFETY: the caller's memory is as the interface says (this function's
        // contract); descriptors, scalars and the trap code live until it returns.
        unsafe { self.invoke_packed(&mut arguments) };
        if trap_code > 0 {
            return Err(super::args::trapped(payload, trap_code));
        }
        Ok(())
    }
}

/// The one array of a data type (a pair is several: refused).
fn single_leaf(ty: &elevate_rise::Type) -> Result<elevate_rise::Type, Error> {
    let mut leaves = leaf_types(ty);
    match leaves.len() {
        1 => Ok(leaves.remove(0)),
        n => Err(Error::input(format!(
            "{ty} is {n} arrays: only arrays and scalars can be passed as memory"
        ))),
    }
}

/// A memref descriptor of a contiguous row-major array at `address`.
fn descriptor(address: *mut u8, dims: &[i64]) -> Vec<u64> {
    let mut strides = vec![1i64; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * dims[k + 1];
    }
    let a = address as u64;
    [a, a, 0]
        .into_iter()
        .chain(dims.iter().map(|d| *d as u64))
        .chain(strides.iter().map(|s| *s as u64))
        .collect()
}
