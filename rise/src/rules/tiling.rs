//! Loop-nest strategies: tiling, interchange and reordering of nested maps and
//! reductions (ELEVATE's `tile`, `tileND`, `interchange`, `reorder`).
//!
//! A loop nest in the rewrite normal form is a pipeline of maps whose lambdas hold
//! the inner loops' pipelines. The nest's levels are found by searching the stages of
//! each pipeline ([`stage`]) rather than by fixed positions, so the strategies work on
//! programs where other stages (joins, transposes) sit between the loops.

use super::algorithmic::{map_full_fission, map_fusion, split_join};
use super::lowering::{map_seq_unroll, vectorize};
use super::movement::{loop_interchange, split_before_map};
use super::pattern::named;
use super::predicates::{contains, dfnf, is_applied, is_lambda, is_map, rnf};
use super::reduction::{fuse_reduce_map, lift_reduce, reduce_seq_init_fusion};
use super::traversal::{argument, argument_of, body, fmap, function, innermost, outermost};
use crate::nat::Nat;
use crate::prim::Prim;
use crate::term::Term;
use elevate_core::Strategy;
use elevate_strategies::text::{bounded_int_arg, strategy_arg, ArgError, Registry, Value};
use elevate_strategies::MAX_APPLY_N;
use elevate_strategies::{id, normalize, printed_as, recursive, top_down, try_};
use std::fmt;
use std::sync::OnceLock;

/// `moveTowardsArgument(i)(s) = argument(argument(...(s)))` (`i` times): `s` on the
/// `i`-th stage of a pipeline, counting towards its input.
pub fn move_towards_argument(i: usize, s: Strategy<Term>) -> Strategy<Term> {
    let arg = s.clone();
    let text = move |f: &mut fmt::Formatter<'_>| write!(f, "moveTowardsArgument({i})({arg})");
    printed_as(
        "moveTowardsArgument",
        text,
        (0..i).fold(s, |s, _| argument(s)),
    )
}

/// `stage(s) = s <+ argument(stage(s))`: `s` on the first stage of a pipeline
/// `h(g(f(x)))` where it succeeds, from the output towards the input.
pub fn stage(s: Strategy<Term>) -> Strategy<Term> {
    let arg = s.clone();
    let text = move |f: &mut fmt::Formatter<'_>| write!(f, "stage({arg})");
    printed_as(
        "stage",
        text,
        recursive("stage", move |me| s | argument(me)),
    )
}

/// `s` on the loop `level` maps deep in a nest: level 0 is a stage of the pipeline
/// here, level `l` a stage of the pipeline in the lambda of a level `l - 1` map.
pub fn nest_level(level: usize, s: Strategy<Term>) -> Strategy<Term> {
    (0..level).fold(stage(s), |inner, _| stage(fmap(inner)))
}

/// `loopInterchangeAtLevel(l) = loopInterchange` at nest level `l`, then `RNF`: swaps
/// the loops at levels `l` and `l + 1`.
pub fn loop_interchange_at_level(level: usize) -> Strategy<Term> {
    named(
        format!("loopInterchangeAtLevel({level})"),
        nest_level(level, loop_interchange()) >> rnf(),
    )
}

/// `interchange(d)`: in a nest whose outermost dimension was just split into blocks
/// and elements (above `d - 1` already tiled dimensions: block loops, then element
/// loops), moves the outer element loop inwards past the `d - 1` inner block loops,
/// so that all block loops come first.
pub fn interchange(d: usize) -> Strategy<Term> {
    let swaps = (1..d).fold(rnf(), |s, level| s >> loop_interchange_at_level(level));
    named(format!("interchange({d})"), swaps)
}

/// `tileNDList([n1, ..., nd])` at an applied nest of `d` maps: each dimension `i`
/// split into blocks of `ni`, the block loops outside the element loops.
/// `[n] = splitJoin(n)`; `[n1, n2, ...] = fmap(tileNDList([n2, ...])) ; splitJoin(n1) ; interchange(d)`.
pub fn tile_nd_list(sizes: &[i64]) -> Strategy<Term> {
    let name = format!("tileNDList([{}])", list(sizes));
    if let Err(why) = check_sizes(sizes) {
        return super::catalogue::invalid(name, why);
    }
    let s = match sizes {
        [] => id(),
        [n] => split_join(*n),
        [n, rest @ ..] => {
            fmap(stage(tile_nd_list(rest))) >> split_join(*n) >> interchange(sizes.len())
        }
    };
    named(name, s)
}

