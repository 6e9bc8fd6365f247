//! Values of the reference interpreter. Arrays are views: `split`, `join`,
//! `transpose`, `slide`, `zip`, `pad`, `take`, `drop`, `asVector`, ... remap indices
//! instead of copying.

use crate::types::Scalar;
use std::fmt;
use std::sync::Arc;

/// A value.
#[derive(Clone)]
pub enum Value {
    /// `bool`
    Bool(bool),
    /// `i32`
    I32(i32),
    /// `i64`
    I64(i64),
    /// `f32`
    F32(f32),
    /// `f64`
    F64(f64),
    /// `idx[n]`
    Index(i64),
    /// `(a, b)`
    Pair(Arc<(Value, Value)>),
    /// `vec[t, n]`
    Vector(Arc<[Value]>),
    /// `n.t`
    Array(Array),
    /// A function.
    Function(Arc<dyn Function>),
}

/// A function value.
pub trait Function: Send + Sync {
    /// Applies the function.
    fn call(&self, arg: Value) -> Result<Value, String>;

    /// Applies the function to two arguments (`f(a)(b)`); primitives override it to
    /// skip the partial application in between.
    fn call2(&self, a: Value, b: Value) -> Result<Value, String> {
        self.call(a)?.call(b)
    }

    /// Applies a function of a nat (`depFun`) to a nat.
    fn call_nat(&self, n: i64) -> Result<Value, String> {
        Err(format!("expected a function of a nat, applied to {n}"))
    }
}

impl Value {
    /// The array, if this is one.
    pub fn as_array(&self) -> Result<&Array, String> {
        match self {
            Value::Array(a) => Ok(a),
            other => Err(format!("expected an array, found {}", other.kind())),
        }
    }

