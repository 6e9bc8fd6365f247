//! The operator suite (`examples/rise/ops/`) at a size, with the library strategy of
//! each operator for the machine's vector width: shared by `examples/ops_bench.rs` and
//! the criterion benchmark `benches/ops.rs`.

#![allow(dead_code)]

use elevate::bridge::jit::Compiled;
use elevate::bridge::Options;
use elevate::rise::nat::NatVar;
use elevate::rise::search::padded_tile;
use elevate::rise::{registry, NatEnv, Program, Term};

/// What an operator's speed is measured in.
#[derive(Clone, Copy)]
pub enum Work {
    /// Floating-point operations (against the FMA peak).
    Flops(f64),
    /// Bytes read and written once (against the copy bandwidth).
    Bytes(f64),
}

/// An operator of the suite at a size.
pub struct Op {
    /// Its name in the output.
    pub name: String,
    /// Its program in `examples/rise/ops/`.
    pub file: &'static str,
    /// Its sizes.
    pub nats: Vec<(&'static str, i64)>,
    /// What its speed is measured in.
    pub work: Work,
    /// The library strategy, if any.
    pub library: Option<String>,
    /// `(m, n, k)` of a matrix product, for OpenBLAS.
    pub gemm: Option<(i64, i64, i64)>,
}

/// A matrix product `m x k` by `k x n` (`matmul.rise`: `a: n.k`, `b: k.m`), with
/// `microKernel` for a machine with `lanes` f32 lanes.
fn matmul(m: i64, n: i64, k: i64, lanes: u32) -> Op {
    Op {
        name: format!("matmul {m}x{n}x{k}"),
        file: "matmul.rise",
        nats: vec![("n", m), ("m", n), ("k", k)],
        work: Work::Flops(2.0 * (m * n * k) as f64),
        library: Some(micro_kernel(m, n, lanes)),
        gemm: Some((m, n, k)),
    }
}

fn op(name: &str, file: &'static str, nats: &[(&'static str, i64)], work: Work) -> Op {
    Op {
        name: name.to_string(),
        file,
        nats: nats.to_vec(),
        work,
        library: None,
        gemm: None,
    }
}

impl Op {
    /// Its rate when it takes `ms` on `threads` threads: GFLOPS or GB/s, the roof for
    /// that many threads (the FMA peak or the copy bandwidth), and the rate's unit.
    pub fn rate(
        &self,
        ms: f64,
        threads: usize,
        fma: Option<f64>,
        copy: f64,
    ) -> (f64, Option<f64>, &'static str) {
        let t = threads as f64;
        match self.work {
            Work::Flops(f) => (f / ms / 1e6, fma.map(|p| p * t), "gflops"),
            Work::Bytes(b) => (b / ms / 1e6, Some(copy * t), "gb_per_s"),
        }
    }

    /// The operator with a library strategy.
    fn with(self, library: String) -> Op {
        Op {
            library: Some(library),
            ..self
        }
    }

    /// The operator with a library strategy, where there is one at its size.
    fn with_any(self, library: Option<String>) -> Op {
        Op { library, ..self }
    }
}

/// `convKernel` for `width` output pixels per row and `k` output channels on a machine
/// with `lanes` f32 lanes: `mc` pixels (or what of it divides `width`) by blocks of
/// channels, and the first register tile of the machine's (pixels by channels) whose
/// pixels divide the tile: 14 x 32 in blocks of 256 channels with AVX-512 (28 of its
/// 32 registers), 4 x 16 or 14 x 8 in blocks of 64 with AVX2 (8 or 14 of its 16).
fn conv_strategy(width: i64, k: i64, mc: i64, lanes: u32) -> String {
    let fit = |want: i64, n: i64| (1..=want).rev().find(|d| n % d == 0).unwrap_or(1);
    let (tiles, block): (&[(i64, i64)], i64) = if lanes >= 16 {
        (&[(14, 32), (7, 32), (4, 32), (2, 32)], 256)
    } else {
        (&[(4, 16), (14, 8), (7, 8), (2, 16)], 64)
    };
    let mc = fit(mc, width);
    let (r, w) = tiles
        .iter()
        .map(|&(r, w)| (r, fit(w, k).max(2)))
        .find(|(r, _)| mc % r == 0)
        .unwrap_or((1, fit(16, k).max(2)));
    let nc = fit(block, k) / w * w;
    format!("convKernel({mc}, {}, {r}, {w})", nc.max(w))
}

