//! The launch manifest of a GPU payload: for each kernel its host function launches
//! (`gpu.launch_func`, in order), the kernel's name, its grid and block sizes, its
//! dynamic shared memory, and its parameters in order: enough for a runner to launch
//! the PTX ([`super::gpu`]) without MLIR.

use super::build::transformed_payload;
use super::gpu::{serialize, Ptx};
use super::mlir::context;
use crate::error::{Error, Stage};
use crate::payload::Payload;
use melior::ir::attribute::{DenseI32ArrayAttribute, DenseI64ArrayAttribute, IntegerAttribute};
use melior::ir::block::{BlockArgument, BlockLike};
use melior::ir::operation::{OperationLike, OperationRef, OperationResult};
use melior::ir::r#type::{MemRefType, ShapedTypeLike};
use melior::ir::{RegionLike, Value, ValueLike};
use serde_json::{json, Value as Json};

/// One kernel launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    /// The kernel, as `@module::@kernel` (the PTX's `.entry` is the kernel's name).
    pub kernel: String,
    /// Blocks in x, y, z.
    pub grid: [i64; 3],
    /// Threads of a block in x, y, z.
    pub block: [i64; 3],
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: i64,
    /// The kernel's parameters, in order.
    pub params: Vec<Param>,
}

/// A parameter of a kernel.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    /// Argument `argument` of the payload's function (its buffers: the inputs, then
    /// the result), of MLIR type `ty`. A memref is passed as MLIR passes memrefs: its
    /// allocated and aligned pointers, offset, sizes and strides (`3 + 2 * rank` PTX
    /// parameters).
    Argument {
        /// Its position among the function's arguments.
        argument: usize,
        /// Its MLIR type.
        ty: String,
        /// Its rank, where it is a memref (read from the type, not its text).
        rank: Option<usize>,
    },
    /// A view of argument `argument` (a memref of MLIR type `ty`): its buffer's
    /// pointers with this offset, sizes and strides (in elements), as MLIR passes it.
    View {
        /// Its buffer's position among the function's arguments.
        argument: usize,
        /// The view's MLIR type.
        ty: String,
        /// The offset of its first element in the buffer.
        offset: i64,
        /// Its sizes.
        sizes: Vec<i64>,
        /// Its strides.
        strides: Vec<i64>,
    },
    /// A constant (an index or a number), as MLIR prints it.
    Constant {
        /// Its value.
        value: String,
        /// Its MLIR type.
        ty: String,
    },
}

impl Launch {
    /// The launch as JSON: `kernel`, `grid`, `block`, `shared_bytes`, `params` (each
    /// `{"argument": i, "type": ...}` or `{"constant": ..., "type": ...}`).
    pub fn to_json(&self) -> Json {
        let params: Vec<Json> = self
            .params
            .iter()
            .map(|p| match p {
                Param::Argument { argument, ty, .. } => {
                    json!({"argument": argument, "type": ty})
                }
                Param::View {
                    argument,
                    ty,
                    offset,
                    sizes,
                    strides,
                } => json!({"argument": argument, "type": ty, "offset": offset,
                            "sizes": sizes, "strides": strides}),
                Param::Constant { value, ty } => json!({"constant": value, "type": ty}),
            })
            .collect();
        json!({
            "kernel": self.kernel,
            "grid": self.grid,
            "block": self.block,
            "shared_bytes": self.shared_bytes,
            "params": params,
        })
    }
}

/// The launch manifest of a GPU payload ([`crate::gpu_payload`]): `function` (its
/// name), `arguments` (the MLIR types of its arguments, the buffers a runner passes:
/// inputs, then the result) and `launches` (each [`Launch::to_json`], in the order the
/// function makes them).
pub fn payload_manifest(payload: &Payload) -> Result<Json, Error> {
    Ok(kernels_and_launches(payload)?.manifest(payload))
}

/// The launches of a GPU payload, in the order its function makes them.
pub fn payload_launches(payload: &Payload) -> Result<Vec<Launch>, Error> {
    Ok(kernels_and_launches(payload)?.launches)
}

/// What a GPU payload compiles to: its kernels' PTX, its launches and its function's
/// arguments.
pub(super) struct Lowered {
    pub(super) kernels: Vec<Ptx>,
    pub(super) launches: Vec<Launch>,
    /// The MLIR types of the function's arguments.
    pub(super) arguments: Vec<String>,
}

impl Lowered {
    /// The launch manifest ([`payload_manifest`]).
    pub(super) fn manifest(&self, payload: &Payload) -> Json {
        json!({
            "function": payload.name,
            "arguments": self.arguments,
            "launches": self.launches.iter().map(Launch::to_json).collect::<Vec<_>>(),
        })
    }
}

