//! NumPy arrays (`.npy`) as RISE values and back, through the `npyz` crate.
//!
//! A RISE type is an array in NumPy's sense when it is arrays (and vectors) of a
//! scalar: `n.m.f32` is a two-dimensional `float32` array of shape `[n, m]`,
//! `n.vec[f32, 4]` one of shape `[n, 4]`, and a scalar one of shape `[]`. The dtypes
//! are `float32`, `float64`, `int32`, `int64` and `bool` (`f32`, `f64`, `i32`, `i64`,
//! `bool`); an index `idx[n]` is an integer in `0..n` (`int32` or `int64` in, `int64`
//! out). Pairs and functions have no `.npy` form.
//!
//! A file is checked before its data is read: its header must be a NumPy header of a
//! size NumPy writes, its shape's element count must not overflow, and its data must be
//! as long as the shape says, so that a truncated or corrupt file is an error naming
//! what is wrong, and never an allocation the file does not back.

use elevate_rise::nat::Nat;
use elevate_rise::{Array, NatEnv, Scalar, Type, TypeKind, Value};
use npyz::WriterBuilder as _;
use std::io::{Read, Write};
use std::path::Path;

/// The longest `.npy` header read (NumPy writes a few hundred bytes for the arrays
/// here; it refuses headers over 10,000 bytes by default).
pub const MAX_HEADER_BYTES: usize = 65_536;

/// The most dimensions an array may have (NumPy's own limit).
pub const MAX_DIMENSIONS: usize = 64;

/// The elements of an array, flat, in C order (the last index fastest).
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    /// `bool`
    Bool(Vec<bool>),
    /// `int32`
    I32(Vec<i32>),
    /// `int64`
    I64(Vec<i64>),
    /// `float32`
    F32(Vec<f32>),
    /// `float64`
    F64(Vec<f64>),
}

impl Data {
    /// The RISE scalar of the elements.
    pub fn scalar(&self) -> Scalar {
        match self {
            Data::Bool(_) => Scalar::Bool,
            Data::I32(_) => Scalar::I32,
            Data::I64(_) => Scalar::I64,
            Data::F32(_) => Scalar::F32,
            Data::F64(_) => Scalar::F64,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            Data::Bool(v) => v.len(),
            Data::I32(v) => v.len(),
            Data::I64(v) => v.len(),
            Data::F32(v) => v.len(),
            Data::F64(v) => v.len(),
        }
    }

    /// Element `i` (in bounds) as a RISE scalar value.
    fn value(&self, i: usize) -> Value {
        match self {
            Data::Bool(v) => Value::Bool(v[i]),
            Data::I32(v) => Value::I32(v[i]),
            Data::I64(v) => Value::I64(v[i]),
            Data::F32(v) => Value::F32(v[i]),
            Data::F64(v) => Value::F64(v[i]),
        }
    }

    /// Element `i` (in bounds) as an integer, if the elements are integers.
    fn integer(&self, i: usize) -> Option<i64> {
        match self {
            Data::I32(v) => Some(i64::from(v[i])),
            Data::I64(v) => Some(v[i]),
            _ => None,
        }
    }
}

/// An n-dimensional array: its shape and its elements.
#[derive(Debug, Clone, PartialEq)]
pub struct NdArray {
    /// The length of each dimension, outermost first (`[]` for a scalar).
    pub shape: Vec<u64>,
    /// The elements, `shape`'s product of them, in C order.
    pub data: Data,
}

impl NdArray {
    /// `a float32 array of shape [3, 4]`: what the array is, for messages.
    pub fn describe(&self) -> String {
        let dtype = dtype_name(self.data.scalar());
        let article = if dtype.starts_with('i') { "an" } else { "a" };
        format!(
            "{article} {dtype} array of shape {}",
            shape_text(&self.shape)
        )
    }
}

/// NumPy's name of a RISE scalar's dtype (`float32` for `f32`).
pub fn dtype_name(s: Scalar) -> &'static str {
    match s {
        Scalar::Bool => "bool",
        Scalar::I32 => "int32",
        Scalar::I64 => "int64",
        Scalar::F32 => "float32",
        Scalar::F64 => "float64",
    }
}

