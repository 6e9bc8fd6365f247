//! `auto`: the space of schedules of a program's main loop nest, as space text made
//! of the library's own strategies, so that every point is ordinary strategy text.
//!
//! The program's loop nests are read from its trace after `DFNF` (maps and
//! reductions, fused where a reduction reads a map) and `defaultLowering`; the main nest
//! is the one with the most arithmetic, followed inwards through its heaviest loops:
//! `d` maps (their extents), then possibly a reduction. The space is a sequence of
//! parts, each a choice:
//!
//! 1. `DFNF`, then `{id, normalize(mapFusion) ; DFNF}` where there are several map nests
//!    (an element-wise chain), then `try(fuseReduceMap @ topDown)`;
//! 2. the nest: untiled or `tileNDList([t1, ..., td]) @ outermost(mapNest(d))` (each
//!    `ti` a divisor of its extent), where the program reads a transposed input (the
//!    matmul's `b`) and the innermost tile is 32 wide, also with `packB` first (the
//!    input packed in blocks of 32 columns, read along its rows: packed blocks of
//!    another width than the vectors' make indices the bridge cannot tile, which
//!    its kernels then read in their bodies); for a reduction, kept
//!    whole or split in blocks of
//!    `s` (`splitStrategy(s)`, `s` a divisor of its extent), then a loop order
//!    (`reorder`: the block loops first, then every interleaving of the element loops
//!    and the reduction loops that keeps the innermost element loop innermost, so it
//!    can be vectorized), then unrolling of a small inner reduction (`unroll`); then
//!    the vector width of the innermost map (`vectorize(w)`, `w` a divisor of its
//!    extent), and for a tile of a few rows, those rows unrolled around the vector loop
//!    (`mapSeqUnroll` on the map of rows: a register tile, whose accumulator block
//!    stays in registers across the reduction); for a two-dimensional tiling with a
//!    reduction, also register tiles inside the tile (`registerTile(r, w)` for each
//!    shape of [`Auto::registers`] that divides the tile and is smaller: the reduction
//!    between the tile's loops and the register tile's, `w` columns on vectors, `r`
//!    rows unrolled), each also with `packB(w)` first (the transposed input packed in
//!    blocks as wide as the register tile); for a nest of three or more maps around a
//!    reduction (a convolution's channels, rows and pixels), also the direct
//!    convolution as a micro-kernel (`convKernel(mc, nc, r, w)` for each register tile
//!    of [`Auto::conv_registers`] that fits); for a nest of two or more maps around a
//!    reduction, also register tiles of its two innermost maps in every such nest of
//!    the program (`reductionTiles(mc, nc, r, w)`: a batched product, a depthwise
//!    convolution, both passes of a separable filter; a short reduction also
//!    unrolled, `; tryAll(unroll)`); for an element-wise chain or
//!    several nests (a softmax's row reductions), `elementwise(w)`;
//! 3. `{id, parallel @ outermost(isApplied(isMap))}`: the outermost loop on threads;
//! 4. `defaultLowering`.
//!
//! The nest's choice also holds the library's schedules for the machine
//! ([`super::library`]: `microKernel`, `convKernel`, `reductionTiles`, the taps of a
//! pooling unrolled, `elementwise`, each where the nest's shape calls for it), and
//! these are the points a search starts from ([`Auto::starts`]): every driver that
//! learns evaluates them first, so that a search of `auto` is at least as good as the
//! library's schedules, and goes on from them.
//!
//! Where the main nest's reduction reads memory in a row and its innermost map does
//! not (a dot product per row: a matrix-vector product), the nest may also keep the
//! reduction innermost and put its elements in vector lanes (`vectorizeReduce(w)`,
//! after each tiling of the maps): the innermost map cannot be vectorized without
//! reading across rows.
//!
//! A nest that is a lone reduction (a sum, a dot product) is kept whole or split in
//! blocks of `s` (`splitJoin2(s)` on its input, `separateSumHV`) whose partial sums are
//! a map that can be parallel; the whole reduction, or each block's, may be vectorized
//! (`vectorizeReduce(w)`: a sum of vectors of `w` lanes, then of the lanes). Every
//! point is a strategy that applies, or fails with a clean failure (a reordering that
//! does not fit the nest, a vector width that does not divide): the search records it
//! and moves on. The matmul's `par` is one point.
//!
//! What the library lacks for more: stencils whose windows are reduced on vectors
//! without register tiles (a small reduction unrolled into arithmetic, so that the
//! map over windows becomes lane-wise; windows read at constant positions are
//! vectorized already, by `vectorize` and `elementwise`); several vector accumulators
//! interleaved for one reduction beyond what a wide vector gives (a vector of 64
//! lanes is four AVX-512 registers, four independent sums).

