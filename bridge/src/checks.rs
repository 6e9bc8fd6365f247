//! The checks compiled code makes where the interpreter reports an error, written
//! once for both translations: an integer division or remainder by 0 (or of the
//! smallest integer by -1), and a number made an index outside its range. Each
//! records its trap's code in the trap argument where it fails (the largest code
//! wins, so that parallel loops record one too) and computes on with a safe value
//! (1 divides, 0 indexes), so that no code divides by 0 or reads outside its buffers;
//! the caller reports the trap ([`crate::boundary::TrapSite`]).

use crate::boundary::TRAP_ARGUMENT;
use crate::text::{lane_type, mlir_scalar};
use elevate_rise::prim::Prim;
use elevate_rise::types::Scalar;

/// Where a check's operations go: a kernel's body or explicit loops.
pub(crate) trait Ops {
    /// Emits `%x = rhs` and returns the fresh name `%x`.
    fn op(&mut self, rhs: String) -> String;

    /// Emits `head {`, then `body` one region deeper, then `}`.
    fn region(&mut self, head: String, body: Vec<String>);

    /// A fresh value name.
    fn fresh(&mut self) -> String;

    /// Where `when` (an `i1`) holds, records `code` (an `i32`) in the trap argument.
    fn record_trap(&mut self, when: &str, code: &str) {
        let old = self.fresh();
        let record = format!(
            "{old} = memref.atomic_rmw maxs {code}, {TRAP_ARGUMENT}[] : (i32, memref<i32>) -> i32"
        );
        self.region(format!("scf.if {when}"), vec![record]);
    }
}

/// The divisor `y` of `x` (`op` is `div` or `mod` of integers of type `s`, or of
/// `lanes` of them), 1 where the operation would trap: by zero (code `2 site + 1`),
/// or a quotient of the smallest integer by -1, which does not fit (`2 site + 2`; the
/// remainder is 0, which dividing by 1 gives).
pub(crate) fn divisor(
    o: &mut dyn Ops,
    site: usize,
    op: Prim,
    [x, y]: [&str; 2],
    s: Scalar,
    lanes: Option<i64>,
) -> String {
    let (e, t) = (mlir_scalar(s), lane_type(s, lanes));
    let smallest = match s {
        Scalar::I32 => i64::from(i32::MIN),
        _ => i64::MIN,
    };
    let [zero, minus_one, smallest, one] = [0, -1, smallest, 1].map(|v| {
        let c = o.op(format!("arith.constant {v} : {e}"));
        match lanes {
            None => c,
            Some(_) => o.op(format!("vector.broadcast {c} : {e} to {t}")),
        }
    });
    let by_zero = o.op(format!("arith.cmpi eq, {y}, {zero} : {t}"));
    let by_minus_one = o.op(format!("arith.cmpi eq, {y}, {minus_one} : {t}"));
    let of_smallest = o.op(format!("arith.cmpi eq, {x}, {smallest} : {t}"));
    let flags = lane_type(Scalar::Bool, lanes);
    let overflow = o.op(format!(
        "arith.andi {by_minus_one}, {of_smallest} : {flags}"
    ));
    let bad = o.op(format!("arith.ori {by_zero}, {overflow} : {flags}"));
    let selected = match lanes {
        None => t.clone(),
        Some(_) => format!("{flags}, {t}"),
    };
    let safe = o.op(format!("arith.select {bad}, {one}, {y} : {selected}"));
    // Only a quotient overflows.
    let traps = if op == Prim::Div {
        bad
    } else {
        by_zero.clone()
    };
    let (traps, by_zero) = match lanes {
        None => (traps, by_zero),
        Some(n) => {
            let any = |v: &str| format!("vector.reduction <or>, {v} : vector<{n}xi1> into i1");
            (o.op(any(&traps)), o.op(any(&by_zero)))
        }
    };
    let zero_code = o.op(format!("arith.constant {} : i32", 2 * site + 1));
    let overflow_code = o.op(format!("arith.constant {} : i32", 2 * site + 2));
    let code = o.op(format!(
        "arith.select {by_zero}, {zero_code}, {overflow_code} : i32"
    ));
    o.record_trap(&traps, &code);
    safe
}

/// The index `x` (an `i64`) stands for, below `bound`: outside `0..bound`, code
/// `2 site + 1` is recorded and 0 is the index.
pub(crate) fn index(o: &mut dyn Ops, site: usize, x: &str, bound: i64) -> String {
    let i = o.op(format!("arith.index_cast {x} : i64 to index"));
    let zero = o.op("arith.constant 0 : index".into());
    let end = o.op(format!("arith.constant {bound} : index"));
    let below = o.op(format!("arith.cmpi slt, {i}, {zero} : index"));
    let beyond = o.op(format!("arith.cmpi sge, {i}, {end} : index"));
    let outside = o.op(format!("arith.ori {below}, {beyond} : i1"));
    let code = o.op(format!("arith.constant {} : i32", 2 * site + 1));
    o.record_trap(&outside, &code);
    o.op(format!("arith.select {outside}, {zero}, {i} : index"))
}
