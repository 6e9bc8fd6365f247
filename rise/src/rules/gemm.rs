//! The matrix-multiplication strategies of the ELEVATE paper's TVM case study
//! (`baseline`, `blocking`, `vectorization`, `loopPerm`, `arrayPacking`,
//! `cacheBlocks`, `par`), for `matmul.rise`'s
//! `a |> map(fun(arow => transpose(b) |> map(fun(bcol => zip(arow, bcol) |> map(mul) |> reduce(add, 0)))))`.

use super::catalogue::{EGraphUse, Make, Param, RuleDef};
use super::pattern::named;
use super::*;
use crate::term::Term;
use elevate_core::Strategy;
use elevate_strategies::text::{ArgError, ArgKind, Registry, Value};
use elevate_strategies::top_down;

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
    named(
        "blocking",
        tiled_and_split() >> dfnf() >> reorder(&[1, 2, 5, 6, 3, 4]),
    )
}

/// The part `blocking` and `loopPerm` share: `baseline`, 32x32 tiles, the
/// multiplication fissioned out of the reduction, the reduction split by 4.
fn tiled_and_split() -> Strategy<Term> {
    baseline()
        >> outermost(map_nest(2), tile(32, 32))
        >> dfnf()
        >> outermost(
            is_applied(is_applied(is_applied(is_reduce_seq()))),
            reduce_map_fission(),
        )
        >> dfnf()
        >> innermost(is_fully_applied_reduce(), split_strategy(4))
}

/// An applied map `map(f)(xs)`.
pub fn is_fully_applied_map() -> Strategy<Term> {
    is_applied(is_applied(is_map()))
}

/// `transpose(x)` of a variable `x`: the transposed `b` of `matmul.rise` (a
/// program's parameter, not an intermediate array that a rewrite transposed).
pub fn is_transposed_b() -> Strategy<Term> {
    super::predicates::predicate("isTransposedB", |t| {
        use super::pattern::applied;
        use crate::prim::Prim;
        // `transpose(b)`, or `transpose(b)` padded to a size the tiles divide (`padNest`).
        let unpadded = applied(t, Prim::ToMem, 1)
            .and_then(|(_, stored)| applied(&stored[0], Prim::PadCst, 2))
            .map_or(t.clone(), |(_, args)| args[1].clone());
        applied(&unpadded, Prim::Transpose, 1)
            .is_some_and(|(_, args)| matches!(args[0].expr(), crate::term::Expr::Var(_)))
    })
}

/// `vectorization = blocking ;; vectorize(32) @ innermost(isApplied(isApplied(isMap)))`:
/// the innermost loop on vectors of 32.
pub fn vectorization() -> Strategy<Term> {
    named(
        "vectorization",
        blocking() >> dfnf() >> innermost(is_fully_applied_map(), vectorize(32)),
    )
}

/// `loopPerm`: as `blocking` with the loop order `[1, 2, 5, 3, 6, 4]` (TVM's
/// `xo, yo, ko, xi, ki, yi`: the row loop inside the outer reduction), then
/// vectorized like `vectorization`.
pub fn loop_perm() -> Strategy<Term> {
    named(
        "loopPerm",
        tiled_and_split()
            >> dfnf()
            >> reorder(&[1, 2, 5, 3, 6, 4])
            >> dfnf()
            >> innermost(is_fully_applied_map(), vectorize(32)),
    )
}

/// The width of the column blocks of `packB` and `permuteB` written without one.
pub const PACKED_WIDTH: i64 = 32;

/// `name`, or `name(w)` for a width other than [`PACKED_WIDTH`]: how the packing
/// strategies print, so that text written without a width prints back as it was.
fn with_width(name: &str, w: i64) -> String {
    match w {
        PACKED_WIDTH => name.to_string(),
        w => format!("{name}({w})"),
    }
}

/// `permuteB = permuteB(32)`.
pub fn permute_b() -> Strategy<Term> {
    permute_b_width(PACKED_WIDTH)
}

/// `permuteB(w)`: `transpose(b)` (an `m.k` array) rewritten so that its values are
/// copied into blocks of `w` columns, `(m/w).k.w` (TVM's packed B), and read back
/// through `join(map(transpose)(...))`: `splitJoin2(w)`, a transpose pair inside the
/// blocks, and an explicit element-wise copy (`copyAfter`) of the packed blocks. Fails
/// where `w` does not divide `m`.
pub fn permute_b_width(w: i64) -> Strategy<Term> {
    named(
        with_width("permuteB", w),
        split_join2(w)
            >> argument(map_identity_after())
            >> dfnf()
            >> top_down(fmap(create_transpose_pair()))
            >> rnf()
            >> argument(argument(copy_after()))
            >> dfnf(),
    )
}

