//! Scalar operations both translations write: a literal's constant, binary
//! arithmetic and comparisons.

use crate::ir::{self, Attr, Op, Type};
use elevate_rise::prim::Prim;
use elevate_rise::term::Literal;

/// A literal as a constant's value (floats by their bits: exact).
pub(crate) fn literal_attr(l: Literal) -> Attr {
    match l {
        Literal::Bool(b) => Attr::Bool(b),
        Literal::I32(v) => Attr::Int(v.into(), Type::I32),
        Literal::I64(v) => Attr::Int(v, Type::I64),
        Literal::F32(v) => Attr::Float(v.to_bits().into(), Type::F32),
        Literal::F64(v) => Attr::Float(v.to_bits(), Type::F64),
    }
}

/// Whether `p` compares (its result is a boolean).
pub(crate) fn is_comparison(p: Prim) -> bool {
    matches!(p, Prim::Lt | Prim::Gt | Prim::Equal)
}

/// The MLIR operation computing binary primitive `p` on `x` and `y` of type `t`
/// (scalars or vectors of floats or integers), or `None` if `p` is not one.
pub(crate) fn binary_op(p: Prim, x: &str, y: &str, float: bool, t: &Type) -> Option<Op> {
    let name = match (p, float) {
        (Prim::Add, true) => "arith.addf",
        (Prim::Add, false) => "arith.addi",
        (Prim::Sub, true) => "arith.subf",
        (Prim::Sub, false) => "arith.subi",
        (Prim::Mul, true) => "arith.mulf",
        (Prim::Mul, false) => "arith.muli",
        (Prim::Div, true) => "arith.divf",
        (Prim::Div, false) => "arith.divsi",
        (Prim::Mod, true) => "arith.remf",
        (Prim::Mod, false) => "arith.remsi",
        (Prim::Max, true) => "arith.maxnumf",
        (Prim::Max, false) => "arith.maxsi",
        (Prim::Min, true) => "arith.minnumf",
        (Prim::Min, false) => "arith.minsi",
        (Prim::Lt | Prim::Gt | Prim::Equal, _) => {
            let predicate = match (p, float) {
                (Prim::Lt, true) => "olt",
                (Prim::Gt, true) => "ogt",
                (Prim::Equal, true) => "oeq",
                (Prim::Lt, false) => "slt",
                (Prim::Gt, false) => "sgt",
                _ => "eq",
            };
            return Some(ir::compare(float, predicate, x, y, t));
        }
        _ => return None,
    };
    Some(ir::same(name, &[x, y], t))
}
