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

    /// `x` cast from `from` to `to` ([`crate::scalar_ops::cast`]).
    pub(super) fn cast(&mut self, x: &str, from: Scalar, to: Scalar) -> Val {
        Val::Scalar(
            crate::scalar_ops::cast(&mut |op| self.op(op), x, from, to),
            to,
        )
    }
}
