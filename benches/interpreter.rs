//! Criterion benchmark of the reference interpreter: `matmul.rise` on random 64 x 64
//! matrices (`examples/interp_bench.rs` reports 256 x 256).
//!
//! `cargo bench --bench interpreter`

use criterion::{criterion_group, criterion_main, Criterion};
use elevate::rise::nat::NatVar;
use elevate::rise::{evaluate, io, NatEnv, Program};
use std::time::Duration;

fn matmul(c: &mut Criterion) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/examples/matmul.rise"
    );
    let source = std::fs::read_to_string(path).expect("the matmul example");
    let program = Program::load(&source, None).expect("matmul type-checks");
    let mut nats = NatEnv::default();
    for name in ["n", "k", "m"] {
        nats.insert(NatVar::Named(name.into()), 64);
    }
    let inputs = io::random_inputs(&program.signature(), &nats, 1).expect("inputs");
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
