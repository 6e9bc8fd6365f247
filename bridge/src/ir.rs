//! MLIR operations as values: what the translations build. An [`Op`] is an
//! operation's name, its operands and results (each a name and a type), its inherent
//! attributes (properties) and discardable ones, and its regions. The JIT builds them
//! in an MLIR context with melior's builders (`jit::build`); without MLIR they print
//! as MLIR's generic form, which any MLIR tool reads.
//!
//! Types and attribute values are MLIR's own syntax (`memref<4x8xf32>`,
//! `array<i64: 1, 0>`): small, context-free texts that MLIR parses one by one.

use std::fmt::Write;

/// The entry point of a transform script: the `transform.named_sequence` applied to
/// the payload module.
pub const TRANSFORM_ENTRY: &str = "__transform_main";

/// One operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    pub(crate) name: String,
    /// The operands: each value's name (`%x`) and type.
    pub(crate) operands: Vec<(String, String)>,
    /// The results: each value's name and type.
    pub(crate) results: Vec<(String, String)>,
    /// The inherent attributes: name and value (`<{...}>` in the generic form).
    pub(crate) properties: Vec<(String, String)>,
    /// The discardable attributes (such as the kernel numbers the script matches).
    pub(crate) attributes: Vec<(String, String)>,
    /// The regions, each one block or empty.
    pub(crate) regions: Vec<Option<Block>>,
}

