//! The library's schedules, picked by hand for a machine: what a person who knows the
//! library would write for a matrix product, a convolution, a nest of small
//! reductions, a pooling window or an element-wise chain, given the machine's vector
//! width (`lanes` f32 lanes per vector register). `auto` offers each of them and
//! starts its searches from them ([`super::Auto`]), so that a search is at least as
//! good as they are; the operator benchmarks measure them as "the library strategy".

/// The tile, a multiple of `unit` from `unit` to `16 * unit`, nearest `prefer` among
/// those that pad `n` (to the next multiple of the tile) by at most 3% more than the
/// least padding there is: a cache tile of `r` rows for `n` rows, say, where no
/// multiple of `r` divides `n`.
///
/// ```
/// use elevate_rise::search::padded_tile;
/// assert_eq!(padded_tile(1024, 16, 64), 64);
/// assert_eq!(padded_tile(196, 6, 64), 66); // 198 rows
/// assert_eq!(padded_tile(1 << 40, 6, 64), 66); // sizes of 2^40 too
/// ```
pub fn padded_tile(n: i64, unit: i64, prefer: i64) -> i64 {
    let padded = |t: i64| (n / t + i64::from(n % t != 0)).saturating_mul(t);
    let tiles: Vec<i64> = (1..=16).map(|k| k * unit.clamp(1, i64::MAX / 16)).collect();
    let least = tiles.iter().map(|t| padded(*t)).min().unwrap_or(n);
    tiles
        .into_iter()
        .filter(|t| padded(*t).saturating_mul(100) <= least.saturating_mul(103))
        .min_by_key(|t| (t - prefer).abs())
        .unwrap_or(unit)
}

/// The largest divisor of `n` from 1 to `want`.
fn fit(want: i64, n: i64) -> i64 {
    (1..=want).rev().find(|d| n % d == 0).unwrap_or(1)
}

/// `microKernel` for an `m x n` product: its register tile (4 x 64 with 16 lanes, as
/// AVX-512 has; 6 x 16 with 8, as AVX2 has: 12 to 16 accumulators, the rest of the
/// registers for the loads and broadcasts), cache tiles of about 64 that pad the
/// sizes least ([`padded_tile`]).
///
/// ```
/// use elevate_rise::search::library::micro_kernel;
/// assert_eq!(micro_kernel(1024, 1024, 8), "microKernel(66, 64, 6, 16)"); // 1056 rows
/// assert_eq!(micro_kernel(196, 256, 16), "microKernel(40, 64, 4, 64)"); // 200 rows
/// ```
pub fn micro_kernel(m: i64, n: i64, lanes: u32) -> String {
    let [mc, nc, r, w] = micro_kernel_tiles(m, n, lanes);
    format!("microKernel({mc}, {nc}, {r}, {w})")
}

/// The `(mc, nc, r, w)` of [`micro_kernel`].
pub fn micro_kernel_tiles(m: i64, n: i64, lanes: u32) -> [i64; 4] {
    let (r, w) = if lanes >= 16 { (4, 64) } else { (6, 16) };
    [padded_tile(m, r, 64), padded_tile(n, w, 64), r, w]
}

/// The f32 lanes of a vector register of the machine this runs on: 16 with AVX-512,
/// 8 with AVX2, 4 otherwise (SSE, NEON).
pub fn host_f32_lanes() -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return 16;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return 8;
        }
    }
    4
}

/// `convKernel` for rows of `pixels` output pixels and `channels` output channels:
/// tiles of up to 28 pixels (what of it divides the row), blocks of channels, and
/// the first register tile of the machine's (pixels by channels) whose pixels divide
/// the tile: 14 x 32 in blocks of 256 channels with 16 lanes (28 of AVX-512's 32
/// registers), 4 x 16 or 14 x 8 in blocks of 64 with 8 (8 or 14 of AVX2's 16). The
/// register tile's channels are the widest power of two up to its width that divides
/// the channels (vectors of 24 lanes, say, are slow), and the block the largest
/// multiple of them that divides the channels too.
///
/// ```
/// use elevate_rise::search::library::conv_kernel;
/// assert_eq!(conv_kernel(56, 64, 8), "convKernel(28, 64, 4, 16)");
/// assert_eq!(conv_kernel(14, 256, 16), "convKernel(14, 256, 14, 32)");
/// assert_eq!(conv_kernel(56, 144, 16), "convKernel(28, 144, 14, 16)"); // MobileNetV2
/// assert_eq!(conv_kernel(7, 960, 16), "convKernel(7, 192, 7, 32)");
/// ```
pub fn conv_kernel(pixels: i64, channels: i64, lanes: u32) -> String {
    let [mc, nc, r, w] = conv_kernel_tiles(pixels, channels, lanes);
    format!("convKernel({mc}, {nc}, {r}, {w})")
}

/// The `(mc, nc, r, w)` of [`conv_kernel`].
pub fn conv_kernel_tiles(pixels: i64, channels: i64, lanes: u32) -> [i64; 4] {
    let mc = fit(28, pixels);
    let (r, w, block) = conv_register_tile(mc, channels, lanes);
    [mc, channel_block(channels, w, block), r, w]
}

