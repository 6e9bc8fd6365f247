//! Scalar and vector arithmetic, comparisons and casts, guarded integer divisions,
//! and the flop count.

use super::emitter::Gen;
use super::value::{lanes_value, Val};
use crate::boundary::{Check, TrapSite};
use crate::checks;
use crate::error::Error;
use crate::text::{binary_op, can_trap, is_comparison, lane_type, mlir_scalar, safe_divisor};
use elevate_rise::prim::Prim;
use elevate_rise::term::Term;
use elevate_rise::types::Scalar;

impl Gen {
    pub(super) fn binary(
        &mut self,
        p: Prim,
        x: &str,
        y: &str,
        s: Scalar,
        lanes: Option<i64>,
        at: &Term,
    ) -> Result<Val, Error> {
        let t = lane_type(s, lanes);
        let guarded;
        let y = if can_trap(p, s) && !self.constants.get(y).is_some_and(|d| safe_divisor(*d)) {
            guarded = self.guard_divisor(p, x, y, s, lanes, at);
            &guarded
        } else {
            y
        };
        let Some(rhs) = binary_op(p, x, y, s.is_float(), &t) else {
            return Err(Error::unsupported(at, format!("`{}` on {t}", p.name())));
        };
        let z = self.op_ir(rhs);
        if is_comparison(p) {
            return Ok(lanes_value(z, Scalar::Bool, lanes));
        }
        if s.is_float() {
            self.count_flops(lanes);
        }
        Ok(lanes_value(z, s, lanes))
    }

    pub(super) fn unary(
        &mut self,
        p: Prim,
        x: &str,
        s: Scalar,
        lanes: Option<i64>,
        at: &Term,
    ) -> Result<Val, Error> {
        let t = lane_type(s, lanes);
        let z = match (p, s.is_float()) {
            (Prim::Neg, true) => self.op(format!("arith.negf {x} : {t}")),
            (Prim::Neg, false) => {
                let zero = self.op(format!("arith.constant 0 : {}", mlir_scalar(s)));
                let zero = self.splat(&zero, s, lanes);
                self.op(format!("arith.subi {zero}, {x} : {t}"))
            }
            (Prim::Not, _) => {
                let one = self.op("arith.constant true");
                let one = self.splat(&one, s, lanes);
                self.op(format!("arith.xori {x}, {one} : {t}"))
            }
            (Prim::Exp, true) if s == Scalar::F32 => {
                crate::exp::exp_f32(&mut |op| self.op_ir(op), x, &t)
            }
            (Prim::Exp, true) => self.op(format!("math.exp {x} : {t}")),
            (Prim::Sqrt, true) => self.op(format!("math.sqrt {x} : {t}")),
            (Prim::Abs, true) => self.op(format!("math.absf {x} : {t}")),
            (Prim::Abs, false) => self.op(format!("math.absi {x} : {t}")),
            _ => return Err(Error::unsupported(at, format!("`{}` on {t}", p.name()))),
        };
        Ok(lanes_value(z, s, lanes))
    }

    /// The divisor `y` of `x` (integers of type `s`, or vectors of them), with 1 where
    /// the division would trap, which records its code ([`checks::divisor`]).
    fn guard_divisor(
        &mut self,
        p: Prim,
        x: &str,
        y: &str,
        s: Scalar,
        lanes: Option<i64>,
        at: &Term,
    ) -> String {
        let site = self.traps.len();
        self.traps.push(TrapSite {
            op: p,
            check: Check::Division(s),
            span: at.span(),
        });
        checks::divisor(self, site, p, [x, y], s, lanes)
    }

    /// Counts one floating-point operation on `lanes` lanes where the code runs.
    pub(super) fn count_flops(&mut self, lanes: Option<i64>) {
        let runs = self.trips.last().copied().unwrap_or(1);
        let per_run = lanes.unwrap_or(1).max(1) as u64;
        self.flops = self.flops.saturating_add(runs.saturating_mul(per_run));
    }

