//! Speed of the compiled matrix multiplication, in one run: the `baseline` strategy's
//! code, the other ELEVATE strategies' code, and OpenBLAS's `sgemm` (single thread),
//! as JSON lines `{"version":..,"n":..,"median_ms":..,"gflops":..,"vs_baseline":..,"vs_openblas":..}`;
//! then the programs sketch-guided equality saturation finds for the same seven goals,
//! `{"version":"eqsat par",..,"vs_strategy":..}` (the strategy's time, measured again in
//! the same run, over the e-graph's program's).
//! The parallel loops run on the OpenMP runtime's default thread count (one per core);
//! `cargo bench --bench bridge` is the criterion version at 1024, with 1 and 2 threads.
//!
//! `cargo run --release --example bridge_bench [-- N]` (N = 1024 by default).

#[path = "../benches/support/bridge.rs"]
mod bridge;
#[path = "../benches/support/matmul.rs"]
mod matmul;

use bridge::{median_ms, OpenBlas};
use elevate::rise::egraph::goals::{matmul as matmul_at, matmul_goals, reach};
use elevate::rise::rules;

/// OpenBLAS's single-threaded `sgemm` on n x n matrices, if the library is there.
fn openblas_ms(n: usize) -> Option<f64> {
    let blas = OpenBlas::load()?;
    let a = vec![0.5f32; n * n];
    let b = vec![0.25f32; n * n];
    let mut c = vec![0f32; n * n];
    Some(median_ms(|| blas.sgemm(n, &a, &b, &mut c), 5))
}

fn main() {
    let n: i64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1024);
    let source = matmul::source();
    let flops = 2.0 * (n as f64).powi(3);
    let blas = openblas_ms(n as usize);
    let mut baseline_ms = None;
    for (name, strategy) in rules::matmul_strategies() {
        let program = bridge::compile(&source, strategy, n);
        let mut call = program.compiled.prepare(&program.inputs).unwrap();
        let runs = if n >= 1024 && name == "baseline" {
            1
        } else {
            5
        };
        let ms = median_ms(|| call.invoke().unwrap(), runs);
        let base = *baseline_ms.get_or_insert(ms);
        let round = |x: f64| (x * 1000.0).round() / 1000.0;
        println!(
            "{}",
            serde_json::json!({
                "version": name,
                "n": n,
                "median_ms": round(ms),
                "gflops": round(flops / ms / 1e6),
                "vs_baseline": round(base / ms),
                "vs_openblas": blas.map(|b| round(b / ms)),
            })
        );
    }
    // The programs sketch-guided equality saturation finds for the same goals
    // (`examples/eqsat_bench.rs`), compiled the same way; `vs_strategy` is the
    // strategy's time over the e-graph's program's.
    let input = matmul_at(n);
    let mut by_strategy = std::collections::HashMap::new();
    for (name, strategy) in rules::matmul_strategies() {
        let program = bridge::compile(&source, strategy, n);
        if n >= 1024 && name == "baseline" {
            continue;
        }
        let mut call = program.compiled.prepare(&program.inputs).unwrap();
        by_strategy.insert(name, median_ms(|| call.invoke().unwrap(), 5));
    }
    for goal in matmul_goals(n) {
        if n >= 1024 && goal.name == "baseline" {
            continue; // the naive loops: seconds per run, as the strategy's above
        }
        let Ok(found) = reach(&goal, &input).outcome else {
            println!(
                "{}",
                serde_json::json!({"version": format!("eqsat {}", goal.name), "found": false})
            );
            continue;
        };
        let program = bridge::compile_term(&found.program);
        let mut call = program.compiled.prepare(&program.inputs).unwrap();
        let ms = median_ms(|| call.invoke().unwrap(), 5);
        let round = |x: f64| (x * 1000.0).round() / 1000.0;
        println!(
            "{}",
            serde_json::json!({
                "version": format!("eqsat {}", goal.name),
                "n": n,
                "median_ms": round(ms),
                "gflops": round(flops / ms / 1e6),
                "vs_strategy": by_strategy.get(goal.name).map(|s| round(s / ms)),
                "vs_openblas": blas.map(|b| round(b / ms)),
            })
        );
    }
    if let Some(b) = blas {
        println!(
            "{}",
            serde_json::json!({"version": "openblas sgemm (1 thread)", "n": n,
                               "median_ms": (b * 1000.0).round() / 1000.0,
                               "gflops": (flops / b / 1e6 * 1000.0).round() / 1000.0})
        );
    }
}
