//! A checked RISE file: its typed definitions and its entry point.

use crate::error::{Error, ErrorKind};
use crate::infer::{infer_program, TypedDefinition};
use crate::instance::Instance;
use crate::interp::{evaluate, NatEnv};
use crate::io::{bind_inputs, random_inputs, signature, Signature};
use crate::nat::NatVar;
use crate::parser::parse_program;
use crate::value::Value;

/// A parsed and type-checked file.
#[derive(Debug, Clone)]
pub struct Program {
    /// Every definition, in file order.
    pub defs: Vec<TypedDefinition>,
    /// The index of the entry point.
    pub entry: usize,
}

impl Program {
    /// Parses and type-checks `source`; the entry point is `entry` or the last
    /// definition.
    pub fn load(source: &str, entry: Option<&str>) -> Result<Program, Error> {
        let defs = infer_program(&parse_program(source)?)?;
        let entry = match entry {
            None => defs.len() - 1,
            Some(name) => defs.iter().position(|d| d.name == name).ok_or_else(|| {
                Error::unlocated(
                    ErrorKind::UnknownName,
                    format!(
                        "no definition named `{name}` (the file defines {})",
                        defs.iter()
                            .map(|d| format!("`{}`", d.name))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?,
        };
        Ok(Program { defs, entry })
    }

    /// Parses and type-checks `source`; its last definition is the entry point.
    pub fn parse(source: &str) -> Result<Program, Error> {
        Program::load(source, None)
    }

    /// The entry point with its sizes fixed: `sizes` names each nat parameter's value
    /// (`&[("n", 1024)]`; empty for a program without any). A missing or negative size,
    /// or one the program's constraints reject, is a located error.
    pub fn at(&self, sizes: &[(&str, i64)]) -> Result<Instance, Error> {
        let nats: NatEnv = sizes
            .iter()
            .map(|&(name, n)| (NatVar::Named(name.into()), n))
            .collect();
        Ok(Instance::new(
            self.entry().name.clone(),
            self.instantiate(&nats)?,
        ))
    }

    /// The entry point.
    pub fn entry(&self) -> &TypedDefinition {
        &self.defs[self.entry]
    }

    /// The entry point's nat and value parameters.
    pub fn signature(&self) -> Signature {
        signature(&self.entry().term)
    }

    /// `NAME : TYPE` for every definition, the entry point last.
    pub fn summary(&self) -> Vec<String> {
        let others = self
            .defs
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != self.entry);
        others
            .map(|(_, d)| d)
            .chain(std::iter::once(self.entry()))
            .map(|d| format!("{} : {}", d.name, d.ty))
            .collect()
    }

    /// Runs the entry point on JSON inputs (nat parameters from their shapes).
    pub fn eval_json(&self, inputs: &[serde_json::Value]) -> Result<Value, Error> {
        let (nats, values) = bind_inputs(&self.signature(), inputs)?;
        evaluate(&self.entry().term, &nats, &values)
    }

    /// Runs the entry point on reproducible random inputs with the given sizes.
    pub fn eval_random(&self, nats: &NatEnv, seed: u64) -> Result<Value, Error> {
        let values = random_inputs(&self.signature(), nats, seed)?;
        evaluate(&self.entry().term, nats, &values)
    }
}
