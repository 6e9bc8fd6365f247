//! The translations' operations ([`crate::ir`]) built in an MLIR context with
//! melior's builders: each block's arguments and each operation's results are values
//! that later operations (in the block or in regions inside it) take as operands by
//! name. Types and attributes are made by MLIR's constructors from their values
//! ([`crate::ir::Type`], [`crate::ir::Attr`]), each distinct one once; an operand no
//! value defines is an error naming it, as is an operation MLIR cannot build.

use super::mlir::{apply_script, lower_module, parse, parse_script, verified, Messages};
use crate::error::{Error, Stage};
use crate::ir::{self, Attr, Block as IrBlock, Op};
use crate::payload::Payload;
use melior::ir::attribute::{
    ArrayAttribute, BoolAttribute, DenseI32ArrayAttribute, DenseI64ArrayAttribute,
    DictionaryAttribute, FloatAttribute, IntegerAttribute, StridedLayoutAttribute, StringAttribute,
    TypeAttribute,
};
use melior::ir::operation::OperationBuilder;
use melior::ir::r#type::{FunctionType, IntegerType, MemRefType};
use melior::ir::{
    AffineExpr, AffineMap, Attribute, AttributeLike, Block, BlockLike, Identifier, Location,
    Module, Operation, Region, RegionLike, Type, TypeLike, Value, ValueLike,
};
use melior::Context;
use mlir_sys::MlirValue;
use std::collections::HashMap;

/// The builder's state: the context, the values in scope (innermost block last), and
/// the types and the attributes made from their text so far.
struct Builder<'c> {
    context: &'c Context,
    location: Location<'c>,
    scopes: Vec<HashMap<String, MlirValue>>,
    types: HashMap<ir::Type, Type<'c>>,
    parsed: HashMap<String, Attribute<'c>>,
    stage: Stage,
}

/// `module` (a `builtin.module` operation) built in `context` and verified; the
/// locations name `source` (`payload`, `transform`) and errors `stage`.
fn build_module<'c>(
    context: &'c Context,
    module: &Op,
    source: &str,
    stage: Stage,
    messages: &Messages,
) -> Result<Module<'c>, Error> {
    let mut b = Builder {
        context,
        location: Location::new(context, source, 0, 0),
        scopes: Vec::new(),
        types: HashMap::new(),
        parsed: HashMap::new(),
        stage,
    };
    let operation = b.operation(module)?;
    let module = Module::from_operation(operation)
        .ok_or_else(|| Error::mlir(stage, format!("the {source} is not one module")))?;
    verified(module, stage, source, messages)
}

/// The payload's module, verified: parsed from its text where one was given in place
/// of its operations ([`Payload::with_mlir`]), built from them otherwise.
pub(super) fn payload_module<'c>(
    context: &'c Context,
    payload: &Payload,
    messages: &Messages,
) -> Result<Module<'c>, Error> {
    match payload.given_mlir() {
        Some(text) => parse(context, text, messages),
        None => build_module(
            context,
            payload.module(),
            "payload",
            Stage::Verify,
            messages,
        ),
    }
}

/// The payload's Transform script (if it has one), verified: parsed from its text
/// where one was given ([`Payload::with_transform`]), built from its operations
/// otherwise.
fn script_module<'c>(
    context: &'c Context,
    payload: &Payload,
    messages: &Messages,
) -> Result<Option<Module<'c>>, Error> {
    match (payload.given_transform(), payload.script()) {
        (Some(Some(text)), _) => parse_script(context, text, messages).map(Some),
        (Some(None), _) | (None, None) => Ok(None),
        (None, Some(script)) => {
            build_module(context, script, "transform", Stage::Transform, messages).map(Some)
        }
    }
}

/// The payload's module with its Transform script (if any) applied.
pub(super) fn transformed_payload<'c>(
    context: &'c Context,
    payload: &Payload,
    messages: &Messages,
) -> Result<Module<'c>, Error> {
    let mut module = payload_module(context, payload, messages)?;
    if let Some(script) = script_module(context, payload, messages)? {
        apply_script(&mut module, &script, messages)?;
    }
    Ok(module)
}

/// The payload with its transform script applied, lowered to the LLVM dialect.
pub(super) fn lowered_payload<'c>(
    context: &'c Context,
    payload: &Payload,
    messages: &Messages,
) -> Result<Module<'c>, Error> {
    let mut module = transformed_payload(context, payload, messages)?;
    lower_module(context, &mut module, messages)?;
    Ok(module)
}

impl<'c> Builder<'c> {
    fn error(&self, what: String) -> Error {
        Error::mlir(self.stage, what)
    }