use super::library::padded_tile;
use super::loop_nests::{loop_nests, Loop, LoopId, LoopKind, Nests};
use crate::rules::{default_lowering, PACKED_WIDTH};
use crate::term::Term;
use elevate_core::{Budget, Context};
use elevate_strategies::search::AutoSpace;

/// Where `vectorizeReduce` applies: the innermost reduction (in any of its forms) that
/// it can vectorize.
const INNERMOST_REDUCTION: &str =
    "innermost(isApplied(isApplied(isApplied(isReduceSeq <+ isReduce))))";

/// The candidate sizes of an `auto` space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Auto {
    /// Tile sizes (each used where it divides the extent and is smaller).
    pub tiles: Vec<i64>,
    /// Block sizes of a split reduction.
    pub splits: Vec<i64>,
    /// Vector widths.
    pub widths: Vec<i64>,
    /// The largest reduction that may be unrolled.
    pub max_unroll: i64,
    /// The most rows of a register tile.
    pub max_rows: i64,
    /// At most this many tilings of a nest (the smallest tile sizes are dropped first
    /// for deep nests).
    pub max_tilings: usize,
    /// Register tiles inside the tiles of a two-dimensional nest with a reduction:
    /// `(rows, lanes)`, each offered (`registerTile`) in every tiling whose tile it
    /// divides and is smaller than.
    pub registers: Vec<(i64, i64)>,
    /// Register tiles of a convolution (`convKernel`): `(pixels, channels)`.
    pub conv_registers: Vec<(i64, i64)>,
    /// The machine's f32 lanes per vector register: the library's schedules for it
    /// ([`super::library`]) are offered too, and searches start from them
    /// ([`Auto::starts`]).
    pub lanes: u32,
}

impl Default for Auto {
    fn default() -> Self {
        Auto {
            tiles: vec![4, 8, 16, 32, 64],
            splits: vec![2, 4, 8, 16],
            widths: vec![4, 8, 16, 32, 64],
            max_unroll: 16,
            max_rows: 8,
            max_tilings: 32,
            registers: vec![(8, 32), (4, 64), (4, 32)],
            conv_registers: vec![(14, 32), (7, 64), (8, 32), (7, 32), (4, 64)],
            lanes: 16,
        }
    }
}

impl Auto {
    /// The sizes for a machine with `lanes` f32 lanes per vector register: the default's
    /// register tiles are AVX-512's (16 accumulators of 16 lanes, of 32 registers);
    /// with fewer lanes (AVX2: 8 lanes, 16 registers), register tiles of 8 accumulators,
    /// which leave registers for the loads and broadcasts.
    ///
    /// ```
    /// use elevate_rise::search::Auto;
    /// assert_eq!(Auto::for_lanes(16), Auto::default());
    /// assert!(Auto::for_lanes(8).registers.contains(&(4, 16)));
    /// ```
    pub fn for_lanes(lanes: u32) -> Auto {
        if lanes >= 16 {
            return Auto::default();
        }
        Auto {
            registers: vec![(4, 16), (2, 32), (8, 8)],
            conv_registers: vec![(4, 16), (7, 16), (8, 8), (2, 32)],
            lanes,
            ..Auto::default()
        }
    }

    /// [`Auto::for_lanes`] of the machine this runs on ([`super::Machine::host`]).
    pub fn host() -> Auto {
        Auto::for_lanes(super::Machine::host().lanes)
    }
}

impl AutoSpace<Term> for Auto {
    fn space_for(&self, program: &Term) -> Result<String, String> {
        let shape = Shape::of(program)?;
        Ok(self.text(&shape))
    }

    fn starts(&self, program: &Term) -> Vec<String> {
        Shape::of(program).map_or_else(|_| Vec::new(), |shape| self.starts(&shape))
    }
}

