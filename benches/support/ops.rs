//! The operator suite (`examples/rise/ops/`) at a size, with the library strategy of
//! each operator for the machine's vector width: shared by `examples/ops_bench.rs` and
//! the criterion benchmark `benches/ops.rs`.

#![allow(dead_code)]

use elevate::bridge::jit::Compiled;
use elevate::bridge::Options;
use elevate::rise::nat::NatVar;
use elevate::rise::search::library::{
    conv_kernel, elementwise, micro_kernel, reduction_tiles, taps_unrolled, PARALLEL, POOLING,
};
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
        .with_any(reduction_tiles(s(256), s(256), lanes)),
        op(
            "conv2d 3x3 s1",
            "conv2d_nchw.rise",
            &[("n", 1), ("c", c), ("h", hw), ("w", hw), ("k", k)],
            Work::Flops(2.0 * (k * c * 9 * hw * hw) as f64),
        )
        .with(conv_kernel(hw, k, lanes)),
        op(
            "conv2d 3x3 s2",
            "conv2d_stride2.rise",
            &[("n", 1), ("c", c2), ("h", hw2), ("w", hw2), ("k", k2)],
            Work::Flops(2.0 * (k2 * c2 * 9 * (hw2 + 1) * (hw2 + 1)) as f64),
        )
        .with(conv_kernel(hw2 + 1, k2, lanes)),
        op(
            "depthwise_conv",
            "depthwise_conv.rise",
            &[("c", s(128)), ("h", hw), ("w", hw)],
            Work::Flops(2.0 * (s(128) * 9 * hw * hw) as f64),
        )
        .with_any(reduction_tiles(hw, hw, lanes).map(|t| taps_unrolled(&t))),
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
        .with(format!("{POOLING} ; {PARALLEL}")),
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
        .with_any(reduction_tiles(n2, n2, lanes).map(|t| taps_unrolled(&t))),
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
