//! MLIR operations as values: what the translations build. An [`Op`] is an
//! operation's name, its operands and results (SSA [`Value`]s: a name and a [`Type`]),
//! its inherent attributes (properties) and discardable ones ([`Attr`]), and its
//! regions. Types and attributes are Rust values ([`types`], [`attr`]); the JIT builds
//! operations from them in an MLIR context with melior's builders (`jit::build`), and
//! without MLIR they print as MLIR's generic form, which any MLIR tool reads (what
//! `--emit` and the tests read).

pub mod attr;
pub mod types;

pub use attr::Attr;
pub use types::{MemRef, MemorySpace, Strided, Type};

use std::fmt::Write;

/// The entry point of a transform script: the `transform.named_sequence` applied to
/// the payload module.
pub const TRANSFORM_ENTRY: &str = "__transform_main";

/// An SSA value: its name (`%x`) and type.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// Its name, `%x` (empty until the operation defining it is placed).
    pub name: String,
    /// Its type.
    pub ty: Type,
}

impl Value {
    /// Value `name` of type `ty`.
    pub fn new(name: impl Into<String>, ty: Type) -> Value {
        Value {
            name: name.into(),
            ty,
        }
    }
}

/// One operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    pub(crate) name: String,
    /// The operands.
    pub(crate) operands: Vec<Value>,
    /// The results.
    pub(crate) results: Vec<Value>,
    /// The inherent attributes: name and value (`<{...}>` in the generic form).
    pub(crate) properties: Vec<(String, Attr)>,
    /// The discardable attributes (such as the kernel numbers the script matches).
    pub(crate) attributes: Vec<(String, Attr)>,
    /// The regions, each one block or empty.
    pub(crate) regions: Vec<Option<Block>>,
}

/// A block: its arguments and its operations.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Block {
    pub(crate) arguments: Vec<Value>,
    pub(crate) ops: Vec<Op>,
}

impl Op {
    /// Lets every float multiplication, addition and subtraction in `self` (at any
    /// depth) contract into fused multiply-adds (`fastmath<contract>`), as CUDA
    /// compiles by default: PTX's `mul.rn` and `add.rn` are never fused otherwise.
    pub(crate) fn allow_contraction(&mut self) {
        let mut pending = vec![self];
        while let Some(op) = pending.pop() {
            if matches!(op.name.as_str(), "arith.mulf" | "arith.addf" | "arith.subf") {
                op.properties.retain(|(name, _)| name != "fastmath");
                op.properties.push(("fastmath".to_string(), Attr::Contract));
            }
            for block in op.regions.iter_mut().flatten() {
                pending.extend(block.ops.iter_mut());
            }
        }
    }

    /// An operation named `name`, without operands, results, attributes or regions.
    pub(crate) fn new(name: impl Into<String>) -> Op {
        Op {
            name: name.into(),
            operands: Vec::new(),
            results: Vec::new(),
            properties: Vec::new(),
            attributes: Vec::new(),
            regions: Vec::new(),
        }
    }

    /// With one more operand.
    pub(crate) fn operand(mut self, value: impl Into<String>, ty: &Type) -> Op {
        self.operands.push(Value::new(value, ty.clone()));
        self
    }

    /// With one more operand, a value.
    pub(crate) fn operand_value(mut self, value: &Value) -> Op {
        self.operands.push(value.clone());
        self
    }

