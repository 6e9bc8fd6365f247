//! `Compiled`: a program compiled through MLIR for the CPU, called on NumPy arrays in
//! place (inputs read where they are, the result written into a new array or `out`).

use crate::convert::{count_usize, inputs_json, int_in, numpy_of, type_name, Converted};
use crate::errors::{bridge_error, located, InputError};
use crate::program::PyProgram;
use elevate_bridge::jit::{ArrayShape, Compiled, GpuCompiled, Interface, RawArg, Slot};
use elevate_rise::{io, NatEnv, Program, Scalar, Value};
use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::time::Instant;

/// The most calls `bench` times.
const MAX_BENCH_RUNS: u64 = 1_000_000;

/// A compiled program: call it with one NumPy array (or scalar) per parameter.
#[pyclass(name = "Compiled", module = "elevate._native", frozen)]
pub struct PyCompiled {
    compiled: Function,
    interface: Interface,
    program: Program,
    source: String,
    file: String,
    compile_ms: f64,
}

impl PyCompiled {
    pub(crate) fn new(
        compiled: Compiled,
        program: Program,
        source: String,
        file: String,
        compile_ms: f64,
    ) -> PyResult<PyCompiled> {
        let interface = compiled
            .interface()
            .map_err(|e| bridge_error(e, &program, &file, &source))?;
        Ok(PyCompiled {
            compiled: Function(compiled),
            interface,
            program,
            source,
            file,
            compile_ms,
        })
    }

    fn input_error(&self, message: String) -> PyErr {
        located::<InputError>(format!("{}: {message}", self.file), Some(&self.file), None)
    }

    /// The address of `array` if it is C-contiguous, aligned and of `shape`; a
    /// contiguous copy (kept in `keep`) of an array or sequence that only is not laid
    /// out so; an error for another dtype or shape.
    fn address<'py>(
        &self,
        k: usize,
        arg: &Bound<'py, PyAny>,
        shape: &ArrayShape,
        keep: &mut Vec<Bound<'py, PyAny>>,
    ) -> PyResult<*mut u8> {
        let py = arg.py();
        let want = dtype(py, shape.scalar);
        let array = match arg.cast::<PyUntypedArray>() {
            Ok(a) if a.is_c_contiguous() && a.is_aligned() => a.clone(),
            Ok(a) if !a.dtype().is_equiv_to(&want) => a.clone(),
            _ => {
                // A list, or an array not laid out row-major: one copy.
                let numpy = py.import("numpy")?;
                let copy = numpy.call_method1("ascontiguousarray", (arg, &want))?;
                keep.push(copy.clone());
                copy.cast_into::<PyUntypedArray>()?
            }
        };
        if !array.dtype().is_equiv_to(&want) {
            return Err(self.input_error(format!(
                "parameter {}: expected an array of {}, found {}",
                k + 1,
                want,
                array.dtype()
            )));
        }
        let dims: Vec<usize> = shape.dims.iter().map(|d| *d as usize).collect();
        if array.shape() != dims.as_slice() {
            return Err(self.input_error(format!(
                "parameter {}: expected shape {:?}, found {:?}",
                k + 1,
                dims,
                array.shape()
            )));
        }
        // SAFETY: a live NumPy array object.
        Ok(unsafe { (*array.as_array_ptr()).fields.data as *mut u8 })
    }

    /// Calls the function once on `args`, writing into `out`.
    fn call_into<'py>(
        &self,
        args: &Bound<'py, PyTuple>,
        out: &Bound<'py, PyUntypedArray>,
    ) -> PyResult<()> {
        let py = args.py();
        let mut keep = Vec::new();
        let raw = self.raw_args(args, &mut keep)?;
        let output = &self.interface.output;
        if !out.dtype().is_equiv_to(&dtype(py, output.scalar))
            || out.shape()
                != output
                    .dims
                    .iter()
                    .map(|d| *d as usize)
                    .collect::<Vec<_>>()
                    .as_slice()
            || !out.is_c_contiguous()
            || !writeable(out)
        {
            return Err(self.input_error(format!(
                "out: expected a writeable C-contiguous array of {} and shape {:?}",
                dtype(py, output.scalar),
                output.dims
            )));
        }
        // SAFETY: a live NumPy array object.
        let out_address = unsafe { (*out.as_array_ptr()).fields.data as *mut u8 };
        if raw
            .iter()
            .any(|a| matches!(a, RawArg::Array(p) if *p == out_address))
        {
            return Err(self.input_error("out must not be one of the inputs".into()));
        }
        let call = Addresses(raw, out_address, &self.compiled.0);
        let result = py.detach(move || {
            let call = call;
            let compiled = call.2;
            // SAFETY: every address is a live, C-contiguous, aligned array of its
            // slot's dtype and shape (checked above), kept alive by `args`, `keep` and
            // `out` for the call; `out` is none of the inputs.
            unsafe { compiled.invoke_raw(&call.0, call.1) }
        });
        drop(keep);
        result.map_err(|e| bridge_error(e, &self.program, &self.file, &self.source))
    }

    /// One raw argument per parameter of `args` (copies kept in `keep`): an error
    /// that says how many inputs the function takes where `args` has another number,
    /// or which parameter does not fit.
    fn raw_args<'py>(
        &self,
        args: &Bound<'py, PyTuple>,
        keep: &mut Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Vec<RawArg>> {
        let inputs = &self.interface.inputs;
        if args.len() != inputs.len() {
            return Err(self.input_error(format!(
                "expected {} inputs, one per parameter, found {}",
                inputs.len(),
                args.len()
            )));
        }
        inputs
            .iter()
            .zip(args.iter())
            .enumerate()
            .map(|(k, (slot, arg))| {
                Ok(match slot {
                    Slot::Array(shape) => RawArg::Array(self.address(k, &arg, shape, keep)?),
                    Slot::Scalar(s) => RawArg::Scalar(
                        scalar(&arg, *s)
                            .map_err(|e| self.input_error(format!("parameter {}: {e}", k + 1)))?,
                    ),
                })
            })
            .collect()
    }

    /// `args`, or random inputs (`random_inputs`) where there are none.
    fn inputs_or_random<'py>(&self, args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyTuple>> {
        match args.is_empty() {
            true => self.random_inputs(args.py()),
            false => Ok(args.clone()),
        }
    }

    fn new_output<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyUntypedArray>> {
        let output = &self.interface.output;
        let numpy = py.import("numpy")?;
        let dims = PyTuple::new(py, output.dims.iter().copied())?;
        numpy
            .call_method1("zeros", (dims, dtype(py, output.scalar)))?
            .cast_into::<PyUntypedArray>()
            .map_err(Into::into)
    }
}

