//! Criterion benchmarks of the RISE front end (parsing and type inference together,
//! as loading a program does) on growing programs of each shape of
//! `benches/support/frontend_shapes.rs`; a linear front end doubles its time when the
//! size doubles. `examples/frontend_bench.rs` prints the same as a summary.
//!
//! `cargo bench --bench frontend`

#[path = "support/frontend_shapes.rs"]
mod frontend_shapes;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use elevate::rise::{infer_program, parse_program};
use frontend_shapes::SHAPES;
use std::time::Duration;

fn load(c: &mut Criterion) {
    for (shape, source_of) in SHAPES {
        let mut group = c.benchmark_group(format!("load {shape}"));
        group
            .sample_size(10)
            .measurement_time(Duration::from_secs(2));
        for n in [2_000, 8_000, 32_000] {
            let source = source_of(n);
            group.bench_with_input(BenchmarkId::from_parameter(n), &source, |b, source| {
                b.iter(|| infer_program(&parse_program(source).expect("parses")).expect("types"))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, load);
criterion_main!(benches);
