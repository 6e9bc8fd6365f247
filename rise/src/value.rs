//! Values of the reference interpreter. Arrays are views: `split`, `join`,
//! `transpose`, `slide`, `zip`, `pad`, `take`, `drop`, `asVector`, ... remap indices
//! instead of copying.
//!
//! Values nest as deep as programs do (a 100,000-deep array literal is a legal
//! program). Every shared part of a value records how deeply values nest inside it,
//! and every walk of a deep value (reading through views of views, converting,
//! dropping) continues on a fresh stack segment when the stack runs low ([`guard`])
//! or uses an explicit stack; shallow values, nearly all of them, skip the check.

use crate::error::{Error, ErrorKind};
use crate::limits::SizeError;
use crate::term::Span;
use crate::types::Scalar;
use crate::view::{Numbers, Reshape, Row, Source};
use elevate_core::stack::guard;
use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::Arc;

/// What went wrong while evaluating, and where.
///
/// Boxed, so that `Result<Value, EvalError>`, returned at every step of the
/// interpreter, stays small.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalError(Box<(EvalErrorKind, Option<Span>)>);

/// What went wrong while evaluating.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalErrorKind {
    /// Integer division or remainder by zero.
    #[error("{} by zero: {lhs} {op} 0 in {}", if *op == '/' { "division" } else { "remainder" }, ty.name())]
    DivisionByZero {
        /// `/` or `%`.
        op: char,
        /// The dividend.
        lhs: i64,
        /// `i32` or `i64`.
        ty: Scalar,
    },
    /// `MIN / -1` or `MIN % -1`: the quotient `-MIN` does not fit.
    #[error(
        "integer overflow: {lhs} {op} -1 in {} (the quotient {} does not fit)",
        ty.name(),
        -i128::from(*lhs)
    )]
    DivisionOverflow {
        /// `/` or `%`.
        op: char,
        /// The dividend, the type's minimum.
        lhs: i64,
        /// `i32` or `i64`.
        ty: Scalar,
    },
    /// An array over the memory limit.
    #[error(transparent)]
    TooLarge(#[from] SizeError),
    /// An array whose number of elements does not fit in a machine word.
    #[error("the length of {0} overflows")]
    LengthOverflow(String),
    /// Anything else: what a well-typed program meets only through a wrong input or a
    /// wrong size (an index out of bounds, `split` of a length it does not divide, a
    /// size that cannot be evaluated).
    #[error("{0}")]
    Invalid(String),
}

impl EvalError {
    /// An error without a location yet.
    pub fn new(kind: EvalErrorKind) -> EvalError {
        EvalError(Box::new((kind, None)))
    }

    /// What went wrong.
    pub fn kind(&self) -> &EvalErrorKind {
        &self.0 .0
    }

    /// Where, if known.
    pub fn span(&self) -> Option<Span> {
        self.0 .1
    }

    /// The error located at `span`, unless it already has a location: the innermost
    /// operation that failed is the one to show.
    #[must_use]
    pub fn at(mut self, span: Option<Span>) -> EvalError {
        if self.0 .1.is_none() {
            self.0 .1 = span;
        }
        self
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.kind().fmt(f)
    }
}

impl std::error::Error for EvalError {}

impl From<EvalErrorKind> for EvalError {
    fn from(kind: EvalErrorKind) -> Self {
        EvalError::new(kind)
    }
}

impl From<SizeError> for EvalError {
    fn from(e: SizeError) -> Self {
        EvalError::new(EvalErrorKind::TooLarge(e))
    }
}

impl From<String> for EvalError {
    fn from(message: String) -> Self {
        EvalError::new(EvalErrorKind::Invalid(message))
    }
}

impl From<&str> for EvalError {
    fn from(message: &str) -> Self {
        EvalError::new(EvalErrorKind::Invalid(message.to_string()))
    }
}

/// For callers that carry errors as text (`?` into `Result<_, String>`).
impl From<EvalError> for String {
    fn from(e: EvalError) -> Self {
        e.to_string()
    }
}

impl From<EvalError> for Error {
    fn from(e: EvalError) -> Self {
        Error {
            kind: ErrorKind::Eval,
            span: e.span(),
            message: e.to_string(),
        }
    }
}

/// How deep a value may nest before walking it (reading an element through views of
/// views, dropping it, converting it) moves to a fresh stack segment when the stack
/// runs low. Below it, checking would cost more than the few frames it saves.
const GUARD_DEPTH: u32 = 32;