/// A compiled function that Python's threads share.
struct Function(Compiled);

// SAFETY: once compiled, a `Compiled` is only read: its payload, its interface and its
// packed wrapper, which computes on the memory each call gives it (the allocator of
// compiled code keeps its blocks per thread). Its MLIR context is held only to be
// dropped with it, which MLIR allows on any thread once nothing uses the context.
unsafe impl Send for Function {}
unsafe impl Sync for Function {}

impl std::ops::Deref for Function {
    type Target = Compiled;

    fn deref(&self) -> &Compiled {
        &self.0
    }
}

/// One call's addresses and function, for the call without the GIL.
struct Addresses<'a>(Vec<RawArg>, *mut u8, &'a Compiled);

// SAFETY: `detach` runs the call on this very thread (it only releases the GIL), and
// the arrays stay alive and unmoved during it (the caller holds their owners).
unsafe impl Send for Addresses<'_> {}

/// Moves a value across `detach`, which runs its closure on this very thread.
pub(crate) struct SameThread<T>(pub T);

// SAFETY: the value never leaves the thread (see above).
unsafe impl<T> Send for SameThread<T> {}

/// Whether NumPy may write `array`.
fn writeable(array: &Bound<'_, PyUntypedArray>) -> bool {
    // SAFETY: a live NumPy array object.
    let flags = unsafe { (*array.as_array_ptr()).fields.flags };
    flags & numpy::npyffi::NPY_ARRAY_WRITEABLE != 0
}

