//! Convolutions as micro-kernels: the direct convolution with a register tile of
//! pixels by output channels, its weights copied once into the channel-blocked layout
//! the tile reads (`blockLanes`, `packWeights`), and `convKernel`, the strategy that
//! does both.
//!
//! A convolution `weights |> map(fun(wk => pixels |> map(map(fun(nbh => dot(nbh,
//! wk))))))` is a matrix product whose rows are pixels and whose columns are output
//! channels: `convKernel` moves the map over the channels inside the pixel maps, so
//! that `w` channels are one vector (the weights of `w` channels at one
//! tap are contiguous once blocked), `r` pixels are unrolled rows (each a broadcast of
//! one input value), and the taps (channel, row, column) are the reduction outside the
//! register tile, as `microKernel` does for a matrix product.

use super::catalogue::{Param, RuleDef};
use super::pattern::{applied, call, named, rule_with_names};
use super::*;
use crate::nat::Nat;
use crate::term::{Expr, Ident, Term};
use crate::types::TypeKind;
use elevate_core::{
    Context, Failure, Name, NameSupply, RewriteResult, Strategy, StrategyImpl, Traversable,
};
use elevate_strategies::text::{ArgError, Registry};
use elevate_strategies::{top_down, try_};
use std::fmt;

/// `map^depth(f)`: `f` applied `depth` array levels down.
fn mapped(depth: usize, f: Term) -> Term {
    (0..depth).fold(f, |f, _| call(Prim::Map, &[], [f]))
}

/// `blockLanes(w)`: `e -> join(map(out)(map(in)(split(w)(e))))` for `e : n.d1...dk.s`,
/// where `in` moves a block's `w` elements innermost (`w.d1...dk -> d1...dk.w`:
/// `transpose`, then `map(transpose)`, ...) and `out` moves them back. The values are
/// those of `e`; a copy of `map(in)(split(w)(e))` (`copyAfter`) stored in memory is
/// `e` in blocks of `w` whose `w` elements are contiguous: the channel-blocked layout
/// (TVM's `OIHW16o`).
pub fn block_lanes(w: i64) -> Strategy<Term> {
    super::catalogue::sized("blockLanes", w)
}

fn block_lanes_unchecked(w: i64) -> Strategy<Term> {
    rule_with_names("blockLanes", move |t: &Term, names: &mut NameSupply| {
        let TypeKind::Array(len, elem) = t.ty()?.kind() else {
            return None;
        };
        if w <= 1 || len.as_const().is_none_or(|n| n % w != 0) {
            return None;
        }
        let mut inner = 0;
        let mut ty = elem;
        while let TypeKind::Array(_, e) = ty.kind() {
            inner += 1;
            ty = e;
        }
        if inner == 0 || !matches!(ty.kind(), TypeKind::Scalar(_)) {
            return None;
        }
        let transpose = || Term::prim(Prim::Transpose);
        let steps = |order: &mut dyn Iterator<Item = usize>, x: Term| {
            order.fold(x, |x, depth| Term::app(mapped(depth, transpose()), x))
        };
        let b = Ident::supplied(names, "b");
        let moved_in = steps(&mut (0..inner), Term::var(&b));
        let y = Ident::supplied(names, "y");
        let moved_out = steps(&mut (0..inner).rev(), Term::var(&y));
        let blocks = call(Prim::Split, &[Nat::cst(w)], [t.clone()]);
        let inward = call(Prim::Map, &[], [Term::lambda(b, moved_in), blocks]);
        let outward = call(Prim::Map, &[], [Term::lambda(y, moved_out), inward]);
        Some(call(Prim::Join, &[], [outward]))
    })
}

/// Whether `t` is a fully applied reduction, `reduce` or `reduceSeq`.
fn is_reduction(t: &Term) -> bool {
    [Prim::Reduce, Prim::ReduceSeq]
        .into_iter()
        .any(|p| applied(t, p, 3).is_some())
}