/// Runs `f`, a step into a value nested `depth` levels deep: on a fresh stack segment
/// if the value is deep and the stack runs low.
#[inline]
fn deep<R>(depth: u32, f: impl FnOnce() -> R) -> R {
    if depth >= GUARD_DEPTH {
        guard(f)
    } else {
        f()
    }
}

/// A shared, immutable part of a value, with how deeply values nest inside it.
/// Dropping the last reference to a deep value continues on a fresh stack segment
/// when the stack runs low.
pub struct Shared<T>(ManuallyDrop<Arc<Nested<T>>>);

struct Nested<T> {
    /// The longest chain of shared parts inside, this one included.
    depth: u32,
    value: T,
}

impl<T> Shared<T> {
    /// Shares `value`, whose parts nest `inner` levels deep.
    fn new(value: T, inner: u32) -> Shared<T> {
        Shared(ManuallyDrop::new(Arc::new(Nested {
            depth: inner.saturating_add(1),
            value,
        })))
    }

    /// How deeply values nest inside, this part included.
    fn depth(&self) -> u32 {
        self.0.depth
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(ManuallyDrop::new(Arc::clone(&self.0)))
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0.value
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // SAFETY: the field is taken once, here, and never used again.
        let inner = unsafe { ManuallyDrop::take(&mut self.0) };
        deep(inner.depth, move || drop(inner));
    }
}

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
    Pair(Shared<(Value, Value)>),
    /// `vec[t, n]` (of scalars, so never deep)
    Vector(Arc<[Value]>),
    /// `n.t`
    Array(Array),
    /// A function.
    Function(Arc<dyn Function>),
}

/// An `f32` scalar.
impl From<f32> for Value {
    fn from(x: f32) -> Value {
        Value::F32(x)
    }
}

/// A one-dimensional array of `f32`s (`n.f32`); nest with [`Value::array`].
impl From<Vec<f32>> for Value {
    fn from(xs: Vec<f32>) -> Value {
        Value::array(xs.into_iter().map(Value::F32).collect())
    }
}

/// A function value.
pub trait Function: Send + Sync {
    /// Applies the function.
    fn call(&self, arg: Value) -> Result<Value, EvalError>;

    /// Applies the function to two arguments (`f(a)(b)`); primitives override it to
    /// skip the partial application in between.
    fn call2(&self, a: Value, b: Value) -> Result<Value, EvalError> {
        self.call(a)?.call(b)
    }

    /// Applies a function of a nat (`depFun`) to a nat.
    fn call_nat(&self, n: i64) -> Result<Value, EvalError> {
        Err(format!("expected a function of a nat, applied to {n}").into())
    }
}

/// The bytes one element takes in a materialized array: what the interpreter's
/// size checks count.
pub const VALUE_BYTES: u64 = std::mem::size_of::<Value>() as u64;

impl Value {
    /// The array, if this is one.
    pub fn as_array(&self) -> Result<&Array, EvalError> {
        match self {
            Value::Array(a) => Ok(a),
            other => Err(format!("expected an array, found {}", other.kind()).into()),
        }
    }

