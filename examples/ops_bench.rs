//! The operator suite (`examples/rise/ops/`) against the machine's roofs and OpenBLAS,
//! in one run, as JSON lines:
//!
//! - the roofs: the FMA peak of one core, one core's copy and triad bandwidth;
//! - every operator at the suite's size, on one thread, with `defaultLowering` alone,
//!   with its library strategy where it has one (`microKernel` for the matrix
//!   products, `convKernel` for the convolutions), and with the best point of a
//!   search of `auto` (`evolve`, `model+measured` with the model's best two of each
//!   round timed, 300 evaluations, seed 1; the point found is then compiled and
//!   timed again): its
//!   time, GFLOPS (computing operators, against the FMA peak) or GB/s (moving ones:
//!   the bytes read and written once, against the copy bandwidth), the fraction of
//!   that roof, and the ratio to `defaultLowering` and, for the matrix products, to
//!   OpenBLAS's `sgemm` on its fastest core type (one thread);
//! - the 1024 matmul's library strategy and OpenBLAS on every core as well.
//!
//! `cargo run --release --example ops_bench [-- --quick]`: `--quick` runs each operator
//! at a quarter of its size in each dimension (the matrix products that are not
//! square at their size, without the 1000 one), without the searches.

#[path = "../benches/support/bridge.rs"]
mod bridge;
#[path = "../benches/support/roofs.rs"]
mod roofs;

use bridge::median_ms;
use elevate::bridge::jit::{Compiled, OpenMp};
use elevate::bridge::measure::{Measured, ModelMeasured};
use elevate::bridge::{model_cost, Options};
use elevate::rise::nat::NatVar;
use elevate::rise::search::{Auto, Machine};
use elevate::rise::{registry, NatEnv, Program, Term};
use elevate::strategies::search::{drivers, Search, SearchBudget, Space};
use roofs::{answered_blas_child, blas_best, copy_gb_per_s, fma_peak_gflops, triad_gb_per_s};
use serde_json::json;
use std::sync::Arc;

/// What an operator's speed is measured in.
#[derive(Clone, Copy)]
enum Work {
    /// Floating-point operations (against the FMA peak).
    Flops(f64),
    /// Bytes read and written once (against the copy bandwidth).
    Bytes(f64),
}