/// `packB = packB(32)`.
pub fn pack_b() -> Strategy<Term> {
    pack_b_width(PACKED_WIDTH)
}

/// `packB(w) = storeInMemory(isTransposedB, permuteB(w) ;; vectorize(w) @
/// innermost(isFullyAppliedMap) ;; parallel @ outermost(isApplied(isMap))) @ inLambda`:
/// `transpose(b)` packed into memory once, before the loops, in blocks of `w`
/// columns, by a parallel, vectorized copy. A register tile `w` lanes wide then reads
/// its columns of `b` contiguously.
pub fn pack_b_width(w: i64) -> Strategy<Term> {
    named(with_width("packB", w), in_lambda(pack_b_here_width(w)))
}

/// `packB` on a program's body (inside its parameters): `storeInMemory(isTransposedB,
/// permuteB ;; vectorize(32) @ innermost(isFullyAppliedMap) ;; parallel @
/// outermost(isApplied(isMap)))`. Equality saturation works on bodies, so this is
/// its packing rule.
pub fn pack_b_here() -> Strategy<Term> {
    pack_b_here_width(PACKED_WIDTH)
}

/// [`pack_b_here`] with blocks of `w` columns.
pub fn pack_b_here_width(w: i64) -> Strategy<Term> {
    // (A padded `b` that `padNest` stored is packed from `b` itself: the packed copy
    // is the padded one, one pass over `b` rather than three.)
    let how = elevate_strategies::try_(unstored_padding())
        >> permute_b_width(w)
        >> dfnf()
        >> innermost(is_fully_applied_map(), vectorize(w))
        >> dfnf()
        >> outermost(is_applied(is_map()), parallel());
    named(
        with_width("packBHere", w),
        store_in_memory(is_transposed_b(), how),
    )
}

/// `toMem(padCst(l, r, c)(x)) -> padCst(l, r, c)(x)`: a padded array computed where
/// it is read rather than stored (by the copy that packs it).
fn unstored_padding() -> Strategy<Term> {
    super::pattern::rule("unstoredPadding", |t: &Term| {
        let (_, stored) = super::pattern::applied(t, crate::prim::Prim::ToMem, 1)?;
        super::pattern::applied(&stored[0], crate::prim::Prim::PadCst, 2)?;
        Some(stored[0].clone())
    })
}

/// `arrayPacking = packB ;; loopPerm`.
pub fn array_packing() -> Strategy<Term> {
    named("arrayPacking", pack_b() >> dfnf() >> loop_perm())
}

/// `cacheBlocks = arrayPacking ;; unroll @ innermost(isReduceSeq)`: the innermost
/// reduction unrolled.
pub fn cache_blocks() -> Strategy<Term> {
    named(
        "cacheBlocks",
        array_packing() >> dfnf() >> innermost(is_reduce_seq(), unroll()),
    )
}

/// `par = arrayPacking ;; parallel @ outermost(isApplied(isMap)) ;; unroll @
/// innermost(isReduceSeq)`: the outermost loop on threads as well.
pub fn par() -> Strategy<Term> {
    named(
        "par",
        array_packing()
            >> dfnf()
            >> outermost(is_applied(is_map()), parallel())
            >> dfnf()
            >> innermost(is_reduce_seq(), unroll()),
    )
}

