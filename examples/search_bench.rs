//! Search against the hand-written strategy, OpenBLAS and the machine's roofs, in one
//! run, as JSON lines:
//!
//! - the roofs: the FMA peak of one core (a tight loop of independent FMAs) and the
//!   copy bandwidth of one core;
//! - the square matmul at `N` (1024): OpenBLAS's `sgemm` on 1 thread and on all at its
//!   fastest core type (each tried in a process of its own, since OpenBLAS reads
//!   `OPENBLAS_CORETYPE` when it loads), the library's `par` on 1 thread and on all,
//!   then a search of `auto` with the measured cost for `SECONDS` (300), once with the
//!   candidates on all threads and once on one thread (so that one thread is compared
//!   with one thread); the values are checked against `par`'s, which match the
//!   interpreter's (the interpreter itself takes minutes at 1024);
//! - the rectangular matmul 512x768x384 (`m` x `n` x `k`: rows of `a`, columns of `b`,
//!   the reduction) in the same way, for a third of the time;
//! - the 3x3 convolution (`conv2d.rise`, a stencil) at 2048x2048 against
//!   `defaultLowering` and the copy roof (reading the image and writing the result once);
//! - how many candidates compiled per second (both cores compiling), and the agents'
//!   environment's time per step and per episode with the model cost
//!   (`examples/env_bench.rs` alone, without MLIR).
//!
//! `cargo run --release --example search_bench [-- N SECONDS]`; `--quick`: 256 and 20,
//! with the rectangle and the stencil a quarter of their size in each dimension.

#[path = "../benches/support/bridge.rs"]
mod bridge;
#[path = "../benches/support/env.rs"]
mod env;
#[path = "../benches/support/matmul.rs"]
mod matmul;
#[path = "../benches/support/roofs.rs"]
mod roofs;

use bridge::median_ms;
use elevate::bridge::jit::OpenMp;
use elevate::bridge::measure::{CompileRate, Measured};
use elevate::bridge::Options;
use elevate::rise::nat::NatVar;
use elevate::rise::search::Auto;
use elevate::rise::{NatEnv, Program, Term};
use elevate::strategies::search::{drivers, Report, Search, SearchBudget, Space};
use roofs::{answered_blas_child, blas_best, copy_gb_per_s, fma_peak_gflops};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The sizes of a matmul: `a` is `m` x `k`, `b` is `k` x `n`.
#[derive(Debug, Clone, Copy)]
struct Dims {
    m: i64,
    n: i64,
    k: i64,
}

impl Dims {
    fn flops(&self) -> f64 {
        2.0 * (self.m * self.n * self.k) as f64
    }

    fn label(&self) -> String {
        format!("{}x{}x{}", self.m, self.n, self.k)
    }

    /// `matmul.rise`'s sizes: `a: n.k`, `b: k.m`.
    fn nats(&self) -> NatEnv {
        let mut nats = NatEnv::default();
        for (name, size) in [("n", self.m), ("k", self.k), ("m", self.n)] {
            nats.insert(NatVar::Named(name.into()), size);
        }
        nats
    }
}

/// What the searches compare with.
struct Roofs {
    /// GFLOPS of one core's FMAs.
    fma_gflops: Option<f64>,
    /// GB/s of one core's copy.
    copy_gb_per_s: f64,
}

/// `auto`, searched with `evolve` and the measured cost for `seconds`, from `start`.
fn search(start: &Term, measured: &Measured, seconds: u64) -> (Report, CompileRate) {
    let space =
        Space::parse_with_auto("auto", Arc::new(elevate::rise::registry()), Auto::default())
            .expect("auto reads");
    let jobs = std::thread::available_parallelism().map_or(1, |c| c.get());
    let report = Search::new(space, drivers::evolve(32), measured)
        .budget(SearchBudget::default().time(Duration::from_secs(seconds)))
        .seed(1)
        .jobs(jobs)
        .baseline(start.clone())
        .run(start);
    (report, measured.compile_rate())
}