/// `(f's parameter, f's body, xs)` of an applied `map(fun(x => body))(xs)`.
fn applied_map(t: &Term) -> Option<(Ident, Term, Term)> {
    let (_, args) = applied(t, Prim::Map, 2)?;
    match args[0].expr() {
        Expr::Lambda(x, _, body) => Some((x.clone(), body.clone(), args[1].clone())),
        _ => None,
    }
}

/// How many maps nest directly in each other's lambdas from `t` down to a reduction,
/// if they end in one.
fn maps_above_reduction(t: &Term) -> Option<usize> {
    let mut depth = 0;
    let mut current = t.clone();
    loop {
        if is_reduction(&current) {
            return Some(depth);
        }
        let (_, body, _) = applied_map(&current)?;
        depth += 1;
        current = body;
    }
}

/// `joinPixels`: the output channels of a convolution around its rows of pixels,
/// the rows joined into one: `map(fun(wk => map(fun(row => map(fun(p => r))(row)))(xs)))(ws)
/// -> map(split(m))(map(fun(wk => map(fun(p => r))(join(xs))))(ws))` for `xs : n.m.t`
/// and `r` a reduction. A small image (7x7, 14x14) becomes one row of all its pixels:
/// `convKernel`'s tiles of pixels by channels then span rows, so that a block of
/// channels' weights is read once for the whole image, not once for each row (at 7x7
/// with 512 channels, 9.4 MB of weights read 7 times from memory made the layer run at
/// half the speed of the 56x56 ones, measured).
pub fn join_pixels() -> Strategy<Term> {
    rule_with_names("joinPixels", |t: &Term, _names: &mut NameSupply| {
        let (wk, rows, ws) = applied_map(t)?;
        let (row, pixels, xs) = applied_map(&rows)?;
        let (p, r, walked) = applied_map(&pixels)?;
        if !is_reduction(&r) || !matches!(walked.expr(), Expr::Var(v) if v.id == row.id) {
            return None;
        }
        if r.has_free(row.id) {
            return None;
        }
        let TypeKind::Array(_, elem) = xs.ty()?.kind() else {
            return None;
        };
        let TypeKind::Array(m, _) = elem.kind() else {
            return None;
        };
        let joined = call(Prim::Join, &[], [xs.clone()]);
        let flat = call(Prim::Map, &[], [Term::lambda(p, r), joined]);
        let channels = call(Prim::Map, &[], [Term::lambda(wk, flat), ws]);
        let split = call(Prim::Split, std::slice::from_ref(m), []);
        Some(call(Prim::Map, &[], [split, channels]))
    })
}

/// `reductionNest(d)`: a predicate, `d` maps nested directly in each other's lambdas
/// around a reduction (`map(fun(i => map(fun(j => reduce(...)))(ys)))(xs)` for
/// `d = 2`): the loop nest of a matrix product or of a convolution's pixels by
/// channels.
pub fn reduction_nest(d: usize) -> Strategy<Term> {
    let holds =
        super::predicates::predicate("reductionNest", move |t| maps_above_reduction(t) == Some(d));
    named(format!("reductionNest({d})"), holds)
}

/// `aroundReductionNest(d)`: a predicate, an applied map whose lambda's body has a
/// [`reduction_nest`]`(d)` somewhere inside (below views such as `transpose`): with
/// `innermost`, the loop just outside a convolution's pixel-by-channel nest.
pub fn around_reduction_nest(d: usize) -> Strategy<Term> {
    let holds = super::predicates::predicate("aroundReductionNest", move |t| {
        let Some((_, body, _)) = applied_map(t) else {
            return false;
        };
        let mut pending = vec![body];
        while let Some(node) = pending.pop() {
            if maps_above_reduction(&node) == Some(d) {
                return true;
            }
            pending.extend((0..node.arity()).map(|i| node.child(i).clone()));
        }
        false
    });
    named(format!("aroundReductionNest({d})"), holds)
}

