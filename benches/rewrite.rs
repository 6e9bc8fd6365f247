//! Criterion benchmark of rewriting: the seven ELEVATE matrix-multiplication strategies
//! on the 1024x1024x1024 matmul, and as a baseline in the same run the data-flow
//! normal form alone (`examples/rewrite_bench.rs` prints steps and steps per second).
//!
//! `cargo bench --bench rewrite`

#[path = "support/matmul.rs"]
mod matmul;

use criterion::{criterion_group, criterion_main, Criterion};
use elevate::core::Context;
use elevate::rise::rules;
use std::time::Duration;

fn strategies(c: &mut Criterion) {
    let term = matmul::instantiated(1024);
    let mut group = c.benchmark_group("rewrite matmul 1024");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(2));
    let dfnf = rules::dfnf();
    group.bench_function("DFNF (baseline)", |b| {
        b.iter(|| dfnf.apply(&term, &mut Context::default()).expect("DFNF"))
    });
    for (name, strategy) in rules::matmul_strategies() {
        group.bench_function(name, |b| {
            b.iter(|| strategy.apply(&term, &mut Context::default()).expect(name))
        });
    }
    group.finish();
}

criterion_group!(benches, strategies);
criterion_main!(benches);
