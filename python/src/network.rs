//! `Network` and `CompiledNetwork`: a whole network (an imported ONNX model, or a
//! network program and its weights on disk) and the one callable it compiles into,
//! called on NumPy arrays in place without the GIL (`spec/networks.md`, "From Python").

use crate::convert::{count_usize, MAX_THREADS};
use crate::errors::{
    located, rise_error, CompileError, ElevateError, EvalError, InputError, ParseError,
    StrategyError,
};
use crate::program::PyProgram;
use crate::strategy::PyStrategy;
use elevate::network::{CompiledNetwork, Network, NetworkError, NetworkStrategy};
use elevate::onnx::weights::{Weights, WeightsError};
use elevate::onnx::{ImportError, ImportErrorKind, ImportOptions, NodeRef};
use elevate_rise::{Type, TypeKind};
use numpy::{
    IxDyn, PyArray, PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::create_exception;
use pyo3::exceptions::{PyFileNotFoundError, PyOSError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;

create_exception!(
    elevate,
    ModelError,
    ElevateError,
    "A model that cannot be imported (an operator, attribute or shape not supported, a \
     corrupt file, a cycle, a weight that does not fill its shape), or weights that \
     cannot be read: `.node` (`{\"index\", \"name\", \"op\"}`), `.attribute` and \
     `.tensor` where the error names one."
);

/// The largest batch an import takes (as `elevate import --batch`).
const MAX_BATCH: u64 = 1 << 20;

/// The most runs `bench` and `profile` take.
const MAX_RUNS: u64 = 1_000_000;

/// The most seconds `eval` lets the interpreter take unless told otherwise.
const EVAL_SECONDS: f64 = 60.0;

/// Registers the classes and the exception.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ModelError", m.py().get_type::<ModelError>())?;
    m.add_class::<PyNetwork>()?;
    m.add_class::<PyCompiledNetwork>()?;
    Ok(())
}

/// What the importer knew of a layer that the program does not say.
#[derive(Clone)]
struct LayerOrigin {
    node: String,
    flops: f64,
}

/// A network: its program (the layers' definitions and the chain of layers) and its
/// weights bound by name.
#[pyclass(name = "Network", module = "elevate._native", frozen)]
pub struct PyNetwork {
    network: Network,
    weights: Weights,
    /// Where it came from (the model or the program), for messages.
    file: String,
    name: String,
    /// Per layer, from the import (none for a network read from disk).
    origins: Option<Vec<LayerOrigin>>,
    flops: Option<f64>,
    /// The weights as read-only NumPy arrays, made on first use.
    arrays: OnceLock<Py<PyDict>>,
}

impl PyNetwork {
    /// The network.
    pub(crate) fn network(&self) -> &Network {
        &self.network
    }
}

/// An import error as a [`ModelError`] (an unreadable file: an `OSError`), with its
/// node, attribute or tensor as attributes.
fn import_error(e: ImportError) -> PyErr {
    let file = e.file.display().to_string();
    if let ImportErrorKind::Read(io) = &*e.kind {
        return os_error(io, e.to_string());
    }
    let (node, attribute, tensor): (Option<&NodeRef>, Option<&str>, Option<&str>) = match &*e.kind {
        ImportErrorKind::Unsupported {
            node, attribute, ..
        } => (Some(node), attribute.as_deref(), None),
        ImportErrorKind::Cycle { node } | ImportErrorKind::Shape { node, .. } => {
            (Some(node), None, None)
        }
        ImportErrorKind::WeightSize { tensor, .. } => (None, None, Some(tensor.as_str())),
        _ => (None, None, None),
    };
    let err = located::<ModelError>(e.to_string(), Some(&file), None);
    Python::attach(|py| {
        let value = err.value(py);
        let node = node.map(|n| {
            let d = PyDict::new(py);
            let _ = d.set_item("index", n.index);
            let _ = d.set_item("name", &n.name);
            let _ = d.set_item("op", &n.op);
            d
        });
        let _ = value.setattr("node", node);
        let _ = value.setattr("attribute", attribute);
        let _ = value.setattr("tensor", tensor);
    });
    err
}

/// An I/O error as Python's: `FileNotFoundError` for a missing file, else `OSError`.
fn os_error(e: &std::io::Error, message: String) -> PyErr {
    match e.kind() {
        std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
        _ => PyOSError::new_err(message),
    }
}

/// Weights that cannot be read, as an `OSError` (unreadable) or a [`ModelError`].
fn weights_error(e: WeightsError) -> PyErr {
    match &e {
        WeightsError::Io { path, source } => {
            os_error(source, format!("{}: {source}", path.display()))
        }
        WeightsError::Invalid { path, .. }
        | WeightsError::Truncated { path, .. }
        | WeightsError::Dtype { path, .. } => {
            let file = path.display().to_string();
            let tensor = match &e {
                WeightsError::Dtype { tensor, .. } => Some(tensor.clone()),
                _ => None,
            };
            let err = located::<ModelError>(e.to_string(), Some(&file), None);
            Python::attach(|py| {
                let value = err.value(py);
                let _ = value.setattr("node", py.None());
                let _ = value.setattr("attribute", py.None());
                let _ = value.setattr("tensor", tensor);
            });
            err
        }
        _ => located::<ModelError>(e.to_string(), None, None),
    }
}

/// A network error of the network in `file`: the strategy's a `StrategyError`, the
/// weights' and the input's an `InputError`, a unit that does not compile a
/// `CompileError`, a call that fails an `EvalError`; each with the command line's
/// message.
fn network_error(e: NetworkError, file: &str) -> PyErr {
    let message = format!("{file}: {e}");
    let file = Some(file);
    match e {
        NetworkError::Strategy(_) => located::<StrategyError>(message, file, None),
        NetworkError::Weights(_) | NetworkError::Input(_) => {
            located::<InputError>(message, file, None)
        }
        NetworkError::Compile { .. } => located::<CompileError>(message, file, None),
        NetworkError::Run { .. } => located::<EvalError>(message, file, None),
    }
}

/// The dimensions of an `f32` array type, outermost first; `None` for another type.
fn f32_dims(ty: &Type) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    let mut t = ty.clone();
    loop {
        match t.kind().clone() {
            TypeKind::Array(n, e) => {
                out.push(usize::try_from(n.as_const()?).ok()?);
                t = e;
            }
            TypeKind::Scalar(elevate_rise::Scalar::F32) => return Some(out),
            _ => return None,
        }
    }
}

