//! The agents' environment with the model cost (no compilation), as a JSON line: time
//! per step (the steps that end an episode left out, as in `examples/search_bench.rs`)
//! and per episode (the reset and every step to the end, the end's cost included),
//! over random episodes on the matmul with `auto`. Needs no MLIR.
//!
//! For `auto` (a step is a decision of a schedule: a library strategy of tens of
//! rewrites) and for rule-level steps (`env::RULE_STEPS`: a step is one rule at one
//! location), two lines each: 100 episodes in a fresh environment, where most steps
//! are taken for the first time, and 1000, as an agent in training meets them, where
//! what a decision gave before comes from the space's cache.
//!
//! `cargo run --release --no-default-features --example env_bench [-- N EPISODES]`
//! (256 by default; one line of `EPISODES` if given).

#[path = "../benches/support/env.rs"]
mod env;
#[path = "../benches/support/matmul.rs"]
mod matmul;

use serde_json::json;

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn main() {
    let numbers: Vec<u32> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = numbers.first().copied().unwrap_or(256);
    let counts = match numbers.get(1) {
        Some(&count) => vec![count],
        None => vec![100, 1000],
    };
    let (program, nats, _) = matmul::with_inputs(i64::from(n));
    let start = program.instantiate(&nats).expect("the matmul instantiates");
    for (name, space) in [("auto", "auto"), ("rule steps", env::RULE_STEPS)] {
        for &count in &counts {
            let times = env::episodes(&start, space, count);
            println!(
                "{}",
                json!({"bench": "env_step", "space": name, "n": n, "cost": "model", "episodes": count,
                   "us_per_step": round(times.us_per_step),
                   "us_per_step_median": round(times.us_per_step_median),
                   "us_per_end_step": round(times.us_per_end_step),
                   "us_per_end_step_median": round(times.us_per_end_step_median),
                   "us_per_episode": round(times.us_per_episode),
                   "steps_per_episode": round(times.steps_per_episode),
                   "us_first_reset": round(times.us_first_reset)})
            );
        }
    }
}
