//! Arithmetic, comparison and conversion of scalars and vectors.
//!
//! Integers are two's complement: `add`, `sub`, `mul`, `neg` and `abs` wrap on
//! overflow, as the compiled code's `arith.addi`, `arith.subi`, `arith.muli` do.
//! `div` and `mod` truncate toward zero; a zero divisor and `MIN / -1` (whose quotient
//! does not fit) are evaluation errors, as they are traps in compiled code;
//! `MIN % -1` is 0, its exact value. Floats follow IEEE 754 (`x / 0.0` is infinite or NaN).
//! `cast` from a float to an integer rounds toward zero and saturates, NaN giving 0;
//! from `i64` to `i32` it keeps the low 32 bits.

use crate::prim::Prim;
use crate::types::Scalar;
use crate::value::{EvalError, EvalErrorKind, Value};

/// `div` or `mod` of two integers of type `ty` (as `i64`), checked.
fn divide(p: Prim, x: i64, y: i64, ty: Scalar) -> Result<i64, EvalError> {
    let op = if p == Prim::Div { '/' } else { '%' };
    let min = if ty == Scalar::I32 {
        i64::from(i32::MIN)
    } else {
        i64::MIN
    };
    if y == 0 {
        return Err(EvalErrorKind::DivisionByZero { op, lhs: x, ty }.into());
    }
    if y == -1 && x == min {
        if p == Prim::Mod {
            return Ok(0);
        }
        return Err(EvalErrorKind::DivisionOverflow { op, lhs: x, ty }.into());
    }
    Ok(if p == Prim::Div { x / y } else { x % y })
}

/// `add`, `sub`, `mul`, `div`, `mod`, `max`, `min`.
pub(super) fn arith(p: Prim, a: &Value, b: &Value) -> Result<Value, EvalError> {
    use Value::*;
    macro_rules! int {
        ($x:expr, $y:expr, $t:ty, $scalar:expr) => {
            match p {
                Prim::Add => $x.wrapping_add($y),
                Prim::Sub => $x.wrapping_sub($y),
                Prim::Mul => $x.wrapping_mul($y),
                // In range: the only quotient that does not fit is refused.
                Prim::Div | Prim::Mod => divide(p, $x as i64, $y as i64, $scalar)? as $t,
                Prim::Max => $x.max($y),
                Prim::Min => $x.min($y),
                _ => return Err(format!("{} is not arithmetic", p.name()).into()),
            }
        };
    }
    macro_rules! float {
        ($x:expr, $y:expr) => {
            match p {
                Prim::Add => $x + $y,
                Prim::Sub => $x - $y,
                Prim::Mul => $x * $y,
                Prim::Div => $x / $y,
                Prim::Mod => $x % $y,
                Prim::Max => $x.max($y),
                Prim::Min => $x.min($y),
                _ => return Err(format!("{} is not arithmetic", p.name()).into()),
            }
        };
    }
    Ok(match (a, b) {
        (I32(x), I32(y)) => I32(int!(*x, *y, i32, Scalar::I32)),
        (I64(x), I64(y)) => I64(int!(*x, *y, i64, Scalar::I64)),
        (F32(x), F32(y)) => F32(float!(*x, *y)),
        (F64(x), F64(y)) => F64(float!(*x, *y)),
        (Vector(xs), Vector(ys)) if xs.len() == ys.len() => Vector(
            xs.iter()
                .zip(ys.iter())
                .map(|(x, y)| arith(p, x, y))
                .collect::<Result<Vec<_>, _>>()?
                .into(),
        ),
        _ => return Err(format!("{} of {a:?} and {b:?}", p.name()).into()),
    })
}

