//! Reads at indices computed from data (`natAsIndex`) in a kernel's body: the number
//! is checked to be below its bound (outside, a trap is recorded, as the interpreter
//! reports it, and 0 read instead), then the buffer is read where it lies
//! (`memref.load`), the rest of its index computed from the kernel's loop counters
//! (`linalg.index`). The kernel stays a `linalg.generic` that tiles, and runs in
//! parallel where the program's loops do; it is not vectorized.

use super::emit::Body;
use super::eval::Gathered;
use super::index::{Aff, Atom, Var};
use crate::boundary::{Check, TrapSite, TRAP_ARGUMENT};
use crate::text::memref_type;
use elevate_rise::prim::Prim;
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
            let code = 2 * site + 1;
            let (c, old) = (self.fresh(), self.fresh());
            self.push(format!("scf.if {outside} {{"));
            self.push(format!("  {c} = arith.constant {code} : i32"));
            self.push(format!(
                "  {old} = memref.atomic_rmw maxs {c}, {TRAP_ARGUMENT}[] : (i32, memref<i32>) -> i32"
            ));
            self.push("}".to_string());
            let checked = self.op(format!("arith.select {outside}, {zero}, {i} : index"));
            data.insert(d.var, checked);
        }
        let idx: Vec<String> = g.idx.iter().map(|a| self.index(a, &data)).collect();
        let buf = &self.bufs[g.buf];
        let (name, ty) = (buf.name.clone(), memref_type(&buf.dims, buf.scalar));
        self.op(format!("memref.load {name}[{}] : {ty}", idx.join(", ")))
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
