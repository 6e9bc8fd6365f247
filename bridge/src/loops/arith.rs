//! Scalar and vector arithmetic, comparisons and casts, guarded integer divisions,
//! and the flop count.

use super::emitter::Gen;
use super::value::{lanes_value, Val};
use crate::boundary::{Check, TrapSite};
use crate::error::Error;
use crate::text::{binary_text, can_trap, is_comparison, lane_type, mlir_scalar, safe_divisor};
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
        let Some(rhs) = binary_text(p, x, y, s.is_float(), &t) else {
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
            (Prim::Exp, true) => self.op(format!("math.exp {x} : {t}")),
            (Prim::Sqrt, true) => self.op(format!("math.sqrt {x} : {t}")),
            (Prim::Abs, true) => self.op(format!("math.absf {x} : {t}")),
            (Prim::Abs, false) => self.op(format!("math.absi {x} : {t}")),
            _ => return Err(Error::unsupported(at, format!("`{}` on {t}", p.name()))),
        };
        Ok(lanes_value(z, s, lanes))
    }

    /// The divisor `y` of `x` (integers of type `s`, or vectors of them), with 1 where
    /// the division would trap: by zero, or of the smallest integer by -1 (whose
    /// quotient does not fit; the remainder is 0, which dividing by 1 gives). A
    /// division by zero, or a quotient that does not fit, records its code in the trap
    /// argument (the largest code wins, so that parallel loops record one too).
    fn guard_divisor(
        &mut self,
        p: Prim,
        x: &str,
        y: &str,
        s: Scalar,
        lanes: Option<i64>,
        at: &Term,
    ) -> String {
        let site = self.traps.len() as i64;
        self.traps.push(TrapSite {
            op: p,
            check: Check::Division(s),
            span: at.span(),
        });
        let (e, t) = (mlir_scalar(s), lane_type(s, lanes));
        let smallest = match s {
            Scalar::I32 => i64::from(i32::MIN),
            _ => i64::MIN,
        };
        let constant = |g: &mut Gen, v: i64| {
            let c = g.op(format!("arith.constant {v} : {e}"));
            g.splat(&c, s, lanes)
        };
        let (zero, minus_one) = (constant(self, 0), constant(self, -1));
        let (smallest, one) = (constant(self, smallest), constant(self, 1));
        let by_zero = self.op(format!("arith.cmpi eq, {y}, {zero} : {t}"));
        let by_minus_one = self.op(format!("arith.cmpi eq, {y}, {minus_one} : {t}"));
        let of_smallest = self.op(format!("arith.cmpi eq, {x}, {smallest} : {t}"));
        let flags = lane_type(Scalar::Bool, lanes);
        let overflow = self.op(format!(
            "arith.andi {by_minus_one}, {of_smallest} : {flags}"
        ));
        let bad = self.op(format!("arith.ori {by_zero}, {overflow} : {flags}"));
        let selected = match lanes {
            None => t.clone(),
            Some(_) => format!("{flags}, {t}"),
        };
        let safe = self.op(format!("arith.select {bad}, {one}, {y} : {selected}"));
        // Only a quotient overflows: the remainder of the smallest integer by -1 is 0.
        let traps = if p == Prim::Div { bad } else { by_zero.clone() };
        let (traps, by_zero) = match lanes {
            None => (traps, by_zero),
            Some(n) => {
                let any = |g: &mut Gen, v: &str| {
                    g.op(format!(
                        "vector.reduction <or>, {v} : vector<{n}xi1> into i1"
                    ))
                };
                (any(self, &traps), any(self, &by_zero))
            }
        };
        self.record_trap(&traps, |g| {
            let zero_code = g.op(format!("arith.constant {} : i32", 2 * site + 1));
            let overflow_code = g.op(format!("arith.constant {} : i32", 2 * site + 2));
            g.op(format!(
                "arith.select {by_zero}, {zero_code}, {overflow_code} : i32"
            ))
        });
        safe
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

    pub(super) fn cast(
        &mut self,
        x: &str,
        from: Scalar,
        to: Scalar,
        at: &Term,
    ) -> Result<Val, Error> {
        use Scalar::*;
        let (f, t) = (mlir_scalar(from), mlir_scalar(to));
        let width = |s: Scalar| match s {
            Bool => 1,
            I32 | F32 => 32,
            I64 | F64 => 64,
        };
        let z = match (from.is_float(), to.is_float()) {
            _ if from == to => return Ok(Val::Scalar(x.to_string(), to)),
            (false, true) if from == Bool => self.op(format!("arith.uitofp {x} : {f} to {t}")),
            (false, true) => self.op(format!("arith.sitofp {x} : {f} to {t}")),
            (true, false) if to == Bool => {
                let zero = self.op(format!("arith.constant 0.0 : {f}"));
                self.op(format!("arith.cmpf une, {x}, {zero} : {f}"))
            }
            (true, false) => self.op(format!("arith.fptosi {x} : {f} to {t}")),
            (true, true) if width(to) > width(from) => {
                self.op(format!("arith.extf {x} : {f} to {t}"))
            }
            (true, true) => self.op(format!("arith.truncf {x} : {f} to {t}")),
            (false, false) if to == Bool => {
                let zero = self.op(format!("arith.constant 0 : {f}"));
                self.op(format!("arith.cmpi ne, {x}, {zero} : {f}"))
            }
            (false, false) if from == Bool => self.op(format!("arith.extui {x} : {f} to {t}")),
            (false, false) if width(to) > width(from) => {
                self.op(format!("arith.extsi {x} : {f} to {t}"))
            }
            (false, false) => self.op(format!("arith.trunci {x} : {f} to {t}")),
        };
        let _ = at;
        Ok(Val::Scalar(z, to))
    }
}
