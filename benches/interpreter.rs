//! Criterion benchmark of the reference interpreter: `matmul.rise` on random 64 x 64
//! matrices (`examples/interp_bench.rs` reports 256 x 256).
//!
//! `cargo bench --bench interpreter`

#[path = "support/matmul.rs"]
mod matmul;

use criterion::{criterion_group, criterion_main, Criterion};
use elevate::rise::evaluate;
use std::time::Duration;

fn matmul(c: &mut Criterion) {
    let (program, nats, inputs) = matmul::with_inputs(64);
    let mut group = c.benchmark_group("interpreter");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    group.bench_function("matmul 64x64x64", |b| {
        b.iter(|| evaluate(&program.entry().term, &nats, &inputs).expect("runs"))
    });
    group.finish();
}

criterion_group!(benches, matmul);
criterion_main!(benches);
