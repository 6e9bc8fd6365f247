//! Criterion benchmarks of the strategy engine (a fifth of the sizes of
//! `examples/engine_bench.rs`, so that the naive baselines fit criterion's sampling).
//!
//! `cargo bench --bench engine`

#[path = "support/workloads.rs"]
mod workloads;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use std::time::Duration;
use workloads::*;

fn normalize(c: &mut Criterion) {
    let t = workload(20_000, 2_000);
    let mut group = c.benchmark_group("normalize 20k nodes, 2k rewrites");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    group.bench_function("memoized", |b| b.iter(|| normalize_memoized(&t)));
    group.bench_function("naive (restart from the root)", |b| {
        b.iter(|| normalize_naive(&t))
    });
    group.finish();
}

fn backtrack(c: &mut Criterion) {
    let t = workload(20_000, 200);
    let m = Mutable::from_term(&t);
    let mut group = c.benchmark_group("backtrack 20k nodes, 200 rewrites");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    group.bench_function("persistent, memoized", |b| {
        b.iter(|| persistent(&t, 200, true))
    });
    group.bench_function("persistent", |b| b.iter(|| persistent(&t, 200, false)));
    group.bench_function("deep clone per attempt", |b| {
        b.iter_batched(
            || m.clone(),
            |m| clone_per_attempt(m, 200),
            BatchSize::LargeInput,
        )
    });
    group.bench_function("destructive", |b| {
        b.iter_batched(|| m.clone(), |m| destructive(m, 200), BatchSize::LargeInput)
    });
    group.finish();
}

criterion_group!(benches, normalize, backtrack);
criterion_main!(benches);