    fn ty(&mut self, t: &ir::Type) -> Result<Type<'c>, Error> {
        if let Some(made) = self.types.get(t) {
            return Ok(*made);
        }
        let c = self.context;
        let made = match t {
            ir::Type::Index => Type::index(c),
            ir::Type::Int(bits) => IntegerType::new(c, *bits).into(),
            ir::Type::F32 => Type::float32(c),
            ir::Type::F64 => Type::float64(c),
            ir::Type::Vector(shape, element) => {
                let shape: Vec<u64> = shape.iter().map(|&n| n.max(0) as u64).collect();
                Type::vector(&shape, self.ty(element)?)
            }
            ir::Type::MemRef(m) => {
                let element = self.ty(&m.element)?;
                // (A dynamic offset is MLIR's `ShapedType::kDynamic`, the smallest `i64`.)
                let layout = m.layout.as_ref().map(|l| {
                    let offset = l.offset.unwrap_or(i64::MIN);
                    StridedLayoutAttribute::new(c, offset, &l.strides).into()
                });
                let space = match m.space {
                    Some(space) => Some(self.parsed(&Attr::Space(space))?),
                    None => None,
                };
                MemRefType::new(element, &m.shape, layout, space).into()
            }
            ir::Type::Function(inputs, results) => {
                let inputs = inputs
                    .iter()
                    .map(|t| self.ty(t))
                    .collect::<Result<Vec<_>, _>>()?;
                let results = results
                    .iter()
                    .map(|t| self.ty(t))
                    .collect::<Result<Vec<_>, _>>()?;
                FunctionType::new(c, &inputs, &results).into()
            }
            // SAFETY: the context is alive while the builder is.
            ir::Type::AnyOp => unsafe {
                Type::from_raw(mlir_sys::mlirTransformAnyOpTypeGet(c.to_raw()))
            },
        };
        self.types.insert(t.clone(), made);
        Ok(made)
    }

    fn attribute(&mut self, a: &Attr) -> Result<Attribute<'c>, Error> {
        let c = self.context;
        Ok(match a {
            Attr::Unit => Attribute::unit(c),
            Attr::Bool(b) => BoolAttribute::new(c, *b).into(),
            Attr::Int(n, ty) => IntegerAttribute::new(self.ty(ty)?, *n).into(),
            Attr::Float(bits, ty) => {
                let value = match ty {
                    ir::Type::F32 => f64::from(f32::from_bits(*bits as u32)),
                    _ => f64::from_bits(*bits),
                };
                if value.is_nan() {
                    // (A NaN's payload is kept only by its text.)
                    return self.parsed(a);
                }
                FloatAttribute::new(c, self.ty(ty)?, value).into()
            }
            Attr::Splat(element, ty) => {
                let (ty, element) = (self.ty(ty)?, self.attribute(element)?);
                // SAFETY: both are of this context, alive while the builder is.
                unsafe {
                    Attribute::from_raw(mlir_sys::mlirDenseElementsAttrSplatGet(
                        ty.to_raw(),
                        element.to_raw(),
                    ))
                }
            }
            Attr::Str(s) => StringAttribute::new(c, s).into(),
            Attr::I64s(xs) => DenseI64ArrayAttribute::new(c, xs).into(),
            Attr::I32s(xs) => DenseI32ArrayAttribute::new(c, xs).into(),
            Attr::Bools(xs) => {
                let flags: Vec<std::os::raw::c_int> = xs.iter().map(|&b| b.into()).collect();
                // SAFETY: the values outlive the call, which copies them.
                unsafe {
                    Attribute::from_raw(mlir_sys::mlirDenseBoolArrayGet(
                        c.to_raw(),
                        flags.len() as isize,
                        flags.as_ptr(),
                    ))
                }
            }
            Attr::Ints(xs) => {
                let i64 = self.ty(&ir::Type::I64)?;
                let items: Vec<Attribute> = xs
                    .iter()
                    .map(|&n| IntegerAttribute::new(i64, n).into())
                    .collect();
                ArrayAttribute::new(c, &items).into()
            }
            Attr::Array(xs) => {
                let items = xs
                    .iter()
                    .map(|x| self.attribute(x))
                    .collect::<Result<Vec<_>, _>>()?;
                ArrayAttribute::new(c, &items).into()
            }
            Attr::Dict(entries) => {
                let mut items = Vec::new();
                for (k, v) in entries {
                    items.push((Identifier::new(c, k), self.attribute(v)?));
                }
                DictionaryAttribute::new(c, &items).into()
            }
            Attr::Type(ty) => TypeAttribute::new(self.ty(ty)?).into(),
            Attr::AffineMap { dims, results } => {
                let exprs: Vec<AffineExpr> = results
                    .iter()
                    .map(|e| {
                        e.terms
                            .iter()
                            .map(|&(d, k)| match k {
                                1 => AffineExpr::dim(c, d),
                                k => AffineExpr::dim(c, d) * AffineExpr::constant(c, k),
                            })
                            .chain(
                                (e.c != 0 || e.terms.is_empty())
                                    .then(|| AffineExpr::constant(c, e.c)),
                            )
                            .reduce(|sum, x| sum + x)
                            .unwrap_or_else(|| AffineExpr::constant(c, 0))
                    })
                    .collect();
                let map = AffineMap::new(c, *dims, 0, &exprs);
                // SAFETY: the map is of this context, alive while the builder is.
                unsafe { Attribute::from_raw(mlir_sys::mlirAffineMapAttrGet(map.to_raw())) }
            }
            Attr::Iterator { .. }
            | Attr::Contract
            | Attr::VectorOr
            | Attr::GpuMapping { .. }
            | Attr::Space(_) => self.parsed(a)?,
        })
    }

    /// `a` made from its text, once per module: a dialect's attribute that MLIR's C
    /// API has no constructor for (`linalg`'s iterator types, `arith`'s fast-math
    /// flags, `vector`'s combining kinds, `gpu`'s mappings and address spaces), or a
    /// NaN (whose payload only its text keeps).
    fn parsed(&mut self, a: &Attr) -> Result<Attribute<'c>, Error> {
        let text = a.to_string();
        if let Some(made) = self.parsed.get(&text) {
            return Ok(*made);
        }
        let made = Attribute::parse(self.context, &text)
            .ok_or_else(|| self.error(format!("the attribute `{text}` is not MLIR's")))?;
        self.parsed.insert(text, made);
        Ok(made)
    }

    fn value(&self, name: &str) -> Result<Value<'c, '_>, Error> {
        let raw = self
            .scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name))
            .ok_or_else(|| self.error(format!("the value `{name}` is not defined")))?;
        // SAFETY: the value is a block argument or an operation result of a block
        // being built, which is alive until the module (or the error) is returned.
        Ok(unsafe { Value::from_raw(*raw) })
    }

    fn operation(&mut self, op: &Op) -> Result<Operation<'c>, Error> {
        let mut regions = Vec::new();
        for region in &op.regions {
            let r = Region::new();
            if let Some(block) = region {
                r.append_block(self.block(block)?);
            }
            regions.push(r);
        }
        let mut results = Vec::new();
        for v in &op.results {
            results.push(self.ty(&v.ty)?);
        }
        let mut attributes = Vec::new();
        for (k, v) in op.properties.iter().chain(&op.attributes) {
            attributes.push((Identifier::new(self.context, k), self.attribute(v)?));
        }
        let operands = op
            .operands
            .iter()
            .map(|v| self.value(&v.name))
            .collect::<Result<Vec<_>, _>>()?;
        OperationBuilder::new(&op.name, self.location)
            .add_operands(&operands)
            .add_results(&results)
            .add_attributes(&attributes)
            .add_regions_vec(regions)
            .build()
            .map_err(|e| self.error(format!("`{}` cannot be built: {e}", op.name)))
    }

    fn block(&mut self, block: &IrBlock) -> Result<Block<'c>, Error> {
        let mut arguments = Vec::new();
        for v in &block.arguments {
            arguments.push((self.ty(&v.ty)?, self.location));
        }
        let b = Block::new(&arguments);
        let mut scope = HashMap::new();
        for (k, v) in block.arguments.iter().enumerate() {
            let name = &v.name;
            let arg = b
                .argument(k)
                .map_err(|e| self.error(format!("block argument {k}: {e}")))?;
            scope.insert(name.clone(), arg.to_raw());
        }
        self.scopes.push(scope);
        let built = self.ops(&b, &block.ops);
        self.scopes.pop();
        built.map(|()| b)
    }

    fn ops(&mut self, b: &Block<'c>, ops: &[Op]) -> Result<(), Error> {
        for op in ops {
            let built = b.append_operation(self.operation(op)?);
            for (k, v) in op.results.iter().enumerate() {
                let name = &v.name;
                let result = built
                    .result(k)
                    .map_err(|e| self.error(format!("result {k} of `{}`: {e}", op.name)))?;
                if let Some(scope) = self.scopes.last_mut() {
                    scope.insert(name.clone(), result.to_raw());
                }
            }
        }
        Ok(())
    }
}

/// The payload's module as MLIR prints it (each operation in its custom form), and
/// its Transform script (if any) too: what `elevate compile --emit payload` and
/// `--emit transform` show.
pub fn printed(payload: &Payload) -> Result<(String, Option<String>), Error> {
    let (context, messages) = super::mlir::context();
    let module = payload_module(&context, payload, &messages)?;
    let script = script_module(&context, payload, &messages)?;
    Ok((
        module.as_operation().to_string(),
        script.map(|s| s.as_operation().to_string()),
    ))
}
