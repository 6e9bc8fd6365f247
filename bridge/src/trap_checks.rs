//! The checks compiled code makes where the interpreter reports an error: an integer division or remainder by 0 (or of the
//! smallest integer by -1), and a number made an index outside its range. Each
//! records its trap's code in the trap argument where it fails (the largest code
//! wins, so that parallel loops record one too) and computes on with a safe value
//! (1 divides, 0 indexes), so that no code divides by 0 or reads outside its buffers;
//! the caller reports the trap ([`crate::boundary::TrapSite`]).

use crate::boundary::TRAP_ARGUMENT;
use crate::ir::{self, Attr, Block, Op, Type};
use elevate_rise::prim::Prim;
use elevate_rise::types::Scalar;

/// Where a check's operations go: a kernel's body.
pub(crate) trait Ops {
    /// Adds `op` with its (one) result named afresh, and returns the name.
    fn op(&mut self, op: Op) -> String;

    /// Adds `op`, which has no result.
    fn push(&mut self, op: Op);

    /// A fresh value name.
    fn fresh(&mut self) -> String;

    /// Where `when` (an `i1`) holds, records `code` (an `i32`) in the trap argument.
    fn record_trap(&mut self, when: &str, code: &str) {
        let old = self.fresh();
        let record = Op::new("memref.atomic_rmw")
            .operand(code, &Type::I32)
            .operand(TRAP_ARGUMENT, &crate::payload::trap_record_type())
            // (`arith::AtomicRMWKind::maxs`)
            .prop("kind", Attr::i64(6))
            .result(old, &Type::I32);
        let then = Block::new(Vec::new(), vec![record, Op::new("scf.yield")]);
        self.push(
            Op::new("scf.if")
                .operand(when, &Type::BOOL)
                .region(then)
                .empty_region(),
        );
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
    let (e, t) = (Type::scalar(s), Type::lanes(s, lanes));
    let smallest = match s {
        Scalar::I32 => i64::from(i32::MIN),
        _ => i64::MIN,
    };
    let [zero, minus_one, smallest, one] = [0, -1, smallest, 1].map(|v| {
        let c = o.op(ir::int_constant(v, &e));
        match lanes {
            None => c,
            Some(_) => o.op(ir::cast("vector.broadcast", &c, &e, &t)),
        }
    });
    let by_zero = o.op(ir::compare(false, "eq", y, &zero, &t));
    let by_minus_one = o.op(ir::compare(false, "eq", y, &minus_one, &t));
    let of_smallest = o.op(ir::compare(false, "eq", x, &smallest, &t));
    let flags = t.flags();
    let overflow = o.op(ir::same(
        "arith.andi",
        &[&by_minus_one, &of_smallest],
        &flags,
    ));
    let bad = o.op(ir::same("arith.ori", &[&by_zero, &overflow], &flags));
    let safe = o.op(ir::select(&bad, &one, y, &t));
    // Only a quotient overflows.
    let traps = if op == Prim::Div {
        bad
    } else {
        by_zero.clone()
    };
    let (traps, by_zero) = match lanes {
        None => (traps, by_zero),
        Some(n) => {
            let any = |v: &str| {
                Op::new("vector.reduction")
                    .operand(v, &Type::lanes(Scalar::Bool, Some(n)))
                    .prop("kind", Attr::VectorOr)
                    .returns(&Type::BOOL)
            };
            (o.op(any(&traps)), o.op(any(&by_zero)))
        }
    };
    let zero_code = o.op(ir::int_constant(2 * site as i64 + 1, &Type::I32));
    let overflow_code = o.op(ir::int_constant(2 * site as i64 + 2, &Type::I32));
    let code = o.op(ir::select(&by_zero, &zero_code, &overflow_code, &Type::I32));
    o.record_trap(&traps, &code);
    safe
}

/// The index `x` (an `i64`) stands for, below `bound`: outside `0..bound`, code
/// `2 site + 1` is recorded and 0 is the index.
pub(crate) fn index(o: &mut dyn Ops, site: usize, x: &str, bound: i64) -> String {
    let i = o.op(ir::cast("arith.index_cast", x, &Type::I64, &Type::Index));
    let zero = o.op(ir::index_constant(0));
    let end = o.op(ir::index_constant(bound));
    let below = o.op(ir::compare(false, "slt", &i, &zero, &Type::Index));
    let beyond = o.op(ir::compare(false, "sge", &i, &end, &Type::Index));
    let outside = o.op(ir::same("arith.ori", &[&below, &beyond], &Type::BOOL));
    let code = o.op(ir::int_constant(2 * site as i64 + 1, &Type::I32));
    o.record_trap(&outside, &code);
    o.op(ir::select(&outside, &zero, &i, &Type::Index))
}