/// `tile(x, y) = tileNDList([x, y])`: 2-D tiling of a two-deep map nest.
pub fn tile(x: i64, y: i64) -> Strategy<Term> {
    let name = format!("tile({x}, {y})");
    match check_sizes(&[x, y]) {
        Ok(()) => named(name, tile_nd_list(&[x, y])),
        Err(why) => super::catalogue::invalid(name, why),
    }
}

/// `tileND(d)(n) = tileNDList([n, ..., n])` (`d` times).
pub fn tile_nd(d: usize, n: i64) -> Strategy<Term> {
    let name = format!("tileND({d})({n})");
    match check_sizes(&[n]) {
        Ok(()) => named(name, tile_nd_list(&vec![n; d])),
        Err(why) => super::catalogue::invalid(name, why),
    }
}

/// `subTile([r1, ..., rd]) = topDown(nestLevel(d, tileNDList([r1, ..., rd])))`: in a
/// nest that `tileNDList([c1, ..., cd])` tiled (its `d` block loops, then its `d`
/// element loops), the element loops tiled once more, so that a tile holds tiles of
/// `r1 x ... x rd` elements: the loops are then the `d` block loops, the `d` loops
/// over the small tiles of a block, and the `d` loops within a small tile. Each
/// `ri` must divide `ci`; the strategy fails cleanly where it does not, or where no
/// nest has `d` element loops `d` levels down.
pub fn sub_tile(sizes: &[i64]) -> Strategy<Term> {
    let name = format!("subTile([{}])", list(sizes));
    if let Err(why) = check_sizes(sizes) {
        return super::catalogue::invalid(name, why);
    }
    named(
        name,
        top_down(nest_level(sizes.len(), tile_nd_list(sizes))) >> dfnf(),
    )
}

/// `registerTile(r, w)`, at a nest of two dimensions with a reduction inside (a
/// matrix product's rows, columns and dot products) that `tileNDList([c1, c2])`
/// tiled: register tiles of `r` rows and `w` columns inside each `c1 x c2` tile, the
/// reduction loop between the tile's loops and the register tile's, the `w` columns
/// on vectors and the `r` rows unrolled around them, so that the `r` vectors of
/// partial sums stay in registers across the reduction:
///
/// `registerTile(r, w) = subTile([r, w]) ;; reorder([1, 2, 3, 4, 7, 5, 6]) ;;
/// vectorize(w) @ innermost(isFullyAppliedMap) ;; function(mapSeqUnroll) @
/// innermost(isApplied(isMap) ; argument(isLambda) ; contains("asVector(w)"))`
///
/// (loops: blocks of rows and of columns, register tiles of a block by rows and by
/// columns, the reduction, the rows of a register tile, its columns). `r` must divide
/// `c1` and `w` divide `c2`; `w` is at least 2.
pub fn register_tile(rows: i64, lanes: i64) -> Strategy<Term> {
    register_tile_blocked(rows, lanes, None)
}

/// `registerTile(r, w, kc)`: [`register_tile`] with the reduction in blocks of `kc`,
/// the loop over blocks outside the register tiles (which accumulate into the cache
/// tile's block of results) and the loop within a block between the register tiles'
/// loops and their rows, so that the `kc x w` slice of `b` a register tile reads
/// stays in the L1 cache while the tile's rows sweep it (BLIS's `kc`):
///
/// `registerTile(r, w, kc) = subTile([r, w]) ;; reduceMapFission @
/// outermost(isApplied(isApplied(isApplied(isReduceSeq)))) ;; splitStrategy(kc) @
/// innermost(isFullyAppliedReduce) ;; reorder([1, 2, 7, 3, 4, 8, 5, 6]) ;;
/// vectorize(w) ... ;; function(mapSeqUnroll) ...` (as `registerTile(r, w)`). `kc`
/// must divide the reduction's length.
pub fn register_tile_blocked(rows: i64, lanes: i64, kc: Option<i64>) -> Strategy<Term> {
    let name = match kc {
        None => format!("registerTile({rows}, {lanes})"),
        Some(kc) => format!("registerTile({rows}, {lanes}, {kc})"),
    };
    if let Err(why) = check_sizes(&[rows, lanes, kc.unwrap_or(1)]) {
        return super::catalogue::invalid(name, why);
    }
    if lanes < 2 {
        return super::catalogue::invalid(
            name,
            format!("the vector width w must be at least 2, found {lanes}"),
        );
    }
    let vector = Term::nat_app(Term::prim(Prim::AsVector), Nat::cst(lanes));
    let rows_of_vectors = is_applied(is_map()) >> argument(is_lambda()) >> contains(vector);
    let loops = match kc {
        None => sub_tile(&[rows, lanes]) >> reorder(&[1, 2, 3, 4, 7, 5, 6]),
        Some(kc) => {
            sub_tile(&[rows, lanes])
                >> dfnf()
                >> outermost(
                    is_applied(is_applied(is_applied(super::is_reduce_seq()))),
                    super::reduce_map_fission(),
                )
                >> dfnf()
                >> innermost(super::is_fully_applied_reduce(), super::split_strategy(kc))
                >> dfnf()
                >> reorder(&[1, 2, 7, 3, 4, 8, 5, 6])
        }
    };
    let steps = loops
        >> dfnf()
        >> innermost(super::is_fully_applied_map(), vectorize(lanes))
        >> dfnf()
        >> innermost(rows_of_vectors, function(map_seq_unroll()));
    named(name, steps)
}

