//! Calling a compiled function: its arguments in buffers (sizes checked before they
//! are allocated), the call through MLIR's packed interface, the trap record checked
//! after it, the result read back.

use super::args::{Arg, Arguments};
use super::compiled::Compiled;
use crate::error::Error;
use elevate_rise::Value;

/// The arguments of one call, in the buffers the compiled function reads and writes.
/// It can be invoked again and again (to time it): each call overwrites the result.
pub struct Call<'a> {
    compiled: &'a Compiled,
    args: Arguments,
}

impl Compiled {
    /// Puts `inputs` (one value per parameter, as the interpreter takes them) into
    /// buffers for calling the function, with buffers for its result. All buffers
    /// together are checked against the limits before any is allocated.
    pub fn prepare(&self, inputs: &[Value]) -> Result<Call<'_>, Error> {
        Ok(Call {
            compiled: self,
            args: Arguments::new(&self.payload, &self.limits, inputs)?,
        })
    }

    /// Calls the function's packed wrapper (MLIR's C API calls the C interface,
    /// `_mlir_ciface_NAME`, through it) with a pointer to each argument.
    ///
    /// # Safety
    ///
    /// Every pointer in `arguments` points to live storage of the type the function's
    /// C interface expects, in its order.
    pub(super) unsafe fn invoke_packed(&self, arguments: &mut [*mut ()]) {
        // SAFETY: as the caller promises; the wrapper lives as long as the engine.
        unsafe { (self.packed)(arguments.as_mut_ptr()) }
    }

    /// Calls the function on `inputs` and returns its result.
    pub fn run(&self, inputs: &[Value]) -> Result<Value, Error> {
        let mut call = self.prepare(inputs)?;
        call.invoke()?;
        call.try_output()
    }
}

impl Call<'_> {
    /// Calls the compiled function once (the result buffers are overwritten). An
    /// operation that trapped (an integer division by zero, ...) is an error naming it.
    pub fn invoke(&mut self) -> Result<(), Error> {
        self.args.clear_trap();
        // MLIR's C API calls the function's C interface (`_mlir_ciface_NAME`, from
        // `llvm.emit_c_interface`) through its packed wrapper, which takes a pointer
        // to each argument: for a memref, a pointer to its descriptor's address.
        let args = &mut self.args;
        let mut descriptor_pointers: Vec<*mut u64> = args
            .buffers
            .iter_mut()
            .map(|b| b.descriptor.as_mut_ptr())
            .collect();
        let mut arguments: Vec<*mut ()> = Vec::new();
        for a in &args.order {
            match a {
                Arg::Buffer(k) => {
                    arguments.push(&mut descriptor_pointers[*k] as *mut *mut u64 as *mut ())
                }
                Arg::Scalar(k) => arguments.push(&mut args.scalars[*k] as *mut u64 as *mut ()),
            }
        }
        let compiled = self.compiled;
        // SAFETY: every pointer points to live storage of the type the C interface
        // expects (descriptors built for these shapes, scalars by value in the low
        // bytes of eight), and integer divisions that would trap are guarded.
        unsafe { compiled.invoke_packed(&mut arguments) };
        self.args.trapped(&compiled.payload)
    }

    /// The result of the last call (aborting, as any allocation does, where the memory
    /// for its values is not there: [`Call::try_output`] says so instead).
    pub fn output(&self) -> Value {
        self.args.output(&self.compiled.payload)
    }

    /// The result of the last call: an error where its values would not fit the
    /// limits, or the memory for them is not there.
    pub fn try_output(&self) -> Result<Value, Error> {
        self.args
            .try_output(&self.compiled.payload, &self.compiled.limits)
    }
}
