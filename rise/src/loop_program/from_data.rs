//! Numbers computed from data used as indices (`natAsIndex`): each is a variable of
//! the indices it reaches, standing for its value; a load whose index reads one is a
//! gather, which the kernel's body computes (the bridge's `linalg` emitter). So is, as a last
//! resort, a read at an index that is not affine in the loops.

use super::eval::{
    not_structured, DataIndex, Gathered, ScalarExpr, Structuring, SymbolicEvaluator,
};
use super::index::{Aff, Var};
use super::scalar::{ExprRef, Memo};
use crate::types::Scalar;

impl SymbolicEvaluator {
    /// Element `idx` of buffer `buf`: a load, or where the index reads numbers from
    /// data, a gather.
    pub fn load(&self, buf: usize, idx: Vec<Aff>, scalar: Scalar) -> ScalarExpr {
        let data: Vec<DataIndex> = self
            .data
            .values()
            .filter(|d| idx.iter().any(|a| a.mentions(d.var)))
            .cloned()
            .collect();
        if data.is_empty() {
            return ScalarExpr::Load(buf, idx, scalar);
        }
        ScalarExpr::Gather(Box::new(Gathered {
            buf,
            idx,
            data,
            scalar,
        }))
    }

    /// `e` with every load whose index reads numbers from data a gather (a map's
    /// counter replaced by such a number after the load was made), or why not.
    pub fn with_gathers(&self, e: &ScalarExpr) -> Structuring<ScalarExpr> {
        if self.data.is_empty() {
            return Ok(e.clone());
        }
        self.gathers_in(e, &mut Memo::default())
    }

    fn gathers_in(&self, e: &ScalarExpr, memo: &mut Memo<ExprRef>) -> Structuring<ScalarExpr> {
        let e = match e {
            ScalarExpr::Load(b, idx, s) => return Ok(self.load(*b, idx.clone(), *s)),
            // (Its numbers as the kernel's substitutions left them, and any its
            // index reads now.)
            ScalarExpr::Gather(g) => {
                let mut g = (**g).clone();
                for d in self.data.values() {
                    let read = g.idx.iter().any(|a| a.mentions(d.var));
                    if read && !g.data.iter().any(|e| e.var == d.var) {
                        g.data.push(d.clone());
                    }
                }
                for d in &mut g.data {
                    let value = d.value.clone();
                    d.value = memo.made(&value, |memo| {
                        elevate_core::stack::guard(|| self.gathers_in(&value, memo))
                    })?;
                }
                return Ok(ScalarExpr::Gather(Box::new(g)));
            }
            ScalarExpr::Select { conds, .. }
                if conds
                    .iter()
                    .any(|(a, _, _)| self.data.keys().any(|v| a.mentions(*v))) =>
            {
                return not_structured("a guard on an index computed from data");
            }
            e => e.clone(),
        };
        e.map_children(&mut |c| memo.made(c, |memo| self.gathers_in(c, memo)))
    }

    /// A variable for the number `value` computed from data, an index below `bound`.
    pub fn data_index(&mut self, value: ExprRef, bound: i64, span: Option<crate::Span>) -> Var {
        let var = self.var(bound);
        let index = DataIndex {
            var,
            value,
            bound,
            span,
        };
        self.data.insert(var, index);
        var
    }
}

/// Whether `e` reads at an index computed in the body, reads a position or checks a
/// division: operations the vectorizer does not take.
pub fn checks(e: &ScalarExpr) -> bool {
    e.nodes().into_iter().any(|e| {
        matches!(
            e,
            ScalarExpr::Gather(_) | ScalarExpr::Checked { .. } | ScalarExpr::Position(_)
        )
    })
}

/// `e` with each load at an index that is not `affine` read in the body
/// ([`ScalarExpr::Gather`] with no number from data).
pub fn read_in_body(e: &ScalarExpr, affine: &dyn Fn(usize, &[Aff]) -> bool) -> ScalarExpr {
    e.rewrite(&mut |e| match e {
        ScalarExpr::Load(buf, idx, scalar) if !affine(buf, &idx) => {
            ScalarExpr::Gather(Box::new(Gathered {
                buf,
                idx,
                data: Vec::new(),
                scalar,
            }))
        }
        e => e,
    })
}

/// The indices of the gathers in `e` ([`ScalarExpr::Gather`]), in their data's too.
pub fn gathers(e: &ScalarExpr, out: &mut Vec<Vec<Aff>>) {
    for e in e.nodes() {
        if let ScalarExpr::Gather(g) = e {
            out.push(g.idx.clone());
        }
    }
}
