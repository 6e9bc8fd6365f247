//! The matrix-multiplication strategies of the ELEVATE paper's TVM case study
//! (`baseline`, `blocking`, `vectorization`, `loopPerm`, `arrayPacking`,
//! `cacheBlocks`, `par`), for `matmul.rise`'s
//! `a |> map(fun(arow => transpose(b) |> map(fun(bcol => zip(arow, bcol) |> map(mul) |> reduce(add, 0)))))`.

use super::algorithmic::map_fusion;
use super::pattern::named;
use super::predicates::{dfnf, is_applied, is_reduce, is_reduce_seq};
use super::reduction::{fuse_reduce_map, reduce_map_fission, split_strategy};
use super::tiling::{reorder, tile};
use super::traversal::{innermost, map_nest, outermost};
use crate::term::Term;
use elevate_core::Strategy;
use elevate_strategies::{normalize, top_down};

/// `s1 ;; s2 = s1 ; DFNF ; s2`
fn then(first: Strategy<Term>, second: Strategy<Term>) -> Strategy<Term> {
    first >> dfnf() >> second
}

/// A fully applied reduction `reduce(op)(init)(xs)`.
pub fn is_fully_applied_reduce() -> Strategy<Term> {
    is_applied(is_applied(is_applied(is_reduce())))
}

/// `baseline = DFNF ; fuseReduceMap @ topDown`: the multiplication fused into the
/// reduction, one loop per dimension.
pub fn baseline() -> Strategy<Term> {
    named("baseline", dfnf() >> top_down(fuse_reduce_map()))
}

/// `blocking = baseline ; tile(32, 32) @ outermost(mapNest(2)) ;; reduceMapFission @
/// outermost(isApplied(isApplied(isReduceSeq))) ;; splitStrategy(4) @
/// innermost(isFullyAppliedReduce) ;; reorder([1, 2, 5, 6, 3, 4])`: 32x32 blocks of
/// the result, the reduction split by 4, both reduction loops outside the two loops
/// within a block (TVM's `xo, yo, ko, ki, xi, yi`).
pub fn blocking() -> Strategy<Term> {
    let s = then(
        then(
            then(
                baseline() >> outermost(map_nest(2), tile(32, 32)),
                outermost(
                    is_applied(is_applied(is_applied(is_reduce_seq()))),
                    reduce_map_fission(),
                ),
            ),
            innermost(is_fully_applied_reduce(), split_strategy(4)),
        ),
        reorder(&[1, 2, 5, 6, 3, 4]),
    );
    let _ = (map_fusion, normalize::<Term>);
    named("blocking", s)
}
