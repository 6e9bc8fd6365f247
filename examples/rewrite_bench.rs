//! Rewriting speed on the matrix multiplication example, as JSON lines:
//! `{"strategy": ..., "steps": ..., "ms": ..., "steps_per_s": ...}`.
//!
//! `cargo run --release --example rewrite_bench`. The seven ELEVATE matmul strategies are
//! not in the library yet (see issue 4); these are the strategies it has, on the
//! typed `matmul.rise`, each timed over repeated runs.

#[path = "../benches/support/matmul.rs"]
mod matmul;

use elevate::core::{Budget, Context};
use elevate::rise::rules;
use std::time::Instant;

fn main() {
    let program = matmul::program();
    let term = &program.entry().term;
    let registry = rules::registry();
    for text in [
        "DFNF",
        "RNF",
        "DFNF ; CNF",
        "DFNF ; mapSeq @ everywhere ; reduceSeq @ everywhere",
        "normalize(idAfter) ; normalize(removeId)",
    ] {
        let strategy = registry.parse(text).expect("strategy text");
        let budget = Budget::unlimited().steps(1_000);
        let mut runs = 0u32;
        let mut steps = 0u64;
        let start = Instant::now();
        while start.elapsed().as_millis() < 300 || runs < 3 {
            let mut cx = Context::new(budget);
            let result = strategy.apply(term, &mut cx);
            steps += cx.stats().steps;
            runs += 1;
            if let (Err(failure), None) = (&result, cx.exhausted()) {
                eprintln!("{text}: {failure}");
                break;
            }
        }
        let ms = start.elapsed().as_secs_f64() * 1e3 / f64::from(runs);
        let per_run = steps as f64 / f64::from(runs);
        println!(
            "{}",
            serde_json::json!({"strategy": text, "steps": per_run, "ms": (ms * 1000.0).round() / 1000.0,
                               "steps_per_s": (per_run / ms * 1e3).round()})
        );
    }
}