/// `lt`, `gt`, `equal`.
pub(super) fn compare(p: Prim, a: &Value, b: &Value) -> Result<Value, EvalError> {
    use std::cmp::Ordering;
    use Value::*;
    let ordering = match (a, b) {
        (I32(x), I32(y)) => x.partial_cmp(y),
        (I64(x), I64(y)) | (Index(x), Index(y)) => x.partial_cmp(y),
        (F32(x), F32(y)) => x.partial_cmp(y),
        (F64(x), F64(y)) => x.partial_cmp(y),
        (Bool(x), Bool(y)) => x.partial_cmp(y),
        _ => return Err(format!("{} of {a:?} and {b:?}", p.name()).into()),
    };
    Ok(Bool(match p {
        Prim::Lt => ordering == Some(Ordering::Less),
        Prim::Gt => ordering == Some(Ordering::Greater),
        _ => ordering == Some(Ordering::Equal),
    }))
}

/// `neg`, `abs`, `exp`, `sqrt`, `not`.
pub(super) fn unary(p: Prim, a: &Value) -> Result<Value, EvalError> {
    use Value::*;
    Ok(match (p, a) {
        (_, Vector(xs)) => Vector(
            xs.iter()
                .map(|x| unary(p, x))
                .collect::<Result<Vec<_>, _>>()?
                .into(),
        ),
        (Prim::Neg, I32(x)) => I32(x.wrapping_neg()),
        (Prim::Neg, I64(x)) => I64(x.wrapping_neg()),
        (Prim::Neg, F32(x)) => F32(-x),
        (Prim::Neg, F64(x)) => F64(-x),
        (Prim::Abs, I32(x)) => I32(x.wrapping_abs()),
        (Prim::Abs, I64(x)) => I64(x.wrapping_abs()),
        (Prim::Abs, F32(x)) => F32(x.abs()),
        (Prim::Abs, F64(x)) => F64(x.abs()),
        (Prim::Exp, F32(x)) => F32(x.exp()),
        (Prim::Exp, F64(x)) => F64(x.exp()),
        (Prim::Sqrt, F32(x)) => F32(x.sqrt()),
        (Prim::Sqrt, F64(x)) => F64(x.sqrt()),
        (Prim::Not, Bool(b)) => Bool(!b),
        _ => return Err(format!("{} of {a:?}", p.name()).into()),
    })
}

/// `cast` to `target`.
pub(super) fn cast(value: &Value, target: Scalar) -> Result<Value, EvalError> {
    use Value::*;
    let as_f64 = match value {
        Bool(b) => *b as i64 as f64,
        I32(v) => *v as f64,
        I64(v) | Index(v) => *v as f64,
        F32(v) => *v as f64,
        F64(v) => *v,
        other => return Err(format!("cast of {other:?}").into()),
    };
    let as_i64 = match value {
        I32(v) => *v as i64,
        I64(v) | Index(v) => *v,
        _ => as_f64 as i64,
    };
    Ok(match target {
        Scalar::Bool => Bool(as_f64 != 0.0),
        // From a float: rounded toward zero, saturated; from an integer: truncated.
        Scalar::I32 if value.scalar_type().is_some_and(Scalar::is_float) => I32(as_f64 as i32),
        Scalar::I32 => I32(as_i64 as i32),
        Scalar::I64 => I64(as_i64),
        Scalar::F32 => F32(as_f64 as f32),
        Scalar::F64 => F64(as_f64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_division_is_checked_and_the_rest_wraps() {
        let div = |x: i32, y: i32| arith(Prim::Div, &Value::I32(x), &Value::I32(y));
        assert!(matches!(div(7, -2), Ok(Value::I32(-3))));
        assert!(matches!(
            div(i32::MIN, -1).unwrap_err().kind(),
            EvalErrorKind::DivisionOverflow { op: '/', .. }
        ));
        let rem = arith(Prim::Mod, &Value::I64(i64::MIN), &Value::I64(-1));
        assert!(matches!(rem, Ok(Value::I64(0))));
        let rem = arith(Prim::Mod, &Value::I64(5), &Value::I64(0));
        assert!(matches!(
            rem.unwrap_err().kind(),
            EvalErrorKind::DivisionByZero {
                op: '%',
                ty: Scalar::I64,
                ..
            }
        ));
        let add = arith(Prim::Add, &Value::I32(i32::MAX), &Value::I32(1));
        assert!(matches!(add, Ok(Value::I32(i32::MIN))));
    }
}