/// `items` as a Python tuple of ints.
fn shape_tuple<'py>(py: Python<'py>, items: &[usize]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, items.iter().copied())
}

/// A new zeroed `float32` array of `dims`.
fn zeros<'py>(py: Python<'py>, dims: &[usize]) -> Bound<'py, PyUntypedArray> {
    PyArray::<f32, IxDyn>::zeros(py, IxDyn(dims), false)
        .into_any()
        .cast_into::<PyUntypedArray>()
        .expect("a NumPy array")
}

/// The address of `array`'s data.
fn data_address(array: &Bound<'_, PyUntypedArray>) -> *mut f32 {
    // SAFETY: a live NumPy array object.
    unsafe { (*array.as_array_ptr()).fields.data as *mut f32 }
}

/// Whether NumPy may write `array`.
fn writeable(array: &Bound<'_, PyUntypedArray>) -> bool {
    // SAFETY: a live NumPy array object.
    let flags = unsafe { (*array.as_array_ptr()).fields.flags };
    flags & numpy::npyffi::NPY_ARRAY_WRITEABLE != 0
}

/// `x` as a C-contiguous, aligned `float32` array of `dims`: the array itself where it
/// is laid out so, one contiguous copy of an array of `float32` (or a sequence) that
/// only is not; an `InputError` naming the expected shape for another dtype or shape.
fn f32_input<'py>(
    x: &Bound<'py, PyAny>,
    dims: &[usize],
    file: &str,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    let py = x.py();
    let want = numpy::dtype::<f32>(py);
    let array = match x.cast::<PyUntypedArray>() {
        Ok(a) if a.is_c_contiguous() && a.is_aligned() => a.clone(),
        Ok(a) if !a.dtype().is_equiv_to(&want) => a.clone(),
        _ => {
            let numpy = py.import("numpy")?;
            let copy = numpy
                .call_method1("ascontiguousarray", (x, &want))
                .map_err(|e| {
                    located::<InputError>(
                        format!(
                            "{file}: the input: expected a float32 array of shape {dims:?}: {}",
                            e.value(py)
                        ),
                        Some(file),
                        None,
                    )
                })?;
            copy.cast_into::<PyUntypedArray>()?
        }
    };
    if !array.dtype().is_equiv_to(&want) || array.shape() != dims {
        return Err(located::<InputError>(
            format!(
                "{file}: the input: expected a float32 array of shape {dims:?}, found an array of {} and shape {:?}",
                array.dtype(),
                array.shape()
            ),
            Some(file),
            None,
        ));
    }
    Ok(array)
}