    /// With operands `values`.
    pub(crate) fn operand_values<'v>(mut self, values: impl IntoIterator<Item = &'v Value>) -> Op {
        self.operands.extend(values.into_iter().cloned());
        self
    }

    /// With operands `values`, all of type `ty`.
    pub(crate) fn operands_of(mut self, values: &[String], ty: &Type) -> Op {
        for v in values {
            self.operands.push(Value::new(v.clone(), ty.clone()));
        }
        self
    }

    /// With one more result.
    pub(crate) fn result(mut self, value: impl Into<String>, ty: &Type) -> Op {
        self.results.push(Value::new(value, ty.clone()));
        self
    }

    /// With one more result, to be named where the operation is placed
    /// ([`Op::named`]).
    pub(crate) fn returns(self, ty: &Type) -> Op {
        self.result(String::new(), ty)
    }

    /// The operation with its first result named `value`.
    pub(crate) fn named(mut self, value: &str) -> Op {
        if let Some(r) = self.results.first_mut() {
            r.name = value.to_string();
        }
        self
    }

    /// With one more inherent attribute.
    pub(crate) fn prop(mut self, name: &str, value: Attr) -> Op {
        self.properties.push((name.to_string(), value));
        self
    }

    /// With one more discardable attribute.
    pub(crate) fn attr(mut self, name: &str, value: Attr) -> Op {
        self.attributes.push((name.to_string(), value));
        self
    }

    /// With one more region, of block `b`.
    pub(crate) fn region(mut self, b: Block) -> Op {
        self.regions.push(Some(b));
        self
    }

    /// With one more region, empty.
    pub(crate) fn empty_region(mut self) -> Op {
        self.regions.push(None);
        self
    }

    /// The operation in MLIR's generic form, its lines indented by `indent` spaces.
    pub(crate) fn print(&self, out: &mut String, indent: usize) {
        let pad = " ".repeat(indent);
        out.push_str(&pad);
        if !self.results.is_empty() {
            let names: Vec<&str> = self.results.iter().map(|v| v.name.as_str()).collect();
            let _ = write!(out, "{} = ", names.join(", "));
        }
        let operands: Vec<&str> = self.operands.iter().map(|v| v.name.as_str()).collect();
        let _ = write!(out, "\"{}\"({})", self.name, operands.join(", "));
        if !self.properties.is_empty() {
            let _ = write!(out, " <{{{}}}>", attr::dictionary(&self.properties));
        }
        if !self.regions.is_empty() {
            out.push_str(" (");
            for (k, region) in self.regions.iter().enumerate() {
                out.push_str(if k == 0 { "{\n" } else { ", {\n" });
                if let Some(b) = region {
                    b.print(out, indent + 2);
                }
                let _ = write!(out, "{pad}}}");
            }
            out.push(')');
        }
        if !self.attributes.is_empty() {
            let _ = write!(out, " {{{}}}", attr::dictionary(&self.attributes));
        }
        let types = |vs: &[Value]| types::list(&vs.iter().map(|v| &v.ty).collect::<Vec<_>>());
        let _ = writeln!(
            out,
            " : ({}) -> ({})",
            types(&self.operands),
            types(&self.results)
        );
    }

    /// The operation in MLIR's generic form, its lines indented by `indent` spaces:
    /// `%c = "arith.addf"(%a, %b) : (f32, f32) -> (f32)`.
    pub fn text(&self, indent: usize) -> String {
        let mut out = String::new();
        self.print(&mut out, indent);
        out
    }
}

impl Block {
    /// A block of `arguments` and `ops`.
    pub(crate) fn new(arguments: Vec<Value>, ops: Vec<Op>) -> Block {
        Block { arguments, ops }
    }

    fn print(&self, out: &mut String, indent: usize) {
        if !self.arguments.is_empty() {
            let args: Vec<String> = self
                .arguments
                .iter()
                .map(|v| format!("{}: {}", v.name, v.ty))
                .collect();
            let _ = writeln!(out, "{}^bb0({}):", " ".repeat(indent), args.join(", "));
        }
        for op in &self.ops {
            op.print(out, indent + 2);
        }
    }
}

/// A module of `ops`, with discardable `attributes`.
pub(crate) fn module(ops: Vec<Op>, attributes: Vec<(&str, Attr)>) -> Op {
    let mut m = Op::new("builtin.module").region(Block::new(Vec::new(), ops));
    for (k, v) in attributes {
        m = m.attr(k, v);
    }
    m
}

/// `func.func @name(arguments) attributes {llvm.emit_c_interface}` with body `ops`,
/// then `func.return`.
pub(crate) fn function(name: &str, arguments: Vec<Value>, mut ops: Vec<Op>) -> Op {
    let types = arguments.iter().map(|v| v.ty.clone()).collect();
    ops.push(Op::new("func.return"));
    Op::new("func.func")
        .prop(
            "function_type",
            Attr::Type(Type::Function(types, Vec::new())),
        )
        .prop("sym_name", Attr::string(name))
        .attr("llvm.emit_c_interface", Attr::Unit)
        .region(Block::new(arguments, ops))
}

/// `arith.constant` of `value` (an integer, float or boolean attribute, whose type
/// is the result's).
pub(crate) fn constant(value: Attr) -> Op {
    let ty = match &value {
        Attr::Int(_, ty) | Attr::Float(_, ty) | Attr::Splat(_, ty) => ty.clone(),
        _ => Type::BOOL,
    };
    Op::new("arith.constant").prop("value", value).returns(&ty)
}

/// `arith.constant` of integer `k` of type `ty`.
pub(crate) fn int_constant(k: i64, ty: &Type) -> Op {
    match ty {
        Type::Int(1) => constant(Attr::Bool(k != 0)),
        _ => constant(Attr::Int(k, ty.clone())),
    }
}

