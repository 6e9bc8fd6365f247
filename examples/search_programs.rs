//! `auto` beyond the matmul: for each example program at a realistic size, a measured
//! search of `auto` (a budget of evaluations, the evolutionary driver, every candidate
//! compiled, timed and checked against the interpreter) against `defaultLowering`
//! alone, measured in the same run; one JSON line per program, with the speedup.
//!
//! The machine is shared and its load changes from one moment to the next: the
//! baseline and the best are then compiled again and timed in turns (`ROUNDS` rounds
//! of a median of 5 runs each, the fastest median of each kept), for a second figure,
//! `retimed_speedup`, whose two times come from the same moments.
//!
//! `cargo run --release --example search_programs [-- EVALS] [--quick] [NAME ...]`
//! (60 evaluations by default; `--quick`: small sizes, 20 evaluations; names pick
//! programs by file stem, e.g. `gemv dot`).

#[path = "../benches/support/bridge.rs"]
mod bridge;

use bridge::median_ms;
use elevate::bridge::measure::Measured;
use elevate::bridge::{compile_term, Options};
use elevate::core::Context;
use elevate::rise::search::Auto;
use elevate::rise::{NatEnv, Program, Term, Value};
use elevate::strategies::search::{drivers, Search, SearchBudget, Space};
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

/// A program and its sizes: realistic, and small (`--quick`).
struct Case {
    file: &'static str,
    sizes: &'static [(&'static str, i64)],
    quick: &'static [(&'static str, i64)],
}

const CASES: &[Case] = &[
    Case {
        file: "dot",
        sizes: &[("n", 1 << 22)],
        quick: &[("n", 1 << 16)],
    },
    Case {
        file: "gemv",
        sizes: &[("n", 2048), ("m", 2048)],
        quick: &[("n", 256), ("m", 256)],
    },
    Case {
        file: "stencil1d",
        sizes: &[("n", 1 << 22)],
        quick: &[("n", 1 << 16)],
    },
    Case {
        file: "chain",
        sizes: &[("n", 1 << 22)],
        quick: &[("n", 1 << 16)],
    },
    Case {
        file: "scal",
        sizes: &[("n", 1 << 22)],
        quick: &[("n", 1 << 16)],
    },
    Case {
        file: "conv2d",
        sizes: &[("n", 1024), ("m", 1024)],
        quick: &[("n", 128), ("m", 128)],
    },
    Case {
        file: "separable",
        sizes: &[("n", 1024), ("m", 1024)],
        quick: &[("n", 128), ("m", 128)],
    },
    Case {
        file: "matmul",
        sizes: &[("n", 256), ("k", 256), ("m", 256)],
        quick: &[("n", 64), ("k", 64), ("m", 64)],
    },
    Case {
        file: "mm64",
        sizes: &[],
        quick: &[],
    },
    Case {
        file: "tiled",
        sizes: &[("n", 64), ("k", 256), ("m", 256)],
        quick: &[("n", 16), ("k", 64), ("m", 64)],
    },
];

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Rounds of timing in turns.
const ROUNDS: usize = 5;

/// The fastest median of `ROUNDS` of `a` and of `b`, timed in turns on `inputs`.
fn retimed(a: &Term, b: &Term, inputs: &[Value]) -> (f64, f64) {
    let compile = |t: &Term| compile_term("f", t, None, &Options::default()).expect("compiles");
    let (a, b) = (compile(a), compile(b));
    let (mut ca, mut cb) = (
        a.prepare(inputs).expect("prepares"),
        b.prepare(inputs).expect("prepares"),
    );
    let (mut ta, mut tb) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..ROUNDS {
        ta = ta.min(median_ms(|| ca.invoke().expect("runs"), 5));
        tb = tb.min(median_ms(|| cb.invoke().expect("runs"), 5));
    }
    (ta, tb)
}

fn main() {
    // Its measured candidates' workers are this program, started again as one.
    elevate::bridge::measure::serve_if_asked();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let evaluations = args
        .iter()
        .find_map(|a| a.parse::<usize>().ok())
        .unwrap_or(if quick { 20 } else { 60 });
    let names: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with("--") && a.parse::<usize>().is_err())
        .map(String::as_str)
        .collect();
    let jobs = std::thread::available_parallelism().map_or(1, |c| c.get());
    for case in CASES
        .iter()
        .filter(|c| names.is_empty() || names.contains(&c.file))
    {
        let path = format!(
            "{}/examples/rise/{}.rise",
            env!("CARGO_MANIFEST_DIR"),
            case.file
        );
        let source = std::fs::read_to_string(&path).expect("the example reads");
        let program = Program::load(&source, None).expect("the example loads");
        let sizes = if quick { case.quick } else { case.sizes };
        let mut nats = NatEnv::default();
        for (name, value) in sizes {
            nats.insert(elevate::rise::nat::NatVar::Named((*name).into()), *value);
        }
        let start = program
            .instantiate(&nats)
            .expect("the example instantiates");
        let began = Instant::now();
        let measured = Measured::new(&start).expect("inputs");
        let inputs = measured.inputs().to_vec();
        let space =
            Space::parse_with_auto("auto", Arc::new(elevate::rise::registry()), Auto::default())
                .expect("auto reads");
        let report = Search::new(space, drivers::evolve(16), measured)
            .budget(SearchBudget::default().evaluations(evaluations))
            .seed(1)
            .jobs(jobs)
            .baseline(start.clone())
            .run(&start);
        let best = report.best();
        let mut statuses = serde_json::Map::new();
        for c in &report.log {
            let count = statuses.entry(c.status.as_str()).or_insert(json!(0));
            *count = json!(count.as_u64().unwrap_or(0) + 1);
        }
        let again = best.map(|b| {
            let program = elevate::rise::registry()
                .parse(&b.strategy)
                .expect("the best parses")
                .apply(&start, &mut Context::default())
                .expect("the best replays");
            retimed(&start, &program, &inputs)
        });
        let sizes: serde_json::Map<String, serde_json::Value> = sizes
            .iter()
            .map(|(n, v)| ((*n).to_string(), json!(v)))
            .collect();
        println!(
            "{}",
            json!({
                "bench": "auto_program", "program": case.file, "sizes": sizes,
                "driver": report.driver, "cost": report.cost,
                "evaluations": report.evaluations, "distinct_programs": report.distinct_programs,
                "failed": report.failed, "statuses": statuses, "space_size": report.space_size,
                "seconds": round(began.elapsed().as_secs_f64()),
                "baseline_ms": report.baseline.as_ref().and_then(|b| b.as_ref().ok()).map(|m| round(m.cost)),
                "best_ms": best.and_then(|b| b.cost()).map(round),
                "speedup": report.speedup().map(round),
                "retimed_baseline_ms": again.map(|t| round(t.0)),
                "retimed_best_ms": again.map(|t| round(t.1)),
                "retimed_speedup": again.map(|t| round(t.0 / t.1)),
                "best_strategy": best.map(|b| b.strategy.clone()),
            })
        );
    }
}