/// A network strategy from a Python value: its text (or a `Strategy`, applied to
/// every layer); text that is not a network's strategy is a `ParseError`.
fn network_strategy(value: Option<&Bound<'_, PyAny>>) -> PyResult<NetworkStrategy> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(NetworkStrategy::library());
    };
    let text: String = match value.cast::<PyStrategy>() {
        Ok(s) => s.str()?.extract()?,
        Err(_) => value.extract().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "strategy must be network strategy text or a Strategy, found {}",
                crate::convert::type_name(value)
            ))
        })?,
    };
    NetworkStrategy::parse(&text).map_err(|e| {
        located::<ParseError>(
            format!("<strategy>: not a network strategy: {e}"),
            Some("<strategy>"),
            None,
        )
    })
}

impl PyNetwork {
    fn new(
        network: Network,
        weights: Weights,
        file: String,
        name: String,
        origins: Option<Vec<LayerOrigin>>,
        flops: Option<f64>,
    ) -> PyNetwork {
        PyNetwork {
            network,
            weights,
            file,
            name,
            origins,
            flops,
            arrays: OnceLock::new(),
        }
    }

    fn input_dims(&self) -> Vec<usize> {
        f32_dims(&self.network.input().ty).unwrap_or_default()
    }

    fn output_dims(&self) -> Vec<usize> {
        f32_dims(self.network.type_of(self.network.result())).unwrap_or_default()
    }

    /// The weights checked against the parameters by name and shape: an `InputError`
    /// naming the tensor otherwise (as `compile` would say).
    fn check_weights(&self, weights_file: &str) -> PyResult<()> {
        let fail = |m: String| {
            located::<InputError>(format!("{weights_file}: {m}"), Some(weights_file), None)
        };
        for param in self.network.weights() {
            let tensor = self.weights.get(&param.name).ok_or_else(|| {
                fail(format!("no tensor `{}` (of type {})", param.name, param.ty))
            })?;
            if f32_dims(&param.ty).as_deref() != Some(tensor.shape.as_slice()) {
                return Err(fail(format!(
                    "`{}` has shape {:?}, the program's parameter is {}",
                    param.name, tensor.shape, param.ty
                )));
            }
        }
        if let Some(extra) = self
            .weights
            .iter()
            .map(|t| t.name.as_str())
            .filter(|n| !self.network.weights().iter().any(|p| p.name == *n))
            .min()
        {
            return Err(fail(format!(
                "the tensor `{extra}` is no parameter of the network"
            )));
        }
        Ok(())
    }
}

#[pymethods]
impl PyNetwork {
    /// Imports the ONNX model at `path` in memory (as `elevate import`, nothing
    /// written): a symbolic batch becomes `batch` (1 when `None`). A model that
    /// cannot be imported is a `ModelError` naming the file and the node.
    #[staticmethod]
    #[pyo3(signature = (path, batch=None))]
    fn from_onnx(
        py: Python<'_>,
        path: PathBuf,
        batch: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyNetwork> {
        let batch = batch
            .filter(|b| !b.is_none())
            .map(|b| count_usize(b, "batch", 1, MAX_BATCH))
            .transpose()?
            .map(|b| b as i64);
        let file = path.display().to_string();
        let imported = py
            .detach(|| elevate::onnx::import(&path, &ImportOptions { batch }))
            .map_err(import_error)?;
        let network = Network::parse(&imported.program)
            .map_err(|e| rise_error(&e, &format!("{}.rise", imported.name), &imported.program))?;
        let origins = (imported.layers.len() == network.layers().len()).then(|| {
            imported
                .layers
                .iter()
                .map(|l| LayerOrigin {
                    node: l.node.clone(),
                    flops: l.flops,
                })
                .collect()
        });
        let weights = py.detach(|| imported.weights());
        Ok(PyNetwork::new(
            network,
            weights,
            file,
            imported.name.clone(),
            origins,
            Some(imported.flops),
        ))
    }

    /// Reads a network from disk: the program at `rise_path` (as `elevate import`
    /// writes it) and its weights, the safetensors file at `weights_path` (by default
    /// the program's path with `.safetensors`), checked against the parameters by
    /// name and shape.
    #[staticmethod]
    #[pyo3(signature = (rise_path, weights_path=None))]
    fn load(
        py: Python<'_>,
        rise_path: PathBuf,
        weights_path: Option<PathBuf>,
    ) -> PyResult<PyNetwork> {
        let file = rise_path.display().to_string();
        let source = std::fs::read_to_string(&rise_path)
            .map_err(|e| os_error(&e, format!("{file}: cannot read: {e}")))?;
        let network = py
            .detach(|| Network::parse(&source))
            .map_err(|e| rise_error(&e, &file, &source))?;
        let weights_path = weights_path.unwrap_or_else(|| rise_path.with_extension("safetensors"));
        let weights = py
            .detach(|| Weights::read(&weights_path))
            .map_err(weights_error)?;
        let name = rise_path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| network.program().entry().name.clone());
        let net = PyNetwork::new(network, weights, file, name, None, None);
        net.check_weights(&weights_path.display().to_string())?;
        Ok(net)
    }