/// A shape as `[3, 4]`.
pub fn shape_text(shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("[{}]", dims.join(", "))
}

/// Why an array cannot be read, written, or taken as a value of a type.
#[derive(Debug, thiserror::Error)]
pub enum ArrayError {
    /// The file could not be read or written.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The bytes are not a `.npy` file, or one this reader takes.
    #[error("not a NumPy .npy file: {0}")]
    NotNpy(String),
    /// The file ends inside its header.
    #[error("truncated: the file ends inside its header")]
    TruncatedHeader,
    /// The file ends before the data its header describes.
    #[error(
        "truncated: the header says {elements} elements of {item_bytes} bytes \
         ({shape}, {needed} bytes of data), but the file has {found} bytes after the header"
    )]
    Truncated {
        /// The shape the header gives.
        shape: String,
        /// Its element count.
        elements: u64,
        /// The bytes of one element.
        item_bytes: u64,
        /// The bytes of data the header implies.
        needed: u128,
        /// The bytes there are.
        found: u64,
    },
    /// A dtype with no RISE scalar.
    #[error(
        "found an array of dtype `{dtype}` and shape {shape}, none of the dtypes read \
         (float32 `<f4`, float64 `<f8`, int32 `<i4`, int64 `<i8`, bool `|b1`)"
    )]
    Dtype {
        /// The dtype, as the header gives it.
        dtype: String,
        /// The shape.
        shape: String,
    },
    /// An array of another dtype or shape than the type's.
    #[error("expected {expected}, found {found}")]
    Mismatch {
        /// The type, and its dtype and shape where it has them.
        expected: String,
        /// What the array is.
        found: String,
    },
    /// An integer that is not an index below its bound.
    #[error("element {at} is {found}, not an index below {bound} ({ty})")]
    Index {
        /// The flat position of the element.
        at: usize,
        /// Its value.
        found: i64,
        /// The bound.
        bound: i64,
        /// The index type.
        ty: Type,
    },
    /// A value with no `.npy` form: pairs, functions, ragged arrays.
    #[error("{0}")]
    NotAnArray(String),
    /// A size of the type that has no value.
    #[error("{0}")]
    Size(String),
    /// Memory the system refused.
    #[error("cannot allocate an array of {0} elements: out of memory")]
    Memory(u64),
}

/// What an element of an array type is.
#[derive(Debug, Clone)]
enum Element {
    Scalar(Scalar),
    Index(Nat),
}

/// A RISE type seen as a NumPy array: its dimensions (each with whether it is a
/// vector's) and its element.
#[derive(Debug, Clone)]
pub struct Layout {
    dims: Vec<(Nat, bool)>,
    element: Element,
}

impl Layout {
    /// The layout of `ty`, if it is arrays and vectors of a scalar or an index.
    pub fn of(ty: &Type) -> Option<Layout> {
        let mut dims = Vec::new();
        let mut t = ty.clone();
        loop {
            let next = match t.kind() {
                TypeKind::Array(n, elem) => {
                    dims.push((n.clone(), false));
                    elem.clone()
                }
                TypeKind::Vector(elem, n) => {
                    dims.push((n.clone(), true));
                    elem.clone()
                }
                TypeKind::Scalar(s) => {
                    let element = Element::Scalar(*s);
                    return Some(Layout { dims, element });
                }
                TypeKind::Index(n) => {
                    let element = Element::Index(n.clone());
                    return Some(Layout { dims, element });
                }
                _ => return None,
            };
            t = next;
        }
    }

    /// The dimensions' sizes, outermost first.
    pub fn dims(&self) -> impl Iterator<Item = &Nat> {
        self.dims.iter().map(|(n, _)| n)
    }

    /// Whether integers of `scalar` are elements of this layout.
    fn takes(&self, scalar: Scalar) -> bool {
        match &self.element {
            Element::Scalar(s) => *s == scalar,
            Element::Index(_) => matches!(scalar, Scalar::I32 | Scalar::I64),
        }
    }

