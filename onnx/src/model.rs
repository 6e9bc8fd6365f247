//! An ONNX file as the importer reads it: decoded with the generated protobuf types
//! from one buffer that the weights share (never copied), its operator set checked, its
//! one input's static shape, its initializers checked against their shapes, and its
//! nodes in an order where each comes after what it reads (a cycle is an error).

use crate::error::{ImportErrorKind, NodeRef};
use crate::proto::{tensor_proto, type_proto, ModelProto, NodeProto, TensorProto};
use bytes::Bytes;
use prost::Message;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

/// The operator sets of the default domain the importer covers.
pub const OPSETS: std::ops::RangeInclusive<i64> = 13..=21;

/// A constant: an initializer or a `Constant` node's value.
#[derive(Debug, Clone)]
pub(crate) struct Const {
    /// Its ONNX name.
    pub name: String,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Its values.
    pub data: ConstData,
    /// Where it comes in the model: initializers first, in order, then `Constant`
    /// nodes' values in node order (the order of the network's parameters).
    pub order: usize,
}

/// A constant's values, as the file has them.
#[derive(Debug, Clone)]
pub(crate) enum ConstData {
    /// Little-endian `f32`s, a slice of the file's buffer.
    RawF32(Bytes),
    /// `f32`s (a tensor's `float_data`, an attribute's floats), shared: a weight
    /// is never copied.
    F32(Arc<[f32]>),
    /// Integers (a `Reshape`'s shape).
    I64(Vec<i64>),
    /// Another element type (ONNX's number for it): an error where it is used.
    Other(i32),
}

impl Const {
    /// How many values it has.
    pub fn elements(&self) -> usize {
        self.shape.iter().product()
    }

    /// Its `f32` values (a copy), if it is of `f32`s.
    pub fn f32s(&self) -> Option<Vec<f32>> {
        match &self.data {
            ConstData::RawF32(b) => Some(
                b.chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            ),
            ConstData::F32(v) => Some(v.to_vec()),
            _ => None,
        }
    }

    /// Its integer values, if it is of integers.
    pub fn i64s(&self) -> Option<&[i64]> {
        match &self.data {
            ConstData::I64(v) => Some(v),
            _ => None,
        }
    }

    /// Its one `f32` value, if it has exactly one.
    pub fn scalar(&self) -> Option<f32> {
        if self.elements() != 1 {
            return None;
        }
        self.f32s().and_then(|v| v.first().copied())
    }
}

/// A node and where it is in the file's list.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub at: NodeRef,
    pub proto: NodeProto,
}

/// A model ready to translate.
#[derive(Debug)]
pub(crate) struct Model {
    /// The network input's name and shape (NCHW, the batch resolved).
    pub input: (String, Vec<usize>),
    /// The graph output's name and the sizes it declares (`None`: symbolic).
    pub output: (String, Vec<Option<usize>>),
    /// The nodes, each after the nodes it reads from.
    pub nodes: Vec<Node>,
    /// How many nodes the graph has.
    pub node_count: usize,
    /// The initializers, by name.
    pub consts: HashMap<String, Const>,
}

