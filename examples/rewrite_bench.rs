//! Rewriting speed of the seven ELEVATE matrix-multiplication strategies on the
//! 1024x1024x1024 matmul, as JSON lines:
//! `{"strategy":"par","steps":..,"ms":..,"steps_per_s":..,"successes":..,"successes_per_s":..,"applications":..}`.
//!
//! `cargo run --release --example rewrite_bench [-- --quick]`. `steps` are successful
//! rule applications; `successes` successful strategy applications of any kind (rules,
//! combinators, traversals, predicates: what ELEVATE counts as rewrite steps);
//! `applications` all strategy applications, failed ones included. `ms` is the mean
//! time of one run, over repeated runs.

#[path = "../benches/support/matmul.rs"]
mod matmul;

use elevate::core::Context;
use elevate::rise::rules;
use std::time::Instant;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let term = matmul::instantiated(1024);
    for (name, strategy) in rules::matmul_strategies() {
        let mut runs = 0u32;
        let (mut steps, mut applications, mut successes) = (0u64, 0u64, 0u64);
        let start = Instant::now();
        let min_ms = if quick { 0 } else { 300 };
        while start.elapsed().as_millis() < min_ms || runs < 3 {
            let mut cx = Context::default();
            if let Err(failure) = strategy.apply(&term, &mut cx) {
                eprintln!("{name}: {failure}");
                std::process::exit(1);
            }
            steps += cx.stats().steps;
            applications += cx.stats().applications;
            successes += cx.stats().successes;
            runs += 1;
        }
        let ms = start.elapsed().as_secs_f64() * 1e3 / f64::from(runs);
        let per_run = steps as f64 / f64::from(runs);
        let successes = successes as f64 / f64::from(runs);
        println!(
            "{}",
            serde_json::json!({
                "strategy": name,
                "steps": per_run,
                "ms": (ms * 1000.0).round() / 1000.0,
                "steps_per_s": (per_run / ms * 1e3).round(),
                "successes": successes,
                "successes_per_s": (successes / ms * 1e3).round(),
                "applications": applications / u64::from(runs),
            })
        );
    }
}