/// `microKernel` for an `m x n` product on a machine with `lanes` f32 lanes per
/// vector register: its register tile (4 x 64 with AVX-512, 6 x 16 with AVX2), cache
/// tiles of about 64 that pad the sizes least.
fn micro_kernel(m: i64, n: i64, lanes: u32) -> String {
    let (r, w) = if lanes >= 16 { (4, 64) } else { (6, 16) };
    let mc = padded_tile(m, r, 64);
    let nc = padded_tile(n, w, 64);
    format!("microKernel({mc}, {nc}, {r}, {w})")
}

/// `reductionTiles` for nests of `rows x cols` (pixels, or a product's rows and
/// columns) on a machine with `lanes` f32 lanes: register tiles of `r` rows by `w`
/// lanes (two vectors where they divide the columns, else one, else the widest power
/// of two that does), `r` a divisor of the rows up to 8 (4 with two vectors: 8
/// accumulators either way), tiles of `mc` rows
/// (up to 16) by as many columns as fit `nc_max`; none where no power of two from 2
/// divides the columns.
fn reduction_tiles(rows: i64, cols: i64, nc_max: i64, lanes: u32) -> Option<String> {
    let fit = |want: i64, n: i64| (1..=want).rev().find(|d| n % d == 0).unwrap_or(1);
    let lanes = i64::from(lanes).max(2);
    let w = std::iter::successors(Some(2 * lanes), |w| (*w > 2).then_some(w / 2))
        .find(|w| cols % w == 0)?;
    let r_max = if w > lanes { 4 } else { 8 };
    let r = fit(r_max, rows);
    let mc = (1..=16 / r)
        .rev()
        .map(|k| k * r)
        .find(|m| rows % m == 0)
        .unwrap_or(r);
    let nc = (1..=nc_max / w)
        .rev()
        .map(|k| k * w)
        .find(|n| cols % n == 0)
        .unwrap_or(w);
    Some(format!("reductionTiles({mc}, {nc}, {r}, {w})"))
}

/// `strategy`, then its windows' taps unrolled: a reduction the program unrolls is
/// computed in its kernel's body, so that each output is written once (no fill of it
/// before, no read of it at every tap).
fn taps_unrolled(strategy: String) -> String {
    format!("{strategy} ; tryAll(unroll)")
}

/// `elementwise` for rows of `m` elements: vectors of the machine's width (or of the
/// widest power of two that divides `m`).
fn elementwise(m: i64, lanes: u32) -> String {
    let mut w = i64::from(lanes).max(2);
    while w > 2 && m % w != 0 {
        w /= 2;
    }
    format!("elementwise({w})")
}

