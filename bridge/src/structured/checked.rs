//! Operations a kernel's body checks, as the interpreter does: a read at an index
//! computed from data (`natAsIndex`), whose number must be below its bound (outside,
//! a trap is recorded and 0 read instead), the buffer read where it lies
//! (`memref.load`, the rest of its index computed from the kernel's loop counters,
//! `linalg.index`); and an integer division or remainder whose divisor may be 0 (or
//! -1 of the smallest dividend: a trap, and 1 divides instead). The kernel stays a
//! `linalg.generic` that tiles, and runs in parallel where the program's loops do; it
//! is not vectorized.

use super::emit::Body;
use super::eval::Gathered;
use super::index::{Aff, Atom, Var};
use crate::boundary::{Check, TrapSite, TRAP_ARGUMENT};
use crate::text::{binary_text, memref_type, mlir_scalar};
use elevate_rise::prim::Prim;
use elevate_rise::types::Scalar;
use elevate_rise::Span;
use std::collections::BTreeMap;

impl Body<'_> {
    /// The element `g` reads.
    pub(super) fn gather(&mut self, g: &Gathered) -> String {
        let mut data = BTreeMap::new();
        for d in &g.data {
            let x = self.expr(&d.value);
            let site = self.trap_base + self.traps.len();
            self.traps.push(TrapSite {
                op: Prim::NatAsIndex,
                check: Check::Index { bound: d.bound },
                span: d.span,
            });
            let i = self.op(format!("arith.index_cast {x} : i64 to index"));
            let zero = self.constant(0);
            let end = self.constant(d.bound);
            let below = self.op(format!("arith.cmpi slt, {i}, {zero} : index"));
            let beyond = self.op(format!("arith.cmpi sge, {i}, {end} : index"));
            let outside = self.op(format!("arith.ori {below}, {beyond} : i1"));
            let code = self.op(format!("arith.constant {} : i32", 2 * site + 1));
            self.record_trap(&outside, &code);
            let checked = self.op(format!("arith.select {outside}, {zero}, {i} : index"));
            data.insert(d.var, checked);
        }
        let idx: Vec<String> = g.idx.iter().map(|a| self.index(a, &data)).collect();
        let buf = &self.bufs[g.buf];
        let (name, ty) = (buf.name.clone(), memref_type(&buf.dims, buf.scalar));
        self.op(format!("memref.load {name}[{}] : {ty}", idx.join(", ")))
    }

    /// `x op y` (`div` or `mod` of integers of type `s`), checked.
    pub(super) fn checked_division(
        &mut self,
        op: Prim,
        x: &str,
        y: &str,
        s: Scalar,
        span: Option<Span>,
    ) -> String {
        let site = self.trap_base + self.traps.len();
        self.traps.push(TrapSite {
            op,
            check: Check::Division(s),
            span,
        });
        let t = mlir_scalar(s);
        let smallest = match s {
            Scalar::I32 => i64::from(i32::MIN),
            _ => i64::MIN,
        };
        let [zero, minus_one, smallest, one] =
            [0, -1, smallest, 1].map(|v| self.op(format!("arith.constant {v} : {t}")));
        let by_zero = self.op(format!("arith.cmpi eq, {y}, {zero} : {t}"));
        let by_minus_one = self.op(format!("arith.cmpi eq, {y}, {minus_one} : {t}"));
        let of_smallest = self.op(format!("arith.cmpi eq, {x}, {smallest} : {t}"));
        let overflow = self.op(format!("arith.andi {by_minus_one}, {of_smallest} : i1"));
        let bad = self.op(format!("arith.ori {by_zero}, {overflow} : i1"));
        // Only a quotient overflows: the remainder of the smallest integer by -1 is 0.
        let traps = if op == Prim::Div {
            bad.clone()
        } else {
            by_zero.clone()
        };
        let zero_code = self.op(format!("arith.constant {} : i32", 2 * site + 1));
        let overflow_code = self.op(format!("arith.constant {} : i32", 2 * site + 2));
        let code = self.op(format!(
            "arith.select {by_zero}, {zero_code}, {overflow_code} : i32"
        ));
        self.record_trap(&traps, &code);
        let safe = self.op(format!("arith.select {bad}, {one}, {y} : {t}"));
        let rhs = binary_text(op, x, &safe, false, t)
            .unwrap_or_else(|| unreachable!("`{}` is a division", op.name()));
        self.op(rhs)
    }

    /// Where `when` holds, trap `code` recorded (the largest code of those recorded
    /// is the one reported).
    fn record_trap(&mut self, when: &str, code: &str) {
        let old = self.fresh();
        self.push(format!("scf.if {when} {{"));
        self.push(format!(
            "  {old} = memref.atomic_rmw maxs {code}, {TRAP_ARGUMENT}[] : (i32, memref<i32>) -> i32"
        ));
        self.push("}".to_string());
    }

    fn constant(&mut self, c: i64) -> String {
        self.op(format!("arith.constant {c} : index"))
    }

    /// The value of index `a`, its data variables being `data`.
    fn index(&mut self, a: &Aff, data: &BTreeMap<Var, String>) -> String {
        let mut sum = self.constant(a.c);
        for (atom, k) in &a.terms {
            let mut x = match atom {
                Atom::Var(v) => match data.get(v) {
                    Some(x) => x.clone(),
                    None => self.counter(*v),
                },
                Atom::Div(inner, d) => {
                    let x = self.index(inner, data);
                    let d = self.constant(*d);
                    self.op(format!("arith.floordivsi {x}, {d} : index"))
                }
                Atom::Mod(inner, m) => {
                    // (A floor remainder, as the index algebra's.)
                    let x = self.index(inner, data);
                    let m = self.constant(*m);
                    let q = self.op(format!("arith.floordivsi {x}, {m} : index"));
                    let qm = self.op(format!("arith.muli {q}, {m} : index"));
                    self.op(format!("arith.subi {x}, {qm} : index"))
                }
            };
            if *k != 1 {
                let k = self.constant(*k);
                x = self.op(format!("arith.muli {x}, {k} : index"));
            }
            sum = self.op(format!("arith.addi {sum}, {x} : index"));
        }
        sum
    }

    /// Loop `v`'s counter: `(index(d) / step) mod trips` in its dimension `d`.
    fn counter(&mut self, v: Var) -> String {
        let Some(&(d, step, trips)) = self.kernel.counters.get(&v) else {
            // (A variable of no loop of the kernel runs once.)
            return self.constant(0);
        };
        let mut x = self.op(format!("linalg.index {d} : index"));
        if step != 1 {
            let s = self.constant(step);
            x = self.op(format!("arith.divui {x}, {s} : index"));
        }
        if step.saturating_mul(trips) < self.kernel.dims[d].extent {
            let t = self.constant(trips);
            x = self.op(format!("arith.remui {x}, {t} : index"));
        }
        x
    }
}