/// The register tile `(r, w)` of a convolution for tiles of `mc` pixels, and the
/// machine's block of channels (see [`conv_kernel`]).
fn conv_register_tile(mc: i64, channels: i64, lanes: u32) -> (i64, i64, i64) {
    let (tiles, block): (&[(i64, i64)], i64) = if lanes >= 16 {
        (&[(14, 32), (7, 32), (4, 32), (2, 32)], 256)
    } else {
        (&[(4, 16), (14, 8), (7, 8), (2, 16)], 64)
    };
    // The widest power of two up to `width` that divides the channels (at least 2).
    let lanes_of = |width: i64| {
        std::iter::successors(Some(width.max(2)), |w| (*w > 2).then_some(w / 2))
            .find(|w| channels % w == 0 && (w & (w - 1)) == 0)
            .unwrap_or(2)
    };
    let (r, w) = tiles
        .iter()
        .map(|&(r, w)| (r, lanes_of(w)))
        .find(|(r, _)| mc % r == 0)
        .unwrap_or((1, lanes_of(16)));
    (r, w, block)
}

/// The largest multiple of `w` up to `block` that divides the channels (`w` if none).
fn channel_block(channels: i64, w: i64, block: i64) -> i64 {
    (1..=(block / w).max(1))
        .rev()
        .map(|k| k * w)
        .find(|n| channels % n == 0)
        .unwrap_or(w)
}

/// The images of at most this many pixels that [`conv_kernel_small`] is for.
pub const SMALL_IMAGE: i64 = 64;

/// `convKernel` for a small image (at most [`SMALL_IMAGE`] pixels: ResNet's 7x7 with
/// 512 channels) of `pixels` output pixels, `channels` output channels and `taps`
/// multiply-adds per output (input channels times the window): its rows joined into
/// one (`joinPixels`) and the whole image one tile of pixels, so that the loop over
/// blocks of channels is outside every pixel and each block's weights are read once
/// (in rows of 7 pixels, 9.4 MB of weights were read from memory once per row: the
/// layers ran at 0.7x the speed of the 56x56 ones; joined, at about the same,
/// measured). The block is the most channels whose weights take at most 384 KiB, three
/// quarters of a Zen 3 core's L2 (at 512 channels, blocks of 16 ran faster than 8, 32
/// or 64, measured).
///
/// ```
/// use elevate_rise::search::library::conv_kernel_small;
/// assert_eq!(conv_kernel_small(49, 512, 512 * 9, 8),
///            "DFNF ; joinPixels @ topDown ; convKernel(49, 16, 7, 8)");
/// assert_eq!(conv_kernel_small(49, 512, 256, 8),
///            "DFNF ; joinPixels @ topDown ; convKernel(49, 64, 7, 8)");
/// ```
pub fn conv_kernel_small(pixels: i64, channels: i64, taps: i64, lanes: u32) -> String {
    let (r, w, block) = conv_register_tile(pixels, channels, lanes);
    let fits = (384 * 1024 / (4 * taps.max(1))).max(w);
    let nc = channel_block(channels, w, block.min(fits));
    format!("DFNF ; joinPixels @ topDown ; convKernel({pixels}, {nc}, {r}, {w})")
}

/// `reductionTiles` for nests of `rows x cols` around a reduction (a batched
/// product's matrices, a depthwise convolution's or a separable filter's pixels):
/// register tiles of `r` rows by `w` lanes (two vectors where they divide the
/// columns, else one, else the widest power of two that does), `r` a divisor of the
/// rows up to 8 (4 with two vectors: 8 accumulators either way), tiles of up to 16
/// rows by as many columns as divide `cols`; none where no power of two from 2
/// divides the columns.
///
/// ```
/// use elevate_rise::search::library::reduction_tiles;
/// assert_eq!(reduction_tiles(256, 256, 8).as_deref(), Some("reductionTiles(16, 256, 4, 16)"));
/// assert_eq!(reduction_tiles(56, 55, 8), None);
/// ```
pub fn reduction_tiles(rows: i64, cols: i64, lanes: u32) -> Option<String> {
    let lanes = i64::from(lanes).max(2);
    let w = std::iter::successors(Some(2 * lanes), |w| (*w > 2).then_some(w / 2))
        .find(|w| cols % w == 0)?;
    let r = fit(if w > lanes { 4 } else { 8 }, rows);
    let mc = (1..=16 / r)
        .rev()
        .map(|k| k * r)
        .find(|m| rows % m == 0)
        .unwrap_or(r);
    let nc = (1..=cols / w)
        .rev()
        .map(|k| k * w)
        .find(|n| cols % n == 0)
        .unwrap_or(w);
    Some(format!("reductionTiles({mc}, {nc}, {r}, {w})"))
}

/// `strategy`, then its windows' taps unrolled: a reduction the program unrolls is
/// computed in its kernel's body, so that each output is written once (no fill of it
/// before, no read of it at every tap).
pub fn taps_unrolled(strategy: &str) -> String {
    format!("{strategy} ; tryAll(unroll)")
}

/// The windows of a pooling (or any small reduction per output) unrolled, each output
/// written once: their pixels are apart, so vectors of them would be gathers, slower
/// than scalar code (measured). [`PARALLEL`] after it puts the channels on threads.
pub const POOLING: &str = "tryAll(reduceSeqUnroll)";

/// The outermost loop on threads.
pub const PARALLEL: &str = "parallel @ outermost(isApplied(isMap))";

/// `elementwise` for rows of `m` elements: vectors of the machine's width, or of the
/// widest power of two that divides `m`.
///
/// ```
/// use elevate_rise::search::library::elementwise;
/// assert_eq!(elementwise(2048, 8), "elementwise(8)");
/// assert_eq!(elementwise(36, 16), "elementwise(4)");
/// ```
pub fn elementwise(m: i64, lanes: u32) -> String {
    let mut w = i64::from(lanes).max(2);
    while w > 2 && m % w != 0 {
        w /= 2;
    }
    format!("elementwise({w})")
}