    /// The pair, if this is one.
    pub fn as_pair(&self) -> Result<&(Value, Value), EvalError> {
        match self {
            Value::Pair(p) => Ok(p),
            other => Err(format!("expected a pair, found {}", other.kind()).into()),
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Result<bool, EvalError> {
        match self {
            Value::Bool(b) => Ok(*b),
            other => Err(format!("expected a bool, found {}", other.kind()).into()),
        }
    }

    /// The value as an integer index (indices and integers).
    pub fn as_index(&self) -> Result<i64, EvalError> {
        match self {
            Value::Index(i) | Value::I64(i) => Ok(*i),
            Value::I32(i) => Ok(*i as i64),
            other => Err(format!("expected an index, found {}", other.kind()).into()),
        }
    }

    /// Applies a function value.
    pub fn call(&self, arg: Value) -> Result<Value, EvalError> {
        match self {
            Value::Function(f) => f.call(arg),
            other => Err(format!("expected a function, found {}", other.kind()).into()),
        }
    }

    /// Applies a function value to two arguments.
    pub fn call2(&self, a: Value, b: Value) -> Result<Value, EvalError> {
        match self {
            Value::Function(f) => f.call2(a, b),
            other => Err(format!("expected a function, found {}", other.kind()).into()),
        }
    }

    /// Applies a function of a nat.
    pub fn call_nat(&self, n: i64) -> Result<Value, EvalError> {
        match self {
            Value::Function(f) => f.call_nat(n),
            other => Err(format!("expected a function, found {}", other.kind()).into()),
        }
    }

    pub(crate) fn kind(&self) -> &'static str {
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
        let inner = a.depth().max(b.depth());
        Value::Pair(Shared::new((a, b), inner))
    }

    /// How deeply arrays and pairs nest inside the value (0 for a scalar).
    pub fn depth(&self) -> u32 {
        match self {
            Value::Array(a) => a.node.depth(),
            Value::Pair(p) => p.depth(),
            _ => 0,
        }
    }

    /// A materialized array of these values.
    pub fn array(items: Vec<Value>) -> Value {
        Value::Array(Array::dense(items))
    }

    /// How many elements the value holds (saturating): scalars, each element of an
    /// array counting at least one, as in [`elements_in`](crate::limits::elements_in).
    /// Arrays are homogeneous, so this follows first elements only and costs the
    /// value's depth, not its size.
    pub fn elements(&self) -> Result<u128, EvalError> {
        let mut total = 0u128;
        // (value, how many times it counts)
        let mut pending: Vec<(Value, u128)> = vec![(self.clone(), 1)];
        while let Some((value, times)) = pending.pop() {
            match &value {
                Value::Pair(p) => {
                    let (a, b) = &**p;
                    pending.push((a.clone(), times));
                    pending.push((b.clone(), times));
                }
                Value::Vector(items) => {
                    total = total.saturating_add(times.saturating_mul(items.len() as u128));
                }
                // An empty array is one value to make.
                Value::Array(a) if a.is_empty() => total = total.saturating_add(times),
                Value::Array(a) => {
                    pending.push((a.get_within(0)?, times.saturating_mul(a.len() as u128)));
                }
                _ => total = total.saturating_add(times),
            }
        }
        Ok(total)
    }

    /// The value as JSON: numbers, booleans, arrays (pairs and vectors as arrays), and
    /// the strings `"NaN"`, `"Infinity"`, `"-Infinity"` for floats that are not
    /// numbers (see [`crate::io`]). Refused where the JSON would not fit in the
    /// default [`Limits`](crate::limits::Limits); [`crate::io::write_json`] streams
    /// instead.
    pub fn to_json(&self) -> Result<serde_json::Value, EvalError> {
        let limits = crate::limits::Limits::default();
        let bytes = std::mem::size_of::<serde_json::Value>() as u64;
        limits.check_array("the JSON form of the value", self.elements()?, bytes)?;
        self.to_json_unchecked()
    }

    fn to_json_unchecked(&self) -> Result<serde_json::Value, EvalError> {
        use serde_json::Value as J;
        deep(self.depth(), || {
            Ok(match self {
                Value::Pair(p) => {
                    let (a, b) = &**p;
                    J::Array(vec![a.to_json_unchecked()?, b.to_json_unchecked()?])
                }
                Value::Vector(items) => J::Array(
                    items
                        .iter()
                        .map(Value::to_json_unchecked)
                        .collect::<Result<_, _>>()?,
                ),
                Value::Array(a) => {
                    let mut items = Vec::with_capacity(a.len());
                    for i in 0..a.len() {
                        items.push(a.get_within(i)?.to_json_unchecked()?);
                    }
                    J::Array(items)
                }
                scalar => scalar_json(scalar)?,
            })
        })
    }
}

/// The JSON of a scalar (or an index).
pub(crate) fn scalar_json(value: &Value) -> Result<serde_json::Value, EvalError> {
    use serde_json::Value as J;
    Ok(match value {
        Value::Bool(b) => J::Bool(*b),
        Value::I32(v) => J::from(*v),
        Value::I64(v) | Value::Index(v) => J::from(*v),
        // Shortest text that reads back as the same f32, so 0.1 prints as 0.1.
        Value::F32(v) => float_json(format!("{v}").parse().unwrap_or(f64::from(*v))),
        Value::F64(v) => float_json(*v),
        Value::Function(_) => return Err("a function has no JSON form".into()),
        other => return Err(format!("{} is not a scalar", other.kind()).into()),
    })
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Function(_) => f.write_str("<function>"),
            Value::Array(a) => write!(f, "<array of {}>", a.len()),
            Value::Pair(p) => {
                let (a, b) = &**p;
                write!(f, "({a:?}, {b:?})")
            }
            scalar => match scalar_json(scalar) {
                Ok(json) => write!(f, "{json}"),
                Err(_) => f.write_str(scalar.kind()),
            },
        }
    }
}

/// An array: a length and a way to get each element. Cheap to clone.
#[derive(Clone)]
pub struct Array {
    node: Shared<Node>,
}

struct Node {
    /// Computed once, with overflow checks, when the view is made: views of views of
    /// ... would otherwise compute it recursively.
    len: usize,
    view: View,
}

