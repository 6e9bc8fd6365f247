//! A fold that starts from values rather than constants (argmax from a row's
//! threshold, a recurrence from a parameter): its outputs are filled with anything,
//! and its step reads each start value instead of its accumulator at the first step,
//! where every reduction loop's position is 0 (`linalg.index`). Exact, and the kernel
//! tiles and runs in parallel as any fold does.

use super::eval::ScalarExpr;
use super::index::{Aff, Var};
use super::scalar::ExprRef;
use crate::prim::Prim;
use crate::term::Literal;
use crate::types::Scalar;

/// A fold's `steps` where accumulator `id + j` reads `inits[j]` at the first step
/// (every one of `vars` at 0) when that is no constant.
pub fn starting(steps: Vec<ExprRef>, inits: &[ExprRef], id: u32, vars: &[Var]) -> Vec<ExprRef> {
    if inits.iter().all(|i| matches!(**i, ScalarExpr::Lit(_))) {
        return steps;
    }
    let sum = vars.iter().fold(Aff::cst(0), |a, v| a.add(&Aff::var(*v)));
    let first = ScalarExpr::Bin(
        Prim::Equal,
        ScalarExpr::Position(sum).shared(),
        ScalarExpr::Lit(Literal::I64(0)).shared(),
    )
    .shared();
    let mut started = |e: ScalarExpr| match &e {
        ScalarExpr::Acc(a, idx, _) if idx.is_empty() && *a >= id => {
            match inits.get((a - id) as usize) {
                Some(i) if !matches!(**i, ScalarExpr::Lit(_)) => {
                    ScalarExpr::Pick(first.clone(), i.clone(), e.shared())
                }
                _ => e,
            }
        }
        _ => e,
    };
    steps
        .iter()
        .map(|s| s.rewrite(&mut started).shared())
        .collect()
}

/// The constants a fold's outputs are filled with: each start that is one, and any
/// of its type where it is a value (read at the first step instead).
pub fn constants(inits: &[ExprRef]) -> Vec<Literal> {
    let zero = |s: Scalar| match s {
        Scalar::Bool => Literal::Bool(false),
        Scalar::I32 => Literal::I32(0),
        Scalar::I64 => Literal::I64(0),
        Scalar::F32 => Literal::F32(0.0),
        Scalar::F64 => Literal::F64(0.0),
    };
    inits
        .iter()
        .map(|i| match &**i {
            ScalarExpr::Lit(l) => *l,
            other => zero(other.scalar()),
        })
        .collect()
}
