//! The library's GPU strategies: maps and reductions on global threads (`gpuGlobal`),
//! a stencil in tiles of work groups staged in shared memory (`gpuStencil`), and the
//! classic SGEMM (`gpuSgemm`): block tiles of the result on work groups,
//! register tiles on their local threads, the reduction over tiles of `k`, the tiles
//! of A and B each step reads staged in shared memory.

use super::pattern::{applied, call, named, rule_with_names};
use super::reduction::{lambda2, mentions, neutral, operator};
use super::*;
use crate::nat::Nat;
use crate::term::{Expr, Ident, Term};
use crate::types::TypeKind;
use elevate_core::{NameSupply, Strategy};
use elevate_strategies::text::{ArgError, Registry};
use elevate_strategies::{normalize, recursive, sometd, top_down, try_};

/// The most threads of a block on NVIDIA GPUs.
const MAX_BLOCK_THREADS: i64 = 1024;

/// `gpuGlobal = DFNF ; try(normalize(fuseReduceMap)) ; kernels` with `kernels =
/// sometd(nest ; argument(try(kernels)))`, `nest = (isFullyAppliedMap ; on(1) ;
/// function(argument(on(0) @ outermost(isFullyAppliedMap)))) <+ (isFullyAppliedMap ;
/// on(0))` and `on(d) = function(function(mapGlobal(d)))`: each map nest's two outer
/// maps on the grid's global threads (rows on y, columns on x; one map on x where
/// there is only one), in every kernel (the outermost nests and those of the arrays
/// they read), what each thread computes (a dot product, a row's sum) a sequential
/// loop in it, the work of a reduction fused into it first (so that no map is left
/// inside a reduction). It fails where there is no map.
///
/// ```
/// use elevate_rise::{registry, Program};
/// use elevate_core::Context;
/// let program = Program::load(
///     "def mv(a: 64.32.f32, x: 32.f32) =
///        a |> map(fun(row => zip(row, x) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))",
///     None,
/// )
/// .unwrap();
/// let s = registry().parse("gpuGlobal").unwrap();
/// let mapped = s.apply(&program.entry().term, &mut Context::default()).unwrap();
/// let text = elevate_rise::print_term(&mapped);
/// assert!(text.contains("mapGlobal(0, ") && !text.contains("mapGlobal(1, "));
/// ```
pub fn gpu_global() -> Strategy<Term> {
    // A traversal visits a map's function (and the maps inside it) before the `map`
    // itself: each is put on threads at the head of its applied map.
    let on = |d| function(function(map_global(d)));
    let columns = outermost(is_fully_applied_map(), on(0));
    let nest = (is_fully_applied_map() >> on(1) >> function(argument(columns)))
        | (is_fully_applied_map() >> on(0));
    // Each kernel: the outermost map nests, and those of the arrays they read.
    let kernels = recursive("gpuKernels", |me| sometd(nest >> argument(try_(me))));
    named(
        "gpuGlobal",
        dfnf() >> try_(normalize(fuse_reduce_map())) >> kernels,
    )
}

/// The sizes of [`gpu_sgemm`]: a block's tile of C (`rows` x `cols`), a thread's
/// (`thread_rows` x `thread_cols`), and the reduction's tile (`depth`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SgemmTiles {
    /// Rows of C per block.
    pub rows: i64,
    /// Columns of C per block.
    pub cols: i64,
    /// Rows of C per thread.
    pub thread_rows: i64,
    /// Columns of C per thread.
    pub thread_cols: i64,
    /// Steps of the reduction per tile of A and B staged.
    pub depth: i64,
}

/// `gpuSgemm(bm, bn, tm, tn, bk)`: a matrix product `a |> map(fun(x => bt |>
/// map(fun(y => zip(x, y) |> map(f) |> reduce(add, 0)))))` (`bt` not reading `x`: the
/// transposed B) as the classic SGEMM: a `bm` x `bn` tile of the result on each work
/// group (`mapWorkGroup(1)` over rows, `mapWorkGroup(0)` over columns), a `tm` x `tn`
/// tile of it on each of the group's `bm/tm` x `bn/tn` local threads (`mapLocal`), the
/// reduction `bk` steps at a time (`split(bk)` and `reduceSeq` of `reduceSeq`), the
/// rows of A and B each group reads through `toShared` (on the GPU target, staged in
/// shared memory a tile of the reduction at a time). Every size must divide the one it
/// tiles, and a block has at most 1,024 threads. It rewrites the topmost product in
/// the program.
pub fn gpu_sgemm(t: SgemmTiles) -> Strategy<Term> {
    let SgemmTiles {
        rows,
        cols,
        thread_rows,
        thread_cols,
        depth,
    } = t;
    let name = format!("gpuSgemm({rows}, {cols}, {thread_rows}, {thread_cols}, {depth})");
    let rewrite = rule_with_names("sgemm", move |term, names| sgemm(term, t, names));
    named(name, top_down(rewrite))
}