/// How an array's elements are found.
pub enum View {
    /// Materialized elements.
    Dense(Vec<Value>),
    /// A reshaping primitive's view of `source` (see [`Reshape`]); `with` is the
    /// second array of a `concat` and the value of a `padCst`.
    Reshaped {
        /// Which reshape, at which lengths.
        reshape: Reshape,
        /// The array reshaped.
        source: Array,
        /// The second operand, where the reshape has one.
        with: Option<Value>,
    },
    /// A row of `source` that an element of a `split`, `slide` or `transpose` is.
    Row {
        /// The array the row is in.
        source: Array,
        /// Which row.
        row: Row<i64>,
    },
    /// `zip`
    Zip(Array, Array),
    /// One side of an array of pairs (`unzip`).
    Side {
        /// The array of pairs.
        source: Array,
        /// Whether the second side.
        second: bool,
    },
}

impl View {
    /// How deeply arrays and pairs nest inside the view's sources.
    fn depth(&self) -> u32 {
        match self {
            View::Dense(items) => items.iter().map(Value::depth).max().unwrap_or(0),
            View::Reshaped { source, with, .. } => source
                .node
                .depth()
                .max(with.as_ref().map_or(0, Value::depth)),
            View::Row { source, .. } | View::Side { source, .. } => source.node.depth(),
            View::Zip(a, b) => a.node.depth().max(b.node.depth()),
        }
    }

    /// The number of elements, or an error if it overflows or the view does not fit
    /// its source.
    fn len(&self) -> Result<usize, EvalError> {
        let misfit = |what: String| EvalError::from(what);
        let len = match self {
            View::Dense(items) => return Ok(items.len()),
            View::Zip(a, b) => return Ok(a.len().min(b.len())),
            View::Side { source, .. } => return Ok(source.len()),
            View::Reshaped {
                reshape,
                source,
                with,
            } => {
                let second = match with {
                    Some(Value::Array(b)) => Some(length(b.len())?),
                    _ => None,
                };
                if !reshape.fits(length(source.len())?, second) {
                    return Err(misfit(format!(
                        "{reshape:?} of an array of {}",
                        source.len()
                    )));
                }
                reshape.len().ok_or_else(|| {
                    EvalError::new(EvalErrorKind::LengthOverflow(overflowing(reshape).into()))
                })?
            }
            View::Row { source, row } => {
                let n = length(source.len())?;
                let fits = match row {
                    Row::Run { start, len } => start
                        .checked_add(*len)
                        .is_some_and(|end| *start >= 0 && end <= n),
                    Row::Column { len, .. } => n == *len,
                };
                if !fits {
                    return Err(misfit(format!("{row:?} of an array of {}", source.len())));
                }
                row.len()
            }
        };
        usize::try_from(len).map_err(|_| misfit(format!("a view of {len} elements")))
    }
}

/// A length as the views' arithmetic takes it.
fn length(n: usize) -> Result<i64, EvalError> {
    i64::try_from(n).map_err(|_| EvalError::new(EvalErrorKind::LengthOverflow("an array".into())))
}

/// What a reshape whose length overflows makes, in its error message.
fn overflowing(reshape: &Reshape) -> &'static str {
    match reshape {
        Reshape::Join { .. } => "join",
        Reshape::PadConstant { .. } | Reshape::PadClamp { .. } => "the padded array",
        Reshape::Concat { .. } => "concat",
        Reshape::AsScalar { .. } => "asScalar",
        _ => "a view",
    }
}

impl Array {
    /// A view as an array; an error if its length overflows.
    pub fn new(view: View) -> Result<Array, EvalError> {
        let len = view.len()?;
        let inner = view.depth();
        Ok(Array {
            node: Shared::new(Node { len, view }, inner),
        })
    }