    /// The dtype the layout's elements are read from (`float32`; `int64` for indices).
    fn dtype(&self) -> &'static str {
        match &self.element {
            Element::Scalar(s) => dtype_name(*s),
            Element::Index(_) => "int32 or int64",
        }
    }
}

/// `T (a float32 array of shape [3, m])`: a type and its NumPy form, its sizes
/// evaluated where `nats` gives them, for messages.
fn expected(ty: &Type, layout: &Layout, nats: &NatEnv) -> String {
    let dims: Vec<String> = layout
        .dims()
        .map(|n| match n.try_eval(&|v| nats.get(v).copied()) {
            Ok(value) => value.to_string(),
            Err(_) => n.to_string(),
        })
        .collect();
    format!(
        "{ty} (a {} array of shape [{}])",
        layout.dtype(),
        dims.join(", ")
    )
}

/// The array is not a value of `ty` (whose sizes `nats` gives, where it gives them).
pub fn mismatch(array: &NdArray, ty: &Type, nats: &NatEnv) -> ArrayError {
    ArrayError::Mismatch {
        expected: match Layout::of(ty) {
            Some(layout) => expected(ty, &layout, nats),
            None => format!("{ty}, which has no NumPy form"),
        },
        found: array.describe(),
    }
}

/// The layout of `ty` if the array can be one of its values: the same dtype and the
/// same number of dimensions (their sizes are checked by [`to_value`]).
pub fn check(array: &NdArray, ty: &Type) -> Result<Layout, ArrayError> {
    let layout = Layout::of(ty).ok_or_else(|| ArrayError::Mismatch {
        expected: format!("{ty}, which has no NumPy form"),
        found: array.describe(),
    })?;
    if !layout.takes(array.data.scalar()) || layout.dims.len() != array.shape.len() {
        return Err(mismatch(array, ty, &NatEnv::default()));
    }
    Ok(layout)
}

/// The layout of `ty` if the array can be one of its values at the sizes `nats`: the
/// same dtype, and every dimension the type's.
pub fn check_shape(array: &NdArray, ty: &Type, nats: &NatEnv) -> Result<Layout, ArrayError> {
    let layout = check(array, ty)?;
    let mut shape = Vec::with_capacity(layout.dims.len());
    for (n, _) in &layout.dims {
        let value = n
            .try_eval(&|v| nats.get(v).copied())
            .map_err(|e| ArrayError::Size(format!("cannot evaluate the size {n}: {e}")))?;
        shape.push(value);
    }
    let same = shape
        .iter()
        .zip(&array.shape)
        .all(|(&want, &have)| u64::try_from(want).is_ok_and(|w| w == have));
    if !same {
        return Err(mismatch(array, ty, nats));
    }
    if array.data.len() as u128 != array.shape.iter().map(|&d| u128::from(d)).product::<u128>() {
        return Err(ArrayError::NotAnArray(format!(
            "{} holds {} elements",
            array.describe(),
            array.data.len()
        )));
    }
    Ok(layout)
}

/// The array as a value of type `ty`, its sizes from `nats`: the dtype and every
/// dimension must be the type's.
pub fn to_value(array: &NdArray, ty: &Type, nats: &NatEnv) -> Result<Value, ArrayError> {
    let layout = check_shape(array, ty, nats)?;
    let bound = match &layout.element {
        Element::Index(n) => Some(
            n.try_eval(&|v| nats.get(v).copied())
                .map_err(|e| ArrayError::Size(format!("cannot evaluate the size {n}: {e}")))?,
        ),
        Element::Scalar(_) => None,
    };
    let leaf = |i: usize| -> Result<Value, ArrayError> {
        let Some(bound) = bound else {
            return Ok(array.data.value(i));
        };
        let found = array.data.integer(i).unwrap_or(-1);
        if (0..bound).contains(&found) {
            Ok(Value::Index(found))
        } else {
            let ty = match &layout.element {
                Element::Index(n) => Type::index(n.clone()),
                Element::Scalar(s) => Type::scalar(*s),
            };
            Err(ArrayError::Index {
                at: i,
                found,
                bound,
                ty,
            })
        }
    };
    let mut next = 0;
    build(&layout.dims, &array.shape, &mut next, &leaf)
}

