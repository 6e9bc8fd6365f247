//! Calling a compiled function: its arguments in buffers (sizes checked before they
//! are allocated), the call through MLIR's packed interface, the trap record checked
//! after it, the result read back.

use super::buffer::{bytes, gather, scalar_argument, scatter, shape, Buffer};
use super::compiled::Compiled;
use crate::boundary::{leaf_types, Check};
use crate::error::{Error, Trap};
use elevate_rise::types::{Scalar, TypeKind};
use elevate_rise::Value;
use std::ops::Range;

/// The arguments of one call, in the buffers the compiled function reads and writes.
/// It can be invoked again and again (to time it): each call overwrites the result.
pub struct Call<'a> {
    compiled: &'a Compiled,
    buffers: Vec<Buffer>,
    scalars: Vec<u64>,
    order: Vec<Arg>,
    /// The result's buffers.
    outputs: Range<usize>,
    /// The buffer of the trap record, if the function has one.
    trap: Option<usize>,
}

enum Arg {
    Buffer(usize),
    Scalar(usize),
}

impl Compiled {
    /// Puts `inputs` (one value per parameter, as the interpreter takes them) into
    /// buffers for calling the function, with buffers for its result. All buffers
    /// together are checked against the limits before any is allocated.
    pub fn prepare(&self, inputs: &[Value]) -> Result<Call<'_>, Error> {
        let params = &self.payload.params;
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
        for ty in data.chain([&self.payload.result]) {
            for leaf in leaf_types(ty) {
                shapes.push(shape(&leaf)?);
            }
        }
        let total = shapes
            .iter()
            .fold(0u128, |n, (dims, s)| n.saturating_add(bytes(dims, *s)));
        self.limits
            .check_array("the buffers of a call", total, 1)
            .map_err(|error| Error::Size { span: None, error })?;
        let mut call = Call {
            compiled: self,
            buffers: Vec::new(),
            scalars: Vec::new(),
            order: Vec::new(),
            outputs: 0..0,
            trap: None,
        };
        let mut shapes = shapes.into_iter();
        let mut leaves = |call: &mut Call, count: usize| {
            let first = call.buffers.len();
            for (dims, s) in shapes.by_ref().take(count) {
                call.buffers.push(Buffer::new(&dims, s));
                call.order.push(Arg::Buffer(call.buffers.len() - 1));
            }
            first..call.buffers.len()
        };
        for (ty, value) in params.iter().zip(inputs) {
            match ty.kind() {
                TypeKind::Scalar(s) => {
                    call.scalars.push(scalar_argument(*s, value)?);
                    call.order.push(Arg::Scalar(call.scalars.len() - 1));
                }
                _ => {
                    let range = leaves(&mut call, leaf_types(ty).len());
                    let mut next = vec![0; range.len()];
                    scatter(ty, value, &mut call.buffers[range], &mut next)?;
                }
            }
        }
        let count = leaf_types(&self.payload.result).len();
        call.outputs = leaves(&mut call, count);
        if !self.payload.traps.is_empty() {
            call.buffers.push(Buffer::new(&[], Scalar::I32));
            call.trap = Some(call.buffers.len() - 1);
            call.order.push(Arg::Buffer(call.buffers.len() - 1));
        }
        Ok(call)
    }

    /// Calls the function on `inputs` and returns its result.
    pub fn run(&self, inputs: &[Value]) -> Result<Value, Error> {
        let mut call = self.prepare(inputs)?;
        call.invoke()?;
        Ok(call.output())
    }
}

impl Call<'_> {
    /// Calls the compiled function once (the result buffers are overwritten). An
    /// operation that trapped (an integer division by zero, ...) is an error naming it.
    pub fn invoke(&mut self) -> Result<(), Error> {
        if let Some(t) = self.trap {
            self.buffers[t].set_code(0);
        }
        // MLIR's C API calls the function's C interface (`_mlir_ciface_NAME`, from
        // `llvm.emit_c_interface`) through its packed wrapper, which takes a pointer
        // to each argument: for a memref, a pointer to its descriptor's address.
        let mut descriptor_pointers: Vec<*mut u64> = self
            .buffers
            .iter_mut()
            .map(|b| b.descriptor.as_mut_ptr())
            .collect();
        let mut arguments: Vec<*mut ()> = Vec::new();
        for a in &self.order {
            match a {
                Arg::Buffer(k) => {
                    arguments.push(&mut descriptor_pointers[*k] as *mut *mut u64 as *mut ())
                }
                Arg::Scalar(k) => arguments.push(&mut self.scalars[*k] as *mut u64 as *mut ()),
            }
        }
        let compiled = self.compiled;
        // SAFETY: every pointer points to live storage of the type the C interface
        // expects (descriptors built for these shapes, scalars by value in the low
        // bytes of eight), and integer divisions that would trap are guarded.
        let called = unsafe {
            compiled
                .engine
                .invoke_packed(&compiled.payload.name, &mut arguments)
        };
        if !called {
            return Err(Error::mlir(
                crate::Stage::Run,
                format!(
                    "the compiled module has no function `{}`",
                    compiled.payload.name
                ),
            ));
        }
        match self.trap.map(|t| self.buffers[t].code()) {
            Some(code) if code > 0 => Err(trapped(compiled, code)),
            _ => Ok(()),
        }
    }

    /// The result of the last call.
    pub fn output(&self) -> Value {
        let leaves = &self.buffers[self.outputs.clone()];
        let mut next = vec![0; leaves.len()];
        gather(&self.compiled.payload.result, leaves, &mut next)
    }
}

/// The error a trap code stands for (see [`crate::Payload::traps`]).
fn trapped(compiled: &Compiled, code: i32) -> Error {
    let k = (code - 1) as usize;
    match compiled.payload.traps.get(k / 2) {
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