    /// A materialized array.
    pub fn dense(items: Vec<Value>) -> Array {
        let inner = items.iter().map(Value::depth).max().unwrap_or(0);
        Array {
            node: Shared::new(
                Node {
                    len: items.len(),
                    view: View::Dense(items),
                },
                inner,
            ),
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.node.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`.
    pub fn get(&self, i: usize) -> Result<Value, EvalError> {
        if i >= self.len() {
            return Err(format!("index {i} out of bounds for an array of {}", self.len()).into());
        }
        self.get_within(i)
    }

    /// Element `i < self.len()`, without checking the bound again: views remap
    /// in-bounds indices to in-bounds indices (the types guarantee the row lengths),
    /// so only the outermost access needs a check.
    pub(crate) fn get_within(&self, i: usize) -> Result<Value, EvalError> {
        match &self.node.view {
            View::Dense(items) => items
                .get(i)
                .cloned()
                .ok_or_else(|| "index out of bounds".into()),
            // Views of views can be as deep as the program that made them.
            _ => deep(self.node.depth(), || self.get_from_view(i)),
        }
    }

    fn get_from_view(&self, i: usize) -> Result<Value, EvalError> {
        let at = i as i64;
        match &self.node.view {
            View::Dense(items) => Ok(items.get(i).cloned().ok_or("index out of bounds")?),
            View::Reshaped {
                reshape,
                source,
                with,
            } => read(reshape.element(&mut Numbers, &at), source, with.as_ref()),
            View::Row { source, row } => read(row.element(&mut Numbers, &at), source, None),
            View::Zip(a, b) => Ok(Value::pair(a.get_within(i)?, b.get_within(i)?)),
            View::Side { source, second } => {
                let element = source.get_within(i)?;
                let pair = element.as_pair()?;
                Ok(if *second { &pair.1 } else { &pair.0 }.clone())
            }
        }
    }

    /// Element `j` of element `i` (an array), without copying a materialized row.
    pub fn get_nested(&self, i: usize, j: usize) -> Result<Value, EvalError> {
        match &self.node.view {
            View::Dense(rows) if i < rows.len() => rows[i].as_array()?.get_within(j),
            _ => self.get_within(i)?.as_array()?.get_within(j),
        }
    }

    /// Every element, in order.
    pub fn to_vec(&self) -> Result<Vec<Value>, EvalError> {
        if let View::Dense(items) = &self.node.view {
            return Ok(items.clone());
        }
        (0..self.len()).map(|i| self.get(i)).collect()
    }
}

/// The element of `source` (or of `with`) that a view's element is.
fn read(at: Source<i64>, source: &Array, with: Option<&Value>) -> Result<Value, EvalError> {
    // Views map in-bounds indices to in-bounds indices (checked when they are made).
    let index = |i: i64| i as usize;
    Ok(match at {
        Source::At(i) => source.get_within(index(i))?,
        Source::AtNested(i, j) => source.get_nested(index(i), index(j))?,
        Source::Row(row) => Value::Array(Array::new(View::Row {
            source: source.clone(),
            row,
        })?),
        Source::Padded { at, lo, hi, inside } if (lo..hi).contains(&at) => {
            source.get_within(index(inside))?
        }
        Source::Padded { .. } => with.cloned().ok_or("padCst without its value")?,
        Source::Clamped { at, lo, hi, inside } => {
            let Some(last) = source.len().checked_sub(1) else {
                return Err("padClamp of an empty array".into());
            };
            source.get_within(match at {
                _ if at < lo => 0,
                _ if at >= hi => last,
                _ => index(inside),
            })?
        }
        Source::Either { at, first, second } => match with {
            Some(Value::Array(b)) if at >= first => b.get_within(index(second))?,
            _ => source.get_within(index(at))?,
        },
        Source::Lanes { base, width } => Value::Vector(
            (base..base + width)
                .map(|k| source.get_within(index(k)))
                .collect::<Result<Vec<_>, _>>()?
                .into(),
        ),
        Source::Lane { at, lane } => match source.get_within(index(at))? {
            Value::Vector(items) => items.get(index(lane)).cloned().ok_or_else(|| {
                format!(
                    "asScalar: a vector of {} lanes, not more than {lane}",
                    items.len()
                )
            })?,
            other => {
                return Err(format!("asScalar expected vectors, found {}", other.kind()).into())
            }
        },
    })
}

/// The JSON of a float: a number, or the string `"NaN"`, `"Infinity"` or
/// `"-Infinity"` (JSON has no such numbers, and `null` would not say which).
///
/// ```
/// use elevate_rise::io::{float_json, json_float};
/// assert_eq!(float_json(f64::NEG_INFINITY), serde_json::json!("-Infinity"));
/// assert!(json_float(&float_json(f64::NAN)).unwrap().is_nan());
/// assert_eq!(float_json(0.5), serde_json::json!(0.5));
/// ```
pub fn float_json(x: f64) -> serde_json::Value {
    match serde_json::Number::from_f64(x) {
        Some(n) => serde_json::Value::Number(n),
        None if x.is_nan() => serde_json::Value::from("NaN"),
        None if x > 0.0 => serde_json::Value::from("Infinity"),
        None => serde_json::Value::from("-Infinity"),
    }
}

/// A float from its JSON form (see [`float_json`]): a number, `"NaN"`, `"Infinity"`
/// or `"-Infinity"`.
pub fn json_float(json: &serde_json::Value) -> Option<f64> {
    match json {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}