    /// The pair, if this is one.
    pub fn as_pair(&self) -> Result<&(Value, Value), String> {
        match self {
            Value::Pair(p) => Ok(p),
            other => Err(format!("expected a pair, found {}", other.kind())),
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Result<bool, String> {
        match self {
            Value::Bool(b) => Ok(*b),
            other => Err(format!("expected a bool, found {}", other.kind())),
        }
    }

    /// The value as an integer index (indices and integers).
    pub fn as_index(&self) -> Result<i64, String> {
        match self {
            Value::Index(i) | Value::I64(i) => Ok(*i),
            Value::I32(i) => Ok(*i as i64),
            other => Err(format!("expected an index, found {}", other.kind())),
        }
    }

    /// Applies a function value.
    pub fn call(&self, arg: Value) -> Result<Value, String> {
        match self {
            Value::Function(f) => f.call(arg),
            other => Err(format!("expected a function, found {}", other.kind())),
        }
    }

    /// Applies a function value to two arguments.
    pub fn call2(&self, a: Value, b: Value) -> Result<Value, String> {
        match self {
            Value::Function(f) => f.call2(a, b),
            other => Err(format!("expected a function, found {}", other.kind())),
        }
    }

    /// Applies a function of a nat.
    pub fn call_nat(&self, n: i64) -> Result<Value, String> {
        match self {
            Value::Function(f) => f.call_nat(n),
            other => Err(format!("expected a function, found {}", other.kind())),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Value::Bool(_) => "a bool",
            Value::I32(_) => "an i32",
            Value::I64(_) => "an i64",
            Value::F32(_) => "an f32",
            Value::F64(_) => "an f64",
            Value::Index(_) => "an index",
            Value::Pair(_) => "a pair",
            Value::Vector(_) => "a vector",
            Value::Array(_) => "an array",
            Value::Function(_) => "a function",
        }
    }

    /// The scalar type of a scalar value.
    pub fn scalar_type(&self) -> Option<Scalar> {
        Some(match self {
            Value::Bool(_) => Scalar::Bool,
            Value::I32(_) => Scalar::I32,
            Value::I64(_) => Scalar::I64,
            Value::F32(_) => Scalar::F32,
            Value::F64(_) => Scalar::F64,
            _ => return None,
        })
    }

    /// A pair.
    pub fn pair(a: Value, b: Value) -> Value {
        Value::Pair(Arc::new((a, b)))
    }

    /// A materialized array of these values.
    pub fn array(items: Vec<Value>) -> Value {
        Value::Array(Array::dense(items))
    }

    /// The value as JSON: numbers, booleans, arrays (pairs and vectors as arrays).
    pub fn to_json(&self) -> Result<serde_json::Value, String> {
        use serde_json::Value as J;
        let float = |text: String| -> Result<J, String> {
            let v: f64 = text.parse().map_err(|_| format!("bad float {text}"))?;
            Ok(serde_json::Number::from_f64(v).map_or(J::Null, J::Number))
        };
        Ok(match self {
            Value::Bool(b) => J::Bool(*b),
            Value::I32(v) => J::from(*v),
            Value::I64(v) | Value::Index(v) => J::from(*v),
            // Shortest text that reads back as the same f32, so 0.1 prints as 0.1.
            Value::F32(v) => float(format!("{v}"))?,
            Value::F64(v) => float(format!("{v}"))?,
            Value::Pair(p) => J::Array(vec![p.0.to_json()?, p.1.to_json()?]),
            Value::Vector(items) => {
                J::Array(items.iter().map(Value::to_json).collect::<Result<_, _>>()?)
            }
            Value::Array(a) => {
                let mut items = Vec::with_capacity(a.len());
                for i in 0..a.len() {
                    items.push(a.get(i)?.to_json()?);
                }
                J::Array(items)
            }
            Value::Function(_) => return Err("a function has no JSON form".into()),
        })
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_json() {
            Ok(json) => write!(f, "{json}"),
            Err(_) => f.write_str("<function>"),
        }
    }
}

/// An array: a length and a way to get each element. Cheap to clone.
#[derive(Clone)]
pub struct Array(Arc<View>);

/// How an array's elements are found. (Fields are named for what they are.)
#[allow(missing_docs)]
pub enum View {
    /// Materialized elements.
    Dense(Vec<Value>),
    /// `start..start+len` of another array (`take`, `drop`, a window of `slide`, a
    /// chunk of `split`).
    Slice {
        source: Array,
        start: usize,
        len: usize,
    },
    /// `split(n)`: chunks of `n`.
    Split { source: Array, chunk: usize },
    /// `join`: the rows one after the other (each row `inner` long).
    Join { source: Array, inner: usize },
    /// `transpose`: `columns` columns of the source's rows.
    Transpose { source: Array, columns: usize },
    /// One column of an array of rows.
    Column { source: Array, column: usize },
    /// `slide(size, step)`
    Slide {
        source: Array,
        size: usize,
        step: usize,
        len: usize,
    },
    /// `zip`
    Zip(Array, Array),
    /// One side of an array of pairs (`unzip`).
    Side { source: Array, second: bool },
    /// `padCst(l, r, c)`
    PadConstant {
        source: Array,
        left: usize,
        right: usize,
        value: Value,
    },
    /// `padClamp(l, r)`
    PadClamp {
        source: Array,
        left: usize,
        right: usize,
    },
    /// `concat`
    Concat(Array, Array),
    /// `asVector(n)`
    AsVector { source: Array, width: usize },
    /// `asScalar`
    AsScalar { source: Array, width: usize },
}

impl Array {
    /// A view as an array.
    pub fn new(view: View) -> Array {
        Array(Arc::new(view))
    }

    /// A materialized array.
    pub fn dense(items: Vec<Value>) -> Array {
        Array::new(View::Dense(items))
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match &*self.0 {
            View::Dense(items) => items.len(),
            View::Slice { len, .. } | View::Slide { len, .. } => *len,
            View::Split { source, chunk } => source.len() / (*chunk).max(1),
            View::Join { source, inner } => source.len() * inner,
            View::Transpose { columns, .. } => *columns,
            View::Column { source, .. } => source.len(),
            View::Zip(a, b) => a.len().min(b.len()),
            View::Side { source, .. } => source.len(),
            View::PadConstant {
                source,
                left,
                right,
                ..
            }
            | View::PadClamp {
                source,
                left,
                right,
            } => left + source.len() + right,
            View::Concat(a, b) => a.len() + b.len(),
            View::AsVector { source, width } => source.len() / (*width).max(1),
            View::AsScalar { source, width } => source.len() * width,
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`.
    pub fn get(&self, i: usize) -> Result<Value, String> {
        let len = self.len();
        if i >= len {
            return Err(format!("index {i} out of bounds for an array of {len}"));
        }
        self.get_within(i)
    }

    /// Element `i < self.len()`, without checking the bound again: views remap
    /// in-bounds indices to in-bounds indices (the types guarantee the row lengths),
    /// so only the outermost access needs a check.
    pub(crate) fn get_within(&self, i: usize) -> Result<Value, String> {
        Ok(match &*self.0 {
            View::Dense(items) => items.get(i).cloned().ok_or("index out of bounds")?,
            View::Slice { source, start, .. } => source.get_within(start + i)?,
            View::Split { source, chunk } => Value::Array(Array::new(View::Slice {
                source: source.clone(),
                start: i * chunk,
                len: *chunk,
            })),
            View::Join { source, inner } => source.get_nested(i / inner, i % inner)?,
            View::Transpose { source, .. } => Value::Array(Array::new(View::Column {
                source: source.clone(),
                column: i,
            })),
            View::Column { source, column } => source.get_nested(i, *column)?,
            View::Slide {
                source, size, step, ..
            } => Value::Array(Array::new(View::Slice {
                source: source.clone(),
                start: i * step,
                len: *size,
            })),
            View::Zip(a, b) => Value::pair(a.get_within(i)?, b.get_within(i)?),
            View::Side { source, second } => {
                let element = source.get_within(i)?;
                let pair = element.as_pair()?;
                if *second {
                    pair.1.clone()
                } else {
                    pair.0.clone()
                }
            }
            View::PadConstant {
                source,
                left,
                value,
                ..
            } => {
                if i < *left || i >= left + source.len() {
                    value.clone()
                } else {
                    source.get_within(i - left)?
                }
            }
            View::PadClamp { source, left, .. } => {
                let n = source.len();
                if n == 0 {
                    return Err("padClamp of an empty array".into());
                }
                source.get(i.saturating_sub(*left).min(n - 1))?
            }
            View::Concat(a, b) => {
                if i < a.len() {
                    a.get_within(i)?
                } else {
                    b.get_within(i - a.len())?
                }
            }
            View::AsVector { source, width } => {
                let items = (0..*width)
                    .map(|k| source.get_within(i * width + k))
                    .collect::<Result<Vec<_>, _>>()?;
                Value::Vector(items.into())
            }
            View::AsScalar { source, width } => match source.get_within(i / width)? {
                Value::Vector(items) => items[i % width].clone(),
                other => return Err(format!("asScalar expected vectors, found {}", other.kind())),
            },
        })
    }

    /// Element `j` of element `i` (an array), without copying a materialized row.
    pub fn get_nested(&self, i: usize, j: usize) -> Result<Value, String> {
        match &*self.0 {
            View::Dense(rows) if i < rows.len() => rows[i].as_array()?.get_within(j),
            _ => self.get_within(i)?.as_array()?.get_within(j),
        }
    }

    /// Every element, in order.
    pub fn to_vec(&self) -> Result<Vec<Value>, String> {
        if let View::Dense(items) = &*self.0 {
            return Ok(items.clone());
        }
        (0..self.len()).map(|i| self.get(i)).collect()
    }
}