    /// The model's (or program file's) name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The file it came from (the ONNX model, or the RISE program).
    #[getter]
    fn file(&self) -> &str {
        &self.file
    }

    /// The program as an `elevate.Program`: a definition per layer kind and the
    /// network's, the entry point, last.
    #[getter]
    fn program(&self) -> PyProgram {
        PyProgram {
            program: self.network.program().clone(),
            source: self.network.source().to_string(),
            file: format!("{}.rise", self.name),
        }
    }

    /// The program's RISE text.
    #[getter]
    fn source(&self) -> &str {
        self.network.source()
    }

    /// The weights: each parameter's name to a read-only `float32` array of its shape
    /// (a new dict of the same arrays at each access).
    #[getter]
    fn weights<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if self.arrays.get().is_none() {
            let dict = PyDict::new(py);
            for t in self.weights.iter() {
                let array = PyArray1::from_slice(py, &t.data).reshape(t.shape.clone())?;
                array.getattr("flags")?.setattr("writeable", false)?;
                dict.set_item(&t.name, array)?;
            }
            let _ = self.arrays.set(dict.unbind());
        }
        let cached = self.arrays.get().expect("set above").bind(py);
        cached.copy()
    }

    /// The layers in the order the network computes them: dicts of `name` (the
    /// variable), `def`, `kind`, `args` (the input's, weights' and earlier layers'
    /// names), `shape`, and for an imported model `node` (the ONNX node) and `flops`
    /// (`None` where not known).
    #[getter]
    fn layers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        use elevate::network::Source;
        let net = &self.network;
        let source_name = |s: &Source| match s {
            Source::Input => net.input().name.clone(),
            Source::Weight(i) => net.weights()[*i].name.clone(),
            Source::Layer(i) => net.layers()[*i].name.clone(),
        };
        let list = PyList::empty(py);
        for (i, layer) in net.layers().iter().enumerate() {
            let d = PyDict::new(py);
            d.set_item("index", i)?;
            d.set_item("name", &layer.name)?;
            d.set_item("def", &layer.def)?;
            d.set_item("kind", &layer.kind)?;
            d.set_item(
                "args",
                layer.args.iter().map(source_name).collect::<Vec<_>>(),
            )?;
            d.set_item(
                "shape",
                f32_dims(&layer.ty)
                    .map(|s| shape_tuple(py, &s))
                    .transpose()?,
            )?;
            d.set_item("type", layer.ty.to_string())?;
            let origin = self.origins.as_ref().and_then(|o| o.get(i));
            d.set_item("node", origin.map(|o| o.node.clone()))?;
            d.set_item("flops", origin.map(|o| o.flops))?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// The input's parameter name.
    #[getter]
    fn input_name(&self) -> &str {
        &self.network.input().name
    }

    /// The input's shape (NCHW, the batch first).
    #[getter]
    fn input_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        shape_tuple(py, &self.input_dims())
    }

    /// The result's shape.
    #[getter]
    fn output_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        shape_tuple(py, &self.output_dims())
    }

    /// The network's floating-point operations (a multiply-add is two), for an
    /// imported model; `None` for one read from disk.
    #[getter]
    fn flops(&self) -> Option<f64> {
        self.flops
    }

    /// About how many seconds the reference interpreter (`eval`) takes.
    #[getter]
    fn interpreter_seconds(&self) -> f64 {
        self.network.interpreter_seconds()
    }

    /// Compiles the network (without the GIL) under `strategy`, network strategy text
    /// (`"network"`, the library's; `layer(i, S)`, `layers("KIND", S)`, any strategy
    /// for every layer, parts separated by `;`) or a `Strategy` for every layer, its
    /// parallel loops on `threads` threads (the machine's where `None`).
    #[pyo3(signature = (strategy=None, threads=None))]
    fn compile(
        &self,
        py: Python<'_>,
        strategy: Option<&Bound<'_, PyAny>>,
        threads: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyCompiledNetwork> {
        let strategy = network_strategy(strategy)?;
        let threads = threads
            .filter(|t| !t.is_none())
            .map(|t| count_usize(t, "threads", 1, MAX_THREADS))
            .transpose()?;
        let weights = self.weights.clone();
        let compiled = py
            .detach(|| {
                crate::compiled::SameThread(self.network.compile(&strategy, weights, threads))
            })
            .0
            .map_err(|e| network_error(e, &self.file))?;
        Ok(PyCompiledNetwork {
            input: compiled.input_dims().iter().map(|d| *d as usize).collect(),
            output: compiled.output_dims().iter().map(|d| *d as usize).collect(),
            compiled,
            file: self.file.clone(),
            strategy: strategy.to_string(),
            threads,
            flops: self.flops,
        })
    }

    /// Runs the reference interpreter on `x` (a `float32` array of the input's shape):
    /// the oracle of compiled networks, for small ones. A network the interpreter
    /// would take more than `max_seconds` on (about `interpreter_seconds`) is refused
    /// with an `EvalError` that says how long it would take.
    #[pyo3(signature = (x, max_seconds=EVAL_SECONDS))]
    fn eval<'py>(
        &self,
        x: &Bound<'py, PyAny>,
        max_seconds: f64,
    ) -> PyResult<Bound<'py, PyUntypedArray>> {
        let py = x.py();
        let estimate = self.network.interpreter_seconds();
        if estimate > max_seconds {
            return Err(located::<EvalError>(
                format!(
                    "{}: the interpreter would take about {estimate:.0} seconds on this network \
                     (more than {max_seconds} seconds); compile it, or give a larger max_seconds",
                    self.file
                ),
                Some(&self.file),
                None,
            ));
        }
        let array = f32_input(x, &self.input_dims(), &self.file)?;
        let len = array.len();
        let input = crate::compiled::SameThread(data_address(&array) as *const f32);
        let result = py.detach(|| {
            let input = input;
            // SAFETY: a C-contiguous, aligned f32 array of `len` elements, kept alive
            // by `array` for the call.
            let input = unsafe { std::slice::from_raw_parts(input.0, len) };
            self.network.evaluate(input, &self.weights)
        });
        let values = result.map_err(|e| rise_error(&e, &self.file, self.network.source()))?;
        let out = PyArray1::from_vec(py, values).reshape(self.output_dims())?;
        Ok(out.into_any().cast_into::<PyUntypedArray>()?)
    }

    /// Writes `DIR/NAME.rise` and `DIR/NAME.safetensors` (as `elevate import` does;
    /// `DIR` made if missing), which `Network.load` reads back; their paths.
    fn save(&self, py: Python<'_>, dir: PathBuf) -> PyResult<(PathBuf, PathBuf)> {
        let rise = dir.join(format!("{}.rise", self.name));
        let weights = dir.join(format!("{}.safetensors", self.name));
        std::fs::create_dir_all(&dir)
            .map_err(|e| os_error(&e, format!("{}: cannot make it: {e}", dir.display())))?;
        std::fs::write(&rise, self.network.source())
            .map_err(|e| os_error(&e, format!("{}: cannot write: {e}", rise.display())))?;
        py.detach(|| self.weights.write(&weights))
            .map_err(weights_error)?;
        Ok((rise, weights))
    }

    fn __repr__(&self) -> String {
        format!(
            "<Network {}: {} layers, {} weights, {:?} -> {:?}>",
            self.name,
            self.network.layers().len(),
            self.weights.len(),
            self.input_dims(),
            self.output_dims()
        )
    }
}