/// The JSON line of a search: what it did and its best, in milliseconds and as
/// `gflops` (from `flops`, if given).
fn search_json(
    what: &str,
    report: &Report,
    rate: CompileRate,
    seconds: u64,
    flops: Option<f64>,
) -> serde_json::Value {
    let best = report.best();
    let best_ms = best.and_then(|b| b.cost());
    json!({
        "bench": "search", "program": what, "space": "auto", "driver": report.driver,
        "cost": report.cost, "budget_s": seconds, "seconds": round(report.seconds),
        "evaluations": report.evaluations, "distinct_programs": report.distinct_programs,
        "failed": report.failed, "candidates_per_s": round(report.candidates_per_s()),
        "compiled_per_s": round(rate.per_second()),
        "baseline_ms": report.baseline.as_ref().and_then(|b| b.as_ref().ok()).map(|m| round(m.cost)),
        "speedup": report.speedup().map(round),
        "best_ms": best_ms.map(round),
        "best_gflops": best_ms.zip(flops).map(|(ms, f)| round(f / ms / 1e6)),
        "best_strategy": best.map(|b| b.strategy.clone()),
    })
}

/// OpenBLAS, `par` and the searches (all threads, one thread) of the matmul `dims`.
fn matmul_case(dims: Dims, seconds: u64, roofs: &Roofs) {
    let gflops = |ms: f64| round(dims.flops() / ms / 1e6);
    let label = dims.label();
    let all = std::thread::available_parallelism().map_or(1, |c| c.get());
    let blas: Vec<Option<(f64, String)>> = [1, all]
        .map(|t| blas_best(dims.m, dims.n, dims.k, t))
        .to_vec();
    for (threads, blas) in [1, all].iter().zip(&blas) {
        println!(
            "{}",
            json!({"bench": "openblas_sgemm", "matmul": label, "threads": threads,
                   "median_ms": blas.as_ref().map(|b| round(b.0)),
                   "gflops": blas.as_ref().map(|b| gflops(b.0)),
                   "core_type": blas.as_ref().map(|b| b.1.clone())})
        );
    }

    // `par`, on 1 thread and on all; its values on the searches' inputs are the
    // reference their candidates are checked against.
    let program = Program::load(&matmul::source(), None).expect("matmul type-checks");
    let nats = dims.nats();
    let start = program.instantiate(&nats).expect("the matmul instantiates");
    let par = elevate::bridge::compile(
        &program,
        &nats,
        Some(&bridge::strategy("par")),
        &Options::default(),
    )
    .expect("par compiles");
    let measured = || Measured::new(&start).expect("inputs");
    let inputs = measured().inputs().to_vec();
    let reference = par
        .run(&inputs)
        .expect("par runs")
        .to_json()
        .expect("par's values are JSON");
    let omp = OpenMp::get();
    let mut par_ms = [0.0; 2];
    for (i, threads) in [1, all].into_iter().enumerate() {
        if let Some(omp) = omp {
            omp.set_threads(threads);
        }
        let mut call = par.prepare(&inputs).expect("par prepares");
        par_ms[i] = median_ms(|| call.invoke().expect("par runs"), 5);
        println!(
            "{}",
            json!({"bench": "par", "matmul": label, "threads": threads,
                   "median_ms": round(par_ms[i]), "gflops": gflops(par_ms[i])})
        );
    }
    if let Some(omp) = omp {
        omp.set_threads(all);
    }

    for (i, threads) in [all, 1].into_iter().enumerate() {
        let cost = measured()
            .with_reference(reference.clone())
            .threads(threads);
        let (report, rate) = search(&start, &cost, seconds);
        let mut line = search_json(
            &format!("matmul {label}"),
            &report,
            rate,
            seconds,
            Some(dims.flops()),
        );
        let best_ms = report.best().and_then(|b| b.cost());
        let blas_same = blas[if threads == 1 { 0 } else { 1 }].as_ref();
        let ratio = |other: Option<f64>| best_ms.zip(other).map(|(b, o)| round(o / b));
        let extra = json!({
            "threads": threads,
            "vs_par_same_threads": ratio(Some(par_ms[1 - i])),
            "vs_openblas_same_threads": ratio(blas_same.map(|b| b.0)),
            "of_fma_peak": best_ms.zip(roofs.fma_gflops).map(|(b, p)| round(gflops(b) / (p * threads as f64))),
        });
        merge(&mut line, extra);
        println!("{line}");
    }
}