/// The value of the dimensions `dims` (of lengths `shape`) from the elements at
/// `next` on.
fn build(
    dims: &[(Nat, bool)],
    shape: &[u64],
    next: &mut usize,
    leaf: &dyn Fn(usize) -> Result<Value, ArrayError>,
) -> Result<Value, ArrayError> {
    let (Some((_, vector)), Some(&len)) = (dims.first(), shape.first()) else {
        let value = leaf(*next)?;
        *next += 1;
        return Ok(value);
    };
    let n = usize::try_from(len).map_err(|_| ArrayError::Memory(len))?;
    let mut items = Vec::new();
    items
        .try_reserve_exact(n)
        .map_err(|_| ArrayError::Memory(len))?;
    for _ in 0..n {
        items.push(build(&dims[1..], &shape[1..], next, leaf)?);
    }
    Ok(match vector {
        true => Value::Vector(items.into()),
        false => Value::array(items),
    })
}

/// Reads a `.npy` file.
pub fn read_npy(path: &Path) -> Result<NdArray, ArrayError> {
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    read_npy_from(std::io::BufReader::new(file), len)
}

/// Reads a `.npy` file of `len` bytes from `reader`.
pub fn read_npy_from(mut reader: impl Read, len: u64) -> Result<NdArray, ArrayError> {
    let not_npy = |why: &str| ArrayError::NotNpy(why.to_string());
    let inside_header = || ArrayError::TruncatedHeader;
    let mut prelude = [0u8; 12];
    let read = read_up_to(&mut reader, &mut prelude[..8])?;
    if read < 8 || &prelude[..6] != b"\x93NUMPY" {
        return Err(not_npy("it does not start with the magic bytes \\x93NUMPY"));
    }
    let major = prelude[6];
    let size_bytes = match major {
        1 => 2,
        2 | 3 => 4,
        v => return Err(ArrayError::NotNpy(format!("unknown format version {v}"))),
    };
    if read_up_to(&mut reader, &mut prelude[8..8 + size_bytes])? < size_bytes {
        return Err(inside_header());
    }
    let header_len = match size_bytes {
        2 => usize::from(u16::from_le_bytes([prelude[8], prelude[9]])),
        _ => u32::from_le_bytes([prelude[8], prelude[9], prelude[10], prelude[11]]) as usize,
    };
    if header_len > MAX_HEADER_BYTES {
        return Err(ArrayError::NotNpy(format!(
            "a header of {header_len} bytes (at most {MAX_HEADER_BYTES} are read)"
        )));
    }
    let before_data = (8 + size_bytes + header_len) as u64;
    if before_data > len {
        return Err(inside_header());
    }
    let mut header = vec![0u8; header_len];
    if read_up_to(&mut reader, &mut header)? < header_len {
        return Err(inside_header());
    }
    let text = std::str::from_utf8(&header).map_err(|_| not_npy("its header is not text"))?;
    check_header(text)?;
    let shape = header_shape(text)?;
    let start = prelude[..8 + size_bytes].iter().chain(&header).copied();
    let start: Vec<u8> = start.collect();
    let npy = npyz::NpyFile::new(std::io::Cursor::new(start).chain(reader))
        .map_err(|e| ArrayError::NotNpy(e.to_string()))?;
    if npy.shape() != shape.as_slice() {
        return Err(not_npy(
            "its header's shape is not one this reader understands",
        ));
    }
    let unsupported = |dtype: String| ArrayError::Dtype {
        dtype,
        shape: shape_text(&shape),
    };
    let npyz::DType::Plain(ts) = npy.dtype() else {
        return Err(unsupported(npy.dtype().descr()));
    };
    let scalar = match (ts.type_char(), ts.size_field()) {
        (npyz::TypeChar::Float, 4) => Scalar::F32,
        (npyz::TypeChar::Float, 8) => Scalar::F64,
        (npyz::TypeChar::Int, 4) => Scalar::I32,
        (npyz::TypeChar::Int, 8) => Scalar::I64,
        (npyz::TypeChar::Bool, 1) => Scalar::Bool,
        _ => return Err(unsupported(ts.to_string())),
    };
    let item_bytes = ts.size_field();
    let elements = shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| {
            ArrayError::NotNpy(format!("the shape {} is too large", shape_text(&shape)))
        })?;
    let needed = u128::from(elements) * u128::from(item_bytes);
    let found = len - before_data;
    if needed > u128::from(found) {
        return Err(ArrayError::Truncated {
            shape: shape_text(&shape),
            elements,
            item_bytes,
            needed,
            found,
        });
    }
    let order = npy.order();
    let truncated = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => ArrayError::Truncated {
            shape: shape_text(&shape),
            elements,
            item_bytes,
            needed,
            found,
        },
        _ => ArrayError::NotNpy(e.to_string()),
    };
    let data = match scalar {
        Scalar::Bool => Data::Bool(npy.into_vec().map_err(truncated)?),
        Scalar::I32 => Data::I32(npy.into_vec().map_err(truncated)?),
        Scalar::I64 => Data::I64(npy.into_vec().map_err(truncated)?),
        Scalar::F32 => Data::F32(npy.into_vec().map_err(truncated)?),
        Scalar::F64 => Data::F64(npy.into_vec().map_err(truncated)?),
    };
    let data = match order {
        npyz::Order::C => data,
        npyz::Order::Fortran => to_c_order(data, &shape),
    };
    Ok(NdArray { shape, data })
}