/// `microKernel(mc, nc, r, w)`, a matrix product as a BLAS micro-kernel: `b` packed in
/// blocks of `w` columns (read contiguously), `mc x nc` cache tiles, inside each a
/// register tile of `r` rows by `w` vector lanes (the `r` rows unrolled around the
/// vector loop, so that `r * w / lanes-per-register` accumulators stay in registers
/// across the reduction, `b`'s vectors loaded once for the `r` rows and `a` broadcast),
/// and the tiles' rows in parallel: `par` with a register tile.
///
/// `microKernel(mc, nc, r, w) = DFNF ; try(fuseReduceMap @ topDown) ;
/// try(padNest(mc, nc) @ outermost(mapNest(2))) ; DFNF ; packB(w) ;; tileNDList([mc,
/// nc]) @ outermost(mapNest(2)) ;; registerTile(r, w) ; parallel @
/// outermost(isApplied(isMap))`.
///
/// `r` must divide `mc` and `w` divide `nc`. Where the tiles do not divide the
/// matrix's sizes (1000 by 64), the product is computed on its operands padded with
/// zeros to sizes they divide and its first rows and columns kept (`padNest`), as BLAS
/// pads its edge blocks. `microKernel` alone takes the tiles of the machine it runs on
/// and of the product's sizes, as the library chooses them
/// ([`micro_kernel_tiles`](crate::search::library::micro_kernel_tiles)): with AVX-512,
/// register tiles of 4 x 64 (16 accumulators of 16 lanes, of its 32 registers); with
/// AVX2's 16 registers of 8 lanes, 6 x 16 (12 accumulators, the rest for `b` and `a`).
///
/// ```
/// use elevate_rise::{registry, Program};
/// use elevate_core::Context;
/// let program = Program::load(
///     "def mm(a: 128.64.f32, b: 64.128.f32) : 128.128.f32 = a |> map(fun(r =>
///        transpose(b) |> map(fun(c => zip(r, c) |> map(fun(p => fst(p) * snd(p)))
///        |> reduce(add, 0.0)))))",
///     None,
/// )
/// .unwrap();
/// let kernel = registry().parse("microKernel(32, 64, 4, 32)").unwrap();
/// let tiled = kernel.apply(&program.entry().term, &mut Context::default()).unwrap();
/// let text = elevate_rise::print_term(&tiled);
/// assert!(text.contains("asVector(32)") && text.contains("mapSeqUnroll"));
/// ```
pub fn micro_kernel(mc: i64, nc: i64, rows: i64, lanes: i64) -> Strategy<Term> {
    micro_kernel_blocked(mc, nc, rows, lanes, None)
}

/// `microKernel(mc, nc, r, w, kc)`: [`micro_kernel`] with the reduction in blocks of
/// `kc` ([`registerTile(r, w, kc)`](super::register_tile_blocked)), so that the slice
/// of the packed `b` a register tile streams stays in the L1 cache. `kc` must divide
/// the reduction's length (padding pads rows and columns, not the reduction).
pub fn micro_kernel_blocked(
    mc: i64,
    nc: i64,
    rows: i64,
    lanes: i64,
    kc: Option<i64>,
) -> Strategy<Term> {
    let name = match kc {
        None => format!("microKernel({mc}, {nc}, {rows}, {lanes})"),
        Some(kc) => format!("microKernel({mc}, {nc}, {rows}, {lanes}, {kc})"),
    };
    if let Some((_, what, small, large)) = super::misfit_register_tile(mc, nc, rows, lanes) {
        return super::catalogue::invalid(
            name,
            format!("{what} = {small} must divide the tile's {large}"),
        );
    }
    // The product's nest (a bias added after it is a nest too, without a reduction).
    let product = || map_nest(2) >> reduction_nest(2);
    let stored_product = || product() >> to_mem_after();
    named(
        name,
        dfnf()
            >> elevate_strategies::try_(top_down(fuse_reduce_map()))
            >> elevate_strategies::try_(outermost(product(), pad_nest(mc, nc)))
            // A product read by more (a bias, an activation) is stored first, so that
            // what reads it reads it by position, not through its tiles.
            >> elevate_strategies::try_(outermost(
                is_applied(is_applied(is_map())),
                argument(stored_product() | annotated(stored_product())),
            ))
            >> dfnf()
            >> pack_b_width(lanes)
            >> dfnf()
            >> outermost(product(), tile_nd_list(&[mc, nc]))
            >> dfnf()
            >> super::register_tile_blocked(rows, lanes, kc)
            >> outermost(is_applied(is_map()), parallel()),
    )
}

/// The seven strategies by name, simplest first.
pub fn matmul_strategies() -> Vec<(&'static str, Strategy<Term>)> {
    vec![
        ("baseline", baseline()),
        ("blocking", blocking()),
        ("vectorization", vectorization()),
        ("loopPerm", loop_perm()),
        ("arrayPacking", array_packing()),
        ("cacheBlocks", cache_blocks()),
        ("par", par()),
    ]
}

