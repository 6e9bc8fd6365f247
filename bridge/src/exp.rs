//! `exp` on `f32` as arithmetic, on scalars and vectors alike: LLVM lowers a vector
//! `math.exp` to one call of the C library's `expf` per lane, which made `exp` the
//! slowest part of a softmax. This is the classic range reduction and polynomial
//! (Cephes' `expf`): `x = n ln 2 + r` with `|r| <= ln 2 / 2`, `exp(r)` by a polynomial
//! of degree 7, and `2^n` built from its exponent bits, in two factors so that every
//! `n` from the smallest denormal result to the largest finite one is exact. It is
//! within 2 ulp of the correctly rounded value; infinities and NaN are as `expf`
//! gives them.

use crate::ir::{self, Attr, Op, Type};

/// `ln 2` in two parts, so that `x - n ln 2` loses nothing for the `n` in range.
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;

/// Above this, `exp` overflows to infinity; below the other, it rounds to zero.
const LARGEST: f32 = 88.722_84;
const SMALLEST: f32 = -103.972_08;

/// The polynomial's coefficients, highest degree first: `exp(r) = 1 + r + r^2 p(r)`.
const POLY: [f32; 6] = [
    1.987_569_1e-4,
    1.398_2e-3,
    8.333_452e-3,
    4.166_579_6e-2,
    0.166_666_65,
    0.5,
];

/// The operations computing `exp(x)` for `x` of type `t` (`f32` or `vector<8xf32>`),
/// each added by `op` (which names its result); the name of the result.
pub(crate) fn exp_f32(op: &mut dyn FnMut(Op) -> String, x: &str, t: &Type) -> String {
    // The integers of the same shape.
    let it = match t {
        Type::Vector(shape, _) => Type::Vector(shape.clone(), Box::new(Type::I32)),
        _ => Type::I32,
    };
    let float = |op: &mut dyn FnMut(Op) -> String, v: f32| {
        let value = Attr::Float(v.to_bits().into(), Type::F32);
        op(ir::constant(Attr::of_type(value, t)))
    };
    let arith = |op: &mut dyn FnMut(Op) -> String, name: &str, x: &str, y: &str, t: &Type| {
        op(ir::same(name, &[x, y], t))
    };
    let (lo, hi) = (float(op, SMALLEST), float(op, LARGEST));
    let clamped = arith(op, "arith.maximumf", x, &lo, t);
    let clamped = arith(op, "arith.minimumf", &clamped, &hi, t);
    // n = floor(x log2(e) + 1/2), r = x - n ln 2.
    let (log2e, half) = (float(op, std::f32::consts::LOG2_E), float(op, 0.5));
    let scaled = arith(op, "arith.mulf", &clamped, &log2e, t);
    let shifted = arith(op, "arith.addf", &scaled, &half, t);
    let n = op(ir::same("math.floor", &[&shifted], t));
    let (ln2_hi, ln2_lo) = (float(op, LN2_HI), float(op, LN2_LO));
    let hi_part = arith(op, "arith.mulf", &n, &ln2_hi, t);
    let r = arith(op, "arith.subf", &clamped, &hi_part, t);
    let lo_part = arith(op, "arith.mulf", &n, &ln2_lo, t);
    let r = arith(op, "arith.subf", &r, &lo_part, t);
    // 1 + r + r^2 p(r), p by Horner's rule.
    let mut p = float(op, POLY[0]);
    for c in &POLY[1..] {
        let c = float(op, *c);
        let times = arith(op, "arith.mulf", &p, &r, t);
        p = arith(op, "arith.addf", &times, &c, t);
    }
    let r2 = arith(op, "arith.mulf", &r, &r, t);
    let p = arith(op, "arith.mulf", &p, &r2, t);
    let p = arith(op, "arith.addf", &p, &r, t);
    let one = float(op, 1.0);
    let y = arith(op, "arith.addf", &p, &one, t);
    // 2^n as 2^a 2^b with a = n >> 1 and b = n - a, each a normal float.
    let int = |op: &mut dyn FnMut(Op) -> String, v: i32| {
        op(ir::constant(Attr::of_type(
            Attr::Int(v.into(), Type::I32),
            &it,
        )))
    };
    let n = op(ir::cast("arith.fptosi", &n, t, &it));
    let one_i = int(op, 1);
    let a = arith(op, "arith.shrsi", &n, &one_i, &it);
    let b = arith(op, "arith.subi", &n, &a, &it);
    let (bias, mantissa) = (int(op, 127), int(op, 23));
    let mut y = y;
    for e in [a, b] {
        let biased = arith(op, "arith.addi", &e, &bias, &it);
        let bits = arith(op, "arith.shli", &biased, &mantissa, &it);
        let power = op(ir::cast("arith.bitcast", &bits, &it, t));
        y = arith(op, "arith.mulf", &y, &power, t);
    }
    // Infinity above the range, zero below it, and NaN for NaN (which the clamps
    // keep, but which the conversion to an integer does not).
    let inf = float(op, f32::INFINITY);
    let over = op(ir::compare(true, "ogt", x, &hi, t));
    let y = op(ir::select(&over, &inf, &y, t));
    let zero = float(op, 0.0);
    let under = op(ir::compare(true, "olt", x, &lo, t));
    let y = op(ir::select(&under, &zero, &y, t));
    let nan = op(ir::compare(true, "uno", x, x, t));
    op(ir::select(&nan, x, &y, t))
}