/// The SGEMM form of `term`, if it is a matrix product the tiles divide.
fn sgemm(term: &Term, t: SgemmTiles, names: &mut NameSupply) -> Option<Term> {
    let (_, outer) = applied(term, Prim::Map, 2)?;
    let (a, (x, row)) = (&outer[1], lambda(&outer[0])?);
    let (_, inner) = applied(row, Prim::Map, 2)?;
    let (bt, (y, body)) = (&inner[1], lambda(&inner[0])?);
    if mentions(bt, x) {
        return None;
    }
    let (_, reduce) = applied(body, Prim::Reduce, 3)?;
    let (op, init) = (&reduce[0], &reduce[1]);
    let (_, work) = applied(&reduce[2], Prim::Map, 2)?;
    let f = &work[0];
    let (_, zipped) = applied(&work[1], Prim::Zip, 2)?;
    let is = |e: &Term, v: &Ident| matches!(e.expr(), Expr::Var(w) if w.id == v.id);
    let p = operator(op)?;
    if !(is(&zipped[0], x) && is(&zipped[1], y) && neutral(p, init)) || mentions(f, x) {
        return None;
    }
    // Sizes: a is n.k, bt is m.k.
    let (n, k) = matrix(a)?;
    let (m, k2) = matrix(bt)?;
    let divides = |d: i64, of: i64| d > 0 && of % d == 0;
    let threads = (t.rows / t.thread_rows.max(1)) * (t.cols / t.thread_cols.max(1));
    if k != k2
        || !divides(t.rows, n)
        || !divides(t.cols, m)
        || !divides(t.thread_rows, t.rows)
        || !divides(t.thread_cols, t.cols)
        || !divides(t.depth, k)
        || threads > MAX_BLOCK_THREADS
    {
        return None;
    }
    let fresh = |names: &mut NameSupply, s: &str| Ident::supplied(names, s);
    let (arows, bcols, ar, bc) = (
        fresh(names, "arows"),
        fresh(names, "bcols"),
        fresh(names, "ar"),
        fresh(names, "bc"),
    );
    let (xi, yj, acc, tile, s, q) = (
        fresh(names, "x"),
        fresh(names, "y"),
        fresh(names, "acc"),
        fresh(names, "tile"),
        fresh(names, "s"),
        fresh(names, "p"),
    );
    let v = Term::var;
    let cst = |n: i64| Nat::cst(n);
    // Each thread's dot product: the reduction over tiles of `depth`.
    let step = lambda2(
        s.clone(),
        q.clone(),
        Term::apps(op.clone(), [v(&s), Term::app(f.clone(), v(&q))]),
    );
    let per_tile = lambda2(
        acc.clone(),
        tile.clone(),
        call(Prim::ReduceSeq, &[], [step, v(&acc), v(&tile)]),
    );
    let tiles = call(
        Prim::Split,
        &[cst(t.depth)],
        [call(Prim::Zip, &[], [v(&xi), v(&yj)])],
    );
    let dot = call(Prim::ReduceSeq, &[], [per_tile, init.clone(), tiles]);
    // A thread's register tile, then the group's threads.
    let register_tile = call(
        Prim::MapSeq,
        &[],
        [
            Term::lambda(xi, call(Prim::MapSeq, &[], [Term::lambda(yj, dot), v(&bc)])),
            v(&ar),
        ],
    );
    let shared = |x: &Ident| call(Prim::ToShared, &[], [v(x)]);
    let columns = call(
        Prim::MapLocal,
        &[cst(0)],
        [
            Term::lambda(bc, register_tile),
            call(Prim::Split, &[cst(t.thread_cols)], [shared(&bcols)]),
        ],
    );
    let threads = call(
        Prim::MapLocal,
        &[cst(1)],
        [
            Term::lambda(ar, columns),
            call(Prim::Split, &[cst(t.thread_rows)], [shared(&arows)]),
        ],
    );
    // [ti][tj][i][j] -> [ti][i][tj][j] -> [ti * tm + i][tj * tn + j].
    let map_of = |f: Term, xs: Term| call(Prim::Map, &[], [f, xs]);
    let block_tile = call(
        Prim::Join,
        &[],
        [map_of(
            call(Prim::Map, &[], [Term::prim(Prim::Join)]),
            map_of(Term::prim(Prim::Transpose), threads),
        )],
    );
    let groups = call(
        Prim::MapWorkGroup,
        &[cst(0)],
        [
            Term::lambda(bcols, block_tile),
            call(Prim::Split, &[cst(t.cols)], [bt.clone()]),
        ],
    );
    // [bj][r][c] -> [r][bj][c] -> [r][bj * bn + c].
    let band = map_of(Term::prim(Prim::Join), call(Prim::Transpose, &[], [groups]));
    let bands = call(
        Prim::MapWorkGroup,
        &[cst(1)],
        [
            Term::lambda(arows, band),
            call(Prim::Split, &[cst(t.rows)], [a.clone()]),
        ],
    );
    Some(call(Prim::Join, &[], [bands]))
}