fn list(sizes: &[i64]) -> String {
    sizes
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The first size of a register tile `r x w` that does not divide its cache tile's
/// `mc x nc` (or is not positive): its position among `(mc, nc, r, w)`, its name, the
/// size and the cache tile's.
pub(super) fn misfit_register_tile(
    mc: i64,
    nc: i64,
    rows: i64,
    lanes: i64,
) -> Option<(usize, &'static str, i64, i64)> {
    [(2, "r", rows, mc), (3, "w", lanes, nc)]
        .into_iter()
        .find(|(_, _, small, large)| *small <= 0 || *large <= 0 || large % small != 0)
}

/// [`misfit_register_tile`] as an error at the argument written.
pub(super) fn check_register_tile_args(
    mc: i64,
    nc: i64,
    rows: i64,
    lanes: i64,
) -> Result<(), ArgError> {
    match misfit_register_tile(mc, nc, rows, lanes) {
        Some((index, _, small, large)) => Err(ArgError::invalid(
            index,
            format!("{small} must divide the tile's {large}"),
        )),
        None => Ok(()),
    }
}

/// Whether every tile size is positive.
fn check_sizes(sizes: &[i64]) -> Result<(), String> {
    match sizes.iter().find(|&&n| n <= 0) {
        Some(n) => Err(format!("a tile size must be positive, found {n}")),
        None => Ok(()),
    }
}

/// The one argument of `tileNDList` and `subTile`: a list of at most
/// [`MAX_NEST_DEPTH`] positive tile sizes.
fn nest_sizes(arguments: &[Value<Term>]) -> Result<&[i64], ArgError> {
    match arguments {
        [Value::List(l)] if l.len() <= MAX_NEST_DEPTH => {
            check_sizes(l).map_err(|why| ArgError::invalid(0, why))?;
            Ok(l)
        }
        [Value::List(l)] => Err(ArgError::invalid(
            0,
            format!("takes at most {MAX_NEST_DEPTH} sizes, found {}", l.len()),
        )),
        _ => Err(ArgError::invalid(None, "expects one list of sizes")),
    }
}

/// Whether `perm` is a permutation of the loop depths `1..=k`.
fn permutation(perm: &[usize]) -> Result<(), String> {
    let mut sorted = perm.to_vec();
    sorted.sort_unstable();
    if sorted == (1..=perm.len()).collect::<Vec<_>>() {
        return Ok(());
    }
    let text: Vec<String> = perm.iter().map(usize::to_string).collect();
    Err(format!(
        "[{}] is not a permutation of the loop depths 1 to {}",
        text.join(", "),
        perm.len()
    ))
}

/// `freduce(s)`: `s` on the body of the operator of `reduceSeq(fun(acc, y => b))(init)(xs)`.
pub fn freduce(s: Strategy<Term>) -> Strategy<Term> {
    let arg = s.clone();
    let text = move |f: &mut fmt::Formatter<'_>| write!(f, "freduce({arg})");
    let into = |p: Prim, s: Strategy<Term>| function(function(argument_of(p, body(body(s)))));
    let both = into(Prim::ReduceSeq, s.clone()) | into(Prim::Reduce, s);
    printed_as("freduce", text, both)
}

/// One loop level down: into a map's lambda or a reduction's operator, through the
/// stages of the pipeline found there.
fn step_down(s: Strategy<Term>) -> Strategy<Term> {
    fmap(stage(s.clone())) | freduce(stage(s))
}

/// `s` on the loop at `depth` (1 = a stage of the pipeline here).
fn at_depth(depth: usize, s: Strategy<Term>) -> Strategy<Term> {
    stage((1..depth).fold(s, |s, _| step_down(s)))
}

/// Swaps the loop here with the loop directly inside it: a map over a reduction
/// becomes a reduction over maps (`liftReduce`, after folding a combined start
/// value into the reduction), two maps swap (`loopInterchange`).
///
/// One shared instance, like [`dfnf`]: `reorder` swaps loops many times, and the
/// traversal's memo of where it failed then carries over from one swap to the next.
fn swap_with_inner() -> Strategy<Term> {
    static SWAP: OnceLock<Strategy<Term>> = OnceLock::new();
    SWAP.get_or_init(|| {
        let absorb = fmap(top_down(reduce_seq_init_fusion()));
        lift_reduce() | (absorb >> dfnf() >> lift_reduce()) | loop_interchange()
    })
    .clone()
}

/// Brings the loop `depth` levels down (1 = here) up to this level, one swap at a
/// time from the inside out.
fn move_up(depth: usize) -> Strategy<Term> {
    (2..=depth).rev().fold(id(), |s, j| {
        s >> at_depth(j - 1, swap_with_inner()) >> rnf()
    })
}

/// `reorder([p1, ..., pk])`: permutes the `k` loops of a nest (maps and reductions),
/// outermost first: the loop at depth `p1` becomes the outermost, and so on. A
/// reduction moves outwards past maps (`liftReduce`), a map past maps
/// (`loopInterchange`). Applied at the first nest, top-down, where it succeeds, after
/// a normalization that makes each loop's body the next loop.
pub fn reorder(perm: &[usize]) -> Strategy<Term> {
    let text = perm
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    if let Err(why) = permutation(perm) {
        return super::catalogue::invalid(format!("reorder([{text}])"), why);
    }
    named(
        format!("reorder([{text}])"),
        norm_for_reorder() >> top_down(reorder_rec(perm)) >> rnf(),
    )
}

/// `(splitBeforeMap @ topDown) ;; (fuseReduceMap @ topDown) ;; (fuseReduceMap @ topDown) ;; RNF`,
/// each step optional: splits move before the work mapped over their input, and that
/// work is fused into the reductions, so that each loop's body is the next loop.
fn norm_for_reorder() -> Strategy<Term> {
    // One instance applied twice, so that the second pass skips the subterms where
    // the first found nothing to fuse.
    let fuse = try_(top_down(fuse_reduce_map())) >> dfnf();
    dfnf() >> normalize(split_before_map()) >> dfnf() >> fuse.clone() >> fuse >> rnf()
}

fn reorder_rec(perm: &[usize]) -> Strategy<Term> {
    let Some((&head, tail)) = perm.split_first() else {
        return id();
    };
    let rest: Vec<usize> = tail
        .iter()
        .map(|&x| if x < head { x } else { x - 1 })
        .collect();
    if rest.is_empty() {
        return move_up(head);
    }
    move_up(head) >> stage(step_down(reorder_rec(&rest)))
}

/// `fmapRNF(s) = DFNF ; try(mapFusion) ; DFNF ; fmap(s) ; DFNF ; try(mapFullFission)`:
/// `s` inside an applied map's function, after fusing it with the map before it,
/// fissioned again afterwards. (ELEVATE requires the fusion to succeed; here a map
/// that has no map before it is entered as it is.)
pub fn fmap_rnf(s: Strategy<Term>) -> Strategy<Term> {
    let arg = s.clone();
    let text = move |f: &mut fmt::Formatter<'_>| write!(f, "fmapRNF({arg})");
    let steps =
        dfnf() >> try_(map_fusion()) >> dfnf() >> fmap(s) >> dfnf() >> try_(map_full_fission());
    printed_as("fmapRNF", text, steps)
}

/// `mapped(s) = s <+ fmapRNF(mapped(s))`: `s` here, or inside the functions of the
/// maps, however deeply nested.
pub fn mapped(s: Strategy<Term>) -> Strategy<Term> {
    let arg = s.clone();
    let text = move |f: &mut fmt::Formatter<'_>| write!(f, "mapped({arg})");
    printed_as(
        "mapped",
        text,
        recursive("mapped", move |me| s | fmap_rnf(me)),
    )
}

/// The most dimensions or loop levels that the loop-nest strategies take: building
/// one costs a power of its depth (pipeline stages take up to `MAX_APPLY_N`).
const MAX_NEST_DEPTH: usize = 64;

/// Registers the loop-nest strategies in the strategy language; tile sizes must be
/// positive and a reordering a permutation, or the text is an error where it is
/// written.
pub(super) fn register(r: &mut Registry<Term>) {
    r.add(
        "tile",
        "(x, y)",
        "2-D tiling of a two-deep map nest: tileNDList([x, y])",
        |a| match super::sizes(a, 0)?.as_slice() {
            [x, y] => Ok(tile(*x, *y)),
            s => Err(ArgError::invalid(
                None,
                format!("expects 2 sizes, found {}", s.len()),
            )),
        },
    );
    r.add(
        "tileND",
        "(d)(n)",
        "d-dimensional tiling with blocks of n",
        |a| {
            let d = bounded_int_arg(a, 0, MAX_NEST_DEPTH)?;
            match super::sizes(a, 1)?.as_slice() {
                [n] => Ok(tile_nd(d, *n)),
                s => Err(ArgError::invalid(
                    None,
                    format!("expects a dimension and 1 size, found {} sizes", s.len()),
                )),
            }
        },
    );
    r.add(
        "tileNDList",
        "([n1, ..., nd])",
        "tiling of a d-deep map nest: fmap(tileNDList(rest)) ; splitJoin(n1) ; interchange(d)",
        |a| nest_sizes(a).map(tile_nd_list),
    );
    r.add(
        "subTile",
        "([r1, ..., rd])",
        "in a nest tiled by tileNDList([c1, ..., cd]), the d element loops tiled again: topDown(nestLevel(d, tileNDList([r1, ..., rd])))",
        |a| nest_sizes(a).map(sub_tile),
    );
    r.add(
        "registerTile",
        "(r, w, kc?)",
        "in a tiled 2-D nest with a reduction: r x w register tiles, the reduction outside them, w columns on vectors, r rows unrolled: subTile([r, w]) ;; reorder([1, 2, 3, 4, 7, 5, 6]) ;; vectorize(w) ;; mapSeqUnroll on the rows; with kc, the reduction in blocks of kc, the loop over blocks outside the register tiles",
        |a| match super::sizes(a, 0)?.as_slice() {
            [_, 1] | [_, 1, _] => Err(ArgError::invalid(
                1,
                "the vector width w must be at least 2, found 1",
            )),
            [r, w] => Ok(register_tile(*r, *w)),
            [r, w, kc] => Ok(register_tile_blocked(*r, *w, Some(*kc))),
            s => Err(ArgError::invalid(
                None,
                format!("expects 2 or 3 sizes, found {}", s.len()),
            )),
        },
    );
    r.add(
        "interchange",
        "(d)",
        "after a split of the outermost of d tiled dimensions: moves its element loop inside the block loops",
        |a| Ok(interchange(bounded_int_arg(a, 0, MAX_NEST_DEPTH)?)),
    );
    r.add(
        "loopInterchangeAtLevel",
        "(l)",
        "loopInterchange at nest level l, then RNF",
        |a| {
            Ok(loop_interchange_at_level(bounded_int_arg(
                a,
                0,
                MAX_NEST_DEPTH,
            )?))
        },
    );
    r.add(
        "reorder",
        "([p1, ..., pk])",
        "permutes the loops of a nest (maps and reductions): the loop at depth p1 becomes the outermost, ...",
        |a| match a {
            [Value::List(l)] => {
                let perm: Vec<usize> = l.iter().map(|&p| usize::try_from(p).unwrap_or(0)).collect();
                permutation(&perm).map_err(|why| ArgError::invalid(0, why))?;
                Ok(reorder(&perm))
            }
            _ => Err(ArgError::invalid(
                None,
                "expects one list of loop depths (1 = outermost)",
            )),
        },
    );
    r.add(
        "moveTowardsArgument",
        "(i)(s)",
        "s on the i-th stage of a pipeline, towards its input: argument^i(s)",
        |a| {
            Ok(move_towards_argument(
                bounded_int_arg(a, 0, MAX_APPLY_N)?,
                strategy_arg(a, 1)?,
            ))
        },
    );
    r.unary(
        "stage",
        "s on the first stage of a pipeline where it succeeds",
        stage,
    );
    r.unary(
        "fmapRNF",
        "DFNF ; try(mapFusion) ; DFNF ; fmap(s) ; DFNF ; try(mapFullFission)",
        fmap_rnf,
    );
    r.unary(
        "mapped",
        "s <+ fmapRNF(mapped(s)): s here or inside the functions of nested maps",
        mapped,
    );
    r.unary(
        "freduce",
        "s on the body of a reduction's operator",
        freduce,
    );
}
