//! Criterion benchmark of sketch-guided equality saturation: the seven ELEVATE matmul
//! goals reached from the high-level 1024x1024 matmul, and as the baseline in the
//! same run the hand-written ELEVATE strategies that reach them by rewriting
//! (`examples/eqsat_bench.rs` prints e-graph sizes, memory and the unguided runs).
//!
//! `cargo bench --bench eqsat`

use criterion::{criterion_group, criterion_main, Criterion};
use elevate::core::Context;
use elevate::rise::egraph::goals::{matmul, matmul_goals, reach};
use elevate::rise::rules;
use std::time::Duration;

fn goals(c: &mut Criterion) {
    let input = matmul(1024);
    let strategies = rules::matmul_strategies();
    let mut group = c.benchmark_group("matmul 1024 goals");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(2));
    for goal in matmul_goals(1024) {
        let strategy = &strategies
            .iter()
            .find(|(name, _)| *name == goal.name)
            .expect("a strategy per goal")
            .1;
        group.bench_function(format!("{} strategy (baseline)", goal.name), |b| {
            b.iter(|| {
                strategy
                    .apply(&input, &mut Context::default())
                    .expect(goal.name)
            })
        });
        group.bench_function(format!("{} sketch-guided", goal.name), |b| {
            b.iter(|| assert!(reach(&goal, &input).found(), "{}", goal.name))
        });
    }
    group.finish();
}

criterion_group!(benches, goals);
criterion_main!(benches);