/// What `auto` reads from a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// The extents of the main nest's maps, outermost first.
    pub maps: Vec<i64>,
    /// The extent of the reduction inside them (or of the nest itself, when it is a
    /// lone reduction).
    pub reduction: Option<i64>,
    /// How many loop nests the program has at the top.
    pub nests: usize,
    /// Whether `packB` applies.
    pub packable: bool,
    /// Whether the reduction reads memory in a row where the innermost map does not
    /// (a dot product per row, as in a matrix-vector product): the reduction's
    /// elements, not the map's, are the ones to put in vector lanes.
    pub reduction_vectors: bool,
}

impl Shape {
    /// The shape of `program` (typed, with concrete sizes).
    pub fn of(program: &Term) -> Result<Shape, String> {
        let budget = Budget::unlimited().steps(10_000_000);
        let normal = crate::registry()
            .parse("DFNF ; try(fuseReduceMap @ topDown)")
            .map_err(|e| e.message)?;
        let mut cx = Context::new(budget);
        let normal = normal
            .apply(program, &mut cx)
            .map_err(|f| format!("`auto` cannot read the program's loops: {f}"))?;
        let low = default_lowering()
            .apply(&normal, &mut cx)
            .map_err(|f| format!("`auto` cannot lower the program: {f}"))?;
        let t = loop_nests(&low).map_err(|e| format!("`auto`: {e}"))?;
        let packable = crate::rules::pack_b()
            .apply(program, &mut Context::new(budget))
            .is_ok();
        let nest = main_nest(&t);
        let in_a_row = |l: Option<LoopId>| l.is_some_and(|l| reads_in_a_row(&t, l));
        Ok(Shape {
            reduction_vectors: in_a_row(nest.reduction_loop) && !in_a_row(nest.innermost_map),
            maps: nest.maps,
            // A reduction the loop program computes in its kernel's body (a padded
            // window's taps, each read from its own operand) is still the nest's for
            // the space, whose strategies rewrite the program as it is written.
            reduction: nest.reduction.or_else(|| reduction_in_a_map(&low)),
            nests: nest.nests,
            packable,
        })
    }
}

/// The extent of the first reduction inside a map of the low-level `program`, if any.
fn reduction_in_a_map(program: &Term) -> Option<i64> {
    use crate::prim::Prim;
    use crate::term::Expr;
    use crate::types::TypeKind;
    let head = |t: &Term| {
        let mut at = t;
        while let Expr::App(f, _) = at.expr() {
            at = f;
        }
        match at.expr() {
            Expr::Prim(p) => Some(*p),
            _ => None,
        }
    };
    let mut pending = vec![(program, false)];
    while let Some((t, in_map)) = pending.pop() {
        match t.expr() {
            Expr::App(f, x) => {
                let p = head(t);
                let reduces = matches!(p, Some(Prim::ReduceSeq | Prim::ReduceSeqUnroll));
                // `reduceSeq(f)(init)(xs)`: the extent of `xs`.
                if reduces && in_map && !matches!(f.expr(), Expr::Prim(_)) {
                    if let Some(TypeKind::Array(n, _)) = x.ty().map(|ty| ty.kind()) {
                        if let (Some(n), Expr::App(g, _)) = (n.as_const(), f.expr()) {
                            if matches!(g.expr(), Expr::App(..)) {
                                return Some(n);
                            }
                        }
                    }
                }
                let maps = matches!(p, Some(Prim::MapSeq | Prim::MapSeqUnroll | Prim::MapPar));
                // `mapSeq(reduceSeq(f, init))(xs)`: the extent of `xs`'s elements.
                if let (true, Expr::App(_, g)) = (maps, f.expr()) {
                    let reduces = matches!(head(g), Some(Prim::ReduceSeq | Prim::ReduceSeqUnroll));
                    if let (true, Some(TypeKind::Array(_, e))) = (reduces, x.ty().map(|t| t.kind()))
                    {
                        if let TypeKind::Array(n, _) = e.kind() {
                            if let Some(n) = n.as_const() {
                                return Some(n);
                            }
                        }
                    }
                }
                pending.push((f, in_map || maps));
                pending.push((x, in_map || maps));
            }
            Expr::Lambda(_, _, b) | Expr::NatLambda(_, b) | Expr::NatApp(b, _) => {
                pending.push((b, in_map))
            }
            Expr::Annotation(b, _) => pending.push((b, in_map)),
            Expr::Array(xs) => pending.extend(xs.iter().map(|x| (x, in_map))),
            _ => {}
        }
    }
    None
}

