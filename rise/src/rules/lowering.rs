//! Lowering rules: choose how a high-level primitive is computed. Each keeps the type.

use super::pattern::rule;
use crate::nat::Nat;
use crate::prim::Prim;
use crate::term::{Expr, Term};
use elevate_core::Strategy;

fn replace(from: Prim, to: Prim, nats: Vec<i64>) -> impl Fn(&Term) -> Option<Term> {
    move |t: &Term| match t.expr() {
        Expr::Prim(p) if *p == from => Some(
            nats.iter()
                .fold(Term::prim(to), |f, n| Term::nat_app(f, Nat::cst(*n))),
        ),
        _ => None,
    }
}

/// `map -> mapSeq`: a sequential loop.
pub fn map_seq() -> Strategy<Term> {
    rule("mapSeq", replace(Prim::Map, Prim::MapSeq, vec![]))
}

/// `map -> mapSeqUnroll`: a fully unrolled loop.
pub fn map_seq_unroll() -> Strategy<Term> {
    rule(
        "mapSeqUnroll",
        replace(Prim::Map, Prim::MapSeqUnroll, vec![]),
    )
}

/// `map -> mapPar`: a loop whose iterations run on CPU threads.
pub fn map_par() -> Strategy<Term> {
    rule("mapPar", replace(Prim::Map, Prim::MapPar, vec![]))
}

/// `map -> mapGlobal(d)`: GPU global threads of dimension `d`.
pub fn map_global(d: i64) -> Strategy<Term> {
    rule(
        format!("mapGlobal({d})"),
        replace(Prim::Map, Prim::MapGlobal, vec![d]),
    )
}

/// `map -> mapWorkGroup(d)`: GPU blocks of dimension `d`.
pub fn map_work_group(d: i64) -> Strategy<Term> {
    rule(
        format!("mapWorkGroup({d})"),
        replace(Prim::Map, Prim::MapWorkGroup, vec![d]),
    )
}

/// `map -> mapLocal(d)`: GPU threads within a block, dimension `d`.
pub fn map_local(d: i64) -> Strategy<Term> {
    rule(
        format!("mapLocal({d})"),
        replace(Prim::Map, Prim::MapLocal, vec![d]),
    )
}

/// `reduce -> reduceSeq`: a sequential left fold.
pub fn reduce_seq() -> Strategy<Term> {
    rule("reduceSeq", replace(Prim::Reduce, Prim::ReduceSeq, vec![]))
}

/// `reduce -> reduceSeqUnroll`: an unrolled left fold.
pub fn reduce_seq_unroll() -> Strategy<Term> {
    rule(
        "reduceSeqUnroll",
        replace(Prim::Reduce, Prim::ReduceSeqUnroll, vec![]),
    )
}
