//! Scalar and vector arithmetic, comparisons and casts, guarded integer divisions,
//! and the flop count.

use super::emitter::Gen;
use super::value::{lanes_value, Val};
use crate::boundary::{Check, TrapSite};
use crate::error::Error;
use crate::ir::{self, Attr, Type as MlirType};
use crate::loop_program::{can_trap, safe_divisor};
use crate::scalar_ops::{binary_op, is_comparison};
use crate::trap_checks;
use elevate_rise::prim::Prim;
use elevate_rise::term::Term;
use elevate_rise::types::Scalar;

/// The float `v` as a constant of float type `ty`.
fn float(v: f64, ty: &MlirType) -> Attr {
    match ty {
        MlirType::F32 => Attr::Float((v as f32).to_bits().into(), MlirType::F32),
        _ => Attr::Float(v.to_bits(), MlirType::F64),
    }
}

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
        let t = MlirType::lanes(s, lanes);
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
        let z = self.op(rhs);
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
        let t = MlirType::lanes(s, lanes);
        let z = match (p, s.is_float()) {
            (Prim::Neg, true) => self.op(ir::same("arith.negf", &[x], &t)),
            (Prim::Neg, false) => {
                let zero = self.op(ir::int_constant(0, &MlirType::scalar(s)));
                let zero = self.splat(&zero, s, lanes);
                self.op(ir::same("arith.subi", &[&zero, x], &t))
            }
            (Prim::Not, _) => {
                let one = self.op(ir::constant(Attr::Bool(true)));
                let one = self.splat(&one, s, lanes);
                self.op(ir::same("arith.xori", &[x, &one], &t))
            }
            (Prim::Exp, true) if s == Scalar::F32 => {
                crate::exp::exp_f32(&mut |op| self.op(op), x, &t)
            }
            (Prim::Exp, true) => self.op(ir::same("math.exp", &[x], &t)),
            (Prim::Sqrt, true) => self.op(ir::same("math.sqrt", &[x], &t)),
            (Prim::Abs, true) => self.op(ir::same("math.absf", &[x], &t)),
            (Prim::Abs, false) => self.op(ir::same("math.absi", &[x], &t)),
            _ => return Err(Error::unsupported(at, format!("`{}` on {t}", p.name()))),
        };
        Ok(lanes_value(z, s, lanes))
    }

    /// The divisor `y` of `x` (integers of type `s`, or vectors of them), with 1 where
    /// the division would trap, which records its code ([`trap_checks::divisor`]).
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
        trap_checks::divisor(self, site, p, [x, y], s, lanes)
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
                let t = MlirType::lanes(s, Some(n));
                self.op(ir::cast("vector.broadcast", x, &MlirType::scalar(s), &t))
            }
        }
    }

    /// `x` cast from `from` to `to`, as the interpreter casts: through `f64` for
    /// floats (an `i64` becomes an `f32` by way of an `f64`), and a float becomes an
    /// integer by saturating to the integer's range (NaN is 0), never
    /// by LLVM's conversion, which has no value out of range.
    pub(super) fn cast(&mut self, x: &str, from: Scalar, to: Scalar) -> Val {
        use Scalar::*;
        let (f, t) = (&MlirType::scalar(from), &MlirType::scalar(to));
        let z = match (from.is_float(), to.is_float()) {
            _ if from == to => return Val::Scalar(x.to_string(), to),
            (false, true) if from == Bool => self.op(ir::cast("arith.uitofp", x, f, t)),
            (false, true) if from == I64 && to == F32 => {
                let wide = self.op(ir::cast("arith.sitofp", x, &MlirType::I64, &MlirType::F64));
                self.op(ir::cast(
                    "arith.truncf",
                    &wide,
                    &MlirType::F64,
                    &MlirType::F32,
                ))
            }
            (false, true) => self.op(ir::cast("arith.sitofp", x, f, t)),
            (true, false) if to == Bool => {
                let zero = self.op(ir::constant(float(0.0, f)));
                self.op(ir::compare(true, "une", x, &zero, f))
            }
            (true, false) => {
                let wide = self.saturated_i64(x, from);
                match to {
                    I32 => {
                        // Saturated to i32's range too, as Rust's `as` does.
                        let low = self.op(ir::int_constant(i32::MIN.into(), &MlirType::I64));
                        let high = self.op(ir::int_constant(i32::MAX.into(), &MlirType::I64));
                        let above =
                            self.op(ir::same("arith.maxsi", &[&wide, &low], &MlirType::I64));
                        let within =
                            self.op(ir::same("arith.minsi", &[&above, &high], &MlirType::I64));
                        self.op(ir::cast(
                            "arith.trunci",
                            &within,
                            &MlirType::I64,
                            &MlirType::I32,
                        ))
                    }
                    _ => wide,
                }
            }
            (true, true) if to == F64 => self.op(ir::cast("arith.extf", x, f, t)),
            (true, true) => self.op(ir::cast("arith.truncf", x, f, t)),
            (false, false) if to == Bool => {
                let zero = self.op(ir::int_constant(0, f));
                self.op(ir::compare(false, "ne", x, &zero, f))
            }
            (false, false) if from == Bool => self.op(ir::cast("arith.extui", x, f, t)),
            (false, false) if to == I64 => self.op(ir::cast("arith.extsi", x, f, t)),
            (false, false) => self.op(ir::cast("arith.trunci", x, f, t)),
        };
        Val::Scalar(z, to)
    }

    /// The float `x` as an `i64`, saturated (NaN is 0), as Rust's `as` converts.
    fn saturated_i64(&mut self, x: &str, from: Scalar) -> String {
        let x = match from {
            Scalar::F32 => self.op(ir::cast("arith.extf", x, &MlirType::F32, &MlirType::F64)),
            _ => x.to_string(),
        };
        // 2^63 and -2^63 are exact in f64; in between, the conversion is exact too.
        let high = self.op(ir::constant(float(2f64.powi(63), &MlirType::F64)));
        let low = self.op(ir::constant(float(-(2f64.powi(63)), &MlirType::F64)));
        let clamped = self.op(ir::same("arith.maximumf", &[&x, &low], &MlirType::F64));
        let in_range = self.op(ir::compare(true, "olt", &clamped, &high, &MlirType::F64));
        let converted = self.op(ir::cast(
            "arith.fptosi",
            &clamped,
            &MlirType::F64,
            &MlirType::I64,
        ));
        let max = self.op(ir::int_constant(i64::MAX, &MlirType::I64));
        let saturated = self.op(ir::select(&in_range, &converted, &max, &MlirType::I64));
        let nan = self.op(ir::compare(true, "uno", &x, &x, &MlirType::F64));
        let zero = self.op(ir::int_constant(0, &MlirType::I64));
        self.op(ir::select(&nan, &zero, &saturated, &MlirType::I64))
    }
}
