//! Search against the hand-written strategy, OpenBLAS and the machine, in one run, as
//! JSON lines: the FMA peak of one core (a tight loop of independent FMAs), OpenBLAS's
//! `sgemm` on 1 and 2 threads at its fastest core type (each tried in a process of its
//! own, since OpenBLAS reads `OPENBLAS_CORETYPE` when it loads), the library's `par` on
//! 1 thread and on all, then `elevate search` of the matmul with `auto` and the
//! measured cost for a wall-time budget (the values checked against `par`'s, which
//! match the interpreter's; the interpreter itself takes minutes at 1024), and the
//! environment's time per step and per episode with the model cost
//! (`examples/env_bench.rs` alone, without MLIR).
//!
//! `cargo run --release --example search_bench [-- N SECONDS]` (1024 and 300 by
//! default; `--quick`: 256 and 20).

#[path = "../benches/support/bridge.rs"]
mod bridge;
#[path = "../benches/support/env.rs"]
mod env;
#[path = "../benches/support/matmul.rs"]
mod matmul;

use bridge::{median_ms, OpenBlas, OpenMp};
use elevate::bridge::measure::Measured;
use elevate::rise::search::Auto;
use elevate::strategies::search::{drivers, Search, SearchBudget, Space};
use serde_json::json;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

/// OpenBLAS core types worth trying on x86 (the empty one: OpenBLAS's own choice).
const CORE_TYPES: [&str; 6] = [
    "",
    "HASWELL",
    "ZEN",
    "SKYLAKEX",
    "COOPERLAKE",
    "SAPPHIRERAPIDS",
];

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// In a child process: OpenBLAS's `sgemm` on `threads` threads, milliseconds.
fn blas_child(n: usize, threads: usize) {
    let Some(blas) = OpenBlas::load_with_threads(threads) else {
        return;
    };
    let (a, b, mut c) = (vec![0.5f32; n * n], vec![0.25f32; n * n], vec![0f32; n * n]);
    println!("{}", median_ms(|| blas.sgemm(n, &a, &b, &mut c), 5));
}

/// OpenBLAS's best time on `threads` threads over the core types, and that core type.
fn blas_best(n: usize, threads: usize) -> Option<(f64, String)> {
    let exe = std::env::current_exe().ok()?;
    CORE_TYPES
        .iter()
        .filter_map(|core| {
            let mut command = Command::new(&exe);
            command.args(["--blas", &n.to_string(), &threads.to_string()]);
            if !core.is_empty() {
                command.env("OPENBLAS_CORETYPE", core);
            }
            let out = command.output().ok()?;
            let ms: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
            let name = if core.is_empty() { "default" } else { core };
            Some((ms, name.to_string()))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

/// The FMA peak of one core in GFLOPS: independent FMAs on the widest vectors there are.
fn fma_peak_gflops() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, checked above.
            return Some(unsafe { peak::avx512() });
        }
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has FMA (and so AVX), checked above.
            return Some(unsafe { peak::avx2() });
        }
    }
    None
}

#[cfg(target_arch = "x86_64")]
mod peak {
    use std::arch::x86_64::*;
    use std::time::Instant;

    /// Independent accumulators: more than the FMA latency times the FMAs per cycle.
    const ACCUMULATORS: usize = 16;
    const ITERATIONS: u64 = 40_000_000;

    #[target_feature(enable = "avx512f")]
    pub unsafe fn avx512() -> f64 {
        let (a, b) = (_mm512_set1_ps(0.999_999), _mm512_set1_ps(1e-7));
        let mut acc = [_mm512_set1_ps(1.0); ACCUMULATORS];
        let t = Instant::now();
        for _ in 0..ITERATIONS {
            for x in acc.iter_mut() {
                *x = _mm512_fmadd_ps(*x, a, b);
            }
        }
        let seconds = t.elapsed().as_secs_f64();
        let mut sum = _mm512_setzero_ps();
        for x in acc {
            sum = _mm512_add_ps(sum, x);
        }
        std::hint::black_box(sum);
        (ITERATIONS * ACCUMULATORS as u64 * 16 * 2) as f64 / seconds / 1e9
    }

