//! `Program`: a checked RISE file and its entry point.

use crate::compiled::{PyCompiled, PyGpuCompiled, SameThread};
use crate::convert::{inputs_json, nats_of, numpy_of, Converted};
use crate::errors::{bridge_error, located, rise_error, InputError};
use crate::strategy::strategy_of;
use elevate_core::Strategy;
use elevate_rise::{io, print_definition, NatEnv, Program, Term};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::collections::BTreeMap;

/// A compiler of the bridge (`elevate_bridge::compile`, `compile_gpu`).
type Compiler<T> = fn(
    &Program,
    &NatEnv,
    Option<&Strategy<Term>>,
    &elevate_bridge::Options,
) -> Result<T, elevate_bridge::Error>;

/// A parsed and type-checked RISE program: its definitions and its entry point.
#[pyclass(name = "Program", module = "elevate._native", frozen)]
pub struct PyProgram {
    pub(crate) program: Program,
    /// The text it was read from, for located errors.
    pub(crate) source: String,
    /// Where the text came from (a path, or `<string>`).
    pub(crate) file: String,
}

impl PyProgram {
    /// Reads `source` (from `file`).
    pub(crate) fn read(source: String, file: String, entry: Option<&str>) -> PyResult<PyProgram> {
        let program = Program::load(&source, entry).map_err(|e| rise_error(&e, &file, &source))?;
        Ok(PyProgram {
            program,
            source,
            file,
        })
    }

    /// A program of one definition, `name`, whose body is `term` (a rewritten or
    /// instantiated entry point), checked again from its text.
    pub(crate) fn from_term(name: &str, term: &Term, file: &str) -> PyResult<PyProgram> {
        PyProgram::read(print_definition(name, term), file.to_string(), None)
    }

    /// The entry point's term.
    pub(crate) fn term(&self) -> &Term {
        &self.program.entry().term
    }

    /// The entry point's name.
    pub(crate) fn name(&self) -> &str {
        &self.program.entry().name
    }

    /// The entry point compiled by `compile` (the CPU's or the GPU's) without the GIL,
    /// and the milliseconds it took.
    fn compiled<T>(
        &self,
        py: Python<'_>,
        compile: Compiler<T>,
        env: &NatEnv,
        strategy: Option<&Strategy<Term>>,
        options: &elevate_bridge::Options,
    ) -> PyResult<(T, f64)> {
        let started = std::time::Instant::now();
        let compiled = py
            .detach(|| SameThread(compile(&self.program, env, strategy, options)))
            .0
            .map_err(|e| bridge_error(e, &self.program, &self.file, &self.source))?;
        Ok((compiled, started.elapsed().as_secs_f64() * 1e3))
    }

    /// Sizes as the library takes them.
    pub(crate) fn nat_env(&self, nats: Option<&BTreeMap<String, i64>>) -> PyResult<NatEnv> {
        let pairs: Vec<(String, i64)> = nats
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        io::bind_nats(&self.program.signature(), &pairs, None).map_err(|e| {
            located::<InputError>(format!("{}: {e}", self.file), Some(&self.file), None)
        })
    }
}

#[pymethods]
impl PyProgram {
    /// Reads and checks the RISE file at `path`; the entry point is `entry` or the
    /// last definition.
    #[staticmethod]
    #[pyo3(signature = (path, entry=None))]
    fn load(path: std::path::PathBuf, entry: Option<&str>) -> PyResult<PyProgram> {
        let file = path.display().to_string();
        let source = std::fs::read_to_string(&path).map_err(|e| {
            pyo3::exceptions::PyOSError::new_err(format!("{file}: cannot read: {e}"))
        })?;
        PyProgram::read(source, file, entry)
    }

    /// Parses and checks RISE text; `file` names it in error messages.
    #[staticmethod]
    #[pyo3(signature = (text, entry=None, file="<string>"))]
    fn parse(text: String, entry: Option<&str>, file: &str) -> PyResult<PyProgram> {
        PyProgram::read(text, file.to_string(), entry)
    }

    /// The entry point's name.
    #[getter]
    fn entry(&self) -> &str {
        self.name()
    }