/// Reads into `buf` until it is full or the reader ends; the bytes read.
fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut read = 0;
    while read < buf.len() {
        match reader.read(&mut buf[read..]) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(read)
}

/// A header's text is a flat Python dict: refuses nesting deeper than a dtype of the
/// kinds read has (so that parsing it cannot go deep).
fn check_header(text: &str) -> Result<(), ArrayError> {
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > 8 {
            return Err(ArrayError::NotNpy("its header nests too deep".into()));
        }
    }
    Ok(())
}

/// The shape in a header's text (`'shape': (3, 4)`), checked here so that its
/// element count cannot overflow in the reader.
fn header_shape(text: &str) -> Result<Vec<u64>, ArrayError> {
    let bad = || ArrayError::NotNpy("its header has no shape of whole numbers".into());
    let key = text
        .find("'shape'")
        .or_else(|| text.find("\"shape\""))
        .ok_or_else(bad)?;
    let rest = &text[key + 7..];
    let open = rest.find('(').ok_or_else(bad)?;
    let close = rest[open..].find(')').ok_or_else(bad)? + open;
    let mut shape = Vec::new();
    for part in rest[open + 1..close].split(',') {
        let part = part.trim().trim_end_matches('L');
        if part.is_empty() {
            continue;
        }
        shape.push(part.parse::<u64>().map_err(|_| bad())?);
    }
    if shape.len() > MAX_DIMENSIONS {
        return Err(ArrayError::NotNpy(format!(
            "{} dimensions (at most {MAX_DIMENSIONS})",
            shape.len()
        )));
    }
    shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| {
            ArrayError::NotNpy(format!("the shape {} is too large", shape_text(&shape)))
        })?;
    Ok(shape)
}