/// Reads and checks the model in `path`.
pub(crate) fn load(path: &Path, batch: Option<i64>) -> Result<Model, ImportErrorKind> {
    let buffer = Bytes::from(std::fs::read(path).map_err(ImportErrorKind::Read)?);
    let model = ModelProto::decode(buffer).map_err(|e| ImportErrorKind::NotOnnx(e.to_string()))?;
    let Some(graph) = model.graph else {
        return Err(ImportErrorKind::NotOnnx(
            "the file decodes, but holds no graph".into(),
        ));
    };
    if model.ir_version.unwrap_or(0) <= 0 {
        return Err(ImportErrorKind::NotOnnx(
            "the file decodes, but has no IR version".into(),
        ));
    }
    let default = model
        .opset_import
        .iter()
        .find(|o| matches!(o.domain(), "" | "ai.onnx"));
    match default.map(|o| o.version()) {
        Some(v) if OPSETS.contains(&v) => {}
        Some(v) => {
            return Err(ImportErrorKind::Opset(format!(
                "the model imports ONNX opset {v}; opsets {} to {} are supported",
                OPSETS.start(),
                OPSETS.end()
            )))
        }
        None => {
            return Err(ImportErrorKind::Opset(
                "the model imports no opset of the default ONNX domain".into(),
            ))
        }
    }

    let mut consts = HashMap::new();
    for (index, t) in graph.initializer.into_iter().enumerate() {
        let c = constant(t, index, path)?;
        consts.insert(c.name.clone(), c);
    }
    let inputs: Vec<_> = graph
        .input
        .iter()
        .filter(|i| !consts.contains_key(i.name()))
        .collect();
    let [input] = inputs.as_slice() else {
        return Err(ImportErrorKind::Graph(format!(
            "the graph has {} inputs that are not initializers ({}); a network has one",
            inputs.len(),
            inputs
                .iter()
                .map(|i| format!("`{}`", i.name()))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    };
    let name = input.name().to_string();
    let dims = tensor_dims(input.r#type.as_ref(), &format!("input `{name}`"))?;
    let mut shape = Vec::new();
    for (i, d) in dims.iter().enumerate() {
        shape.push(match (i, d, batch) {
            (0, Some(d), Some(b)) if *d as i64 != b => {
                return Err(ImportErrorKind::Graph(format!(
                    "input `{name}` has a fixed batch of {d}; a batch of {b} cannot be imposed"
                )))
            }
            (_, Some(d), _) => *d,
            (0, None, b) => {
                let b = b.unwrap_or(1);
                usize::try_from(b).ok().filter(|&b| b > 0).ok_or_else(|| {
                    ImportErrorKind::Graph(format!("a batch of {b}: it must be at least 1"))
                })?
            }
            (i, None, _) => {
                return Err(ImportErrorKind::Graph(format!(
                "input `{name}` has a dynamic size {i} (only the batch, size 0, may be symbolic)"
            )))
            }
        });
    }
    if !fits(&shape) {
        return Err(ImportErrorKind::Graph(format!(
            "input `{name}` of {shape:?} has more than 2^40 elements"
        )));
    }
    let [output] = graph.output.as_slice() else {
        return Err(ImportErrorKind::Graph(format!(
            "the graph has {} outputs; a network has one",
            graph.output.len()
        )));
    };
    let out_name = output.name().to_string();
    // The output's shape is computed; what the model declares of it is checked
    // against that where it says something.
    let declares_shape = matches!(
        output.r#type.as_ref().and_then(|t| t.value.as_ref()),
        Some(type_proto::Value::TensorType(t)) if t.shape.is_some()
    );
    let out_dims = if declares_shape {
        tensor_dims(output.r#type.as_ref(), &format!("output `{out_name}`"))?
    } else {
        Vec::new()
    };

    let nodes: Vec<Node> = graph
        .node
        .into_iter()
        .enumerate()
        .map(|(index, proto)| Node {
            at: NodeRef {
                index,
                name: proto.name().to_string(),
                op: proto.op_type().to_string(),
            },
            proto,
        })
        .collect();
    let node_count = nodes.len();
    let mut known: HashSet<String> = consts.keys().cloned().collect();
    known.insert(name.clone());
    let nodes = sorted(nodes, &known)?;
    Ok(Model {
        input: (name, shape),
        output: (out_name, out_dims),
        nodes,
        node_count,
        consts,
    })
}

/// The sizes of a tensor type (`None`: symbolic or unknown); an error unless it is a
/// tensor of `f32` with a shape.
fn tensor_dims(
    ty: Option<&crate::proto::TypeProto>,
    what: &str,
) -> Result<Vec<Option<usize>>, ImportErrorKind> {
    let Some(type_proto::Value::TensorType(t)) = ty.and_then(|t| t.value.as_ref()) else {
        return Err(ImportErrorKind::Graph(format!("{what} is not a tensor")));
    };
    if t.elem_type() != tensor_proto::DataType::Float as i32 {
        return Err(ImportErrorKind::Graph(format!(
            "{what} is of {}; only float (f32) is supported",
            type_name(t.elem_type())
        )));
    }
    let Some(shape) = &t.shape else {
        return Err(ImportErrorKind::Graph(format!(
            "{what} has no shape; static shapes are needed"
        )));
    };
    Ok(shape
        .dim
        .iter()
        .map(|d| match d.value {
            Some(crate::proto::tensor_shape_proto::dimension::Value::DimValue(v)) if v > 0 => {
                Some(v as usize)
            }
            _ => None,
        })
        .collect())
}

/// ONNX's name of an element type.
pub(crate) fn type_name(t: i32) -> String {
    tensor_proto::DataType::try_from(t)
        .map(|d| d.as_str_name().to_lowercase())
        .unwrap_or_else(|_| format!("type {t}"))
}

/// A tensor as a constant, its data checked against its shape.
pub(crate) fn constant(
    mut t: TensorProto,
    order: usize,
    path: &Path,
) -> Result<Const, ImportErrorKind> {
    let name = t.name().to_string();
    let size_error = |expected: u64, found: u64, t: &TensorProto| ImportErrorKind::WeightSize {
        tensor: t.name().to_string(),
        index: order,
        shape: t.dims.clone(),
        expected,
        found,
    };
    let mut shape = Vec::new();
    for &d in &t.dims {
        shape.push(usize::try_from(d).map_err(|_| {
            ImportErrorKind::Graph(format!(
                "tensor `{name}` (initializer {order}) has a negative size: {:?}",
                t.dims
            ))
        })?);
    }
    let elements = shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d as u64))
        .ok_or_else(|| size_error(u64::MAX, 0, &t))?;
    if t.data_location() == tensor_proto::DataLocation::External {
        external(&mut t, path)?;
    }
    let raw = t.raw_data.take().filter(|r| !r.is_empty());
    let data = match tensor_proto::DataType::try_from(t.data_type()) {
        Ok(tensor_proto::DataType::Float) => match raw {
            Some(raw) => {
                if raw.len() as u64 != elements.saturating_mul(4) {
                    return Err(size_error(elements, raw.len() as u64 / 4, &t));
                }
                ConstData::RawF32(raw)
            }
            None => {
                let v = std::mem::take(&mut t.float_data);
                if v.len() as u64 != elements {
                    return Err(size_error(elements, v.len() as u64, &t));
                }
                ConstData::F32(v.into())
            }
        },
        Ok(tensor_proto::DataType::Int64) => {
            let v: Vec<i64> = match raw {
                Some(raw) => {
                    if raw.len() as u64 != elements.saturating_mul(8) {
                        return Err(size_error(elements, raw.len() as u64 / 8, &t));
                    }
                    raw.chunks_exact(8)
                        .map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default()))
                        .collect()
                }
                None => std::mem::take(&mut t.int64_data),
            };
            if v.len() as u64 != elements {
                return Err(size_error(elements, v.len() as u64, &t));
            }
            ConstData::I64(v)
        }
        // A boolean (Dropout's training_mode): one byte each, or in `int32_data`.
        Ok(tensor_proto::DataType::Bool) => {
            let v: Vec<i64> = match raw {
                Some(raw) => raw.iter().map(|&b| i64::from(b)).collect(),
                None => t.int32_data.iter().map(|&b| i64::from(b)).collect(),
            };
            if v.len() as u64 != elements {
                return Err(size_error(elements, v.len() as u64, &t));
            }
            ConstData::I64(v)
        }
        _ => ConstData::Other(t.data_type()),
    };
    Ok(Const {
        name,
        shape,
        data,
        order,
    })
}

/// Reads a tensor's data kept in a file beside the model (`location`, `offset`,
/// `length`, as ONNX's external data format says) into its `raw_data`.
fn external(t: &mut TensorProto, path: &Path) -> Result<(), ImportErrorKind> {
    let name = t.name().to_string();
    let fail = |m: String| ImportErrorKind::Graph(format!("tensor `{name}`: external data: {m}"));
    let key = |k: &str| {
        t.external_data
            .iter()
            .find(|e| e.key() == k)
            .map(|e| e.value().to_string())
    };
    let location = key("location").ok_or_else(|| fail("no location".into()))?;
    let number = |k: &str| -> Result<Option<u64>, ImportErrorKind> {
        key(k)
            .map(|v| v.parse::<u64>().map_err(|_| fail(format!("{k} `{v}`"))))
            .transpose()
    };
    let (offset, length) = (number("offset")?.unwrap_or(0), number("length")?);
    let relative = Path::new(&location);
    if relative.is_absolute() || relative.components().any(|c| c.as_os_str() == "..") {
        return Err(fail(format!(
            "location `{location}` is outside the model's folder"
        )));
    }
    let file = path.parent().unwrap_or(Path::new(".")).join(relative);
    let mut f = std::fs::File::open(&file).map_err(|e| fail(format!("{}: {e}", file.display())))?;
    use std::io::{Read, Seek, SeekFrom};
    let size = f
        .metadata()
        .map_err(|e| fail(format!("{}: {e}", file.display())))?
        .len();
    let length = length.unwrap_or(size.saturating_sub(offset));
    if offset.checked_add(length).is_none_or(|end| end > size) {
        return Err(fail(format!(
            "{} bytes at {offset} of {}, which has {size}",
            length,
            file.display()
        )));
    }
    let mut data = vec![0u8; length as usize];
    f.seek(SeekFrom::Start(offset))
        .and_then(|_| f.read_exact(&mut data))
        .map_err(|e| fail(format!("{}: {e}", file.display())))?;
    t.raw_data = Some(Bytes::from(data));
    Ok(())
}

/// The nodes in an order where every node comes after the nodes whose outputs it
/// reads (Kahn's algorithm, keeping the file's order where it can); a value that
/// nothing makes, a value made twice or a cycle is an error.
fn sorted(nodes: Vec<Node>, known: &HashSet<String>) -> Result<Vec<Node>, ImportErrorKind> {
    let mut producer: HashMap<&str, usize> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        for out in n.proto.output.iter().filter(|o| !o.is_empty()) {
            if known.contains(out) || producer.insert(out, i).is_some() {
                return Err(ImportErrorKind::Graph(format!(
                    "{}: its output `{out}` is made twice in the graph",
                    n.at
                )));
            }
        }
    }
    let mut deps: Vec<Vec<usize>> = Vec::with_capacity(nodes.len());
    for n in &nodes {
        let mut d = Vec::new();
        for input in n.proto.input.iter().filter(|i| !i.is_empty()) {
            match producer.get(input.as_str()) {
                Some(&p) => d.push(p),
                None if known.contains(input) => {}
                None => {
                    return Err(ImportErrorKind::Graph(format!(
                        "{}: it reads `{input}`, which no node, initializer or input makes",
                        n.at
                    )))
                }
            }
        }
        deps.push(d);
    }
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut waiting: Vec<usize> = deps.iter().map(Vec::len).collect();
    for (i, d) in deps.iter().enumerate() {
        for &p in d {
            users[p].push(i);
        }
    }
    // A min-heap of ready nodes keeps the file's order among independent nodes.
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = waiting
        .iter()
        .enumerate()
        .filter(|(_, &w)| w == 0)
        .map(|(i, _)| std::cmp::Reverse(i))
        .collect();
    let mut order = Vec::with_capacity(nodes.len());
    while let Some(std::cmp::Reverse(i)) = ready.pop() {
        order.push(i);
        for &u in &users[i] {
            waiting[u] -= 1;
            if waiting[u] == 0 {
                ready.push(std::cmp::Reverse(u));
            }
        }
    }
    if order.len() < nodes.len() {
        // Walk back from a node left waiting along waiting inputs: a node met twice
        // is on a cycle.
        let mut at = (0..nodes.len()).find(|&i| waiting[i] > 0).unwrap_or(0);
        let mut seen = HashSet::new();
        while seen.insert(at) {
            match deps[at].iter().find(|&&p| waiting[p] > 0) {
                Some(&p) => at = p,
                None => break,
            }
        }
        return Err(ImportErrorKind::Cycle {
            node: nodes[at].at.clone(),
        });
    }
    let mut slots: Vec<Option<Node>> = nodes.into_iter().map(Some).collect();
    Ok(order.into_iter().filter_map(|i| slots[i].take()).collect())
}

/// The most elements an activation may have (4 TiB of `f32`s): what keeps every size
/// computed from a model's shapes within a machine word.
pub(crate) const MAX_ELEMENTS: u64 = 1 << 40;

/// Whether an array of this shape has at most [`MAX_ELEMENTS`] elements.
pub(crate) fn fits(shape: &[usize]) -> bool {
    shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d as u64))
        .is_some_and(|n| n <= MAX_ELEMENTS)
}