/// The PTX, the launches, and the MLIR types of the payload function's arguments.
pub(super) fn kernels_and_launches(payload: &Payload) -> Result<Lowered, Error> {
    let (context, messages) = context();
    let mut module = transformed_payload(&context, payload, &messages)?;
    let kernels = serialize(&context, &mut module, &messages)?;
    let mut arguments = Vec::new();
    let mut launches = Vec::new();
    let mut pending: Vec<OperationRef> = Vec::new();
    let mut next = module.body().first_operation();
    while let Some(op) = next {
        pending.push(op);
        next = op.next_in_block();
    }
    // Depth first, in order: the operations of each region pushed in reverse.
    pending.reverse();
    while let Some(op) = pending.pop() {
        let name = op.name();
        let name = name.as_string_ref().as_str().unwrap_or_default();
        if name == "func.func" && arguments.is_empty() {
            if let Some(block) = op.region(0).ok().and_then(|r| r.first_block()) {
                arguments = (0..block.argument_count())
                    .filter_map(|k| block.argument(k).ok())
                    .map(|a| a.r#type().to_string())
                    .collect();
            }
        }
        if name == "gpu.launch_func" {
            launches.push(launch(op)?);
            continue;
        }
        let mut inner = Vec::new();
        for r in 0..op.region_count() {
            let Ok(region) = op.region(r) else { continue };
            let mut block = region.first_block();
            while let Some(b) = block {
                let mut o = b.first_operation();
                while let Some(x) = o {
                    inner.push(x);
                    o = x.next_in_block();
                }
                block = b.next_in_region();
            }
        }
        pending.extend(inner.into_iter().rev());
    }
    Ok(Lowered {
        kernels,
        launches,
        arguments,
    })
}

/// What a `gpu.launch_func` launches, from its operands (`operandSegmentSizes`: async
/// dependencies, grid x y z, block x y z, cluster x y z, dynamic shared memory, the
/// kernel's operands, an async object).
fn launch(op: OperationRef) -> Result<Launch, Error> {
    let bad = |what: &str| Error::mlir(Stage::Ptx, format!("a gpu.launch_func {what}"));
    let segments = op
        .attribute("operandSegmentSizes")
        .ok()
        .and_then(|a| DenseI32ArrayAttribute::try_from(a).ok())
        .ok_or_else(|| bad("without operand segments"))?;
    let sizes: Vec<usize> = (0..segments.len())
        .map(|k| segments.element(k).map(|n| n.max(0) as usize))
        .collect::<Result<_, _>>()
        .map_err(|e| bad(&e.to_string()))?;
    if sizes.len() < 12 {
        return Err(bad("of an unknown form"));
    }
    let start = |segment: usize| sizes[..segment].iter().sum::<usize>();
    let operand = |k: usize| op.operand(k).map_err(|e| bad(&e.to_string()));
    let number = |k: usize| -> Result<i64, Error> {
        constant(operand(k)?)
            .and_then(|(v, _)| v.parse().ok())
            .ok_or_else(|| bad("whose sizes are not constants"))
    };
    let three = |segment: usize| -> Result<[i64; 3], Error> {
        let s = start(segment);
        Ok([number(s)?, number(s + 1)?, number(s + 2)?])
    };
    let shared_bytes = match sizes[10] {
        0 => 0,
        _ => number(start(10))?,
    };
    let params = (start(11)..start(11) + sizes[11])
        .map(|k| {
            let value = operand(k)?;
            let ty = value.r#type().to_string();
            if let Ok(argument) = BlockArgument::try_from(value) {
                return Ok(Param::Argument {
                    argument: argument.argument_number(),
                    ty,
                    rank: MemRefType::try_from(value.r#type()).ok().map(|m| m.rank()),
                });
            }
            if let Some(view) = argument_view(value, &ty) {
                return Ok(view);
            }
            let (value, _) = constant(value).ok_or_else(|| bad("with a computed operand"))?;
            Ok(Param::Constant { value, ty })
        })
        .collect::<Result<_, Error>>()?;
    Ok(Launch {
        kernel: op
            .attribute("kernel")
            .map(|a| a.to_string())
            .unwrap_or_default(),
        grid: three(1)?,
        block: three(4)?,
        shared_bytes,
        params,
    })
}

/// `v` as a view of a function argument, where a `memref.reinterpret_cast` of the
/// argument with constant offset, sizes and strides defines it.
fn argument_view(v: Value, ty: &str) -> Option<Param> {
    let owner = OperationResult::try_from(v).ok()?.owner();
    if owner.name().as_string_ref().as_str() != Ok("memref.reinterpret_cast")
        || owner.operand_count() != 1
    {
        return None;
    }
    let argument = BlockArgument::try_from(owner.operand(0).ok()?).ok()?;
    let array = |name: &str| -> Option<Vec<i64>> {
        let a = DenseI64ArrayAttribute::try_from(owner.attribute(name).ok()?).ok()?;
        let values: Vec<i64> = (0..a.len())
            .map(|k| a.element(k))
            .collect::<Result<_, _>>()
            .ok()?;
        // (A dynamic one is `i64::MIN`.)
        values.iter().all(|x| *x != i64::MIN).then_some(values)
    };
    let [offset] = array("static_offsets")?[..] else {
        return None;
    };
    Some(Param::View {
        argument: argument.argument_number(),
        ty: ty.to_string(),
        offset,
        sizes: array("static_sizes")?,
        strides: array("static_strides")?,
    })
}

/// The value of `v` where an `arith.constant` defines it, as text (integers without
/// their type), and its type.
fn constant(v: Value) -> Option<(String, String)> {
    let result = OperationResult::try_from(v).ok()?;
    let owner = result.owner();
    if owner.name().as_string_ref().as_str() != Ok("arith.constant") {
        return None;
    }
    let attr = owner.attribute("value").ok()?;
    let text = match IntegerAttribute::try_from(attr) {
        Ok(i) => i.value().to_string(),
        Err(_) => attr.to_string(),
    };
    Some((text, v.r#type().to_string()))
}
