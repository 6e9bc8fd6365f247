//! Values between Python and the interpreter: NumPy arrays, numbers and nested
//! sequences as the JSON the interpreter reads, and its results back as NumPy arrays.

use elevate_rise::value::float_json;
use elevate_rise::{Scalar, Value};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PySequence, PyString};
use serde_json::Value as Json;

/// The deepest nesting of sequences taken as an input (NumPy's own limit is 64).
const MAX_DEPTH: usize = 64;

/// A Python input (an array, a number, nested sequences) as JSON.
pub fn json_of(obj: &Bound<'_, PyAny>) -> PyResult<Json> {
    let obj = match obj.hasattr("tolist")? {
        true => obj.call_method0("tolist")?,
        false => obj.clone(),
    };
    json_at(&obj, 0)
}

fn json_at(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Json> {
    if depth > MAX_DEPTH {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "an input nested more than {MAX_DEPTH} deep"
        )));
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Json::Bool(obj.extract()?));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(Json::from(obj.extract::<i64>()?));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(float_json(obj.extract()?));
    }
    if obj.is_instance_of::<PyString>() {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "a string is not an input",
        ));
    }
    let sequence = obj.cast::<PySequence>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "expected an array, a number or a sequence, found {}",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let mut items = Vec::with_capacity(sequence.len()?);
    for item in sequence.try_iter()? {
        items.push(json_at(&item?, depth + 1)?);
    }
    Ok(Json::Array(items))
}

/// The scalar type of a value's elements (of its first element, for arrays), if any.
pub fn element_scalar(v: &Value) -> Option<Scalar> {
    let mut v = v.clone();
    loop {
        match v {
            Value::Array(a) => v = a.get(0).ok()?,
            Value::Vector(items) => v = items.first()?.clone(),
            other => return other.scalar_type(),
        }
    }
}

/// JSON as Python objects (lists, numbers, booleans).
pub fn py_of<'py>(py: Python<'py>, json: &Json) -> PyResult<Bound<'py, PyAny>> {
    Ok(match json {
        Json::Null => py.None().into_bound(py),
        Json::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Json::Number(n) => match n.as_i64() {
            Some(i) => i.into_pyobject(py)?.into_any(),
            None => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Json::String(s) => match elevate_rise::value::json_float(json) {
            Some(x) => x.into_pyobject(py)?.into_any(),
            None => s.into_pyobject(py)?.into_any(),
        },
        Json::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(py_of(py, item)?)?;
            }
            list.into_any()
        }
        Json::Object(fields) => {
            let dict = pyo3::types::PyDict::new(py);
            for (k, v) in fields {
                dict.set_item(k, py_of(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// Why a result could not become a Python value.
pub enum Converted {
    /// Python failed.
    Python(PyErr),
    /// The value has no JSON form (a function).
    Value(elevate_rise::Error),
}

/// A result as a NumPy array of its element type (a scalar as a NumPy scalar; a
/// pair, or an empty array of unknown element type, as nested lists).
pub fn numpy_of<'py>(py: Python<'py>, value: &Value) -> Result<Bound<'py, PyAny>, Converted> {
    let scalar = element_scalar(value);
    let json = value.to_json().map_err(|e| {
        Converted::Value(elevate_rise::Error::unlocated(
            elevate_rise::ErrorKind::Eval,
            e.to_string(),
        ))
    })?;
    let python = || -> PyResult<Bound<'py, PyAny>> {
        let value = py_of(py, &json)?;
        let Some(scalar) = scalar else {
            return Ok(value);
        };
        let numpy = py.import("numpy")?;
        let array = numpy.call_method1("asarray", (value, crate::compiled::dtype(py, scalar)))?;
        if array.getattr("ndim")?.extract::<usize>()? == 0 {
            return array.call_method1("__getitem__", (pyo3::types::PyTuple::empty(py),));
        }
        Ok(array)
    };
    python().map_err(Converted::Python)
}
