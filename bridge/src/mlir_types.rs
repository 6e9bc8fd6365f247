//! MLIR texts shared by both translations: scalar and memref types, constants,
//! binary arithmetic.

use crate::ir::{self, Op};
use elevate_rise::prim::Prim;
use elevate_rise::term::Literal;
use elevate_rise::types::Scalar;
use std::fmt::Write;

/// The MLIR type of a scalar.
pub(crate) fn mlir_scalar(s: Scalar) -> &'static str {
    match s {
        Scalar::Bool => "i1",
        Scalar::I32 => "i32",
        Scalar::I64 => "i64",
        Scalar::F32 => "f32",
        Scalar::F64 => "f64",
    }
}

/// `f32` or `vector<8xf32>`.
pub(crate) fn lane_type(s: Scalar, lanes: Option<i64>) -> String {
    match lanes {
        None => mlir_scalar(s).to_string(),
        Some(n) => format!("vector<{n}x{}>", mlir_scalar(s)),
    }
}

/// `memref<4x8xf32>`
pub(crate) fn memref_type(dims: &[i64], s: Scalar) -> String {
    let mut out = String::from("memref<");
    for d in dims {
        let _ = write!(out, "{d}x");
    }
    out.push_str(mlir_scalar(s));
    out.push('>');
    out
}

/// A literal as MLIR constant text, and its scalar type.
pub(crate) fn literal_text(l: Literal) -> (String, Scalar) {
    match l {
        Literal::Bool(b) => (b.to_string(), Scalar::Bool),
        Literal::I32(v) => (v.to_string(), Scalar::I32),
        Literal::I64(v) => (v.to_string(), Scalar::I64),
        // The bit pattern: exact, and MLIR reads it for float types.
        Literal::F32(v) => (format!("0x{:08X}", v.to_bits()), Scalar::F32),
        Literal::F64(v) => (format!("0x{:016X}", v.to_bits()), Scalar::F64),
    }
}

/// Whether `p` compares (its result is a boolean).
pub(crate) fn is_comparison(p: Prim) -> bool {
    matches!(p, Prim::Lt | Prim::Gt | Prim::Equal)
}

/// The MLIR operation computing binary primitive `p` on `x` and `y` of type `t`
/// (scalars or vectors of floats or integers), or `None` if `p` is not one.
pub(crate) fn binary_op(p: Prim, x: &str, y: &str, float: bool, t: &str) -> Option<Op> {
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