/// A compiled network: one callable of its input, safe to call from several Python
/// threads (calls of one compiled network take turns; its buffers are its own).
#[pyclass(name = "CompiledNetwork", module = "elevate._native", frozen)]
pub struct PyCompiledNetwork {
    compiled: CompiledNetwork,
    input: Vec<usize>,
    output: Vec<usize>,
    file: String,
    strategy: String,
    threads: Option<usize>,
    flops: Option<f64>,
}

impl PyCompiledNetwork {
    fn input_error(&self, message: String) -> PyErr {
        located::<InputError>(format!("{}: {message}", self.file), Some(&self.file), None)
    }

    /// Checks `out`: a writeable, C-contiguous, aligned `float32` array of the result's
    /// shape that does not overlap `input`.
    fn check_out(
        &self,
        out: &Bound<'_, PyUntypedArray>,
        input: &Bound<'_, PyUntypedArray>,
    ) -> PyResult<()> {
        let py = out.py();
        if !out.dtype().is_equiv_to(&numpy::dtype::<f32>(py))
            || out.shape() != self.output.as_slice()
            || !out.is_c_contiguous()
            || !out.is_aligned()
            || !writeable(out)
        {
            return Err(self.input_error(format!(
                "out: expected a writeable C-contiguous array of float32 and shape {:?}, found {} and shape {:?}",
                self.output,
                out.dtype(),
                out.shape()
            )));
        }
        let range = |a: &Bound<'_, PyUntypedArray>| {
            let start = data_address(a) as usize;
            start..start + 4 * a.len()
        };
        let (o, i) = (range(out), range(input));
        if o.start < i.end && i.start < o.end {
            return Err(self.input_error("out must not overlap the input".into()));
        }
        Ok(())
    }

    /// Runs `f` on the input's and `out`'s memory without the GIL.
    fn with_slices<T: Send>(
        &self,
        input: &Bound<'_, PyUntypedArray>,
        out: &Bound<'_, PyUntypedArray>,
        f: impl FnOnce(&CompiledNetwork, &[f32], &mut [f32]) -> T + Send,
    ) -> T {
        let (n, m) = (input.len(), out.len());
        let pointers =
            crate::compiled::SameThread((data_address(input) as *const f32, data_address(out)));
        input.py().detach(move || {
            let pointers = pointers;
            // SAFETY: both are live, C-contiguous, aligned f32 arrays of `n` and `m`
            // elements (checked by `f32_input` and `check_out`), kept alive by the
            // caller's references for the call, and they do not overlap.
            let (input, out) = unsafe {
                (
                    std::slice::from_raw_parts(pointers.0 .0, n),
                    std::slice::from_raw_parts_mut(pointers.0 .1, m),
                )
            };
            f(&self.compiled, input, out)
        })
    }

    fn runs(runs: &Bound<'_, PyAny>) -> PyResult<usize> {
        count_usize(runs, "runs", 1, MAX_RUNS)
    }
}