/// The suite at `1 / scale` of its size in each dimension, with library strategies
/// for a machine with `lanes` f32 lanes per vector register.
pub fn suite(scale: i64, lanes: u32) -> Vec<Op> {
    let s = |x: i64| (x / scale).max(1);
    let f32s = |elements: i64| 4.0 * elements as f64;
    let (c, hw, k) = (s(64), s(56), s(64));
    let (c2, hw2, k2) = (s(128), s(13), s(256));
    let (pool_c, pool_hw) = (s(64), s(55));
    let n2 = s(2048);
    // The matrix products that are not square run at their size (1000 only at full
    // size: its naive version takes seconds); `microKernel` pads where its tiles do not
    // divide.
    let mut ops = vec![
        matmul(s(1024), s(1024), s(1024), lanes),
        matmul(196, 256, 2304, lanes),
        matmul(128, 3072, 768, lanes),
    ];
    if scale == 1 {
        ops.push(matmul(1000, 1000, 1000, lanes));
    }
    ops.extend([
        op(
            "batched_matmul",
            "batched_matmul.rise",
            &[("b", 8), ("n", s(256)), ("k", s(256)), ("m", s(256))],
            Work::Flops(2.0 * 8.0 * (s(256).pow(3)) as f64),
        )
        .with_any(reduction_tiles(s(256), s(256), 256, lanes)),
        op(
            "conv2d 3x3 s1",
            "conv2d_nchw.rise",
            &[("n", 1), ("c", c), ("h", hw), ("w", hw), ("k", k)],
            Work::Flops(2.0 * (k * c * 9 * hw * hw) as f64),
        )
        .with(conv_strategy(hw, k, 28, lanes)),
        op(
            "conv2d 3x3 s2",
            "conv2d_stride2.rise",
            &[("n", 1), ("c", c2), ("h", hw2), ("w", hw2), ("k", k2)],
            Work::Flops(2.0 * (k2 * c2 * 9 * (hw2 + 1) * (hw2 + 1)) as f64),
        )
        .with(conv_strategy(hw2 + 1, k2, 14, lanes)),
        op(
            "depthwise_conv",
            "depthwise_conv.rise",
            &[("c", s(128)), ("h", hw), ("w", hw)],
            Work::Flops(2.0 * (s(128) * 9 * hw * hw) as f64),
        )
        .with_any(reduction_tiles(hw, hw, hw, lanes).map(taps_unrolled)),
        op(
            "maxpool 3x3 s2",
            "maxpool.rise",
            &[("c", pool_c), ("h", pool_hw), ("w", pool_hw)],
            Work::Bytes(f32s(
                pool_c * ((2 * pool_hw + 3).pow(2) + (pool_hw + 1).pow(2)),
            )),
        )
        // Its windows' pixels are two elements apart: vectors of them are gathers,
        // slower than scalar loops (measured), so the channels on threads, and the
        // taps unrolled (each output written once).
        .with("parallel @ outermost(isApplied(isMap)) ; tryAll(reduceSeqUnroll)".into()),
        op(
            "add",
            "add.rise",
            &[("n", n2), ("m", n2)],
            Work::Bytes(f32s(3 * n2 * n2)),
        )
        .with(elementwise(n2, lanes)),
        op(
            "relu",
            "relu.rise",
            &[("n", n2), ("m", n2)],
            Work::Bytes(f32s(2 * n2 * n2)),
        )
        .with(elementwise(n2, lanes)),
        op(
            "matmul_bias_relu",
            "matmul_bias_relu.rise",
            &[("n", s(1024)), ("k", s(1024)), ("m", s(1024))],
            Work::Flops(2.0 * (s(1024).pow(3)) as f64),
        )
        .with(micro_kernel(s(1024), s(1024), lanes)),
        op(
            "softmax",
            "softmax.rise",
            &[("b", s(1024)), ("n", s(4096))],
            Work::Bytes(f32s(2 * s(1024) * s(4096))),
        )
        .with(elementwise(s(4096), lanes)),
        op(
            "jacobi2d",
            "jacobi2d.rise",
            &[("h", n2), ("w", n2)],
            Work::Bytes(f32s(2 * n2 * n2)),
        )
        // Its windows read at constant positions: vectors of neighbouring windows.
        .with(elementwise(n2, lanes)),
        op(
            "blur_separable",
            "blur_separable.rise",
            &[("h", n2), ("w", n2)],
            Work::Bytes(f32s(2 * n2 * n2)),
        )
        .with_any(reduction_tiles(n2, n2, 2048, lanes).map(taps_unrolled)),
    ]);
    ops
}

impl Op {
    /// Its program at its sizes, typed.
    pub fn term(&self) -> Term {
        let mut nats = NatEnv::default();
        for (name, size) in &self.nats {
            nats.insert(NatVar::Named((*name).into()), *size);
        }
        let path = format!(
            "{}/examples/rise/ops/{}",
            env!("CARGO_MANIFEST_DIR"),
            self.file
        );
        let source = std::fs::read_to_string(&path).expect("the suite's program");
        let program = Program::load(&source, None).expect("the suite type-checks");
        program.instantiate(&nats).expect("the sizes fit")
    }
}

/// `strategy` (text, then `defaultLowering`) on `term`, compiled, or why not.
pub fn compiled(term: &Term, strategy: Option<&str>) -> Result<Compiled, String> {
    let strategy = strategy
        .map(|s| registry().parse(s).map_err(|e| e.to_string()))
        .transpose()?;
    elevate::bridge::compile_term("f", term, strategy.as_ref(), &Options::default())
        .map_err(|e| e.to_string())
}