    /// The entry point's type, as `elevate check` prints it.
    #[getter]
    fn r#type(&self) -> String {
        self.program.entry().ty.to_string()
    }

    /// Every definition as `(name, type)`, in file order.
    #[getter]
    fn definitions(&self) -> Vec<(String, String)> {
        self.program
            .defs
            .iter()
            .map(|d| (d.name.clone(), d.ty.to_string()))
            .collect()
    }

    /// The entry point's nat parameters and value parameters (`name`, `type`).
    #[getter]
    fn signature<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.program.signature();
        let out = PyDict::new(py);
        out.set_item(
            "nats",
            s.nats.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
        )?;
        let params: Vec<(String, String)> = s
            .params
            .iter()
            .map(|(n, t)| (n.clone(), t.to_string()))
            .collect();
        out.set_item("params", params)?;
        Ok(out)
    }

    /// A hash of the program's structure, as `elevate search` logs it
    /// (`program_hash`): equal for programs equal up to bound names.
    #[getter]
    fn fingerprint(&self) -> String {
        format!("{:016x}", elevate_rise::search::fingerprint(self.term()))
    }

    /// The entry point specialized to sizes `nats` (`{"n": 64}`).
    fn instantiate(&self, nats: &Bound<'_, PyAny>) -> PyResult<PyProgram> {
        let nats = nats_of(Some(nats))?.unwrap_or_default();
        let env = self.nat_env(Some(&nats))?;
        let term = self
            .program
            .instantiate(&env)
            .map_err(|e| rise_error(&e, &self.file, &self.source))?;
        PyProgram::from_term(self.name(), &term, &self.file)
    }

    /// Runs the reference interpreter on one input per parameter (NumPy arrays,
    /// numbers or nested sequences; sizes come from their shapes). The result is a
    /// NumPy array of the result's element type (a pair: nested lists).
    #[pyo3(signature = (*args))]
    fn eval<'py>(&self, args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
        let py = args.py();
        let inputs = inputs_json(args)?;
        let value = py
            .detach(|| self.program.eval_json(&inputs))
            .map_err(|e| rise_error(&e, &self.file, &self.source))?;
        numpy_of(py, &value).map_err(|e| match e {
            Converted::Python(e) => e,
            Converted::Value(e) => rise_error(&e, &self.file, &self.source),
        })
    }

    /// Compiles the entry point through MLIR for the CPU at sizes `nats`, after
    /// `strategy` (a `Strategy` or its text) and `defaultLowering`: a function on
    /// NumPy arrays. Only `target="cpu"` calls in place; `"gpu"` runs through the
    /// CUDA driver (a `GpuError` where there is none).
    #[pyo3(signature = (strategy=None, target="cpu", nats=None))]
    fn compile(
        &self,
        py: Python<'_>,
        strategy: Option<&Bound<'_, PyAny>>,
        target: &str,
        nats: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let nats = nats_of(nats)?;
        let strategy = strategy.map(strategy_of).transpose()?;
        let target: elevate_bridge::Target = target
            .parse()
            .map_err(|e: String| pyo3::exceptions::PyValueError::new_err(e))?;
        let env = self.nat_env(nats.as_ref())?;
        let options = elevate_bridge::Options {
            target,
            ..elevate_bridge::Options::default()
        };
        let strategy = strategy.as_ref();
        match target {
            elevate_bridge::Target::Cpu => {
                let (compiled, ms) =
                    self.compiled(py, elevate_bridge::compile, &env, strategy, &options)?;
                let compiled = PyCompiled::new(
                    compiled,
                    self.program.clone(),
                    self.source.clone(),
                    self.file.clone(),
                    ms,
                )?;
                Ok(Py::new(py, compiled)?.into_any())
            }
            elevate_bridge::Target::Gpu => {
                let (compiled, ms) =
                    self.compiled(py, elevate_bridge::compile_gpu, &env, strategy, &options)?;
                let compiled = PyGpuCompiled::new(compiled, self, env, ms);
                Ok(Py::new(py, compiled)?.into_any())
            }
        }
    }

    /// A stage of the compilation as text, as `elevate compile --emit STAGE` prints it:
    /// `rise`, `loops`, `payload`, `transform`, `mlir`, `llvm`; for the GPU also `ptx`
    /// and `launch`.
    #[pyo3(signature = (stage, strategy=None, target="cpu", nats=None))]
    fn emit(
        &self,
        py: Python<'_>,
        stage: &str,
        strategy: Option<&Bound<'_, PyAny>>,
        target: &str,
        nats: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let nats = nats_of(nats)?;
        let strategy = strategy.map(strategy_of).transpose()?;
        let target: elevate_bridge::Target = target
            .parse()
            .map_err(|e: String| pyo3::exceptions::PyValueError::new_err(e))?;
        let stage: elevate_bridge::Emit = stage
            .parse()
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("{e}")))?;
        let env = self.nat_env(nats.as_ref())?;
        let options = elevate_bridge::Options {
            target,
            ..elevate_bridge::Options::default()
        };
        py.detach(|| elevate_bridge::emit(&self.program, &env, strategy.as_ref(), &options, stage))
            .map_err(|e| bridge_error(e, &self.program, &self.file, &self.source))
    }

    /// The entry point as RISE text that parses again.
    fn __str__(&self) -> String {
        print_definition(self.name(), self.term())
    }

    fn __repr__(&self) -> String {
        format!("<Program {} : {}>", self.name(), self.program.entry().ty)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyProgram>()
            .is_ok_and(|o| self.__str__() == o.get().__str__())
    }

    fn __hash__(&self) -> u64 {
        elevate_rise::search::fingerprint(self.term())
    }

    /// Pickled as its text (programs are immutable: read again, they are equal).
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (String, String, String))> {
        let me = slf.get();
        let parse = slf.get_type().getattr("parse")?;
        Ok((
            parse,
            (me.source.clone(), me.name().to_string(), me.file.clone()),
        ))
    }

    fn __copy__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __deepcopy__<'py>(slf: Bound<'py, Self>, _memo: &Bound<'py, PyAny>) -> Bound<'py, Self> {
        slf
    }
}