/// NumPy's dtype of a scalar.
pub(crate) fn dtype(py: Python<'_>, s: Scalar) -> Bound<'_, PyArrayDescr> {
    match s {
        Scalar::Bool => numpy::dtype::<bool>(py),
        Scalar::I32 => numpy::dtype::<i32>(py),
        Scalar::I64 => numpy::dtype::<i64>(py),
        Scalar::F32 => numpy::dtype::<f32>(py),
        Scalar::F64 => numpy::dtype::<f64>(py),
    }
}

/// A Python number as a scalar of type `s`; what is wrong with it otherwise.
fn scalar(arg: &Bound<'_, PyAny>, s: Scalar) -> Result<Value, String> {
    let name = s.name();
    let integer = |min: i128, max: i128| {
        int_in(arg, &format!("a scalar of {name}"), min, max)
            .map_err(|e| e.value(arg.py()).to_string())
    };
    let number = || {
        arg.extract::<f64>().map_err(|_| match arg.is_instance_of::<pyo3::types::PyInt>() {
            true => format!("a scalar of {name} must be a number within a float's range, found a larger integer"),
            false => format!("a scalar of {name} must be a number, found {}", type_name(arg)),
        })
    };
    Ok(match s {
        Scalar::Bool => Value::Bool(arg.extract().map_err(|_| {
            format!(
                "a scalar of {name} must be a bool, found {}",
                type_name(arg)
            )
        })?),
        Scalar::I32 => Value::I32(integer(i32::MIN as i128, i32::MAX as i128)? as i32),
        Scalar::I64 => Value::I64(integer(i64::MIN as i128, i64::MAX as i128)? as i64),
        Scalar::F32 => Value::F32(number()? as f32),
        Scalar::F64 => Value::F64(number()?),
    })
}

#[pymethods]
impl PyCompiled {
    /// Calls the compiled function: one array (or scalar) per parameter, of the
    /// parameter's dtype and shape. Contiguous arrays are read in place; others, and
    /// lists, are copied once. The result is a new array, or `out` (written in place).
    #[pyo3(signature = (*args, out=None))]
    fn __call__<'py>(
        &self,
        args: &Bound<'py, PyTuple>,
        out: Option<Bound<'py, PyUntypedArray>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = args.py();
        let (out, fresh) = match out {
            Some(out) => (out, false),
            None => (self.new_output(py)?, true),
        };
        self.call_into(args, &out)?;
        if fresh && self.interface.output.dims.is_empty() {
            // A scalar result: the NumPy scalar, not a 0-d array.
            return out.call_method1("__getitem__", (PyTuple::empty(py),));
        }
        Ok(out.into_any())
    }

    /// Times `runs` calls on `args` (random inputs when none are given): a dict with
    /// `median_ms`, `min_ms`, `max_ms`, `runs`, `compile_ms` and `gflops` (at the
    /// median), as `elevate run --bench` prints.
    #[pyo3(signature = (runs, *args))]
    fn bench<'py>(
        &self,
        runs: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let py = args.py();
        let runs = count_usize(runs, "runs", 1, MAX_BENCH_RUNS)?;
        let args = self.inputs_or_random(args)?;
        let out = self.new_output(py)?;
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let t = Instant::now();
            self.call_into(&args, &out)?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        let line = PyDict::new(py);
        line.set_item("median_ms", median)?;
        line.set_item("min_ms", times[0])?;
        line.set_item("max_ms", times[times.len() - 1])?;
        line.set_item("runs", runs)?;
        line.set_item("compile_ms", self.compile_ms)?;
        line.set_item(
            "gflops",
            self.compiled.payload().flops as f64 / median / 1e6,
        )?;
        Ok(line)
    }

    /// Nanoseconds per call of the compiled function from Rust alone: `runs` calls
    /// (1 to 10^6, as `bench`) on `args`' memory (random inputs when none are given),
    /// their addresses taken once (the baseline of a call's overhead from Python).
    #[pyo3(signature = (runs, *args))]
    fn rust_call_ns(&self, runs: &Bound<'_, PyAny>, args: &Bound<'_, PyTuple>) -> PyResult<f64> {
        let py = args.py();
        let runs = count_usize(runs, "runs", 1, MAX_BENCH_RUNS)?;
        let args = self.inputs_or_random(args)?;
        let out = self.new_output(py)?;
        let mut keep = Vec::new();
        let raw = self.raw_args(&args, &mut keep)?;
        // SAFETY: a live NumPy array object.
        let out_address = unsafe { (*out.as_array_ptr()).fields.data as *mut u8 };
        let started = Instant::now();
        for _ in 0..runs {
            // SAFETY: as in `call_into`: checked addresses, kept alive by `args`,
            // `keep` and `out`.
            unsafe { self.compiled.invoke_raw(&raw, out_address) }
                .map_err(|e| bridge_error(e, &self.program, &self.file, &self.source))?;
        }
        Ok(started.elapsed().as_secs_f64() * 1e9 / runs as f64)
    }

    /// Reproducible random inputs of the right dtypes and shapes (NumPy's generator,
    /// seed 0: floats in [-1, 1), integers in [-8, 8), booleans).
    fn random_inputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let numpy = py.import("numpy")?;
        let rng = numpy.getattr("random")?.call_method1("default_rng", (0,))?;
        let mut items = Vec::new();
        for slot in &self.interface.inputs {
            let (dims, s) = match slot {
                Slot::Array(a) => (a.dims.clone(), a.scalar),
                Slot::Scalar(s) => (Vec::new(), *s),
            };
            let size = PyTuple::new(py, dims.iter().copied())?;
            let drawn = match s {
                Scalar::F32 | Scalar::F64 => rng.call_method1("uniform", (-1.0, 1.0, size))?,
                Scalar::I32 | Scalar::I64 => rng.call_method1("integers", (-8, 8, size))?,
                Scalar::Bool => rng.call_method1("integers", (0, 2, size))?,
            };
            let value = drawn.call_method1("astype", (dtype(py, s),))?;
            items.push(match slot {
                Slot::Scalar(_) => value.call_method0("item")?,
                Slot::Array(_) => value,
            });
        }
        PyTuple::new(py, items)
    }

    /// The addresses a call on `args` reads its arrays at (`None` for a scalar): an
    /// array's own data (`array.ctypes.data`) where it is read in place, a copy's
    /// otherwise. For checking that a call copies nothing.
    /// One input per parameter, as a call takes them (an `InputError` for another
    /// number).
    #[pyo3(signature = (*args))]
    fn addresses(&self, args: &Bound<'_, PyTuple>) -> PyResult<Vec<Option<usize>>> {
        let mut keep = Vec::new();
        Ok(self
            .raw_args(args, &mut keep)?
            .into_iter()
            .map(|raw| match raw {
                RawArg::Array(address) => Some(address as usize),
                RawArg::Scalar(_) => None,
            })
            .collect())
    }

    /// Each parameter's `(shape, dtype)` (a scalar's shape is `()`), in order.
    #[getter]
    fn inputs<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Vec<(Bound<'py, PyTuple>, Bound<'py, PyArrayDescr>)>> {
        self.interface
            .inputs
            .iter()
            .map(|slot| {
                let (dims, s) = match slot {
                    Slot::Array(a) => (a.dims.clone(), a.scalar),
                    Slot::Scalar(s) => (Vec::new(), *s),
                };
                Ok((PyTuple::new(py, dims)?, dtype(py, s)))
            })
            .collect()
    }

    /// The result's `(shape, dtype)`.
    #[getter]
    fn output<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyArrayDescr>)> {
        let o = &self.interface.output;
        Ok((
            PyTuple::new(py, o.dims.iter().copied())?,
            dtype(py, o.scalar),
        ))
    }

    /// Floating-point operations of one call.
    #[getter]
    fn flops(&self) -> u64 {
        self.compiled.payload().flops
    }

    /// Milliseconds the compilation took.
    #[getter]
    fn compile_ms(&self) -> f64 {
        self.compile_ms
    }

    fn __repr__(&self) -> String {
        format!("<Compiled {} for the CPU>", self.program.entry().name)
    }
}

