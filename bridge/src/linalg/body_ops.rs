//! Reads and operations a kernel's body computes itself: a read at an index computed
//! from data (`natAsIndex`), whose number must be below its bound (outside, a trap is
//! recorded and 0 read instead), or at an index not affine in the loops, the buffer
//! read where it lies (`memref.load`, the index computed from the kernel's loop
//! counters, `linalg.index`); and an integer division or remainder whose divisor may
//! be 0 (or -1 of the smallest dividend: a trap, and 1 divides instead). The checks
//! are [`crate::trap_checks`]'. The kernel stays a `linalg.generic`
//! that tiles, and runs in parallel where the program's loops do; it is not
//! vectorized.

use super::emit::Body;
use crate::boundary::{Check, TrapSite};
use crate::ir::{self, Attr, Op, Type};
use crate::loop_program::Gathered;
use crate::loop_program::{Aff, Atom, Var};
use crate::scalar_ops::binary_op;
use crate::trap_checks::{self, Ops};
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
            let site = self.traps.len();
            self.traps.push(TrapSite {
                op: Prim::NatAsIndex,
                check: Check::Index { bound: d.bound },
                span: d.span,
            });
            data.insert(d.var, trap_checks::index(self, site, &x, d.bound));
        }
        let idx: Vec<String> = g.idx.iter().map(|a| self.index(a, &data)).collect();
        let buf = &self.bufs[g.buf];
        let (name, ty) = (buf.name.clone(), Type::memref(&buf.dims, buf.scalar));
        self.op(ir::load(&name, &ty, &idx, &Type::scalar(buf.scalar)))
    }

    /// The value of index `a` of the kernel's loops, an `i64`.
    pub(super) fn position(&mut self, a: &Aff) -> String {
        let i = self.index(a, &BTreeMap::new());
        self.op(ir::cast("arith.index_cast", &i, &Type::Index, &Type::I64))
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
        let site = self.traps.len();
        self.traps.push(TrapSite {
            op,
            check: Check::Division(s),
            span,
        });
        let safe = trap_checks::divisor(self, site, op, [x, y], s, None);
        let quotient = binary_op(op, x, &safe, false, &Type::scalar(s))
            .unwrap_or_else(|| unreachable!("`{}` is a division", op.name()));
        self.op(quotient)
    }

    fn constant(&mut self, c: i64) -> String {
        self.op(ir::index_constant(c))
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
                    self.op(ir::same("arith.floordivsi", &[&x, &d], &Type::Index))
                }
                Atom::Mod(inner, m) => {
                    // (A floor remainder, as the index algebra's.)
                    let x = self.index(inner, data);
                    let m = self.constant(*m);
                    let q = self.op(ir::same("arith.floordivsi", &[&x, &m], &Type::Index));
                    let qm = self.op(ir::same("arith.muli", &[&q, &m], &Type::Index));
                    self.op(ir::same("arith.subi", &[&x, &qm], &Type::Index))
                }
            };
            if *k != 1 {
                let k = self.constant(*k);
                x = self.op(ir::same("arith.muli", &[&x, &k], &Type::Index));
            }
            sum = self.op(ir::same("arith.addi", &[&sum, &x], &Type::Index));
        }
        sum
    }

    /// Loop `v`'s counter: `(index(d) / step) mod trips` in its dimension `d`.
    fn counter(&mut self, v: Var) -> String {
        let Some(&(d, step, trips)) = self.kernel.counters.get(&v) else {
            // (A variable of no loop of the kernel runs once.)
            return self.constant(0);
        };
        let mut x = self.op(Op::new("linalg.index")
            .prop("dim", Attr::i64(d as i64))
            .returns(&Type::Index));
        if step != 1 {
            let s = self.constant(step);
            x = self.op(ir::same("arith.divui", &[&x, &s], &Type::Index));
        }
        if step.saturating_mul(trips) < self.kernel.dims[d].extent {
            let t = self.constant(trips);
            x = self.op(ir::same("arith.remui", &[&x, &t], &Type::Index));
        }
        x
    }
}

impl Ops for Body<'_> {
    fn op(&mut self, op: Op) -> String {
        Body::op(self, op)
    }

    fn push(&mut self, op: Op) {
        Body::push(self, op);
    }

    fn fresh(&mut self) -> String {
        Body::fresh(self)
    }
}
