//! Values between Python and the interpreter: NumPy arrays, numbers and nested
//! sequences as the JSON the interpreter reads, and its results back as NumPy arrays;
//! and the checked integer arguments of the API (counts, sizes, seeds), whose errors
//! name the argument and the range it must be in.

use elevate_rise::value::float_json;
use elevate_rise::{Scalar, Value};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyMapping, PySequence, PyString};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// The deepest nesting of sequences taken as an input (NumPy's own limit is 64).
const MAX_DEPTH: usize = 64;

/// The most threads (or jobs) an argument may ask for, as the command line's `--threads`.
pub const MAX_THREADS: u64 = 4096;

/// The name of `obj`'s type, for messages.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default()
}

/// What an integer in `min..=max` is, in words: "a non-negative integer below 2**64".
pub fn range_text(min: i128, max: i128) -> String {
    let below = |max: i128| match max {
        m if m == u64::MAX as i128 => Some("2**64"),
        m if m == i64::MAX as i128 => Some("2**63"),
        m if m == u32::MAX as i128 => Some("2**32"),
        m if m == i32::MAX as i128 => Some("2**31"),
        _ => None,
    };
    match (min, below(max)) {
        (0, Some(limit)) => format!("a non-negative integer below {limit}"),
        (1, Some(limit)) => format!("a positive integer below {limit}"),
        _ => format!("an integer from {min} to {max}"),
    }
}

/// An integer as a message shows it (at most 40 characters of it).
fn shown(int: &Bound<'_, PyAny>) -> String {
    match int.str() {
        Ok(s) => {
            let s = s.to_string();
            if s.len() > 40 {
                format!(
                    "{}... ({} digits)",
                    &s[..20],
                    s.trim_start_matches('-').len()
                )
            } else {
                s
            }
        }
        Err(_) => "an integer too long to print".into(),
    }
}

/// The integer `value` (a Python int, or anything with `__index__` such as NumPy's
/// integers; not a bool) in `min..=max`: a `TypeError` naming `name` for what is not
/// an integer, a `ValueError` naming `name` and the range for one outside it.
pub fn int_in(value: &Bound<'_, PyAny>, name: &str, min: i128, max: i128) -> PyResult<i128> {
    let not_integer = || {
        PyTypeError::new_err(format!(
            "{name} must be {}, found {}",
            range_text(min, max),
            type_name(value)
        ))
    };
    if value.is_instance_of::<PyBool>() || value.is_instance_of::<PyFloat>() {
        return Err(not_integer());
    }
    let int = match value.is_instance_of::<PyInt>() {
        true => value.clone(),
        false => value
            .py()
            .import("operator")?
            .call_method1("index", (value,))
            .map_err(|_| not_integer())?,
    };
    match int.extract::<i128>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(PyValueError::new_err(format!(
            "{name} must be {}, found {}",
            range_text(min, max),
            shown(&int)
        ))),
    }
}

/// A count: an integer argument in `min..=max` (see [`int_in`]).
pub fn count(value: &Bound<'_, PyAny>, name: &str, min: u64, max: u64) -> PyResult<u64> {
    // In range, so it fits.
    Ok(int_in(value, name, min as i128, max as i128)? as u64)
}

/// A count as a `usize` (see [`count`]).
pub fn count_usize(value: &Bound<'_, PyAny>, name: &str, min: u64, max: u64) -> PyResult<usize> {
    let max = max.min(usize::MAX as u64);
    Ok(count(value, name, min, max)? as usize)
}

/// A count of threads that may be `None`: at most [`MAX_THREADS`].
pub fn threads_of(value: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<usize>> {
    value
        .filter(|v| !v.is_none())
        .map(|v| count_usize(v, name, 0, MAX_THREADS))
        .transpose()
}

/// Sizes (`{"n": 64}`; `None` for none): names to non-negative integers below 2**63.
/// A `TypeError` for what is not a mapping of names to integers, a `ValueError`
/// naming the size (`nats['n']`) for one out of range.
pub fn nats_of(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<BTreeMap<String, i64>>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let mapping = value.cast::<PyMapping>().map_err(|_| {
        PyTypeError::new_err(format!(
            "nats must be a dict of sizes (such as {{\"n\": 64}}), found {}",
            type_name(value)
        ))
    })?;
    let mut nats = BTreeMap::new();
    for item in mapping.items()?.iter() {
        let (key, size): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
        let key: String = key.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "nats must name its sizes with strings, found a key of type {}",
                type_name(&key)
            ))
        })?;
        let n = int_in(&size, &format!("nats['{key}']"), 0, i64::MAX as i128)?;
        nats.insert(key, n as i64);
    }
    Ok(Some(nats))
}

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
        return Err(PyValueError::new_err(format!(
            "an input nested more than {MAX_DEPTH} deep"
        )));
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Json::Bool(obj.extract()?));
    }
    if obj.is_instance_of::<PyInt>() {
        return match obj.extract::<i64>() {
            Ok(n) => Ok(Json::from(n)),
            Err(_) => Err(PyValueError::new_err(format!(
                "an integer input must be from -2**63 to 2**63 - 1, found {}",
                shown(obj)
            ))),
        };
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(float_json(obj.extract()?));
    }
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("a string is not an input"));
    }
    let sequence = obj.cast::<PySequence>().map_err(|_| {
        PyTypeError::new_err(format!(
            "expected an array, a number or a sequence, found {}",
            type_name(obj)
        ))
    })?;
    let mut items = Vec::with_capacity(sequence.len()?);
    for item in sequence.try_iter()? {
        items.push(json_at(&item?, depth + 1)?);
    }
    Ok(Json::Array(items))
}

/// Each of `args` (one per parameter) as JSON; an error names the parameter
/// (`parameter 2: ...`), as a call's do.
pub fn inputs_json(args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<Vec<Json>> {
    let py = args.py();
    args.iter()
        .enumerate()
        .map(|(k, a)| {
            json_of(&a).map_err(|e| {
                let message = format!("parameter {}: {}", k + 1, e.value(py));
                match e.is_instance_of::<PyTypeError>(py) {
                    true => PyTypeError::new_err(message),
                    false if e.is_instance_of::<PyValueError>(py) => PyValueError::new_err(message),
                    false => e,
                }
            })
        })
        .collect()
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