    /// `x` (a scalar) broadcast to `lanes` lanes, or `x` itself for a scalar.
    pub(super) fn splat(&mut self, x: &str, s: Scalar, lanes: Option<i64>) -> String {
        match lanes {
            None => x.to_string(),
            Some(n) => {
                let t = lane_type(s, Some(n));
                self.op(format!("vector.broadcast {x} : {} to {t}", mlir_scalar(s)))
            }
        }
    }

    /// `x` cast from `from` to `to`, as the interpreter casts: through `f64` for
    /// floats (an `i64` becomes an `f32` by way of an `f64`), and a float becomes an
    /// integer by saturating to the integer's range (NaN is 0), never
    /// by LLVM's conversion, which has no value out of range.
    pub(super) fn cast(&mut self, x: &str, from: Scalar, to: Scalar) -> Val {
        use Scalar::*;
        let (f, t) = (mlir_scalar(from), mlir_scalar(to));
        let z = match (from.is_float(), to.is_float()) {
            _ if from == to => return Val::Scalar(x.to_string(), to),
            (false, true) if from == Bool => self.op(format!("arith.uitofp {x} : {f} to {t}")),
            (false, true) if from == I64 && to == F32 => {
                let wide = self.op(format!("arith.sitofp {x} : i64 to f64"));
                self.op(format!("arith.truncf {wide} : f64 to f32"))
            }
            (false, true) => self.op(format!("arith.sitofp {x} : {f} to {t}")),
            (true, false) if to == Bool => {
                let zero = self.op(format!("arith.constant 0.0 : {f}"));
                self.op(format!("arith.cmpf une, {x}, {zero} : {f}"))
            }
            (true, false) => {
                let wide = self.saturated_i64(x, from);
                match to {
                    I32 => {
                        // Saturated to i32's range too, as Rust's `as` does.
                        let low = self.op(format!("arith.constant {} : i64", i32::MIN));
                        let high = self.op(format!("arith.constant {} : i64", i32::MAX));
                        let above = self.op(format!("arith.maxsi {wide}, {low} : i64"));
                        let within = self.op(format!("arith.minsi {above}, {high} : i64"));
                        self.op(format!("arith.trunci {within} : i64 to i32"))
                    }
                    _ => wide,
                }
            }
            (true, true) if to == F64 => self.op(format!("arith.extf {x} : {f} to {t}")),
            (true, true) => self.op(format!("arith.truncf {x} : {f} to {t}")),
            (false, false) if to == Bool => {
                let zero = self.op(format!("arith.constant 0 : {f}"));
                self.op(format!("arith.cmpi ne, {x}, {zero} : {f}"))
            }
            (false, false) if from == Bool => self.op(format!("arith.extui {x} : {f} to {t}")),
            (false, false) if to == I64 => self.op(format!("arith.extsi {x} : {f} to {t}")),
            (false, false) => self.op(format!("arith.trunci {x} : {f} to {t}")),
        };
        Val::Scalar(z, to)
    }

    /// The float `x` as an `i64`, saturated (NaN is 0), as Rust's `as` converts.
    fn saturated_i64(&mut self, x: &str, from: Scalar) -> String {
        let x = match from {
            Scalar::F32 => self.op(format!("arith.extf {x} : f32 to f64")),
            _ => x.to_string(),
        };
        // 2^63 and -2^63 are exact in f64; in between, the conversion is exact too.
        let high = self.op("arith.constant 9.2233720368547758E+18 : f64");
        let low = self.op("arith.constant -9.2233720368547758E+18 : f64");
        let clamped = self.op(format!("arith.maximumf {x}, {low} : f64"));
        let in_range = self.op(format!("arith.cmpf olt, {clamped}, {high} : f64"));
        let converted = self.op(format!("arith.fptosi {clamped} : f64 to i64"));
        let max = self.op(format!("arith.constant {} : i64", i64::MAX));
        let saturated = self.op(format!("arith.select {in_range}, {converted}, {max} : i64"));
        let nan = self.op(format!("arith.cmpf uno, {x}, {x} : f64"));
        let zero = self.op("arith.constant 0 : i64");
        self.op(format!("arith.select {nan}, {zero}, {saturated} : i64"))
    }
}