/// The 3x3 convolution at `size` x `size`: `defaultLowering` alone, then a search,
/// against the copy roof.
fn stencil_case(size: i64, seconds: u64, roofs: &Roofs) {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/rise/conv2d.rise"
    ))
    .expect("the conv2d example");
    let program = Program::load(&source, None).expect("conv2d type-checks");
    let mut nats = NatEnv::default();
    for name in ["n", "m"] {
        nats.insert(NatVar::Named(name.into()), size);
    }
    let start = program.instantiate(&nats).expect("conv2d instantiates");
    // The naive loops' values are the interpreter's (the bridge's tests say so), and
    // quicker to get at this size.
    let naive = elevate::bridge::compile(&program, &nats, None, &Options::default())
        .expect("conv2d compiles");
    let measured = Measured::new(&start).expect("inputs");
    let reference = naive
        .run(measured.inputs())
        .expect("conv2d runs")
        .to_json()
        .expect("values are JSON");
    let measured = measured.with_reference(reference);
    let (report, rate) = search(&start, &measured, seconds);
    let mut line = search_json(
        &format!("conv2d 3x3 {size}x{size}"),
        &report,
        rate,
        seconds,
        None,
    );
    // Reading the image and writing the result once, at one core's copy bandwidth.
    let roof_ms = 2.0 * (size * size * 4) as f64 / roofs.copy_gb_per_s / 1e6;
    let best_ms = report.best().and_then(|b| b.cost());
    merge(
        &mut line,
        json!({"copy_roof_ms_one_core": round(roof_ms),
               "of_copy_roof_one_core": best_ms.map(|b| round(roof_ms / b))}),
    );
    println!("{line}");
}

/// `line` with the keys of `extra` added.
fn merge(line: &mut serde_json::Value, extra: serde_json::Value) {
    if let (Some(line), serde_json::Value::Object(extra)) = (line.as_object_mut(), extra) {
        line.extend(extra);
    }
}

fn main() {
    // Its measured candidates' workers are this program, started again as one.
    elevate::bridge::measure::serve_if_asked();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if answered_blas_child(&args) {
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    let numbers: Vec<u64> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let n = numbers
        .first()
        .copied()
        .unwrap_or(if quick { 256 } else { 1024 }) as i64;
    let seconds = numbers
        .get(1)
        .copied()
        .unwrap_or(if quick { 20 } else { 300 });
    let scale = if quick { 4 } else { 1 };

    let roofs = Roofs {
        fma_gflops: fma_peak_gflops(),
        copy_gb_per_s: copy_gb_per_s(),
    };
    println!(
        "{}",
        json!({"bench": "roofs", "fma_gflops_per_core": roofs.fma_gflops.map(round),
               "copy_gb_per_s_one_core": round(roofs.copy_gb_per_s)})
    );
    matmul_case(Dims { m: n, n, k: n }, seconds, &roofs);
    let rectangle = Dims {
        m: 512 / scale,
        n: 768 / scale,
        k: 384 / scale,
    };
    matmul_case(rectangle, seconds / 3, &roofs);
    stencil_case(2048 / scale, seconds / 3, &roofs);

    let small = matmul::with_inputs(256);
    let small_start = small
        .0
        .instantiate(&small.1)
        .expect("the matmul instantiates");
    // 100 episodes of random actions; a step's time leaves out the steps that end an
    // episode (they ask the model for the cost), an episode's counts everything.
    let times = env::episodes(&small_start, "auto", 100);
    println!(
        "{}",
        json!({"bench": "env_step", "n": 256, "cost": "model", "episodes": 100,
               "us_per_step": round(times.us_per_step),
               "us_per_step_median": round(times.us_per_step_median),
               "us_per_end_step": round(times.us_per_end_step),
               "us_per_end_step_median": round(times.us_per_end_step_median),
               "us_per_episode": round(times.us_per_episode)})
    );
}
