//! Criterion benchmark of search at small size: a model-cost search of the 64x64x64
//! matmul over `auto` (100 candidates, `evolve`), and as a baseline in the same run one
//! candidate's work alone (the model's estimate of `defaultLowering`'s program); then
//! the environment: one step and its undo (a branch the space has seen: what it gave
//! is kept), and whole episodes of random actions (reset to the end, the end's model
//! cost included; the same environment throughout, so later episodes find what earlier
//! ones applied). `examples/search_bench.rs` is the full comparison (measured, against
//! `par`, OpenBLAS and the FMA peak); `examples/env_bench.rs` times the environment
//! alone.
//!
//! `cargo bench --bench search`

#[path = "support/env.rs"]
mod env;
#[path = "support/matmul.rs"]
mod matmul;

use criterion::{criterion_group, criterion_main, Criterion};
use elevate::rise::search::{Auto, Machine, ModelCost};
use elevate::strategies::search::{
    drivers, Action, Cost, Environment, Search, SearchBudget, Space,
};
use std::sync::Arc;
use std::time::Duration;

fn search(c: &mut Criterion) {
    let (program, nats, _) = matmul::with_inputs(64);
    let start = program.instantiate(&nats).expect("the matmul instantiates");
    let space = || {
        Space::parse_with_auto("auto", Arc::new(elevate::rise::registry()), Auto::default())
            .expect("auto reads")
    };
    let mut group = c.benchmark_group("search matmul 64");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    let cost = ModelCost::new(Machine::host());
    group.bench_function("one candidate's model cost (baseline)", |b| {
        b.iter(|| cost.evaluate(&start).expect("the model estimates"))
    });
    group.bench_function("evolve, 100 candidates, model cost", |b| {
        b.iter(|| {
            Search::new(
                space(),
                drivers::evolve(32),
                ModelCost::new(Machine::host()),
            )
            .budget(SearchBudget::default().evaluations(100))
            .seed(1)
            .run(&start)
        })
    });
    group.bench_function("environment step and undo", |b| {
        let mut env = Environment::new(space(), ModelCost::new(Machine::host()));
        env.reset(&start);
        let action: Action = env.legal_actions()[0];
        b.iter(|| {
            env.step(action).expect("a legal action");
            env.undo();
        })
    });
    group.bench_function("environment episode, random actions", |b| {
        let mut env = env::environment(&start, "auto");
        let mut seed = 1;
        b.iter(|| env::episode(&mut env, &start, &mut seed))
    });
    group.finish();
}

criterion_group!(benches, search);
criterion_main!(benches);