/// Elements stored in Fortran order (the first index fastest), in C order.
fn to_c_order(data: Data, shape: &[u64]) -> Data {
    fn reorder<T: Copy>(items: Vec<T>, shape: &[u64]) -> Vec<T> {
        let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
        let mut strides = vec![1usize; dims.len()];
        for k in 1..dims.len() {
            strides[k] = strides[k - 1] * dims[k - 1];
        }
        let mut index = vec![0usize; dims.len()];
        let mut out = Vec::with_capacity(items.len());
        for _ in 0..items.len() {
            let at: usize = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
            out.push(items[at]);
            // The next C-order index: the last dimension fastest.
            for k in (0..dims.len()).rev() {
                index[k] += 1;
                if index[k] < dims[k] {
                    break;
                }
                index[k] = 0;
            }
        }
        out
    }
    match data {
        Data::Bool(v) => Data::Bool(reorder(v, shape)),
        Data::I32(v) => Data::I32(reorder(v, shape)),
        Data::I64(v) => Data::I64(reorder(v, shape)),
        Data::F32(v) => Data::F32(reorder(v, shape)),
        Data::F64(v) => Data::F64(reorder(v, shape)),
    }
}

/// The shape and element scalar of a value (following first elements): an error for
/// pairs and functions.
fn value_layout(value: &Value) -> Result<(Vec<u64>, Scalar), ArrayError> {
    let mut shape = Vec::new();
    let mut v = value.clone();
    loop {
        let next = match &v {
            Value::Array(a) => {
                shape.push(a.len() as u64);
                if a.is_empty() {
                    // No element to say the dtype: the type's shape is lost anyway.
                    return Ok((shape, Scalar::F32));
                }
                a.get(0)
                    .map_err(|e| ArrayError::NotAnArray(e.to_string()))?
            }
            Value::Vector(items) => {
                shape.push(items.len() as u64);
                match items.first() {
                    Some(first) => first.clone(),
                    None => return Ok((shape, Scalar::F32)),
                }
            }
            Value::Index(_) => return Ok((shape, Scalar::I64)),
            Value::Pair(_) => {
                return Err(ArrayError::NotAnArray(
                    "a result with pairs has no .npy form (write it as .json)".into(),
                ))
            }
            Value::Function(_) => {
                return Err(ArrayError::NotAnArray("a function has no .npy form".into()))
            }
            scalar => {
                let s = scalar
                    .scalar_type()
                    .ok_or_else(|| ArrayError::NotAnArray("a value with no .npy form".into()))?;
                return Ok((shape, s));
            }
        };
        v = next;
    }
}

/// Writes a value (arrays and vectors of scalars or indices) as a `.npy` file.
pub fn write_npy(value: &Value, out: &mut dyn Write) -> Result<(), ArrayError> {
    let (shape, scalar) = value_layout(value)?;
    match scalar {
        Scalar::Bool => write_typed(value, &shape, out, |v| match v {
            Value::Bool(b) => Some(*b),
            _ => None,
        }),
        Scalar::I32 => write_typed(value, &shape, out, |v| match v {
            Value::I32(x) => Some(*x),
            _ => None,
        }),
        Scalar::I64 => write_typed(value, &shape, out, |v| match v {
            Value::I64(x) | Value::Index(x) => Some(*x),
            _ => None,
        }),
        Scalar::F32 => write_typed(value, &shape, out, |v| match v {
            Value::F32(x) => Some(*x),
            _ => None,
        }),
        Scalar::F64 => write_typed(value, &shape, out, |v| match v {
            Value::F64(x) => Some(*x),
            _ => None,
        }),
    }
}

fn write_typed<T: npyz::AutoSerialize>(
    value: &Value,
    shape: &[u64],
    out: &mut dyn Write,
    element: impl Fn(&Value) -> Option<T>,
) -> Result<(), ArrayError> {
    let mut writer = npyz::WriteOptions::<T>::new()
        .default_dtype()
        .shape(shape)
        .writer(out)
        .begin_nd()?;
    let mut leaf = |v: &Value| -> Result<(), ArrayError> {
        let x = element(v).ok_or_else(|| {
            ArrayError::NotAnArray(format!(
                "a result whose elements are not all of one scalar type ({:?})",
                v
            ))
        })?;
        Ok(writer.push(&x)?)
    };
    visit(value, shape, &mut leaf)?;
    writer.finish()?;
    Ok(())
}

