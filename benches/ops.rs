//! Criterion benchmark of the operator suite (`examples/rise/ops/`) at an eighth of its
//! size in each dimension: every operator compiled with `defaultLowering` alone and
//! with its library strategy (`microKernel`, `convKernel`; register tiles for the
//! machine's vector width), one call per iteration on one thread; then one JSON line
//! per operator:
//!
//! ```text
//! {"op":"conv2d 3x3 s1","default_ms":..,"library_ms":..,"library_vs_default":..,
//!  "library":"convKernel(..)"}
//! ```
//!
//! `cargo bench --bench ops` (a minute or two). `examples/ops_bench.rs` runs the suite
//! at its full size against the roofs, OpenBLAS and TVM.

#[path = "support/ops.rs"]
mod ops;

use criterion::{criterion_group, criterion_main, Criterion};
use elevate::bridge::jit::OpenMp;
use elevate::bridge::measure::Measured;
use elevate::rise::search::Machine;
use serde_json::json;
use std::time::{Duration, Instant};

fn suite(c: &mut Criterion) {
    if let Some(omp) = OpenMp::get() {
        omp.set_threads(1);
    }
    let mut group = c.benchmark_group("ops");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(500));
    let mut summary = Vec::new();
    for op in ops::suite(8, Machine::host().lanes) {
        let term = op.term();
        let inputs = Measured::new(&term).expect("inputs").inputs().to_vec();
        let mut times = Vec::new();
        for (version, strategy) in [("default", None), ("library", op.library.as_deref())] {
            if version == "library" && strategy.is_none() {
                continue;
            }
            let f = ops::compiled(&term, strategy).unwrap_or_else(|e| panic!("{e}"));
            if let Some(omp) = OpenMp::get() {
                omp.set_threads(1);
            }
            let mut call = f.prepare(&inputs).expect("the inputs fit");
            let mut per_call = Vec::new();
            group.bench_function(format!("{}/{version}", op.name), |b| {
                b.iter_custom(|iters| {
                    let start = Instant::now();
                    for _ in 0..iters {
                        call.invoke().expect("it runs");
                    }
                    let elapsed = start.elapsed();
                    per_call.push(elapsed.as_secs_f64() * 1e3 / iters.max(1) as f64);
                    elapsed
                })
            });
            per_call.sort_by(f64::total_cmp);
            times.push(per_call.get(per_call.len() / 2).copied());
        }
        let (default_ms, library_ms) = (times[0], times.get(1).copied().flatten());
        summary.push(json!({
            "op": op.name, "default_ms": default_ms, "library_ms": library_ms,
            "library_vs_default": default_ms.zip(library_ms).map(|(d, l)| d / l),
            "library": op.library,
        }));
    }
    group.finish();
    for line in summary {
        println!("{line}");
    }
}

criterion_group!(benches, suite);
criterion_main!(benches);