#[pymethods]
impl PyCompiledNetwork {
    /// Runs the network on `x`, a `float32` array of the input's shape (read in place
    /// where it is C-contiguous; another layout, or a sequence, is copied once), without
    /// the GIL. The result is a new array, or `out` (a writeable C-contiguous `float32`
    /// array of the result's shape), written in place. A wrong dtype or shape is an
    /// `InputError` naming the expected shape.
    #[pyo3(signature = (x, out=None))]
    fn __call__<'py>(
        &self,
        x: &Bound<'py, PyAny>,
        out: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyUntypedArray>> {
        let py = x.py();
        let input = f32_input(x, &self.input, &self.file)?;
        let out = match out.filter(|o| !o.is_none()) {
            Some(o) => o.cast_into::<PyUntypedArray>().map_err(|e| {
                self.input_error(format!(
                    "out: expected a NumPy array of float32 and shape {:?}, found {}",
                    self.output,
                    crate::convert::type_name(&e.into_inner())
                ))
            })?,
            None => zeros(py, &self.output),
        };
        self.check_out(&out, &input)?;
        self.with_slices(&input, &out, |c, i, o| c.run_into(i, o))
            .map_err(|e| network_error(e, &self.file))?;
        Ok(out)
    }

    /// Times `runs` calls on `x` (a random input from NumPy's generator of seed 0,
    /// in [-1, 1), where `None`), all without the GIL: a dict with `median_ms`,
    /// `min_ms`, `max_ms`, `runs`, `compile_seconds` and, for an imported model,
    /// `gflops` at the median.
    #[pyo3(signature = (x=None, runs=None))]
    fn bench<'py>(
        &self,
        py: Python<'py>,
        x: Option<&Bound<'py, PyAny>>,
        runs: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let runs = runs.map(Self::runs).transpose()?.unwrap_or(10);
        let x = match x.filter(|x| !x.is_none()) {
            Some(x) => x.clone(),
            None => self.random_input(py)?.into_any(),
        };
        let input = f32_input(&x, &self.input, &self.file)?;
        let out = zeros(py, &self.output);
        let mut times = self
            .with_slices(&input, &out, |c, i, o| {
                let mut times = Vec::with_capacity(runs);
                for _ in 0..runs {
                    let t = Instant::now();
                    c.run_into(i, o)?;
                    times.push(t.elapsed().as_secs_f64() * 1e3);
                }
                Ok(times)
            })
            .map_err(|e| network_error(e, &self.file))?;
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        let line = PyDict::new(py);
        line.set_item("median_ms", median)?;
        line.set_item("min_ms", times[0])?;
        line.set_item("max_ms", times[times.len() - 1])?;
        line.set_item("runs", runs)?;
        line.set_item("compile_seconds", self.compiled.compile_seconds())?;
        if let Some(flops) = self.flops {
            line.set_item("gflops", flops / median / 1e6)?;
        }
        Ok(line)
    }

    /// Runs the network `runs` times on `x` (a random input where `None`), timing each
    /// unit: a list with one dict per unit (as `units`) with its `median_ms`.
    #[pyo3(signature = (x=None, runs=None))]
    fn profile<'py>(
        &self,
        py: Python<'py>,
        x: Option<&Bound<'py, PyAny>>,
        runs: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let runs = runs.map(Self::runs).transpose()?.unwrap_or(5);
        let x = match x.filter(|x| !x.is_none()) {
            Some(x) => x.clone(),
            None => self.random_input(py)?.into_any(),
        };
        let input = f32_input(&x, &self.input, &self.file)?;
        let out = zeros(py, &self.output);
        let medians = self
            .with_slices(&input, &out, |c, i, _| c.profile(i, runs))
            .map_err(|e| network_error(e, &self.file))?;
        let units = self.units(py)?;
        for (unit, ms) in units.iter().zip(medians) {
            unit.cast::<PyDict>()?.set_item("median_ms", ms)?;
        }
        Ok(units)
    }

    /// A reproducible random input of the input's shape (NumPy's generator, seed 0,
    /// `float32` in [-1, 1)).
    fn random_input<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let numpy = py.import("numpy")?;
        let rng = numpy.getattr("random")?.call_method1("default_rng", (0,))?;
        rng.call_method1("uniform", (-1.0, 1.0, shape_tuple(py, &self.input)?))?
            .call_method1("astype", (numpy::dtype::<f32>(py),))
    }

    /// How each unit (a layer, or a layer and the elementwise layers fused into it)
    /// was compiled: dicts of `layers` (their indices), `defs`, `strategy`,
    /// `prepared` (arrays computed from the weights once), `reused` (an earlier
    /// unit's functions) and `seconds`.
    #[getter]
    fn units<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for u in self.compiled.units() {
            let d = PyDict::new(py);
            d.set_item("layers", u.layers.clone())?;
            d.set_item("defs", u.defs.clone())?;
            d.set_item("strategy", &u.strategy)?;
            d.set_item("prepared", u.prepared)?;
            d.set_item("reused", u.reused)?;
            d.set_item("seconds", u.seconds)?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// Seconds from the network to this callable (planning, rewriting, compiling,
    /// preparing the weights).
    #[getter]
    fn compile_seconds(&self) -> f64 {
        self.compiled.compile_seconds()
    }

    /// The input's shape.
    #[getter]
    fn input_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        shape_tuple(py, &self.input)
    }

    /// The result's shape.
    #[getter]
    fn output_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        shape_tuple(py, &self.output)
    }

    /// The network strategy it was compiled with.
    #[getter]
    fn strategy(&self) -> &str {
        &self.strategy
    }

    /// The threads its parallel loops run on (`None`: the machine's).
    #[getter]
    fn threads(&self) -> Option<usize> {
        self.threads
    }

    fn __repr__(&self) -> String {
        format!(
            "<CompiledNetwork {}: {:?} -> {:?}, {} units>",
            self.file,
            self.input,
            self.output,
            self.compiled.units().len()
        )
    }
}