/// Calls `leaf` on every element of `value` in C order, checking that every row is as
/// long as `shape` says.
fn visit(
    value: &Value,
    shape: &[u64],
    leaf: &mut dyn FnMut(&Value) -> Result<(), ArrayError>,
) -> Result<(), ArrayError> {
    let ragged = || ArrayError::NotAnArray("a ragged array has no .npy form".into());
    let Some((&len, inner)) = shape.split_first() else {
        return match value {
            Value::Array(_) | Value::Vector(_) => Err(ragged()),
            v => leaf(v),
        };
    };
    match value {
        Value::Array(a) if a.len() as u64 == len => each(a, inner, leaf),
        Value::Vector(items) if items.len() as u64 == len => {
            items.iter().try_for_each(|v| visit(v, inner, leaf))
        }
        _ => Err(ragged()),
    }
}

fn each(
    a: &Array,
    inner: &[u64],
    leaf: &mut dyn FnMut(&Value) -> Result<(), ArrayError>,
) -> Result<(), ArrayError> {
    for i in 0..a.len() {
        let v = a
            .get(i)
            .map_err(|e| ArrayError::NotAnArray(e.to_string()))?;
        visit(&v, inner, leaf)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use elevate_rise::parse_type;

    fn npy(value: &Value) -> Vec<u8> {
        let mut bytes = Vec::new();
        write_npy(value, &mut bytes).unwrap();
        bytes
    }

    fn read(bytes: &[u8]) -> Result<NdArray, ArrayError> {
        read_npy_from(bytes, bytes.len() as u64)
    }

    #[test]
    fn values_round_trip_through_npy() {
        let row = |xs: &[f32]| Value::array(xs.iter().map(|&x| Value::F32(x)).collect());
        let value = Value::array(vec![row(&[1.0, 2.0, 3.0]), row(&[4.0, 5.0, 6.0])]);
        let array = read(&npy(&value)).unwrap();
        assert_eq!(array.shape, [2, 3]);
        assert_eq!(array.data, Data::F32(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
        let ty = parse_type("2.3.f32").unwrap();
        let back = to_value(&array, &ty, &NatEnv::default()).unwrap();
        assert_eq!(back.to_json().unwrap(), value.to_json().unwrap());
        let scalar = read(&npy(&Value::I64(7))).unwrap();
        assert_eq!((scalar.shape.len(), scalar.data), (0, Data::I64(vec![7])));
    }

    #[test]
    fn a_wrong_dtype_or_shape_says_what_was_expected_and_found() {
        let value = Value::array(vec![Value::I32(1), Value::I32(2)]);
        let array = read(&npy(&value)).unwrap();
        let e = to_value(&array, &parse_type("2.f32").unwrap(), &NatEnv::default());
        let e = e.unwrap_err().to_string();
        assert_eq!(
            e,
            "expected 2.f32 (a float32 array of shape [2]), found an int32 array of shape [2]"
        );
        let e = to_value(&array, &parse_type("3.i32").unwrap(), &NatEnv::default());
        assert!(e.unwrap_err().to_string().contains("shape [3]"));
    }

    #[test]
    fn truncated_and_corrupt_files_are_errors() {
        let value = Value::array((0..100).map(|i| Value::F64(f64::from(i))).collect());
        let bytes = npy(&value);
        let e = read(&bytes[..bytes.len() - 8]).unwrap_err().to_string();
        assert!(
            e.starts_with("truncated: the header says 100 elements"),
            "{e}"
        );
        assert!(read(&bytes[..20])
            .unwrap_err()
            .to_string()
            .contains("header"));
        assert!(read(b"hello").is_err());
        let mut huge = bytes.clone();
        let at = huge.windows(5).position(|w| w == b"(100,").unwrap();
        huge[at..at + 5].copy_from_slice(b"(999,");
        let e = read(&huge).unwrap_err().to_string();
        assert!(e.starts_with("truncated"), "{e}");
    }

    #[test]
    fn fortran_order_is_read_in_c_order() {
        let data = to_c_order(Data::I32(vec![1, 4, 2, 5, 3, 6]), &[2, 3]);
        assert_eq!(data, Data::I32(vec![1, 2, 3, 4, 5, 6]));
    }
}