/// `arith.constant` of type `index`.
pub(crate) fn index_constant(k: i64) -> Op {
    constant(Attr::Int(k, Type::Index))
}

/// An operation whose operands and result all have type `ty` (arithmetic).
pub(crate) fn same(name: &str, operands: &[&str], ty: &Type) -> Op {
    let mut op = Op::new(name);
    for x in operands {
        op = op.operand(*x, ty);
    }
    op.returns(ty)
}

/// A conversion of `x` from type `from` to `to`.
pub(crate) fn cast(name: &str, x: &str, from: &Type, to: &Type) -> Op {
    Op::new(name).operand(x, from).returns(to)
}

/// `arith.cmpi` (`float` false) or `arith.cmpf` of `x` and `y` of type `ty` with
/// `predicate` (`slt`, `olt`, ...).
pub(crate) fn compare(float: bool, predicate: &str, x: &str, y: &str, ty: &Type) -> Op {
    let (name, code) = if float {
        ("arith.cmpf", float_predicate(predicate))
    } else {
        ("arith.cmpi", integer_predicate(predicate))
    };
    Op::new(name)
        .operand(x, ty)
        .operand(y, ty)
        .prop("predicate", Attr::i64(code))
        .returns(&ty.flags())
}

fn integer_predicate(p: &str) -> i64 {
    let names = [
        "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
    ];
    names
        .iter()
        .position(|n| *n == p)
        .unwrap_or_else(|| unreachable!("no integer predicate `{p}`")) as i64
}

fn float_predicate(p: &str) -> i64 {
    let names = [
        "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult",
        "ule", "une", "uno", "true",
    ];
    names
        .iter()
        .position(|n| *n == p)
        .unwrap_or_else(|| unreachable!("no float predicate `{p}`")) as i64
}

/// `arith.select` of `x` where `c` holds and `y` elsewhere, values of type `ty`, lane
/// by lane for vectors.
pub(crate) fn select(c: &str, x: &str, y: &str, ty: &Type) -> Op {
    select_by(c, &ty.flags(), x, y, ty)
}

/// `arith.select` with a condition `c` of type `flags` (`i1` chooses whole vectors).
pub(crate) fn select_by(c: &str, flags: &Type, x: &str, y: &str, ty: &Type) -> Op {
    Op::new("arith.select")
        .operand(c, flags)
        .operand(x, ty)
        .operand(y, ty)
        .returns(ty)
}

/// `memref.alloc` of type `ty`, aligned to 64 bytes.
pub(crate) fn alloc(name: &str, ty: &Type) -> Op {
    Op::new("memref.alloc")
        .prop("alignment", Attr::i64(64))
        .prop("operandSegmentSizes", Attr::segments(&[0, 0]))
        .result(name, ty)
}

/// `memref.dealloc` of `name` of type `ty`.
pub(crate) fn dealloc(name: &str, ty: &Type) -> Op {
    Op::new("memref.dealloc").operand(name, ty)
}

/// `memref.load` of `buffer` (of type `ty`, elements `elem`) at `indices`.
pub(crate) fn load(buffer: &str, ty: &Type, indices: &[String], elem: &Type) -> Op {
    Op::new("memref.load")
        .operand(buffer, ty)
        .operands_of(indices, &Type::Index)
        .returns(elem)
}

/// `scf.yield` (or another terminator `name`) of `values`.
pub(crate) fn yield_values(name: &str, values: Vec<Value>) -> Op {
    Op {
        operands: values,
        ..Op::new(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_prints_in_the_generic_form() {
        let add = same("arith.addf", &["%a", "%b"], &Type::F32).named("%c");
        assert_eq!(
            add.text(0),
            "%c = \"arith.addf\"(%a, %b) : (f32, f32) -> (f32)\n"
        );
        let lt = compare(false, "slt", "%i", "%n", &Type::Index).named("%p");
        assert!(
            lt.text(0).contains("<{predicate = 2 : i64}>"),
            "{}",
            lt.text(0)
        );
        let f = function("f", vec![Value::new("%x", Type::F32)], Vec::new());
        let text = f.text(0);
        assert!(text.contains("sym_name = \"f\""), "{text}");
        assert!(text.contains("{llvm.emit_c_interface}"), "{text}");
        assert!(text.contains("^bb0(%x: f32):"), "{text}");
        assert!(text.contains("function_type = (f32) -> ()"), "{text}");
        let t = constant(Attr::Bool(true)).named("%t").text(0);
        assert_eq!(
            t,
            "%t = \"arith.constant\"() <{value = true}> : () -> (i1)\n"
        );
    }
}
