//! `Strategy`: strategy text, parsed against the RISE library, applied under a budget.

use crate::convert::{count, type_name};
use crate::errors::{located, text_error, StrategyError, TypeCheckError};
use crate::program::PyProgram;
use elevate_core::{Budget, Context, Strategy};
use elevate_rise::{infer, Term};
use elevate_strategies::text::Registry;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyString};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The budget of an application when none is given (as `elevate rewrite`'s).
const DEFAULT_STEPS: u64 = 100_000_000;
const DEFAULT_SECONDS: f64 = 60.0;

/// The RISE library's names, built once.
pub fn registry() -> Arc<Registry<Term>> {
    static REGISTRY: OnceLock<Arc<Registry<Term>>> = OnceLock::new();
    REGISTRY
        .get_or_init(|| Arc::new(elevate_rise::registry()))
        .clone()
}

/// A strategy: rewrites a program or fails. Compose with `>>` (sequence, `;`) and
/// `|` (left choice, `<+`).
#[pyclass(name = "Strategy", module = "elevate._native", frozen)]
pub struct PyStrategy {
    pub(crate) strategy: Strategy<Term>,
}

impl PyStrategy {
    /// Parses strategy text (from `file`, for messages).
    pub(crate) fn read(text: &str, file: &str) -> PyResult<PyStrategy> {
        let strategy = registry()
            .parse(text)
            .map_err(|e| text_error(&e, file, text))?;
        Ok(PyStrategy { strategy })
    }
}

/// A strategy given as a `Strategy` or as its text.
pub fn strategy_of(value: &Bound<'_, PyAny>) -> PyResult<Strategy<Term>> {
    if let Ok(s) = value.cast::<PyStrategy>() {
        return Ok(s.get().strategy.clone());
    }
    let text: String = value.extract()?;
    Ok(PyStrategy::read(&text, "<strategy>")?.strategy)
}

/// The budget a Python value describes: `None`, a number of steps, or a dict with
/// `steps` and/or `time` (seconds). Errors name what is wrong (`budget['steps']`).
fn budget(value: Option<&Bound<'_, PyAny>>) -> PyResult<Budget> {
    let (mut steps, mut seconds) = (DEFAULT_STEPS, DEFAULT_SECONDS);
    if let Some(value) = value.filter(|v| !v.is_none()) {
        if let Ok(dict) = value.cast::<PyDict>() {
            for (key, v) in dict.iter() {
                let key: String = key.extract().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "budget's keys are steps and time, found a key of type {}",
                        type_name(&key)
                    ))
                })?;
                match key.as_str() {
                    "steps" => steps = count(&v, "budget['steps']", 0, u64::MAX)?,
                    "time" => seconds = seconds_of(&v, "budget['time']")?,
                    other => {
                        return Err(PyValueError::new_err(format!(
                            "unknown budget `{other}` (steps, time)"
                        )))
                    }
                }
            }
        } else if value.is_instance_of::<PyInt>() || value.hasattr("__index__")? {
            steps = count(value, "budget", 0, u64::MAX)?;
        } else {
            return Err(PyTypeError::new_err(format!(
                "budget must be a number of steps or a dict with steps and/or time, found {}",
                type_name(value)
            )));
        }
    }
    if !(seconds > 0.0 && seconds <= 1e7) {
        return Err(PyValueError::new_err(format!(
            "budget['time'] must be more than 0 and at most 10^7 seconds, found {seconds}"
        )));
    }
    Ok(Budget::unlimited()
        .applications(steps)
        .time(Duration::from_secs_f64(seconds)))
}

/// A number of seconds named `name` (a `TypeError` for what is not a number).
fn seconds_of(value: &Bound<'_, PyAny>, name: &str) -> PyResult<f64> {
    let not_a_number = || {
        PyTypeError::new_err(format!(
            "{name} must be a number of seconds, found {}",
            type_name(value)
        ))
    };
    if value.is_instance_of::<PyBool>() || value.is_instance_of::<PyString>() {
        return Err(not_a_number());
    }
    value.extract::<f64>().map_err(|_| match value.is_instance_of::<PyInt>() {
        true => PyValueError::new_err(format!(
            "{name} must be more than 0 and at most 10^7 seconds, found an integer beyond a float's range"
        )),
        false => not_a_number(),
    })
}

#[pymethods]
impl PyStrategy {
    /// Parses strategy text (`spec/strategies.md`); a `ParseError` with the line and
    /// column of what is wrong.
    #[staticmethod]
    #[pyo3(signature = (text, file="<strategy>"))]
    fn parse(text: &str, file: &str) -> PyResult<PyStrategy> {
        PyStrategy::read(text, file)
    }

    /// Applies the strategy to `program`'s entry point under `budget` (steps, or
    /// `{"steps": N, "time": S}`; by default 10^8 steps and 60 s). Returns the
    /// rewritten program and, with `trace=True`, each successful rule application as
    /// `RULE @ PATH` (an empty list otherwise).
    #[pyo3(signature = (program, budget=None, trace=false))]
    fn apply(
        &self,
        py: Python<'_>,
        program: &PyProgram,
        budget: Option<&Bound<'_, PyAny>>,
        trace: bool,
    ) -> PyResult<(PyProgram, Vec<String>)> {
        let budget = self::budget(budget)?;
        let term = program.term().clone();
        let strategy = self.strategy.clone();
        let (outcome, steps) = py.detach(move || {
            let mut cx = Context::new(budget);
            if trace {
                cx = cx.with_trace();
            }
            let outcome = strategy.apply(&term, &mut cx).map_err(|e| e.to_string());
            let steps: Vec<String> = cx.take_trace().iter().map(ToString::to_string).collect();
            (outcome, steps)
        });
        let file = &program.file;
        let result = outcome.map_err(|e| {
            located::<StrategyError>(
                format!("{file}: the strategy {} failed: {e}", self.strategy),
                Some(file),
                None,
            )
        })?;
        let typed = infer(&result).map_err(|e| {
            located::<TypeCheckError>(
                format!("{file}: the rewritten program does not type-check: {e}"),
                Some(file),
                None,
            )
        })?;
        Ok((PyProgram::from_term(program.name(), &typed, file)?, steps))
    }

    fn __rshift__(&self, other: &PyStrategy) -> PyStrategy {
        PyStrategy {
            strategy: self.strategy.clone() >> other.strategy.clone(),
        }
    }

    fn __or__(&self, other: &PyStrategy) -> PyStrategy {
        PyStrategy {
            strategy: self.strategy.clone() | other.strategy.clone(),
        }
    }

    /// The strategy as text that parses again.
    fn __str__(&self) -> String {
        self.strategy.to_string()
    }

    fn __repr__(&self) -> String {
        format!("Strategy.parse({:?})", self.strategy.to_string())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyStrategy>()
            .is_ok_and(|o| self.__str__() == o.get().__str__())
    }

    /// Pickled as its text.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let parse = slf.get_type().getattr("parse")?;
        Ok((parse, (slf.get().__str__(),)))
    }

    fn __copy__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __deepcopy__<'py>(slf: Bound<'py, Self>, _memo: &Bound<'py, PyAny>) -> Bound<'py, Self> {
        slf
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.__str__().hash(&mut h);
        h.finish()
    }
}

/// Every name strategy text can use: `(name, parameters, meaning)`, as
/// `elevate strategies` lists them.
#[pyfunction]
pub fn library() -> Vec<(String, String, String)> {
    registry()
        .entries()
        .map(|e| (e.name.clone(), e.params.clone(), e.doc.clone()))
        .collect()
}
