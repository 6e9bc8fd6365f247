//! The library strategy for loop nests around reductions other than a matrix
//! product's or a convolution's own: a batched product's matrices, a depthwise
//! convolution's, pooling's or a separable filter's pixels. Each nest of two maps
//! around a reduction gets `registerTile`'s register tiles (rows unrolled around a
//! vector of pixels or columns, the reduction outside them), with nothing packed.

use super::conv::reduction_nest;
use super::pattern::named;
use super::predicates::{dfnf, is_applied, is_map};
use super::reduction::fuse_reduce_map;
use super::tiling::{register_tile, tile_nd_list};
use super::traversal::outermost;
use crate::term::Term;
use elevate_core::Strategy;
use elevate_strategies::text::{ArgError, Registry};
use elevate_strategies::{normalize, top_down, try_, try_all};

/// `reductionTiles(mc, nc, r, w) = DFNF ; try(normalize(fuseReduceMap)) ; DFNF ;
/// topDown(t) ; DFNF ; tryAll(t) ;; parallel @ outermost(isApplied(isMap))` with `t
/// = reductionNest(2) ; tileNDList([mc, nc]) ;; registerTile(r, w)`: every nest of two
/// maps around a reduction (both passes of a separable filter) in `mc x nc` tiles, each holding
/// register tiles of `r` rows by `w` vector lanes that accumulate across the
/// reduction (a window's taps, a product's `k`), and the outermost map in parallel.
/// A nest whose sizes the tiles do not divide is left as it is; the strategy fails
/// where it tiles none.
///
/// ```
/// use elevate_rise::{registry, Program};
/// use elevate_core::Context;
/// let program = Program::load(
///     "def pool(x: 4.17.17.f32) : 4.8.8.f32 = x |> map(fun(ch =>
///        ch |> map(slide(3, 2)) |> slide(3, 2) |> map(transpose)
///           |> map(map(fun(nbh => join(nbh) |> reduce(max, -1000.0))))))",
///     None,
/// )
/// .unwrap();
/// let s = registry().parse("reductionTiles(4, 8, 4, 8)").unwrap();
/// let tiled = s.apply(&program.entry().term, &mut Context::default()).unwrap();
/// let text = elevate_rise::print_term(&tiled);
/// assert!(text.contains("asVector(8)") && text.contains("mapSeqUnroll") && text.contains("mapPar"));
/// ```
pub fn reduction_tiles(mc: i64, nc: i64, rows: i64, lanes: i64) -> Strategy<Term> {
    let name = format!("reductionTiles({mc}, {nc}, {rows}, {lanes})");
    if let Some((_, what, small, large)) = super::misfit_register_tile(mc, nc, rows, lanes) {
        return super::catalogue::invalid(
            name,
            format!("{what} = {small} must divide the tile's {large}"),
        );
    }
    if lanes < 2 {
        return super::catalogue::invalid(name, "the vector width w must be at least 2".into());
    }
    let tiles =
        reduction_nest(2) >> tile_nd_list(&[mc, nc]) >> dfnf() >> register_tile(rows, lanes);
    // The outermost nest first, then every other, children first: `registerTile`
    // looks for its innermost maps anywhere in the term it is given, which must not
    // hold a nest it has already tiled (the first pass of a separable filter, in the
    // second pass's argument). A nest already tiled is not tiled again: its register
    // tiles' nest (`mc / r` by `nc / w`) is smaller than a tile.
    named(
        name,
        dfnf()
            >> try_(normalize(fuse_reduce_map()))
            >> dfnf()
            >> top_down(tiles.clone())
            >> dfnf()
            >> try_all(tiles)
            >> dfnf()
            >> outermost(is_applied(is_map()), super::parallel()),
    )
}

/// Registers `reductionTiles` in the strategy language.
pub(super) fn register(r: &mut Registry<Term>) {
    r.add(
        "reductionTiles",
        "(mc, nc, r, w)",
        "every nest of two maps around a reduction (a batched product, a depthwise convolution, pooling, a separable filter's passes) in mc x nc tiles with r x w register tiles, the outermost map in parallel: DFNF ; try(normalize(fuseReduceMap)) ; DFNF ; topDown(t) ; DFNF ; tryAll(t) ;; parallel @ outermost(isApplied(isMap)), t = reductionNest(2) ; tileNDList([mc, nc]) ;; registerTile(r, w)",
        |a| match super::sizes(a, 0)?.as_slice() {
            [mc, nc, r, w] => {
                super::check_register_tile_args(*mc, *nc, *r, *w)?;
                if *w < 2 {
                    return Err(ArgError::invalid(
                        3,
                        format!("the vector width w must be at least 2, found {w}"),
                    ));
                }
                Ok(reduction_tiles(*mc, *nc, *r, *w))
            }
            s => Err(ArgError::invalid(
                None,
                format!("expects 4 sizes, found {}", s.len()),
            )),
        },
    );
}