/// `channelsInnermost`: at the outermost map whose lambda holds a nest of maps around
/// a reduction (a convolution's output channels around its pixels), that map moved
/// inside the nest by `mapMapInterchange`s, one level at a time: `map(fun(wk =>
/// pixels |> map(map(fun(p => R)))))(weights)` becomes `transpose(pixels |>
/// map(fun(row => transpose(row |> map(fun(p => weights |> map(fun(wk => R))))))))`.
pub fn channels_innermost() -> Strategy<Term> {
    named("channelsInnermost", Strategy::new(ChannelsInnermost))
}

struct ChannelsInnermost;

impl StrategyImpl<Term> for ChannelsInnermost {
    fn apply(&self, t: &Term, cx: &mut Context) -> RewriteResult<Term> {
        let failure = || Failure::no_match("channelsInnermost");
        let depth = maps_above_reduction(t)
            .filter(|d| *d >= 2)
            .ok_or_else(failure)?;
        // `sink(1) = mapMapInterchange`, `sink(i) = mapMapInterchange ;
        // argument(fmap(sink(i - 1)))`: the map passes `depth - 1` maps.
        let sink = (1..depth - 1).fold(super::catalogue::rule("mapMapInterchange"), |inner, _| {
            super::catalogue::rule("mapMapInterchange") >> argument(fmap(inner))
        });
        sink.apply(t, cx)
    }

    fn name(&self) -> Name {
        Name::new("channelsInnermost")
    }
}

/// The array that the innermost map around a reduction walks, where it is the same
/// in every iteration of the loops around it (its free variables are `t`'s): the
/// weights of a convolution, `transpose(b)` of a matrix product. Among several, the
/// last in the program.
fn invariant_operand(t: &Term) -> Option<Term> {
    let outside = t.free_vars();
    let mut found = None;
    let mut pending = vec![t.clone()];
    while let Some(node) = pending.pop() {
        if maps_above_reduction(&node) == Some(1) {
            let (_, _, xs) = applied_map(&node)?;
            let invariant = xs.free_vars().iter().all(|v| outside.contains(v));
            let matrix = matches!(xs.ty().map(|t| t.kind()), Some(TypeKind::Array(_, e))
                if matches!(e.kind(), TypeKind::Array(..)));
            if invariant && matrix {
                found = Some(xs);
            }
        }
        pending.extend((0..node.arity()).rev().map(|i| node.child(i).clone()));
    }
    found
}

/// `packWeights(w)`: the array the innermost map around a reduction walks (a
/// convolution's weights, loop-invariant) copied once, before the loops, into blocks
/// of `w` along its first dimension with the `w` elements innermost (`blockLanes(w)`),
/// by a vectorized, parallel copy: `storeInMemory(that array, blockLanes(w) ;
/// copyAfter ;; vectorize(w) ;; parallel) @ inLambda`. A register tile `w` channels
/// wide then reads them contiguously.
pub fn pack_weights(w: i64) -> Strategy<Term> {
    let name = format!("packWeights({w})");
    if let Err(why) = Param::width("w").check(w) {
        return super::catalogue::invalid(name, why.to_string());
    }
    named(name, in_lambda(Strategy::new(PackWeights(w))))
}

struct PackWeights(i64);

impl StrategyImpl<Term> for PackWeights {
    fn apply(&self, t: &Term, cx: &mut Context) -> RewriteResult<Term> {
        let target = invariant_operand(t).ok_or_else(|| Failure::no_match("packWeights"))?;
        let w = self.0;
        let how = block_lanes(w)
            >> argument(argument(copy_after()))
            >> dfnf()
            >> innermost(is_fully_applied_map(), vectorize(w))
            >> dfnf()
            >> outermost(is_applied(is_map()), parallel());
        let what = super::predicates::predicate("isWeights", move |t| *t == target);
        store_in_memory(what, how).apply(t, cx)
    }

    fn name(&self) -> Name {
        Name::new("packWeights")
    }

    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "packWeights({})", self.0)
    }
}

