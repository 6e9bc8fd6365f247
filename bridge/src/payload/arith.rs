//! Scalar and vector arithmetic, comparisons and casts, and the flop count.

use super::*;

/// Whether `p` compares (its result is a boolean).
pub(crate) fn is_comparison(p: Prim) -> bool {
    matches!(p, Prim::Lt | Prim::Gt | Prim::Equal)
}

/// The MLIR operation computing binary primitive `p` on `x` and `y` of type `t`
/// (scalars or vectors of floats or integers), or `None` if `p` is not one.
pub(crate) fn binary_text(p: Prim, x: &str, y: &str, float: bool, t: &str) -> Option<String> {
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
            let cmp = if float { "arith.cmpf" } else { "arith.cmpi" };
            return Some(format!("{cmp} {predicate}, {x}, {y} : {t}"));
        }
        _ => return None,
    };
    Some(format!("{name} {x}, {y} : {t}"))
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
    ) -> Result<Val, BridgeError> {
        let t = lane_type(s, lanes);
        let Some(rhs) = binary_text(p, x, y, s.is_float(), &t) else {
            return Err(BridgeError::unsupported(
                at,
                format!("`{}` on {t}", p.name()),
            ));
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
    ) -> Result<Val, BridgeError> {
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
            _ => {
                return Err(BridgeError::unsupported(
                    at,
                    format!("`{}` on {t}", p.name()),
                ))
            }
        };
        Ok(lanes_value(z, s, lanes))
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
    ) -> Result<Val, BridgeError> {
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