/// Each loop's arithmetic, its own and its inner loops', in all its iterations.
fn subtree_work(t: &Nests) -> Vec<f64> {
    let mut work: Vec<f64> = (0..t.loops.len())
        .map(|l| t.loops[l].work.ops() * t.iterations(l as LoopId))
        .collect();
    // Children come after their parents: add each to its parent, innermost first.
    for l in (0..t.loops.len()).rev() {
        if let Some(p) = t.loops[l].parent {
            work[p as usize] += work[l];
        }
    }
    work
}

/// What [`main_nest`] finds.
struct MainNest {
    /// The extents of its maps, outermost first.
    maps: Vec<i64>,
    /// The extent of its reduction.
    reduction: Option<i64>,
    /// How many nests the program has at the top.
    nests: usize,
    /// Its innermost map's loop.
    innermost_map: Option<LoopId>,
    /// Its reduction's loop.
    reduction_loop: Option<LoopId>,
}

/// Whether every read inside loop `l` moves by at most one element per step of `l`,
/// and some read moves: the loop walks its data in a row, as vector lanes read it.
fn reads_in_a_row(t: &Nests, l: LoopId) -> bool {
    let inside = |a: &super::loop_nests::Access| t.path(a.owner).contains(&l);
    let strides: Vec<i64> = t
        .accesses
        .iter()
        .filter(|a| !a.write && inside(a))
        .map(|a| a.stride(l))
        .collect();
    strides.contains(&1) && strides.iter().all(|&s| s == 0 || s == 1)
}

/// The main nest: the heaviest nest at the top, followed inwards through the heaviest
/// loops.
fn main_nest(t: &Nests) -> MainNest {
    let work = subtree_work(t);
    let real = |l: &Loop| l.kind != LoopKind::Copy;
    let tops: Vec<usize> = (0..t.loops.len())
        .filter(|&l| t.loops[l].parent.is_none() && real(&t.loops[l]))
        .collect();
    let heaviest = |candidates: &mut dyn Iterator<Item = usize>| {
        candidates.fold(None, |best: Option<usize>, l| match best {
            Some(b) if work[b] >= work[l] => Some(b),
            _ => Some(l),
        })
    };
    let mut maps = Vec::new();
    let (mut reduction, mut reduction_loop, mut innermost_map) = (None, None, None);
    let mut at = heaviest(&mut tops.iter().copied());
    while let Some(l) = at {
        let lp = &t.loops[l];
        if lp.kind.reduction() {
            reduction = Some(lp.trips);
            reduction_loop = Some(l as LoopId);
            break;
        }
        maps.push(lp.trips);
        innermost_map = Some(l as LoopId);
        at = heaviest(
            &mut (0..t.loops.len())
                .filter(|&c| t.loops[c].parent == Some(l as LoopId) && real(&t.loops[c])),
        );
    }
    MainNest {
        maps,
        reduction,
        nests: tops.len(),
        innermost_map,
        reduction_loop,
    }
}

/// `{a, b, ...}`, or the one option alone.
fn choice(options: &[String]) -> String {
    match options {
        [one] => one.clone(),
        _ => format!("{{{}}}", options.join(", ")),
    }
}

