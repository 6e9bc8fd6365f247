//! The translations' operations ([`crate::ir`]) built in an MLIR context with
//! melior's builders: each block's arguments and each operation's results are values
//! that later operations (in the block or in regions inside it) take as operands by
//! name. Types and attribute values are parsed one by one; a text MLIR does not read
//! is an error naming it, as is an operand no value defines.

use super::mlir::{apply_script, lower_module, parse, parse_script, verified, Messages};
use crate::error::{Error, Stage};
use crate::ir::{Block as IrBlock, Op};
use crate::payload::Payload;
use melior::ir::operation::OperationBuilder;
use melior::ir::{
    Attribute, Block, BlockLike, Identifier, Location, Module, Operation, Region, RegionLike, Type,
    Value, ValueLike,
};
use melior::Context;
use mlir_sys::MlirValue;
use std::collections::HashMap;

/// The builder's state: the context, the values in scope (innermost block last), and
/// the types already parsed.
struct Builder<'c> {
    context: &'c Context,
    location: Location<'c>,
    scopes: Vec<HashMap<String, MlirValue>>,
    types: HashMap<String, Type<'c>>,
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
        stage,
    };
    let operation = b.operation(module)?;
    let module = Module::from_operation(operation)
        .ok_or_else(|| Error::mlir(stage, format!("the {source} is not one module")))?;
    verified(module, stage, source, messages)
}

/// The payload's module, verified: built from its operations where its text is
/// still theirs, parsed otherwise.
pub(super) fn payload_module<'c>(
    context: &'c Context,
    payload: &Payload,
    messages: &Messages,
) -> Result<Module<'c>, Error> {
    match &payload.operations.module {
        Some(module) if payload.operations.module_prints_as(&payload.mlir) => {
            build_module(context, module, "payload", Stage::Verify, messages)
        }
        _ => parse(context, &payload.mlir, messages),
    }
}

/// The payload's Transform script (if it has one), verified: built from its
/// operations where its text is still theirs, parsed otherwise.
fn script_module<'c>(
    context: &'c Context,
    payload: &Payload,
    messages: &Messages,
) -> Result<Option<Module<'c>>, Error> {
    let Some(text) = &payload.transform else {
        return Ok(None);
    };
    match &payload.operations.script {
        Some(script) if payload.operations.script_prints_as(text) => {
            build_module(context, script, "transform", Stage::Transform, messages)
        }
        _ => parse_script(context, text, messages),
    }
    .map(Some)
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

    fn ty(&mut self, text: &str) -> Result<Type<'c>, Error> {
        if let Some(t) = self.types.get(text) {
            return Ok(*t);
        }
        let t = Type::parse(self.context, text)
            .ok_or_else(|| self.error(format!("the type `{text}` does not parse")))?;
        self.types.insert(text.to_string(), t);
        Ok(t)
    }

    fn attribute(&self, name: &str, text: &str) -> Result<(Identifier<'c>, Attribute<'c>), Error> {
        let value = Attribute::parse(self.context, text)
            .ok_or_else(|| self.error(format!("the attribute `{name} = {text}` does not parse")))?;
        Ok((Identifier::new(self.context, name), value))
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
        for (_, t) in &op.results {
            results.push(self.ty(t)?);
        }
        let mut attributes = Vec::new();
        for (k, v) in op.properties.iter().chain(&op.attributes) {
            attributes.push(self.attribute(k, v)?);
        }
        let operands = op
            .operands
            .iter()
            .map(|(name, _)| self.value(name))
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
        for (_, t) in &block.arguments {
            arguments.push((self.ty(t)?, self.location));
        }
        let b = Block::new(&arguments);
        let mut scope = HashMap::new();
        for (k, (name, _)) in block.arguments.iter().enumerate() {
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
            for (k, (name, _)) in op.results.iter().enumerate() {
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