/// An operator of the suite at a size.
struct Op {
    /// Its name in the output.
    name: String,
    file: &'static str,
    nats: Vec<(&'static str, i64)>,
    work: Work,
    /// The library strategy, if any.
    library: Option<String>,
    /// `(m, n, k)` of a matrix product, for OpenBLAS.
    gemm: Option<(i64, i64, i64)>,
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A matrix product `m x k` by `k x n` (`matmul.rise`: `a: n.k`, `b: k.m`).
fn matmul(m: i64, n: i64, k: i64, library: &str) -> Op {
    Op {
        name: format!("matmul {m}x{n}x{k}"),
        file: "matmul.rise",
        nats: vec![("n", m), ("m", n), ("k", k)],
        work: Work::Flops(2.0 * (m * n * k) as f64),
        library: Some(library.to_string()),
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
    /// The operator with a library strategy.
    fn with(self, library: String) -> Op {
        Op {
            library: Some(library),
            ..self
        }
    }
}

/// `convKernel` for `width` output pixels per row and `k` output channels: `mc`
/// pixels by as many channels as divide `k` (at most 64 and 256), register tiles of
/// `r` pixels by 32 channels, or what of that divides the scaled-down sizes.
fn conv_strategy(width: i64, k: i64, mc: i64, r: i64) -> String {
    let fit = |want: i64, n: i64| (1..=want).rev().find(|d| n % d == 0).unwrap_or(1);
    let mc = fit(mc, width);
    let r = fit(r, mc);
    let lanes = fit(32, k).max(2);
    let nc = fit(256, k) / lanes * lanes;
    format!("convKernel({mc}, {}, {r}, {lanes})", nc.max(lanes))
}

/// The suite at `1 / scale` of its size in each dimension.
fn suite(scale: i64) -> Vec<Op> {
    let s = |x: i64| (x / scale).max(1);
    let f32s = |elements: i64| 4.0 * elements as f64;
    let (c, hw, k) = (s(64), s(56), s(64));
    let (c2, hw2, k2) = (s(128), s(13), s(256));
    let (pool_c, pool_hw) = (s(64), s(55));
    let n2 = s(2048);
    // The matrix products' tiles divide their sizes: the shapes that are not powers of
    // two run at their size (1000 only at full size: its naive version takes seconds).
    let mut ops = vec![
        matmul(s(1024), s(1024), s(1024), "microKernel"),
        matmul(196, 256, 2304, "microKernel(28, 64, 4, 64)"),
        matmul(128, 3072, 768, "microKernel(32, 64, 8, 32)"),
    ];
    if scale == 1 {
        ops.push(matmul(1000, 1000, 1000, "microKernel(40, 200, 5, 8)"));
    }
    ops.extend([
        op(
            "batched_matmul",
            "batched_matmul.rise",
            &[("b", 8), ("n", s(256)), ("k", s(256)), ("m", s(256))],
            Work::Flops(2.0 * 8.0 * (s(256).pow(3)) as f64),
        ),
        op(
            "conv2d 3x3 s1",
            "conv2d_nchw.rise",
            &[("n", 1), ("c", c), ("h", hw), ("w", hw), ("k", k)],
            Work::Flops(2.0 * (k * c * 9 * hw * hw) as f64),
        )
        .with(conv_strategy(hw, k, 28, 14)),
        op(
            "conv2d 3x3 s2",
            "conv2d_stride2.rise",
            &[("n", 1), ("c", c2), ("h", hw2), ("w", hw2), ("k", k2)],
            Work::Flops(2.0 * (k2 * c2 * 9 * (hw2 + 1) * (hw2 + 1)) as f64),
        )
        .with(conv_strategy(hw2 + 1, k2, 14, 14)),
        op(
            "depthwise_conv",
            "depthwise_conv.rise",
            &[("c", s(128)), ("h", hw), ("w", hw)],
            Work::Flops(2.0 * (s(128) * 9 * hw * hw) as f64),
        ),
        op(
            "maxpool 3x3 s2",
            "maxpool.rise",
            &[("c", pool_c), ("h", pool_hw), ("w", pool_hw)],
            Work::Bytes(f32s(
                pool_c * ((2 * pool_hw + 3).pow(2) + (pool_hw + 1).pow(2)),
            )),
        ),
        op(
            "add",
            "add.rise",
            &[("n", n2), ("m", n2)],
            Work::Bytes(f32s(3 * n2 * n2)),
        ),
        op(
            "relu",
            "relu.rise",
            &[("n", n2), ("m", n2)],
            Work::Bytes(f32s(2 * n2 * n2)),
        ),
        op(
            "matmul_bias_relu",
            "matmul_bias_relu.rise",
            &[("n", s(1024)), ("k", s(1024)), ("m", s(1024))],
            Work::Flops(2.0 * (s(1024).pow(3)) as f64),
        ),
        op(
            "softmax",
            "softmax.rise",
            &[("b", s(1024)), ("n", s(4096))],
            Work::Bytes(f32s(2 * s(1024) * s(4096))),
        ),
        op(
            "jacobi2d",
            "jacobi2d.rise",
            &[("h", n2), ("w", n2)],
            Work::Bytes(f32s(2 * n2 * n2)),
        ),
        op(
            "blur_separable",
            "blur_separable.rise",
            &[("h", n2), ("w", n2)],
            Work::Bytes(f32s(2 * n2 * n2)),
        ),
    ]);
    ops
}

/// `strategy` (text, then `defaultLowering`) on `term`, compiled.
fn compiled(term: &Term, strategy: Option<&str>) -> Result<Compiled, String> {
    let strategy = strategy
        .map(|s| registry().parse(s).map_err(|e| e.to_string()))
        .transpose()?;
    elevate::bridge::compile_term("f", term, strategy.as_ref(), &Options::default())
        .map_err(|e| e.to_string())
}

/// The best point of `auto` for `term` (`model+measured`: the model ranks each round,
/// its best two are compiled and timed), as strategy text without its final
/// `defaultLowering`.
fn auto_point(term: &Term) -> Option<String> {
    let space = Space::parse_with_auto("auto", Arc::new(registry()), Auto::default()).ok()?;
    let measured = Measured::new(term).ok()?.runs(3);
    let cost = ModelMeasured::new(model_cost(Machine::default()), measured, 2);
    let report = Search::new(space, drivers::evolve(32), cost)
        .budget(SearchBudget::default().evaluations(300))
        .seed(1)
        .jobs(1)
        .run(term);
    let best = report.best()?.strategy.clone();
    Some(
        best.strip_suffix(" ; defaultLowering")
            .unwrap_or(&best)
            .to_string(),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if answered_blas_child(&args) {
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    let fma = fma_peak_gflops();
    let (copy, triad) = (copy_gb_per_s(), triad_gb_per_s());
    println!(
        "{}",
        json!({"bench": "roofs", "fma_gflops_per_core": fma.map(round),
               "copy_gb_per_s_one_core": round(copy), "triad_gb_per_s_one_core": round(triad)})
    );
    let all = std::thread::available_parallelism().map_or(1, |c| c.get());
    // The OpenMP runtime is there once a compiled function has loaded it.
    let set_threads = |t: usize| {
        if let Some(omp) = OpenMp::get() {
            omp.set_threads(t);
        }
    };
    for (i, op) in suite(if quick { 4 } else { 1 }).iter().enumerate() {
        let mut nats = NatEnv::default();
        for (name, size) in &op.nats {
            nats.insert(NatVar::Named((*name).into()), *size);
        }
        let path = format!(
            "{}/examples/rise/ops/{}",
            env!("CARGO_MANIFEST_DIR"),
            op.file
        );
        let source = std::fs::read_to_string(&path).expect("the suite's program");
        let program = Program::load(&source, None).expect("the suite type-checks");
        let term = program.instantiate(&nats).expect("the sizes fit");
        let inputs = Measured::new(&term).expect("inputs").inputs().to_vec();
        let blas = op.gemm.and_then(|(m, n, k)| blas_best(m, n, k, 1));
        let mut versions: Vec<(&str, Option<String>)> = vec![("defaultLowering", None)];
        if let Some(library) = &op.library {
            versions.push(("library", Some(library.clone())));
        }
        if !quick {
            versions.push(("auto", auto_point(&term)));
        }
        let mut default_ms = None;
        for (version, strategy) in versions {
            if version == "auto" && strategy.is_none() {
                println!(
                    "{}",
                    json!({"op": op.name, "version": version, "error": "no point found"})
                );
                continue;
            }
            let threads: &[usize] = if i == 0 && version == "library" {
                &[1, all]
            } else {
                &[1]
            };
            for &t in threads {
                let line = match compiled(&term, strategy.as_deref()) {
                    Err(e) => {
                        json!({"op": op.name, "version": version, "strategy": strategy, "error": e})
                    }
                    Ok(f) => {
                        set_threads(t);
                        let mut call = f.prepare(&inputs).expect("the inputs fit");
                        // Slow versions (a naive 1024 matmul takes seconds) run fewer times.
                        let once = std::time::Instant::now();
                        call.invoke().expect("it runs");
                        let slow = once.elapsed().as_secs_f64() > 0.5;
                        let runs = if quick || slow { 3 } else { 10 };
                        let ms = median_ms(|| call.invoke().expect("it runs"), runs);
                        if version == "defaultLowering" {
                            default_ms = Some(ms);
                        }
                        let (rate, roof, unit) = match op.work {
                            Work::Flops(f) => (f / ms / 1e6, fma.map(|p| p * t as f64), "gflops"),
                            Work::Bytes(b) => (b / ms / 1e6, Some(copy * t as f64), "gb_per_s"),
                        };
                        let t_blas = if t == 1 {
                            blas.as_ref().map(|b| b.0)
                        } else {
                            op.gemm
                                .and_then(|(m, n, k)| blas_best(m, n, k, t))
                                .map(|b| b.0)
                        };
                        json!({
                            "op": op.name, "version": version, "threads": t,
                            "strategy": strategy, "ms": round(ms), unit: round(rate),
                            "of_roof": roof.map(|r| round(rate / r)),
                            "vs_default": default_ms.map(|d| round(d / ms)),
                            "vs_openblas": t_blas.map(|b| round(b / ms)),
                            "openblas_core_type": blas.as_ref().map(|b| b.1.clone()),
                        })
                    }
                };
                println!("{line}");
            }
        }
        set_threads(all);
    }
}