/// `convKernel(mc, nc, r, w)`, a direct convolution as a micro-kernel: the result
/// stored in the order the loops compute it (pixels, then channels: the
/// channel-blocked layout, `toMemAfter`; the program's layout is a transposing copy of
/// it), the output channels inside the pixels (`channelsInnermost`), the weights
/// packed in blocks of `w` channels, the map around the pixel row in parallel, `mc`
/// pixels by `nc` channels as cache tiles and, inside them, register tiles of `r`
/// pixels by `w` channels (`r` unrolled rows around a vector of `w` lanes, the taps
/// outside):
///
/// `convKernel(mc, nc, r, w) = DFNF ; toMemAfter @ inLambda ;; try(fuseReduceMap @
/// topDown) ; channelsInnermost @ topDown ; packWeights(w) ;; function(parallel) @ outermost(fmap(reductionNest(2)))
/// ;; (tileNDList([mc, nc]) ;; registerTile(r, w)) @ outermost(reductionNest(2))`.
///
/// `r` must divide `mc` and `w` divide `nc`; the tiles must divide the pixels of a row
/// and the output channels.
///
/// ```
/// use elevate_rise::{registry, Program};
/// use elevate_core::Context;
/// let program = Program::load(
///     "def conv(x: 4.10.10.f32, wt: 16.4.3.3.f32) : 16.8.8.f32 =
///        let nbhs = x |> map(fun(ch => ch |> map(slide(3, 1)) |> slide(3, 1) |> map(transpose)))
///          |> transpose |> map(transpose) in
///        wt |> map(fun(wk => nbhs |> map(map(fun(nbh =>
///          zip(join(join(nbh)), join(join(wk))) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0))))))",
///     None,
/// )
/// .unwrap();
/// let kernel = registry().parse("convKernel(8, 16, 4, 16)").unwrap();
/// let tiled = kernel.apply(&program.entry().term, &mut Context::default()).unwrap();
/// let text = elevate_rise::print_term(&tiled);
/// assert!(text.contains("asVector(16)") && text.contains("mapSeqUnroll") && text.contains("toMem"));
/// ```
pub fn conv_kernel(mc: i64, nc: i64, rows: i64, lanes: i64) -> Strategy<Term> {
    let name = format!("convKernel({mc}, {nc}, {rows}, {lanes})");
    if let Some((_, what, small, large)) = super::misfit_register_tile(mc, nc, rows, lanes) {
        return super::catalogue::invalid(
            name,
            format!("{what} = {small} must divide the tile's {large}"),
        );
    }
    if lanes < 2 {
        return super::catalogue::invalid(
            name,
            "the vector width w must be at least 2".to_string(),
        );
    }
    let tiles = || tile_nd_list(&[mc, nc]) >> dfnf() >> register_tile(rows, lanes);
    // The loop around the pixels by channels on threads (an image's rows); where it
    // has one iteration (the batch of one image whose rows `joinPixels` joined), the
    // loop over blocks of channels, the second of the tiled nest, instead.
    let rows_on_threads = innermost(
        around_reduction_nest(2) >> over_many(),
        function(parallel()),
    ) >> dfnf()
        >> outermost(reduction_nest(2), tiles());
    let blocks_on_threads = outermost(reduction_nest(2), tiles())
        >> dfnf()
        >> try_(outermost(reduction_nest(4), fmap(function(parallel()))));
    named(
        name,
        dfnf()
            >> in_lambda(to_mem_after())
            >> dfnf()
            >> try_(top_down(fuse_reduce_map()))
            >> top_down(channels_innermost())
            >> dfnf()
            >> pack_weights(lanes)
            >> dfnf()
            >> (rows_on_threads | blocks_on_threads),
    )
}