/// `gpuStencil(bh, bw)`: a two-deep map nest `xs |> map(map(g))` (a stencil's
/// neighbourhoods, or any matrix) in `bh` x `bw` tiles, a tile on each work group
/// (`mapWorkGroup(1)` over bands of rows, `mapWorkGroup(0)` over the tiles of a band),
/// a point on each of its local threads (`mapLocal(1)`, `mapLocal(0)`), each tile
/// read through `toShared`: on the GPU target the block stages what its threads read
/// (for a stencil, its tile and the halo around it) once in shared memory. The sizes
/// must divide the nest's, and a block has at most 1,024 threads. It rewrites the
/// topmost such nest.
pub fn gpu_stencil(rows: i64, cols: i64) -> Strategy<Term> {
    let rewrite = rule_with_names("stencilTiles", move |term, names| {
        stencil(term, rows, cols, names)
    });
    named(format!("gpuStencil({rows}, {cols})"), top_down(rewrite))
}

/// The tiled form of `term`, if it is a two-deep map nest the tiles divide.
fn stencil(term: &Term, rows: i64, cols: i64, names: &mut NameSupply) -> Option<Term> {
    let (_, outer) = applied(term, Prim::Map, 2)?;
    let xs = &outer[1];
    // `map(g)`, or `fun(r => r |> map(g))`.
    let g = match applied(&outer[0], Prim::Map, 1) {
        Some((_, f)) => f[0].clone(),
        None => {
            let (r, body) = lambda(&outer[0])?;
            let (_, inner) = applied(body, Prim::Map, 2)?;
            let is_r = matches!(inner[1].expr(), Expr::Var(v) if v.id == r.id);
            if !is_r || mentions(&inner[0], r) {
                return None;
            }
            inner[0].clone()
        }
    };
    let (n, m) = matrix(xs)?;
    let divides = |d: i64, of: i64| d > 0 && of % d == 0;
    if !divides(rows, n) || !divides(cols, m) || rows.saturating_mul(cols) > MAX_BLOCK_THREADS {
        return None;
    }
    let (band, tile) = (
        Ident::supplied(names, "band"),
        Ident::supplied(names, "tile"),
    );
    let cst = |n: i64| Nat::cst(n);
    let points = call(
        Prim::MapLocal,
        &[cst(1)],
        [
            call(Prim::MapLocal, &[cst(0)], [g]),
            call(Prim::ToShared, &[], [Term::var(&tile)]),
        ],
    );
    // [r][m] -> [r][m / bw][bw] -> [m / bw][r][bw]: the band's tiles.
    let tiles = call(
        Prim::Transpose,
        &[],
        [call(
            Prim::Map,
            &[],
            [call(Prim::Split, &[cst(cols)], []), Term::var(&band)],
        )],
    );
    let groups = call(
        Prim::MapWorkGroup,
        &[cst(0)],
        [Term::lambda(tile, points), tiles],
    );
    // [m / bw][r][bw] -> [r][m / bw][bw] -> [r][m].
    let band_out = call(
        Prim::Map,
        &[],
        [Term::prim(Prim::Join), call(Prim::Transpose, &[], [groups])],
    );
    let bands = call(
        Prim::MapWorkGroup,
        &[cst(1)],
        [
            Term::lambda(band, band_out),
            call(Prim::Split, &[cst(rows)], [xs.clone()]),
        ],
    );
    Some(call(Prim::Join, &[], [bands]))
}

