//! Scalar operations both translations write: a literal's constant, binary
//! arithmetic and comparisons, casts.

use crate::ir::{self, Attr, Op, Type};
use elevate_rise::prim::Prim;
use elevate_rise::term::Literal;
use elevate_rise::types::Scalar;

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

/// The float `v` as a constant of float type `ty`.
fn float(v: f64, ty: &Type) -> Attr {
    match ty {
        Type::F32 => Attr::Float((v as f32).to_bits().into(), Type::F32),
        _ => Attr::Float(v.to_bits(), Type::F64),
    }
}

/// `x` cast from `from` to `to` by the operations `op` adds (each returning its
/// result's name), as the interpreter casts: through `f64` for floats (an `i64`
/// becomes an `f32` by way of an `f64`), and a float becomes an integer by saturating
/// to the integer's range (NaN is 0), never by LLVM's conversion, which has no value
/// out of range.
pub(crate) fn cast(op: &mut dyn FnMut(Op) -> String, x: &str, from: Scalar, to: Scalar) -> String {
    use Scalar::*;
    let (f, t) = (&Type::scalar(from), &Type::scalar(to));
    match (from.is_float(), to.is_float()) {
        _ if from == to => x.to_string(),
        (false, true) if from == Bool => op(ir::cast("arith.uitofp", x, f, t)),
        (false, true) if from == I64 && to == F32 => {
            let wide = op(ir::cast("arith.sitofp", x, &Type::I64, &Type::F64));
            op(ir::cast("arith.truncf", &wide, &Type::F64, &Type::F32))
        }
        (false, true) => op(ir::cast("arith.sitofp", x, f, t)),
        (true, false) if to == Bool => {
            let zero = op(ir::constant(float(0.0, f)));
            op(ir::compare(true, "une", x, &zero, f))
        }
        (true, false) => {
            let wide = saturated_i64(op, x, from);
            match to {
                I32 => {
                    // Saturated to i32's range too, as Rust's `as` does.
                    let low = op(ir::int_constant(i32::MIN.into(), &Type::I64));
                    let high = op(ir::int_constant(i32::MAX.into(), &Type::I64));
                    let above = op(ir::same("arith.maxsi", &[&wide, &low], &Type::I64));
                    let within = op(ir::same("arith.minsi", &[&above, &high], &Type::I64));
                    op(ir::cast("arith.trunci", &within, &Type::I64, &Type::I32))
                }
                _ => wide,
            }
        }
        (true, true) if to == F64 => op(ir::cast("arith.extf", x, f, t)),
        (true, true) => op(ir::cast("arith.truncf", x, f, t)),
        (false, false) if to == Bool => {
            let zero = op(ir::int_constant(0, f));
            op(ir::compare(false, "ne", x, &zero, f))
        }
        (false, false) if from == Bool => op(ir::cast("arith.extui", x, f, t)),
        (false, false) if to == I64 => op(ir::cast("arith.extsi", x, f, t)),
        (false, false) => op(ir::cast("arith.trunci", x, f, t)),
    }
}

/// The float `x` as an `i64`, saturated (NaN is 0), as Rust's `as` converts.
fn saturated_i64(op: &mut dyn FnMut(Op) -> String, x: &str, from: Scalar) -> String {
    let x = match from {
        Scalar::F32 => op(ir::cast("arith.extf", x, &Type::F32, &Type::F64)),
        _ => x.to_string(),
    };
    // 2^63 and -2^63 are exact in f64; in between, the conversion is exact too.
    let high = op(ir::constant(float(2f64.powi(63), &Type::F64)));
    let low = op(ir::constant(float(-(2f64.powi(63)), &Type::F64)));
    let clamped = op(ir::same("arith.maximumf", &[&x, &low], &Type::F64));
    let in_range = op(ir::compare(true, "olt", &clamped, &high, &Type::F64));
    let converted = op(ir::cast("arith.fptosi", &clamped, &Type::F64, &Type::I64));
    let max = op(ir::int_constant(i64::MAX, &Type::I64));
    let saturated = op(ir::select(&in_range, &converted, &max, &Type::I64));
    let nan = op(ir::compare(true, "uno", &x, &x, &Type::F64));
    let zero = op(ir::int_constant(0, &Type::I64));
    op(ir::select(&nan, &zero, &saturated, &Type::I64))
}
