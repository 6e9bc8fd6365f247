//! The JSON forms of values: floats that are not numbers, streaming output, and
//! comparison of results.

use crate::value::{scalar_json, Array, EvalError, Value};
use serde_json::Value as Json;
use std::fmt;
use std::io::Write;
use std::sync::Arc;

/// Why a value could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The output refused it (a closed pipe, a full disk).
    #[error("cannot write the result: {0}")]
    Io(#[from] std::io::Error),
    /// The value has no JSON form (a function), or reading one of its elements
    /// failed.
    #[error(transparent)]
    Value(#[from] EvalError),
}

/// What remains to be written.
enum Task {
    Value(Value),
    /// Elements `next..` of an array, then `]`.
    Elements(Array, usize),
    /// Elements `next..` of a vector, then `]`.
    Lanes(Arc<[Value]>, usize),
    Text(&'static str),
}

/// Writes `value` as JSON, the text of [`Value::to_json`] without building it: no
/// copy of the value is made, so output takes no memory beyond the value, and values
/// nested any depth are written with an explicit stack.
///
/// ```
/// use elevate_rise::{io::write_json, Value};
/// let value = Value::pair(Value::array(vec![Value::F32(0.5), Value::F32(f32::NAN)]), Value::I32(3));
/// let mut out = Vec::new();
/// write_json(&value, &mut out).unwrap();
/// assert_eq!(String::from_utf8(out).unwrap(), r#"[[0.5,"NaN"],3]"#);
/// ```
pub fn write_json(value: &Value, out: &mut dyn Write) -> Result<(), WriteError> {
    let mut tasks = vec![Task::Value(value.clone())];
    while let Some(task) = tasks.pop() {
        match task {
            Task::Text(text) => out.write_all(text.as_bytes())?,
            Task::Elements(array, next) if next == array.len() => out.write_all(b"]")?,
            Task::Elements(array, next) => {
                if next > 0 {
                    out.write_all(b",")?;
                }
                let element = array.get(next)?;
                tasks.push(Task::Elements(array, next + 1));
                tasks.push(Task::Value(element));
            }
            Task::Lanes(lanes, next) if next == lanes.len() => out.write_all(b"]")?,
            Task::Lanes(lanes, next) => {
                if next > 0 {
                    out.write_all(b",")?;
                }
                let lane = lanes[next].clone();
                tasks.push(Task::Lanes(lanes, next + 1));
                tasks.push(Task::Value(lane));
            }
            Task::Value(Value::Array(array)) => {
                out.write_all(b"[")?;
                tasks.push(Task::Elements(array, 0));
            }
            Task::Value(Value::Vector(lanes)) => {
                out.write_all(b"[")?;
                tasks.push(Task::Lanes(lanes, 0));
            }
            Task::Value(Value::Pair(pair)) => {
                let (a, b) = &*pair;
                out.write_all(b"[")?;
                tasks.push(Task::Text("]"));
                tasks.push(Task::Value(b.clone()));
                tasks.push(Task::Text(","));
                tasks.push(Task::Value(a.clone()));
            }
            Task::Value(scalar) => {
                serde_json::to_writer(&mut *out, &scalar_json(&scalar)?)
                    .map_err(std::io::Error::from)?;
            }
        }
    }
    Ok(())
}

/// The first place where two JSON results differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// The indices from the top, e.g. `[3, 1]` for `[3][1]`; empty at the top.
    pub path: Vec<usize>,
    /// The expected value there.
    pub expected: Json,
    /// The value found there.
    pub found: Json,
}

impl Difference {
    /// The path as text: `[3][1]`, or `the top` for the whole value.
    pub fn path_text(&self) -> String {
        if self.path.is_empty() {
            return "the top".into();
        }
        self.path.iter().map(|i| format!("[{i}]")).collect()
    }
}

/// A short description of a JSON value: the value itself, or the size of an array.
fn describe(json: &Json) -> String {
    match json {
        Json::Array(items) if items.len() == 1 => "an array of 1 element".into(),
        Json::Array(items) => format!("an array of {} elements", items.len()),
        other => other.to_string(),
    }
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "at {}: expected {}, found {}",
            self.path_text(),
            describe(&self.expected),
            describe(&self.found)
        )
    }
}

/// Whether two numbers (or other leaves) are equal up to the tolerance of
/// [`approx_eq`].
fn same_leaf(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= 1e-4 * (1.0 + x.abs().max(y.abs()))
        }
        _ => a == b,
    }
}

/// The first place, in index order, where `found` differs from `expected` (numbers
/// compared up to the tolerance of [`approx_eq`]); `None` if they are equal. Arrays
/// of different lengths differ where they are, before their elements are compared.
///
/// ```
/// use elevate_rise::io::first_difference;
/// use serde_json::json;
/// let d = first_difference(&json!([[1, 2], [3, 4]]), &json!([[1, 2], [3, 5]])).unwrap();
/// assert_eq!(d.to_string(), "at [1][1]: expected 4, found 5");
/// assert!(first_difference(&json!([1.0, 2.0]), &json!([1.0, 2.00001])).is_none());
/// ```
pub fn first_difference(expected: &Json, found: &Json) -> Option<Difference> {
    // The arrays being walked, each with the index of its next element: explicit,
    // because results nest as deep as the values they come from.
    let mut frames: Vec<(&[Json], &[Json], usize)> = Vec::new();
    let mut next = Some((expected, found));
    loop {
        if let Some((a, b)) = next.take() {
            match (a, b) {
                (Json::Array(xs), Json::Array(ys)) if xs.len() == ys.len() => {
                    frames.push((xs, ys, 0));
                }
                _ if same_leaf(a, b) => {}
                _ => {
                    return Some(Difference {
                        path: frames.iter().map(|(_, _, i)| i - 1).collect(),
                        expected: a.clone(),
                        found: b.clone(),
                    })
                }
            }
        }
        let (xs, ys, i) = frames.last_mut()?;
        if *i < xs.len() {
            next = Some((&xs[*i], &ys[*i]));
            *i += 1;
        } else {
            frames.pop();
        }
    }
}

/// Whether two JSON results are equal up to a relative tolerance of `1e-4` on numbers:
/// how rewritten or compiled programs are compared with the interpreter (rules may
/// reassociate floating-point sums). `"NaN"` equals `"NaN"`.
pub fn approx_eq(a: &Json, b: &Json) -> bool {
    first_difference(a, b).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_name_the_first_index_and_both_values() {
        let d = first_difference(&json!([1, [2, 3]]), &json!([1, [2, 3, 4]])).unwrap();
        assert_eq!(d.path, vec![1]);
        assert_eq!(
            d.to_string(),
            "at [1]: expected an array of 2 elements, found an array of 3 elements"
        );
        let d = first_difference(&json!(1.0), &json!("NaN")).unwrap();
        assert_eq!(d.to_string(), "at the top: expected 1.0, found \"NaN\"");
        assert!(first_difference(&json!(["NaN", 2]), &json!(["NaN", 2])).is_none());
    }

    #[test]
    fn deep_results_compare_without_recursion() {
        let mut a = json!(1);
        let mut b = json!(2);
        for _ in 0..100_000 {
            a = Json::Array(vec![a]);
            b = Json::Array(vec![b]);
        }
        let d = first_difference(&a, &b).unwrap();
        assert_eq!(d.path.len(), 100_000);
        // serde_json drops nested arrays recursively: take them apart first.
        for mut json in [a, b] {
            while let Json::Array(mut items) = json {
                json = items.pop().unwrap_or(Json::Null);
            }
        }
    }
}