/// `fun(x => body)`: its parameter and body.
fn lambda(t: &Term) -> Option<(&Ident, &Term)> {
    match t.expr() {
        Expr::Lambda(x, _, body) => Some((x, body)),
        _ => None,
    }
}

/// The constant rows and columns of a matrix-typed term.
fn matrix(t: &Term) -> Option<(i64, i64)> {
    let TypeKind::Array(rows, row) = t.ty()?.kind() else {
        return None;
    };
    let TypeKind::Array(cols, _) = row.kind() else {
        return None;
    };
    Some((rows.as_const()?, cols.as_const()?))
}

/// Registers the GPU strategies in the strategy language.
pub(super) fn register(r: &mut Registry<Term>) {
    r.add(
        "gpuGlobal",
        "",
        "every kernel's map nest on global GPU threads (its two outer maps: rows on y, columns on x), each thread's reduction a loop in it: DFNF ; try(normalize(fuseReduceMap)) ; kernels, kernels = sometd(nest ; argument(try(kernels))), nest = (isFullyAppliedMap ; on(1) ; function(argument(on(0) @ outermost(isFullyAppliedMap)))) <+ (isFullyAppliedMap ; on(0)), on(d) = function(function(mapGlobal(d)))",
        |a| match a {
            [] => Ok(gpu_global()),
            _ => Err(ArgError::invalid(None, "takes no arguments")),
        },
    );
    r.add(
        "gpuStencil",
        "(bh, bw)",
        "a two-deep map nest (a stencil's neighbourhoods) in bh x bw tiles: a tile on each work group, a point on each local thread, each tile read through toShared (on the GPU, its tile and halo staged in shared memory)",
        |a| match super::sizes(a, 0)?.as_slice() {
            [bh, bw] => Ok(gpu_stencil(*bh, *bw)),
            s => Err(ArgError::invalid(
                None,
                format!("expects 2 sizes (bh, bw), found {}", s.len()),
            )),
        },
    );
    r.add(
        "gpuSgemm",
        "(bm, bn, tm, tn, bk)",
        "a matrix product as the classic SGEMM: bm x bn tiles of C on work groups, tm x tn on each local thread, the reduction bk at a time, the tiles of A and B staged in shared memory (toShared)",
        |a| match super::sizes(a, 0)?.as_slice() {
            [bm, bn, tm, tn, bk] => Ok(gpu_sgemm(SgemmTiles {
                rows: *bm,
                cols: *bn,
                thread_rows: *tm,
                thread_cols: *tn,
                depth: *bk,
            })),
            s => Err(ArgError::invalid(
                None,
                format!("expects 5 sizes (bm, bn, tm, tn, bk), found {}", s.len()),
            )),
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_support::same_program;
    use crate::{print_term, registry, Program};
    use elevate_core::Context;

    /// A 128 x 64 by 64 x 96 product, as `matmul.rise` writes it.
    const PRODUCT: &str = "def mm(a: 128.64.f32, b: 64.96.f32) : 128.96.f32 =
      a |> map(fun(arow => transpose(b) |> map(fun(bcol =>
        zip(arow, bcol) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))";

    fn product() -> Term {
        Program::load(PRODUCT, None).unwrap().entry().term.clone()
    }

    fn tiles(rows: i64, cols: i64, thread_rows: i64, thread_cols: i64, depth: i64) -> SgemmTiles {
        SgemmTiles {
            rows,
            cols,
            thread_rows,
            thread_cols,
            depth,
        }
    }

    #[test]
    fn gpu_sgemm_puts_block_tiles_on_work_groups_register_tiles_on_threads_and_stages_a_and_b() {
        let before = product();
        let after = gpu_sgemm(tiles(32, 32, 4, 2, 16))
            .apply(&before, &mut Context::default())
            .unwrap();
        let text = print_term(&after);
        for expected in [
            "split(32) |> mapWorkGroup(1",
            "split(32) |> mapWorkGroup(0",
            "arows |> toShared |> split(4) |> mapLocal(1",
            "bcols |> toShared |> split(2) |> mapLocal(0",
            "split(16) |> reduceSeq",
        ] {
            assert!(text.contains(expected), "no `{expected}` in {text}");
        }
        same_program(&before, &after);
        // The text form is the strategy.
        let parsed = registry().parse("gpuSgemm(32, 32, 4, 2, 16)").unwrap();
        let again = parsed.apply(&before, &mut Context::default()).unwrap();
        assert!(again.alpha_eq(&after));
    }

    #[test]
    fn gpu_sgemm_takes_only_tiles_that_divide_and_blocks_a_gpu_has() {
        let before = product();
        for bad in [
            tiles(48, 32, 4, 4, 16), // 48 does not divide 128
            tiles(32, 32, 4, 4, 24), // 24 does not divide 64
            tiles(32, 32, 3, 4, 16), // 3 does not divide 32
            tiles(64, 96, 1, 1, 16), // 6,144 threads in a block
        ] {
            assert!(
                gpu_sgemm(bad)
                    .apply(&before, &mut Context::default())
                    .is_err(),
                "{bad:?}"
            );
        }
        let e = registry().parse("gpuSgemm(64, 64, 4, 4)").unwrap_err();
        assert!(e.to_string().contains("expects 5 sizes"), "{e}");
        // Not a product: a map of sums.
        let sums = Program::load(
            "def f(a: 8.8.f32) = a |> map(fun(r => reduce(add, 0.0, r)))",
            None,
        )
        .unwrap();
        assert!(gpu_sgemm(tiles(4, 4, 2, 2, 4))
            .apply(&sums.entry().term, &mut Context::default())
            .is_err());
    }

    #[test]
    fn gpu_global_maps_rows_on_y_and_columns_on_x_with_no_map_left_in_a_reduction() {
        let before = product();
        let after = gpu_global()
            .apply(&before, &mut Context::default())
            .unwrap();
        let text = print_term(&after);
        assert!(
            text.contains("mapGlobal(1, ") && text.contains("mapGlobal(0, "),
            "{text}"
        );
        assert!(!text.contains("|> map("), "{text}");
        same_program(&before, &after);
        // One map: on x.
        let scale = Program::load("def f(x: 64.f32) = x |> map(fun(v => v * 2.0))", None).unwrap();
        let mapped = gpu_global()
            .apply(&scale.entry().term, &mut Context::default())
            .unwrap();
        assert!(print_term(&mapped).contains("mapGlobal(0, "));
        // No map at all: nothing to put on threads.
        let sum = Program::load("def f(x: 64.f32) = x |> reduce(add, 0.0)", None).unwrap();
        assert!(gpu_global()
            .apply(&sum.entry().term, &mut Context::default())
            .is_err());
    }

    /// A 3 x 3 box blur of a 34 x 34 image, as the map nest of its neighbourhoods.
    const BLUR: &str = "def blur(img: 34.34.f32) : 32.32.f32 =
      img |> map(slide(3, 1)) |> slide(3, 1) |> map(transpose)
        |> map(map(fun(nbh => nbh |> join |> map(fun(x => x * 0.11111111)) |> reduce(add, 0.0))))";

    #[test]
    fn gpu_stencil_puts_tiles_on_work_groups_points_on_threads_and_stages_each_tile() {
        let before = Program::load(BLUR, None).unwrap().entry().term.clone();
        let after = gpu_stencil(16, 8)
            .apply(&before, &mut Context::default())
            .unwrap();
        let text = print_term(&after);
        for expected in [
            "split(16) |> mapWorkGroup(1",
            "map(split(8)) |> transpose |> mapWorkGroup(0",
            "tile |> toShared |> mapLocal(1, mapLocal(0",
        ] {
            assert!(text.contains(expected), "no `{expected}` in {text}");
        }
        same_program(&before, &after);
        for (rows, cols) in [(5, 8), (16, 64), (32, 64)] {
            assert!(
                gpu_stencil(rows, cols)
                    .apply(&before, &mut Context::default())
                    .is_err(),
                "{rows} x {cols}"
            );
        }
        let parsed = registry().parse("gpuStencil(16, 8)").unwrap();
        assert!(parsed
            .apply(&before, &mut Context::default())
            .unwrap()
            .alpha_eq(&after));
    }
}
