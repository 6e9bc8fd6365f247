//! The arguments of one call of a payload's function, in the order the function takes
//! them: a buffer per scalar leaf of each data input, a scalar input by value, the
//! result's buffers, and the trap record where the payload has one. The CPU's calls
//! ([`super::Call`]) pass them to the JIT's function; the GPU's ([`super::GpuCall`])
//! copy the buffers to the device and launch its kernels on them.

use super::buffer::{bytes, gather, scalar_argument, scatter, shape, Buffer};
use crate::boundary::{leaf_types, Check};
use crate::error::{Error, Trap};
use crate::payload::Payload;
use elevate_rise::limits::{elements_in, Limits};
use elevate_rise::types::{Scalar, TypeKind};
use elevate_rise::value::VALUE_BYTES;
use elevate_rise::Value;
use std::collections::TryReserveError;
use std::ops::Range;

/// The arguments of a call, filled from the inputs.
pub(super) struct Arguments {
    pub(super) buffers: Vec<Buffer>,
    pub(super) scalars: Vec<u64>,
    /// The function's arguments, in order.
    pub(super) order: Vec<Arg>,
    /// The result's buffers.
    pub(super) outputs: Range<usize>,
    /// The buffer of the trap record, if the function has one.
    pub(super) trap: Option<usize>,
}

/// One argument of the function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Arg {
    /// A memref: the buffer at this index.
    Buffer(usize),
    /// A scalar: the value at this index, in the low bytes of eight.
    Scalar(usize),
}

impl Arguments {
    /// Puts `inputs` (one value per parameter, as the interpreter takes them) into
    /// buffers for calling `payload`'s function, with buffers for its result. All
    /// buffers together are checked against `limits` before any is allocated.
    pub(super) fn new(
        payload: &Payload,
        limits: &Limits,
        inputs: &[Value],
    ) -> Result<Arguments, Error> {
        let params = &payload.params;
        if inputs.len() != params.len() {
            return Err(Error::input(format!(
                "{} inputs for {} parameters",
                inputs.len(),
                params.len()
            )));
        }
        // The data parameters' leaves, then the result's (a scalar result too).
        let mut shapes = Vec::new();
        let data = params
            .iter()
            .filter(|ty| !matches!(ty.kind(), TypeKind::Scalar(_)));
        for ty in data.chain([&payload.result]) {
            for leaf in leaf_types(ty) {
                shapes.push(shape(&leaf)?);
            }
        }
        let total = shapes
            .iter()
            .fold(0u128, |n, (dims, s)| n.saturating_add(bytes(dims, *s)));
        limits
            .check_array("the buffers of a call", total, 1)
            .map_err(|error| Error::Size { span: None, error })?;
        let mut args = Arguments {
            buffers: Vec::new(),
            scalars: Vec::new(),
            order: Vec::new(),
            outputs: 0..0,
            trap: None,
        };
        let mut shapes = shapes.into_iter();
        // The buffers of `count` leaves of `whose` (`input 1`, `the result`).
        let mut leaves = |args: &mut Arguments, count: usize, whose: &str| {
            let what = match count {
                1 => format!("the buffer of {whose}"),
                _ => format!("a buffer of {whose}"),
            };
            let first = args.buffers.len();
            for (dims, s) in shapes.by_ref().take(count) {
                args.buffers.push(Buffer::new(&dims, s, &what)?);
                args.order.push(Arg::Buffer(args.buffers.len() - 1));
            }
            Ok::<_, Error>(first..args.buffers.len())
        };
        for (k, (ty, value)) in params.iter().zip(inputs).enumerate() {
            match ty.kind() {
                TypeKind::Scalar(s) => {
                    args.scalars.push(scalar_argument(*s, value)?);
                    args.order.push(Arg::Scalar(args.scalars.len() - 1));
                }
                _ => {
                    let whose = format!("input {}", k + 1);
                    let range = leaves(&mut args, leaf_types(ty).len(), &whose)?;
                    let mut next = vec![0; range.len()];
                    scatter(ty, value, &mut args.buffers[range], &mut next)?;
                }
            }
        }
        let count = leaf_types(&payload.result).len();
        args.outputs = leaves(&mut args, count, "the result")?;
        if !payload.traps.is_empty() {
            args.buffers
                .push(Buffer::new(&[], Scalar::I32, "the trap record")?);
            args.trap = Some(args.buffers.len() - 1);
            args.order.push(Arg::Buffer(args.buffers.len() - 1));
        }
        Ok(args)
    }

    /// The result in the output buffers, as values: checked against `limits` as the
    /// interpreter checks its results (a value takes more memory than its scalar in a
    /// buffer), and an error where the system has not the memory for them.
    pub(super) fn try_output(&self, payload: &Payload, limits: &Limits) -> Result<Value, Error> {
        let elements = elements_in(&payload.result, &|n| n.as_const()).unwrap_or(u128::MAX);
        limits
            .check_array("the result", elements, VALUE_BYTES)
            .map_err(|error| Error::Size { span: None, error })?;
        self.values(payload).map_err(|_| Error::Memory {
            what: "the result's values".into(),
            bytes: elements.saturating_mul(u128::from(VALUE_BYTES)),
        })
    }

    /// The result in the output buffers, as values, unchecked: aborting, as any
    /// allocation does, where the memory for them is not there.
    pub(super) fn output(&self, payload: &Payload) -> Value {
        self.values(payload)
            .unwrap_or_else(|_| std::alloc::handle_alloc_error(std::alloc::Layout::new::<Value>()))
    }

    fn values(&self, payload: &Payload) -> Result<Value, TryReserveError> {
        let leaves = &self.buffers[self.outputs.clone()];
        let mut next = vec![0; leaves.len()];
        gather(&payload.result, leaves, &mut next)
    }

    /// Writes `value` (of the result's type) into the output buffers.
    pub(super) fn set_output(&mut self, payload: &Payload, value: &Value) -> Result<(), Error> {
        let range = self.outputs.clone();
        let mut next = vec![0; range.len()];
        scatter(&payload.result, value, &mut self.buffers[range], &mut next)
    }

    /// Clears the trap record before a call.
    pub(super) fn clear_trap(&mut self) {
        if let Some(t) = self.trap {
            self.buffers[t].set_code(0);
        }
    }

    /// The trap the last call recorded, as the error it stands for.
    pub(super) fn trapped(&self, payload: &Payload) -> Result<(), Error> {
        match self.trap.map(|t| self.buffers[t].code()) {
            Some(code) if code > 0 => Err(trapped(payload, code)),
            _ => Ok(()),
        }
    }
}

/// The error a trap code stands for (see [`crate::Payload::traps`]).
pub(super) fn trapped(payload: &Payload, code: i32) -> Error {
    let k = (code - 1) as usize;
    match payload.traps.get(k / 2) {
        Some(site) => Error::Trap {
            trap: match (site.check, k % 2) {
                (Check::Division(_), 0) => Trap::DivisionByZero,
                (Check::Division(s), _) => Trap::Overflow(s),
                (Check::Index { bound }, _) => Trap::IndexOutOfRange { bound },
            },
            op: site.op.name(),
            span: site.span,
        },
        None => Error::mlir(
            crate::Stage::Run,
            format!("the compiled function recorded an unknown trap {code}"),
        ),
    }
}