/// A block: its arguments (name and type) and its operations.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Block {
    pub(crate) arguments: Vec<(String, String)>,
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
                let contract = (
                    "fastmath".to_string(),
                    "#arith.fastmath<contract>".to_string(),
                );
                op.properties.retain(|(name, _)| name != "fastmath");
                op.properties.push(contract);
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
    pub(crate) fn operand(mut self, value: impl Into<String>, ty: impl Into<String>) -> Op {
        self.operands.push((value.into(), ty.into()));
        self
    }

    /// With operands `values`, all of type `ty`.
    pub(crate) fn operands_of(mut self, values: &[String], ty: &str) -> Op {
        for v in values {
            self.operands.push((v.clone(), ty.to_string()));
        }
        self
    }

    /// With one more result.
    pub(crate) fn result(mut self, value: impl Into<String>, ty: impl Into<String>) -> Op {
        self.results.push((value.into(), ty.into()));
        self
    }

    /// With one more result, to be named where the operation is placed
    /// ([`Op::named`]).
    pub(crate) fn returns(self, ty: impl Into<String>) -> Op {
        self.result(String::new(), ty)
    }

    /// The operation with its first result named `value`.
    pub(crate) fn named(mut self, value: &str) -> Op {
        if let Some(r) = self.results.first_mut() {
            r.0 = value.to_string();
        }
        self
    }

    /// With one more inherent attribute.
    pub(crate) fn prop(mut self, name: &str, value: impl Into<String>) -> Op {
        self.properties.push((name.to_string(), value.into()));
        self
    }

    /// With one more discardable attribute.
    pub(crate) fn attr(mut self, name: &str, value: impl Into<String>) -> Op {
        self.attributes.push((name.to_string(), value.into()));
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
            let names: Vec<&str> = self.results.iter().map(|(n, _)| n.as_str()).collect();
            let _ = write!(out, "{} = ", names.join(", "));
        }
        let operands: Vec<&str> = self.operands.iter().map(|(n, _)| n.as_str()).collect();
        let _ = write!(out, "\"{}\"({})", self.name, operands.join(", "));
        if !self.properties.is_empty() {
            let _ = write!(out, " <{{{}}}>", dictionary(&self.properties));
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
            let _ = write!(out, " {{{}}}", dictionary(&self.attributes));
        }
        let types = |vs: &[(String, String)]| {
            vs.iter()
                .map(|(_, t)| t.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
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
    pub(crate) fn new(arguments: Vec<(String, String)>, ops: Vec<Op>) -> Block {
        Block { arguments, ops }
    }

    fn print(&self, out: &mut String, indent: usize) {
        if !self.arguments.is_empty() {
            let args: Vec<String> = self
                .arguments
                .iter()
                .map(|(n, t)| format!("{n}: {t}"))
                .collect();
            let _ = writeln!(out, "{}^bb0({}):", " ".repeat(indent), args.join(", "));
        }
        for op in &self.ops {
            op.print(out, indent + 2);
        }
    }
}

/// `a = 1, b` from attribute names and values (a unit attribute, `unit`, by its name
/// alone).
fn dictionary(entries: &[(String, String)]) -> String {
    entries
        .iter()
        .map(|(k, v)| match v.as_str() {
            "unit" => k.clone(),
            _ => format!("{k} = {v}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A module of `ops`, with discardable `attributes`.
pub(crate) fn module(ops: Vec<Op>, attributes: &[(&str, &str)]) -> Op {
    let mut m = Op::new("builtin.module").region(Block::new(Vec::new(), ops));
    for (k, v) in attributes {
        m = m.attr(k, *v);
    }
    m
}

/// `func.func @name(arguments) attributes {llvm.emit_c_interface}` with body `ops`,
/// then `func.return`.
pub(crate) fn function(name: &str, arguments: Vec<(String, String)>, mut ops: Vec<Op>) -> Op {
    let types: Vec<&str> = arguments.iter().map(|(_, t)| t.as_str()).collect();
    ops.push(Op::new("func.return"));
    Op::new("func.func")
        .prop("function_type", format!("({}) -> ()", types.join(", ")))
        .prop("sym_name", format!("\"{name}\""))
        .attr("llvm.emit_c_interface", "unit")
        .region(Block::new(arguments, ops))
}

/// A string attribute's text: `"text"`, quoted and escaped.
pub(crate) fn string(text: &str) -> String {
    format!("{text:?}")
}

/// `array<i64: 1, 2>`
pub(crate) fn i64_array(xs: &[i64]) -> String {
    let items: Vec<String> = xs.iter().map(|x| x.to_string()).collect();
    if items.is_empty() {
        "array<i64>".to_string()
    } else {
        format!("array<i64: {}>", items.join(", "))
    }
}

/// `array<i32: 1, 2>` (operand segment sizes).
pub(crate) fn segments(xs: &[usize]) -> String {
    let items: Vec<String> = xs.iter().map(|x| x.to_string()).collect();
    format!("array<i32: {}>", items.join(", "))
}

/// `arith.constant` of `value` (its text) and type `ty`.
pub(crate) fn constant(value: impl std::fmt::Display, ty: &str) -> Op {
    let value = match ty {
        "i1" => format!("{value}"),
        _ => format!("{value} : {ty}"),
    };
    Op::new("arith.constant").prop("value", value).returns(ty)
}

/// `arith.constant` of type `index`.
pub(crate) fn index_constant(k: i64) -> Op {
    constant(k, "index")
}

/// An operation whose operands and result all have type `ty` (arithmetic).
pub(crate) fn same(name: &str, operands: &[&str], ty: &str) -> Op {
    let mut op = Op::new(name);
    for x in operands {
        op = op.operand(*x, ty);
    }
    op.returns(ty)
}

/// A conversion of `x` from type `from` to `to`.
pub(crate) fn cast(name: &str, x: &str, from: &str, to: &str) -> Op {
    Op::new(name).operand(x, from).returns(to)
}

/// The `i1` type (or vector of them) of a comparison of values of type `ty`.
pub(crate) fn flags_of(ty: &str) -> String {
    match ty.strip_prefix("vector<") {
        Some(rest) => match rest.rsplit_once('x') {
            Some((shape, _)) => format!("vector<{shape}xi1>"),
            None => "i1".to_string(),
        },
        None => "i1".to_string(),
    }
}

/// `arith.cmpi` (`float` false) or `arith.cmpf` of `x` and `y` of type `ty` with
/// `predicate` (`slt`, `olt`, ...).
pub(crate) fn compare(float: bool, predicate: &str, x: &str, y: &str, ty: &str) -> Op {
    let (name, code) = if float {
        ("arith.cmpf", float_predicate(predicate))
    } else {
        ("arith.cmpi", integer_predicate(predicate))
    };
    Op::new(name)
        .operand(x, ty)
        .operand(y, ty)
        .prop("predicate", format!("{code} : i64"))
        .returns(flags_of(ty))
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
pub(crate) fn select(c: &str, x: &str, y: &str, ty: &str) -> Op {
    select_by(c, &flags_of(ty), x, y, ty)
}

/// `arith.select` with a condition `c` of type `flags` (`i1` chooses whole vectors).
pub(crate) fn select_by(c: &str, flags: &str, x: &str, y: &str, ty: &str) -> Op {
    Op::new("arith.select")
        .operand(c, flags)
        .operand(x, ty)
        .operand(y, ty)
        .returns(ty)
}

/// `memref.alloc` of type `ty`, aligned to 64 bytes.
pub(crate) fn alloc(name: &str, ty: &str) -> Op {
    Op::new("memref.alloc")
        .prop("alignment", "64 : i64")
        .prop("operandSegmentSizes", segments(&[0, 0]))
        .result(name, ty)
}

/// `memref.dealloc` of `name` of type `ty`.
pub(crate) fn dealloc(name: &str, ty: &str) -> Op {
    Op::new("memref.dealloc").operand(name, ty)
}

/// `memref.load` of `buffer` (of type `ty`, elements `elem`) at `indices`.
pub(crate) fn load(buffer: &str, ty: &str, indices: &[String], elem: &str) -> Op {
    Op::new("memref.load")
        .operand(buffer, ty)
        .operands_of(indices, "index")
        .returns(elem)
}

/// `scf.yield` of `values` (name and type).
pub(crate) fn yield_values(name: &str, values: Vec<(String, String)>) -> Op {
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
        let add = same("arith.addf", &["%a", "%b"], "f32").named("%c");
        assert_eq!(
            add.text(0),
            "%c = \"arith.addf\"(%a, %b) : (f32, f32) -> (f32)\n"
        );
        let lt = compare(false, "slt", "%i", "%n", "index").named("%p");
        assert!(
            lt.text(0).contains("<{predicate = 2 : i64}>"),
            "{}",
            lt.text(0)
        );
        assert_eq!(flags_of("vector<8xf32>"), "vector<8xi1>");
        let f = function("f", vec![("%x".into(), "f32".into())], Vec::new());
        let text = f.text(0);
        assert!(text.contains("sym_name = \"f\""), "{text}");
        assert!(text.contains("{llvm.emit_c_interface}"), "{text}");
        assert!(text.contains("^bb0(%x: f32):"), "{text}");
    }
}
