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
//! A last line splits the model's cost of the programs episodes end with (what an
//! episode's last step asks for): `defaultLowering`, the loop nests (the program's
//! loop program, the one the bridge compiles, read as loops and accesses), and the
//! estimate.
//!
//! `cargo run --release --no-default-features --example env_bench [-- N EPISODES]`
//! (256 by default; one line of `EPISODES` if given).

#[path = "../benches/support/env.rs"]
mod env;
#[path = "../benches/support/matmul.rs"]
mod matmul;

use elevate::core::Context;
use elevate::rise::rules::default_lowering;
use elevate::rise::search::loop_nests::loop_nests;
use elevate::rise::search::model::estimate_nests;
use elevate::rise::search::{Machine, ModelCost};
use elevate::rise::Term;
use elevate::strategies::search::Cost;
use serde_json::json;
use std::time::Instant;

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
    end_costs(&start);
}

/// The model's cost of the programs 200 random `auto` episodes end with, and its parts.
fn end_costs(start: &Term) {
    let mut environment = env::environment(start, "auto");
    let mut seed = 7u64;
    let ends: Vec<Term> = (0..200)
        .map(|_| {
            env::episode(&mut environment, start, &mut seed);
            environment.state().program().clone()
        })
        .collect();
    let lowered: Vec<Term> = ends
        .iter()
        .map(|t| {
            default_lowering()
                .apply(t, &mut Context::default())
                .expect("lowers")
        })
        .collect();
    let machine = Machine::host();
    let cost = ModelCost::new(machine);
    // Microseconds per program of `f` over `programs`, the best of three passes.
    let per = |programs: &[Term], f: &dyn Fn(&Term)| {
        (0..3)
            .map(|_| {
                let t = Instant::now();
                programs.iter().for_each(f);
                t.elapsed().as_secs_f64() * 1e6 / programs.len() as f64
            })
            .fold(f64::INFINITY, f64::min)
    };
    let whole = per(&ends, &|t| drop(std::hint::black_box(cost.evaluate(t))));
    let lowering = per(&ends, &|t| {
        drop(std::hint::black_box(
            default_lowering().apply(t, &mut Context::default()),
        ))
    });
    let nests = per(&lowered, &|t| {
        drop(std::hint::black_box(loop_nests(t)));
    });
    let read: Vec<_> = lowered.iter().filter_map(|t| loop_nests(t).ok()).collect();
    let t = Instant::now();
    for n in &read {
        std::hint::black_box(estimate_nests(n, &machine));
    }
    let estimate = t.elapsed().as_secs_f64() * 1e6 / read.len().max(1) as f64;
    println!(
        "{}",
        json!({"bench": "env_end_cost", "programs": ends.len(), "with_loop_nests": read.len(),
           "us_model_cost": round(whole), "us_lowering": round(lowering),
           "us_loop_nests": round(nests), "us_estimate": round(estimate)})
    );
}