fn list(xs: &[usize]) -> String {
    let items: Vec<String> = xs.iter().map(usize::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// Loop orders of a nest whose loops are numbered `1..` from the outside: `blocks`,
/// then `elements`, then `reductions`. The block loops stay outermost; the others are
/// every interleaving of the element loops but the last and the reduction loops (each
/// group in its own order), then the last element loop. `id` comes first.
fn orders(blocks: usize, elements: usize, reductions: usize) -> Vec<String> {
    let mut out = vec!["id".to_string()];
    if elements == 0 || reductions == 0 {
        return out;
    }
    let outer: Vec<usize> = (blocks + 1..blocks + elements).collect();
    let red: Vec<usize> = (blocks + elements + 1..=blocks + elements + reductions).collect();
    let last = blocks + elements;
    let mut merged = Vec::new();
    interleavings(&outer, &red, &mut Vec::new(), &mut merged);
    for middle in merged {
        let mut perm: Vec<usize> = (1..=blocks).collect();
        perm.extend(middle);
        perm.push(last);
        let identity = perm.iter().enumerate().all(|(i, p)| *p == i + 1);
        if !identity {
            out.push(format!("reorder({})", list(&perm)));
        }
    }
    out
}

fn interleavings(a: &[usize], b: &[usize], prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    if a.is_empty() || b.is_empty() {
        let mut done = prefix.clone();
        done.extend_from_slice(a);
        done.extend_from_slice(b);
        out.push(done);
        return;
    }
    for (first, rest_a, rest_b) in [(a[0], &a[1..], b), (b[0], a, &b[1..])] {
        prefix.push(first);
        interleavings(rest_a, rest_b, prefix, out);
        prefix.pop();
    }
}

impl Auto {
    /// The space text for a program of shape `s`.
    pub fn text(&self, s: &Shape) -> String {
        let mut parts: Vec<String> = Vec::new();
        if s.maps.is_empty() {
            if let Some(k) = s.reduction {
                parts.push(choice(&self.lone_reduction_options(k)));
            }
            parts.push("defaultLowering".into());
            return parts.join(" ;\n");
        }
        parts.push("DFNF".into());
        if s.nests > 1 {
            parts.push("{id, normalize(mapFusion) ; DFNF}".into());
        }
        parts.push("try(fuseReduceMap @ topDown)".into());
        let mut nest = self.nest_options(s);
        nest.extend(self.reduction_vector_options(s));
        nest.extend(self.conv_options(s));
        nest.extend(self.padded_options(s));
        nest.extend(self.reduction_tile_options(s));
        nest.extend(self.elementwise_options(s));
        for (library, _) in self.library_options(s) {
            if !nest.contains(&library) {
                nest.push(library);
            }
        }
        parts.push(choice(&nest));
        parts.push(format!("{{id, {}}}", super::library::PARALLEL));
        parts.push("defaultLowering".into());
        parts.join(" ;\n")
    }

    /// The library's schedules of the main nest for this machine
    /// ([`super::library`]), each as an option of the nest and whether the outermost
    /// loop goes on threads after it: `microKernel` for a product, `convKernel` for a
    /// nest of three or more maps around a reduction, `reductionTiles` (a short
    /// reduction's taps unrolled) for two or more, the taps of a short reduction
    /// unrolled and the channels on threads (pooling), `elementwise` for a chain.
    fn library_options(&self, s: &Shape) -> Vec<(String, bool)> {
        use super::library::{self as lib, POOLING};
        let mut options = Vec::new();
        if let (&[rows, cols], Some(_), true) = (s.maps.as_slice(), s.reduction, s.packable) {
            options.push((lib::micro_kernel(rows, cols, self.lanes), false));
        }
        if let (&[.., channels, _, pixels], Some(_)) = (s.maps.as_slice(), s.reduction) {
            options.push((lib::conv_kernel(pixels, channels, self.lanes), false));
        }
        if let (&[.., rows, cols], Some(taps)) = (s.maps.as_slice(), s.reduction) {
            if let Some(tiles) = lib::reduction_tiles(rows, cols, self.lanes) {
                options.push(match taps <= self.max_unroll {
                    true => (lib::taps_unrolled(&tiles), false),
                    false => (tiles, false),
                });
            }
        }
        if s.reduction.is_some_and(|taps| taps <= self.max_unroll) && !s.maps.is_empty() {
            options.push((POOLING.to_string(), true));
        }
        if !self.elementwise_options(s).is_empty() {
            let inner = s.reduction.or(s.maps.last().copied()).unwrap_or(1);
            options.push((lib::elementwise(inner, self.lanes), false));
        }
        options
    }

    /// The points to start a search of a program of shape `s` from: each of the
    /// library's schedules ([`Auto::library_options`]) as a complete point of the
    /// space, nothing else chosen (maps kept unfused, the outermost loop on threads
    /// only where the library puts it there).
    pub fn starts(&self, s: &Shape) -> Vec<String> {
        if s.maps.is_empty() {
            return Vec::new();
        }
        self.library_options(s)
            .into_iter()
            .map(|(nest, parallel)| {
                let mut parts = vec!["DFNF"];
                if s.nests > 1 {
                    parts.push("id");
                }
                parts.push("try(fuseReduceMap @ topDown)");
                parts.push(&nest);
                parts.push(if parallel {
                    super::library::PARALLEL
                } else {
                    "id"
                });
                parts.push("defaultLowering");
                parts.join(" ;\n")
            })
            .collect()
    }

    /// A lone reduction: kept whole, or split in blocks whose partial results are a
    /// map that can be parallel; each whole or each block on vectors of each width
    /// that divides it.
    fn lone_reduction_options(&self, k: i64) -> Vec<String> {
        let mut options = vec!["id".to_string()];
        options.extend(self.vectorized_reductions(k));
        for b in self.divisors(k, &self.splits_of_lone()) {
            let vectors: Vec<String> = std::iter::once("id".to_string())
                .chain(self.vectorized_reductions(b))
                .collect();
            options.push(format!(
                "(argument(splitJoin2({b})) ; separateSumHV) @ outermost(isFullyAppliedReduce) ; try(normalize(splitBeforeMap)) ; try(normalize(mapFusion)) ; BENF ; try(fmap(fuseReduceMap @ topDown) @ outermost(isFullyAppliedMap)) ; {}{{id, parallel @ outermost(isApplied(isMap))}}",
                match vectors.as_slice() {
                    [_] => String::new(),
                    _ => format!("{} ; ", choice(&vectors)),
                }
            ));
        }
        options
    }

    /// The innermost reduction of `k` elements on vectors of each width that divides
    /// it (`vectorizeReduce`).
    fn vectorized_reductions(&self, k: i64) -> Vec<String> {
        self.divisors(k, &self.widths)
            .map(|w| format!("vectorizeReduce({w}) @ {INNERMOST_REDUCTION}"))
            .collect()
    }

    /// Where the reduction's elements are the ones to put in vector lanes (see
    /// [`Shape::reduction_vectors`]): each tiling of the maps, with the reduction
    /// innermost, whole, on vectors of each width that divides it.
    fn reduction_vector_options(&self, s: &Shape) -> Vec<String> {
        let Some(k) = s.reduction.filter(|_| s.reduction_vectors) else {
            return Vec::new();
        };
        let d = s.maps.len().min(3);
        let mut options = Vec::new();
        for tiling in self.tilings(&s.maps) {
            let tile = tiling.map(|t| {
                let sizes: Vec<usize> = t.iter().map(|x| *x as usize).collect();
                format!("tileNDList({}) @ outermost(mapNest({d})) ;; ", list(&sizes))
            });
            for v in self.vectorized_reductions(k) {
                options.push(format!("{}{v}", tile.as_deref().unwrap_or("")));
            }
        }
        options
    }

    /// Block sizes of a lone reduction: larger blocks, as many as a few cores need.
    fn splits_of_lone(&self) -> Vec<i64> {
        vec![256, 1024, 4096]
    }

    /// The candidates of `sizes` that divide `n` and are smaller.
    fn divisors<'a>(&self, n: i64, sizes: &'a [i64]) -> impl Iterator<Item = i64> + 'a {
        sizes.iter().copied().filter(move |&t| t < n && n % t == 0)
    }

    /// Every tiling of the nest (`None`: untiled), at most `max_tilings`.
    fn tilings(&self, maps: &[i64]) -> Vec<Option<Vec<i64>>> {
        let d = maps.len().min(3);
        let mut sizes = self.tiles.clone();
        loop {
            let per: Vec<Vec<i64>> = maps[..d]
                .iter()
                .map(|n| self.divisors(*n, &sizes).collect())
                .collect();
            let count: usize = per.iter().map(Vec::len).product();
            if count <= self.max_tilings || sizes.len() <= 1 {
                let mut out = vec![None];
                if per.iter().all(|p| !p.is_empty()) {
                    let mut combos: Vec<Vec<i64>> = vec![Vec::new()];
                    for p in &per {
                        combos = combos
                            .into_iter()
                            .flat_map(|c| {
                                p.iter().map(move |t| {
                                    let mut c = c.clone();
                                    c.push(*t);
                                    c
                                })
                            })
                            .collect();
                    }
                    out.extend(combos.into_iter().take(self.max_tilings).map(Some));
                }
                return out;
            }
            sizes.remove(0);
        }
    }

    fn nest_options(&self, s: &Shape) -> Vec<String> {
        let d = s.maps.len().min(3);
        let mut options = Vec::new();
        for tiling in self.tilings(&s.maps) {
            let mut steps = Vec::new();
            let (blocks, inner, rows) = match &tiling {
                Some(t) => {
                    let sizes: Vec<usize> = t.iter().map(|x| *x as usize).collect();
                    steps.push(format!(
                        "tileNDList({}) @ outermost(mapNest({d}))",
                        list(&sizes)
                    ));
                    (d, t[d - 1], (d >= 2).then(|| t[d - 2]))
                }
                None => (0, s.maps[d - 1], None),
            };
            if let Some(k) = s.reduction {
                steps.push(self.reduction_options(blocks, d, k));
            }
            steps.push(self.vector_options(inner, rows));
            let steps: Vec<String> = steps.into_iter().filter(|t| t != "id").collect();
            let option = if steps.is_empty() {
                "id".to_string()
            } else {
                steps.join(" ;; ")
            };
            if s.packable && tiling.is_some() && inner == PACKED_WIDTH {
                options.push(format!("packB ;; {option}"));
            }
            options.push(option);
            if let Some(t) = &tiling {
                options.extend(self.register_options(s, t));
            }
        }
        options
    }

    /// Register tiles inside the tiles `t` of a two-dimensional nest with a reduction
    /// (`registerTile`: the reduction between the tile's loops and the register
    /// tile's, the rows unrolled around the vector loop), each also with the transposed
    /// input packed in blocks as wide as the register tile (`packB(w)`), so that the
    /// register tile reads them contiguously.
    fn register_options(&self, s: &Shape, t: &[i64]) -> Vec<String> {
        let ([rows, cols], Some(_)) = (t, s.reduction) else {
            return Vec::new();
        };
        let mut options = Vec::new();
        for &(r, w) in &self.registers {
            let fits = rows % r == 0 && cols % w == 0 && (r, w) != (*rows, *cols);
            if !fits || r > self.max_rows {
                continue;
            }
            let option = format!(
                "tileNDList([{rows}, {cols}]) @ outermost(mapNest(2)) ;; registerTile({r}, {w})"
            );
            if s.packable && s.maps[1] % w == 0 {
                let pack = match w {
                    PACKED_WIDTH => "packB".to_string(),
                    w => format!("packB({w})"),
                };
                options.push(format!("{pack} ;; {option}"));
            }
            options.push(option);
        }
        options
    }

    /// A matrix product (two maps around a reduction, `b` packable) whose sizes no
    /// register tile's cache tiles divide: `microKernel(mc, nc, r, w)` for each register
    /// tile of [`Auto::registers`], with the cache tiles that pad least
    /// ([`padded_tile`]); the micro-kernel pads the product to them (`padNest`).
    fn padded_options(&self, s: &Shape) -> Vec<String> {
        let ([rows, columns], Some(_), true) = (s.maps.as_slice(), s.reduction, s.packable) else {
            return Vec::new();
        };
        self.registers
            .iter()
            .map(|&(r, w)| {
                (
                    padded_tile(*rows, r, 64),
                    padded_tile(*columns, w, 64),
                    r,
                    w,
                )
            })
            .filter(|(mc, nc, _, _)| rows % mc != 0 || columns % nc != 0)
            .map(|(mc, nc, r, w)| format!("microKernel({mc}, {nc}, {r}, {w})"))
            .collect()
    }

    /// A nest of at least three maps around a reduction, read as a convolution's
    /// channels around its rows and pixels: `convKernel(mc, nc, r, w)` for each
    /// register tile of [`Auto::conv_registers`] that fits, with `mc` the row's pixels
    /// or a tile of them, `nc` the channels or a block of 64 to 256 of them. Where
    /// the nest is no convolution, the points fail and the search moves on.
    fn conv_options(&self, s: &Shape) -> Vec<String> {
        let ([.., channels, _, pixels], Some(_)) = (s.maps.as_slice(), s.reduction) else {
            return Vec::new();
        };
        let pixel_tiles: Vec<i64> = std::iter::once(*pixels)
            .chain(self.divisors(*pixels, &self.tiles))
            .collect();
        let channel_blocks: Vec<i64> = std::iter::once(*channels)
            .chain(
                [64, 128, 256]
                    .into_iter()
                    .filter(|b| b < channels && channels % b == 0),
            )
            .collect();
        let mut options = Vec::new();
        for &(r, w) in &self.conv_registers {
            for mc in pixel_tiles.iter().filter(|mc| *mc % r == 0) {
                for nc in channel_blocks.iter().filter(|nc| *nc % w == 0) {
                    options.push(format!("convKernel({mc}, {nc}, {r}, {w})"));
                }
            }
        }
        options
    }

    /// The two innermost maps of a nest around a reduction in register tiles, in every
    /// such nest of the program (a batched product's matrices, a depthwise
    /// convolution's or a separable filter's pixels): `reductionTiles(mc, nc, r, w)`
    /// for each register tile of [`Auto::registers`] that divides them, with tiles of
    /// up to 16 rows and 256 columns; a reduction of at most [`Auto::max_unroll`]
    /// elements (a window's taps) also unrolled (`; tryAll(unroll)`).
    fn reduction_tile_options(&self, s: &Shape) -> Vec<String> {
        let ([.., rows, cols], Some(taps)) = (s.maps.as_slice(), s.reduction) else {
            return Vec::new();
        };
        // A short reduction (a window's taps) also unrolled: computed in the kernel's
        // body, each output written once.
        let unrolled = taps <= self.max_unroll;
        let largest = |unit: i64, most: i64, n: i64| {
            (1..=(most / unit).max(1))
                .rev()
                .map(|k| k * unit)
                .find(|t| n % t == 0)
        };
        self.registers
            .iter()
            .filter(|(r, w)| rows % r == 0 && cols % w == 0)
            .filter_map(|&(r, w)| {
                let mc = largest(r, 16.max(r), *rows)?;
                let nc = largest(w, 256.max(w), *cols)?;
                let tiles = format!("reductionTiles({mc}, {nc}, {r}, {w})");
                Some(match unrolled {
                    true => vec![super::library::taps_unrolled(&tiles), tiles],
                    false => vec![tiles],
                })
            })
            .flatten()
            .collect()
    }

    /// An element-wise chain or row reductions (no nest around a reduction, or several
    /// nests): `elementwise(w)` (every map fused into the next, maps and reductions on
    /// vectors of `w` lanes, the outermost map on threads) for each width up to 16
    /// that divides the innermost extent.
    fn elementwise_options(&self, s: &Shape) -> Vec<String> {
        if s.reduction.is_some() && s.nests < 2 {
            return Vec::new();
        }
        let Some(inner) = s.reduction.or(s.maps.last().copied()) else {
            return Vec::new();
        };
        self.widths
            .iter()
            .filter(|&&w| w <= 16 && inner % w == 0)
            .map(|w| format!("elementwise({w})"))
            .collect()
    }

    /// The reduction kept whole or split, each with its loop orders and unrolling.
    fn reduction_options(&self, blocks: usize, elements: usize, k: i64) -> String {
        let unroll = |n: i64, what: &str| {
            if n <= self.max_unroll {
                format!(" ;; {{id, {what}}}")
            } else {
                String::new()
            }
        };
        let mut branches = vec![format!(
            "{}{}",
            choice(&orders(blocks, elements, 1)),
            unroll(
                k,
                "(unroll <+ reduceSeqUnroll) @ innermost(isReduceSeq <+ isReduce)"
            )
        )];
        for b in self.divisors(k, &self.splits) {
            branches.push(format!(
                "try(reduceMapFission @ outermost(isApplied(isApplied(isApplied(isReduceSeq))))) ;; splitStrategy({b}) @ innermost(isFullyAppliedReduce) ;; {}{}",
                choice(&orders(blocks, elements, 2)),
                unroll(b, "unroll @ innermost(isReduceSeq)")
            ));
        }
        choice(&branches)
    }

    /// No vectors, or the innermost map on vectors of each width that divides its
    /// extent, with a register tile of the `rows` of a small row tile.
    fn vector_options(&self, inner: i64, rows: Option<i64>) -> String {
        let mut options = vec!["id".to_string()];
        for w in self
            .widths
            .iter()
            .filter(|&&w| w <= inner && inner % w == 0)
        {
            let mut v = format!("vectorize({w}) @ innermost(isFullyAppliedMap)");
            if rows.is_some_and(|r| r > 1 && r <= self.max_rows) {
                v.push_str(&format!(
                    " ;; {{id, function(mapSeqUnroll) @ innermost(isApplied(isMap) ; argument(isLambda) ; contains(\"asVector({w})\"))}}"
                ));
            }
            options.push(v);
        }
        choice(&options)
    }
}