/// Registers the convolution strategies in the strategy language.
pub(super) fn register(r: &mut Registry<Term>) {
    r.rule(
        "channelsInnermost",
        "a map around a nest of maps around a reduction moved inside the nest (a convolution's output channels inside its pixels)",
        channels_innermost,
    );
    r.add(
        "reductionNest",
        "(d)",
        "predicate: d maps nested in each other's lambdas around a reduction",
        |a| Ok(reduction_nest(text::int_arg(a, 0)?)),
    );
    r.add(
        "aroundReductionNest",
        "(d)",
        "predicate: an applied map with a reductionNest(d) inside its lambda's body",
        |a| Ok(around_reduction_nest(text::int_arg(a, 0)?)),
    );
    r.add(
        "packWeights",
        "(w)",
        "the loop-invariant array the innermost map around a reduction walks, copied once into blocks of w with the w elements innermost (storeInMemory(..., blockLanes(w) ; copyAfter ;; vectorize(w) ;; parallel) @ inLambda)",
        |a| match super::sizes(a, 0)?.as_slice() {
            [w] => Ok(pack_weights(*w)),
            s => Err(ArgError::invalid(
                None,
                format!("expects one width, found {}", s.len()),
            )),
        },
    );
    r.add(
        "convKernel",
        "(mc, nc, r, w)",
        "a direct convolution as a micro-kernel: the result in the channel-blocked order, channelsInnermost, packWeights(w), the pixel rows in parallel, mc x nc tiles of pixels by channels, r x w register tiles (none written: this machine's, fitted to the convolution's rows and channels)",
        |a| match super::sizes(a, 0)?.as_slice() {
            [] => Ok(super::machine_tiles::fitted(
                "convKernel",
                super::machine_tiles::conv_kernel_tiles_of,
                |[mc, nc, r, w]| conv_kernel(mc, nc, r, w),
            )),
            [mc, nc, r, w] => {
                super::check_register_tile_args(*mc, *nc, *r, *w)?;
                Ok(conv_kernel(*mc, *nc, *r, *w))
            }
            s => Err(ArgError::invalid(
                None,
                format!("expects 4 sizes (mc, nc, r, w), found {}", s.len()),
            )),
        },
    );
}

