//! Criterion benchmark of the compiled 1024x1024x1024 f32 matrix multiplication, in one
//! run: the `baseline` strategy's code (the baseline), the `par` strategy's code at 1
//! and 2 threads, and OpenBLAS's `sgemm` on one thread; then one JSON line:
//!
//! ```text
//! {"n":1024,"baseline_ms":..,"par_ms":..,"openblas_ms":..,"par_vs_baseline":..,
//!  "par_vs_openblas":..,"par_compile_ms":..,"par_threads":1,"par_2threads_ms":..,
//!  "par_2threads_speedup":..}
//! ```
//!
//! The times are medians of the per-call times criterion measured; `par_vs_openblas` is
//! the fraction of OpenBLAS's speed, `par_compile_ms` the time from the RISE text to a
//! callable function. `par_ms` is at the first thread count, comparable with the
//! single-threaded OpenBLAS; `par_Tthreads_speedup` is `par_ms` over the time at T.
//!
//! `cargo bench --bench bridge` (about two minutes, most of it the baseline's ten
//! samples of one call each). `BRIDGE_BENCH_THREADS=1,2` (the default) lists the
//! thread counts for `par`, set through the OpenMP runtime's `omp_set_num_threads`
//! (see `support/bridge.rs`). `examples/bridge_bench.rs` times all seven strategies.

#[path = "support/bridge.rs"]
mod bridge;
#[path = "support/matmul.rs"]
mod matmul;

use bridge::OpenBlas;
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode};
use elevate::bridge::jit::OpenMp;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// The matrices' size.
const N: i64 = 1024;

/// The thread counts for `par`, from `BRIDGE_BENCH_THREADS` (comma-separated).
fn thread_counts() -> Vec<usize> {
    let text = std::env::var("BRIDGE_BENCH_THREADS").unwrap_or_else(|_| "1,2".into());
    let counts: Vec<usize> = text
        .split(',')
        .map(|t| match t.trim().parse() {
            Ok(n) if n > 0 => n,
            _ => panic!("BRIDGE_BENCH_THREADS: `{t}` is not a thread count"),
        })
        .collect();
    assert!(!counts.is_empty(), "BRIDGE_BENCH_THREADS lists no count");
    counts
}

/// Benchmarks `f` as `name` in `group`, and returns the median of the per-call times
/// (ms) of the batches criterion timed, warm-up included (`None` if filtered out).
fn bench(group: &mut BenchmarkGroup<WallTime>, name: &str, mut f: impl FnMut()) -> Option<f64> {
    let mut per_call = Vec::new();
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                f();
            }
            let elapsed = start.elapsed();
            per_call.push(elapsed.as_secs_f64() * 1e3 / iters as f64);
            elapsed
        })
    });
    per_call.sort_by(f64::total_cmp);
    per_call.get(per_call.len() / 2).copied()
}

fn matmul(c: &mut Criterion) {
    let source = matmul::source();
    let baseline = bridge::compile(&source, bridge::strategy("baseline"), N);
    let par = bridge::compile(&source, bridge::strategy("par"), N);
    let threads = thread_counts();
    let openmp = OpenMp::get();
    if openmp.is_none() {
        eprintln!("the OpenMP runtime is missing: par runs on its default thread count");
    }

    let mut group = c.benchmark_group(format!("compiled matmul {N}"));
    group.sample_size(10).sampling_mode(SamplingMode::Flat);

    // About 5 s a call: one call to warm up and one per sample (criterion warns that
    // ten samples do not fit in the measurement time, as intended; so for par).
    group
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(10));
    let mut call = baseline.compiled.prepare(&baseline.inputs).expect("inputs");
    let baseline_ms = bench(&mut group, "baseline", || call.invoke().expect("runs"));
    drop(call);

    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    let n = N as usize;
    let openblas_ms = match OpenBlas::load() {
        Some(blas) => {
            let a = vec![0.5f32; n * n];
            let b = vec![0.25f32; n * n];
            let mut out = vec![0f32; n * n];
            bench(&mut group, "openblas sgemm (1 thread)", || {
                blas.sgemm(n, &a, &b, &mut out)
            })
        }
        None => {
            eprintln!("{} is missing: no OpenBLAS comparison", OpenBlas::LIBRARY);
            None
        }
    };

    group
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(5));
    let mut call = par.compiled.prepare(&par.inputs).expect("inputs");
    let mut par_ms = Vec::new();
    for &t in &threads {
        let name = match &openmp {
            Some(openmp) => {
                openmp.set_threads(t);
                format!("par ({t} thread{})", if t == 1 { "" } else { "s" })
            }
            None => "par".into(),
        };
        par_ms.push((t, bench(&mut group, &name, || call.invoke().expect("runs"))));
        if openmp.is_none() {
            break;
        }
    }
    group.finish();

    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    let ratio = |a: Option<f64>, b: Option<f64>| Some(round(a? / b?));
    let (first_threads, first_ms) = par_ms[0];
    let mut summary: Vec<(String, Value)> = vec![
        ("n".into(), json!(N)),
        ("baseline_ms".into(), json!(baseline_ms.map(round))),
        ("par_ms".into(), json!(first_ms.map(round))),
        ("openblas_ms".into(), json!(openblas_ms.map(round))),
        (
            "par_vs_baseline".into(),
            json!(ratio(baseline_ms, first_ms)),
        ),
        (
            "par_vs_openblas".into(),
            json!(ratio(openblas_ms, first_ms)),
        ),
        ("par_compile_ms".into(), json!(round(par.compile_ms))),
        (
            "par_threads".into(),
            json!(openmp.as_ref().map(|_| first_threads)),
        ),
    ];
    for &(t, ms) in &par_ms[1..] {
        summary.push((format!("par_{t}threads_ms"), json!(ms.map(round))));
        summary.push((
            format!("par_{t}threads_speedup"),
            json!(ratio(first_ms, ms)),
        ));
    }
    println!("{}", json_line(&summary));
}

/// A JSON object with its keys in the given order (`serde_json`'s maps sort them).
fn json_line(fields: &[(String, Value)]) -> String {
    let fields: Vec<String> = fields
        .iter()
        .map(|(key, value)| format!("{}:{value}", Value::from(key.as_str())))
        .collect();
    format!("{{{}}}", fields.join(","))
}

criterion_group!(benches, matmul);
criterion_main!(benches);