/// Registers the matmul strategies in the strategy language.
pub(super) fn register(r: &mut Registry<Term>) {
    r.rule(
        "isFullyAppliedReduce",
        "the node is reduce(op)(init)(xs)",
        is_fully_applied_reduce,
    );
    let matmul: [super::Named; 7] = [
        ("baseline", "TVM matmul: DFNF ; fuseReduceMap @ topDown", baseline),
        (
            "blocking",
            "TVM matmul: baseline, 32x32 tiles, reduction split by 4, loops reordered [1, 2, 5, 6, 3, 4]",
            blocking,
        ),
        (
            "vectorization",
            "TVM matmul: blocking ;; vectorize(32) @ innermost(isApplied(isApplied(isMap)))",
            vectorization,
        ),
        (
            "loopPerm",
            "TVM matmul: as blocking with loops [1, 2, 5, 3, 6, 4], vectorized",
            loop_perm,
        ),
        (
            "arrayPacking",
            "TVM matmul: packB ;; loopPerm (transpose(b) packed in 32-column blocks, once)",
            array_packing,
        ),
        (
            "cacheBlocks",
            "TVM matmul: arrayPacking ;; unroll @ innermost(isReduceSeq)",
            cache_blocks,
        ),
        (
            "par",
            "TVM matmul: arrayPacking ;; parallel @ outermost(isApplied(isMap)) ;; unroll @ innermost(isReduceSeq)",
            par,
        ),
    ];
    for (name, doc, make) in matmul {
        r.rule(name, doc, make);
    }
    r.add(
        "microKernel",
        "(mc, nc, r, w, kc?)",
        "a matmul as a BLAS micro-kernel: DFNF ; try(fuseReduceMap @ topDown) ; try(padNest(mc, nc) @ outermost(mapNest(2))) ; DFNF ; packB(w) ;; tileNDList([mc, nc]) @ outermost(mapNest(2)) ;; registerTile(r, w, kc?) ; parallel @ outermost(isApplied(isMap)) (none written: this machine's register tile, 4 x 64 with AVX-512, 6 x 16 with AVX2, and cache tiles fitted to the product's sizes; with kc, the reduction in blocks of kc)",
        |a| match super::sizes(a, 0)?.as_slice() {
            [] => Ok(super::machine_tiles::fitted(
                "microKernel",
                super::machine_tiles::micro_kernel_tiles_of,
                |[mc, nc, r, w]| micro_kernel(mc, nc, r, w),
            )),
            [mc, nc, r, w] => {
                super::check_register_tile_args(*mc, *nc, *r, *w)?;
                Ok(micro_kernel(*mc, *nc, *r, *w))
            }
            [mc, nc, r, w, kc] => {
                super::check_register_tile_args(*mc, *nc, *r, *w)?;
                Ok(micro_kernel_blocked(*mc, *nc, *r, *w, Some(*kc)))
            }
            s => Err(ArgError::invalid(
                None,
                format!(
                    "expects 4 or 5 sizes (mc, nc, r, w, kc), found {}",
                    s.len()
                ),
            )),
        },
    );
    r.add(
        "permuteB",
        "(w = 32)",
        "transpose(b) copied into blocks of w columns (32 if none is written), read back through join(map(transpose))",
        |a| match a {
            [] => Ok(permute_b()),
            [Value::Int(w)] => match Param::width("w").check(*w) {
                Ok(()) => Ok(permute_b_width(*w)),
                Err(why) => Err(ArgError::invalid(0, why.to_string())),
            },
            [_] => Err(ArgError::WrongKind {
                index: 0,
                expected: ArgKind::Number,
            }),
            _ => Err(ArgError::invalid(None, "expects at most one width")),
        },
    );
    r.rule(
        "isFullyAppliedMap",
        "the node is map(f)(xs)",
        is_fully_applied_map,
    );
    r.rule("isTransposedB", "the node is transpose(x)", is_transposed_b);
}

/// The rules of this module, for the [catalogue](super::catalogue).
pub(super) const RULES: &[RuleDef] = &[RuleDef::sized(
    "packB",
    &[Param::width("w")],
    "TVM matmul: storeInMemory(isTransposedB, permuteB(w) ;; vectorize(w) ;; parallel) @ inLambda",
    pack_b_width,
)
.defaults(&[PACKED_WIDTH])
.note("in the e-graph: where a tiled result join(...) holds transpose(b)")
.egraph(EGraphUse::At("join(x)", Make::Sized(pack_b_here_width)))
.strategy_role()];