    #[target_feature(enable = "avx,fma")]
    pub unsafe fn avx2() -> f64 {
        let (a, b) = (_mm256_set1_ps(0.999_999), _mm256_set1_ps(1e-7));
        let mut acc = [_mm256_set1_ps(1.0); ACCUMULATORS];
        let t = Instant::now();
        for _ in 0..ITERATIONS {
            for x in acc.iter_mut() {
                *x = _mm256_fmadd_ps(*x, a, b);
            }
        }
        let seconds = t.elapsed().as_secs_f64();
        let mut sum = _mm256_setzero_ps();
        for x in acc {
            sum = _mm256_add_ps(sum, x);
        }
        std::hint::black_box(sum);
        (ITERATIONS * ACCUMULATORS as u64 * 8 * 2) as f64 / seconds / 1e9
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--blas") {
        let n = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1024);
        let threads = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1);
        return blas_child(n, threads);
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
    let flops = 2.0 * (n as f64).powi(3);
    let gflops = |ms: f64| round(flops / ms / 1e6);

    let peak = fma_peak_gflops();
    println!(
        "{}",
        json!({"bench": "fma_peak", "gflops_per_core": peak.map(round)})
    );
    let blas1 = blas_best(n as usize, 1);
    let blas2 = blas_best(n as usize, 2);
    for (threads, blas) in [(1, &blas1), (2, &blas2)] {
        println!(
            "{}",
            json!({"bench": "openblas_sgemm", "n": n, "threads": threads,
                   "median_ms": blas.as_ref().map(|b| round(b.0)),
                   "gflops": blas.as_ref().map(|b| gflops(b.0)),
                   "core_type": blas.as_ref().map(|b| b.1.clone())})
        );
    }

    // `par`, on 1 thread and on all; its values on the search's inputs are the
    // reference the search's candidates are checked against.
    let source = matmul::source();
    let par = bridge::compile(&source, bridge::strategy("par"), n);
    let (program, nats, _) = matmul::with_inputs(n);
    let start = program.instantiate(&nats).expect("the matmul instantiates");
    let measured = Measured::new(&start).expect("inputs");
    let reference = par
        .compiled
        .run(measured.inputs())
        .expect("par runs")
        .to_json()
        .expect("par's values are JSON");
    let measured = measured.with_reference(reference);
    let omp = OpenMp::load();
    let mut par_ms = [None, None];
    for (i, threads) in [1, 0].into_iter().enumerate() {
        if let Some(omp) = &omp {
            omp.set_threads(if threads == 0 {
                std::thread::available_parallelism().map_or(1, |c| c.get())
            } else {
                threads
            });
        }
        let mut call = par.compiled.prepare(&par.inputs).expect("par prepares");
        let ms = median_ms(|| call.invoke().expect("par runs"), 5);
        par_ms[i] = Some(ms);
        let threads = if threads == 0 {
            "all".to_string()
        } else {
            threads.to_string()
        };
        println!(
            "{}",
            json!({"bench": "par", "n": n, "threads": threads,
                   "median_ms": round(ms), "gflops": gflops(ms)})
        );
    }
    if let Some(omp) = &omp {
        omp.set_threads(std::thread::available_parallelism().map_or(1, |c| c.get()));
    }

    // The search: `auto`, measured, for the wall-time budget.
    let space =
        Space::parse_with_auto("auto", Arc::new(elevate::rise::registry()), Auto::default())
            .expect("auto reads");
    let jobs = std::thread::available_parallelism().map_or(1, |c| c.get());
    let report = Search::new(space, drivers::evolve(32), measured)
        .budget(SearchBudget::default().time(Duration::from_secs(seconds)))
        .seed(1)
        .jobs(jobs)
        .baseline(start.clone())
        .run(&start);
    let best = report.best();
    let best_ms = best.and_then(|b| b.cost());
    println!(
        "{}",
        json!({
            "bench": "search", "n": n, "space": "auto", "driver": report.driver, "cost": report.cost,
            "budget_s": seconds, "seconds": round(report.seconds),
            "evaluations": report.evaluations, "distinct_programs": report.distinct_programs,
            "failed": report.failed, "candidates_per_s": round(report.candidates_per_s()),
            "baseline_ms": report.baseline.as_ref().and_then(|b| b.as_ref().ok()).map(|m| round(m.cost)),
            "speedup": report.speedup().map(round),
            "best_ms": best_ms.map(round), "best_gflops": best_ms.map(gflops),
            "vs_par_1_thread": best_ms.zip(par_ms[0]).map(|(b, p)| round(p / b)),
            "vs_par_all_threads": best_ms.zip(par_ms[1]).map(|(b, p)| round(p / b)),
            "vs_openblas_1_thread": best_ms.zip(blas1.as_ref()).map(|(b, o)| round(o.0 / b)),
            "vs_openblas_2_threads": best_ms.zip(blas2.as_ref()).map(|(b, o)| round(o.0 / b)),
            "of_core_peak": best_ms.zip(peak).map(|(b, p)| round(gflops(b) / p)),
            "best_strategy": best.map(|b| b.strategy.clone()),
        })
    );

    let small = matmul::with_inputs(256);
    let small_start = small
        .0
        .instantiate(&small.1)
        .expect("the matmul instantiates");
    // 100 episodes of random actions; a step's time leaves out the steps that end an
    // episode (they ask the model for the cost), an episode's counts everything.
    let times = env::episodes(&small_start, 100);
    println!(
        "{}",
        json!({"bench": "env_step", "n": 256, "cost": "model", "episodes": 100,
               "us_per_step": round(times.us_per_step),
               "us_per_step_median": round(times.us_per_step_median),
               "us_per_episode": round(times.us_per_episode)})
    );
}