/// A program compiled for the GPU: its kernels as PTX, launched through the CUDA
/// driver when called (the inputs are copied to the device and the result back).
#[pyclass(name = "GpuCompiled", module = "elevate._native", frozen)]
pub struct PyGpuCompiled {
    compiled: GpuCompiled,
    program: Program,
    source: String,
    file: String,
    nats: NatEnv,
    compile_ms: f64,
}

impl PyGpuCompiled {
    pub(crate) fn new(
        compiled: GpuCompiled,
        program: &PyProgram,
        nats: NatEnv,
        compile_ms: f64,
    ) -> Self {
        PyGpuCompiled {
            compiled,
            program: program.program.clone(),
            source: program.source.clone(),
            file: program.file.clone(),
            nats,
            compile_ms,
        }
    }
}

#[pymethods]
impl PyGpuCompiled {
    /// Runs the kernels on one input per parameter (arrays, numbers or sequences);
    /// the result as a NumPy array. A `GpuError` where there is no GPU.
    #[pyo3(signature = (*args))]
    fn __call__<'py>(&self, args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
        let py = args.py();
        let fail = |e| crate::errors::bridge_error(e, &self.program, &self.file, &self.source);
        let inputs = inputs_json(args)?;
        let (nats, values) = io::bind_inputs(&self.program.signature(), &inputs)
            .map_err(|e| crate::errors::rise_error(&e, &self.file, &self.source))?;
        if nats
            .iter()
            .any(|(k, v)| self.nats.get(k).is_some_and(|w| w != v))
        {
            return Err(located::<InputError>(
                format!(
                    "{}: the inputs' sizes are not those the program was compiled for",
                    self.file
                ),
                Some(&self.file),
                None,
            ));
        }
        let value = py.detach(|| self.compiled.run(&values)).map_err(fail)?;
        numpy_of(py, &value).map_err(|e| match e {
            Converted::Python(e) => e,
            Converted::Value(e) => crate::errors::rise_error(&e, &self.file, &self.source),
        })
    }

    /// Each kernel's PTX (for sm_90).
    #[getter]
    fn ptx(&self) -> Vec<String> {
        self.compiled
            .kernels()
            .iter()
            .map(|k| k.text.clone())
            .collect()
    }

    /// The launches (grids, blocks, parameters), as `elevate compile --emit launch`'s JSON.
    #[getter]
    fn launches(&self) -> String {
        self.compiled.manifest().to_string()
    }

    /// Milliseconds the compilation took.
    #[getter]
    fn compile_ms(&self) -> f64 {
        self.compile_ms
    }
}