/// The rules of this module, for the [catalogue](super::catalogue).
pub(super) const RULES: &[RuleDef] = &[
    RuleDef::rule(
        "joinPixels",
        "map(fun(wk => map(fun(row => map(fun(p => r))(row)))(xs)))(ws) -> map(split(m))(map(fun(wk => map(fun(p => r))(join(xs))))(ws))",
        join_pixels,
    )
    .note("xs : n.m.t, r a reduction: a convolution's rows of pixels joined into one")
    .bias(Prim::Map)
    .example("fun(xs: 3.4.2.f32, ws: 5.2.f32 => ws |> map(fun(wk => xs |> map(fun(row => row |> map(fun(p => zip(p, wk) |> map(fun(q => fst(q) * snd(q))) |> reduce(add, 0.0))))))))"),
    RuleDef::sized(
    "blockLanes",
    &[Param::width("w")],
    "e -> join(map(out)(map(in)(split(w)(e))))",
    block_lanes_unchecked,
)
.note("e : n.d1...dk.s, w divides n; in moves a block's w elements innermost (transpose ; map(transpose) ; ...), out back")
.bias(Prim::Split)
.example("fun(x: 4.2.3.f32 => x |> map(map(map(neg))))")
.typical(&[2]),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_support::same_program;
    use crate::{infer, parse_term};

    const CONV: &str = "fun(x: 4.10.10.f32, wt: 16.4.3.3.f32 =>
        let nbhs = x |> map(fun(ch => ch |> map(slide(3, 1)) |> slide(3, 1) |> map(transpose)))
          |> transpose |> map(transpose) in
        wt |> map(fun(wk => nbhs |> map(map(fun(nbh =>
          zip(join(join(nbh)), join(join(wk))) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))))";

    fn conv() -> Term {
        let t = infer(&parse_term(CONV).unwrap()).unwrap();
        let Expr::Lambda(_, _, body) = t.expr() else {
            unreachable!()
        };
        let Expr::Lambda(_, _, body) = body.expr() else {
            unreachable!()
        };
        body.clone()
    }

    #[test]
    fn the_channels_move_inside_the_pixels() {
        let s = dfnf() >> top_down(channels_innermost()) >> dfnf();
        let t = s.apply(&conv(), &mut Context::default()).unwrap();
        let text = crate::print_term(&t);
        // Rows, then pixels, then the channels around the reduction.
        let rows = text.find("nbhs |> map(fun(").unwrap();
        let channels = text.find("wt |> map(fun(wk").unwrap();
        assert!(rows < channels, "{text}");
        assert!(text.ends_with("|> transpose)) |> transpose"), "{text}");
    }

    #[test]
    fn the_weights_are_the_invariant_operand() {
        let s = dfnf() >> top_down(channels_innermost()) >> dfnf();
        let t = s.apply(&conv(), &mut Context::default()).unwrap();
        let found = invariant_operand(&t).map(|f| crate::print_term(&f));
        assert_eq!(found.as_deref(), Some("wt"));
        // Before the channels move, the innermost map around the reduction walks a
        // pixel row, which depends on the loops around it.
        let before = dfnf().apply(&conv(), &mut Context::default()).unwrap();
        assert_eq!(invariant_operand(&before), None);
        let packed = pack_weights(16).apply(&t, &mut Context::default()).unwrap();
        let text = crate::print_term(&packed);
        assert!(text.starts_with("let "), "{text}");
        assert!(
            text.contains("wt |> split(16) |> map(fun(b => b |> transpose"),
            "{text}"
        );
        assert!(
            text.contains("asVector(16)") && text.contains("mapPar"),
            "{text}"
        );
    }

    /// The whole convolution, a closed function of its image and weights.
    fn closed_conv() -> Term {
        infer(&parse_term(CONV).unwrap()).unwrap()
    }

    #[test]
    fn the_rows_of_pixels_join_into_one() {
        let before = closed_conv();
        let joined = (dfnf() >> top_down(join_pixels()))
            .apply(&before, &mut Context::default())
            .unwrap();
        let text = crate::print_term(&joined);
        // The channels around one map over the 64 pixels of the joined rows, split
        // back into rows of 8 after it.
        assert!(text.contains("nbhs |> join |> map(fun(nbh"), "{text}");
        assert!(text.contains("|> map(split(8))"), "{text}");
        same_program(&before, &joined);
        // Only around a reduction: a map nest of other work is left alone.
        let plain = infer(&parse_term("fun(x: 4.3.2.f32 => x |> map(fun(r => r |> map(fun(p => p |> map(fun(v => v + 1.0)))))))").unwrap()).unwrap();
        assert!(top_down(join_pixels())
            .apply(&plain, &mut Context::default())
            .is_err());
    }

    #[test]
    fn a_joined_image_has_its_blocks_of_channels_on_threads() {
        // One image whose rows are joined: no loop of rows is left around the pixels
        // by channels, so the threads take the blocks of channels.
        let before = closed_conv();
        let kernel = (dfnf() >> top_down(join_pixels())) >> conv_kernel(64, 8, 4, 8);
        let tiled = kernel.apply(&before, &mut Context::default()).unwrap();
        let text = crate::print_term(&tiled);
        // After the packing of the weights (`let ... in`, itself parallel).
        let compute = &text[text.find(" in ").unwrap()..];
        assert!(
            compute.contains("mapPar") && compute.contains("mapSeqUnroll"),
            "{text}"
        );
        same_program(&before, &tiled);
        // In rows, the rows are on threads, as before.
        let rows = conv_kernel(8, 16, 4, 16)
            .apply(&before, &mut Context::default())
            .unwrap();
        let text = crate::print_term(&rows);
        assert!(
            text[text.find(" in ").unwrap()..].contains("mapPar"),
            "{text}"
        );
        same_program(&before, &rows);
    }

    #[test]
    fn a_nest_around_a_reduction_is_found_by_its_depth() {
        let t = dfnf().apply(&conv(), &mut Context::default()).unwrap();
        let depth_of_nests = |d: usize| {
            let mut count = 0;
            let mut pending = vec![t.clone()];
            while let Some(n) = pending.pop() {
                count += usize::from(reduction_nest(d).apply(&n, &mut Context::default()).is_ok());
                pending.extend((0..n.arity()).map(|i| n.child(i).clone()));
            }
            count
        };
        assert_eq!(
            (
                depth_of_nests(1),
                depth_of_nests(2),
                depth_of_nests(3),
                depth_of_nests(4)
            ),
            (1, 1, 1, 0)
        );
    }
}
