//! Measured candidates in worker processes against the same candidates measured in
//! the search's own process, in one run, as JSON lines.
//!
//! For the square matmul at each size (256 and 1024; `--quick`: 64 and 128), the
//! candidates a search of `auto` meets (the distinct programs of an `evolve` search by
//! the model, so the same list for both), each compiled and timed:
//!
//! - in process: compiled on as many threads as there are cores (each with its own
//!   MLIR context; the first compilation alone, as MLIR registers its passes then),
//!   then each run alone, as the measured cost did before workers;
//! - in workers: [`Measured`] with as many workers as cores, rounds of four candidates
//!   per worker (what a search with a time budget gives it), then all at once;
//!
//! with the candidates per second of each and their ratio; then what a worker costs:
//! starting one (spawn and setup), and a round trip (a candidate the worker holds,
//! run once, against the same run in process). The values are checked against
//! `par`'s (which match the interpreter's; the interpreter itself takes minutes at
//! 1024). Then a measured search of `auto` for `SECONDS` (20; `--quick`: 10) at the
//! first size: its candidates per second.
//!
//! `cargo run --release --example worker_bench [-- --quick] [-- SECONDS]`

use elevate::bridge::measure::{Engine, Measured, RunSpec, WorkerCommand};
use elevate::bridge::Options;
use elevate::core::Context;
use elevate::rise::search::{fingerprint, Auto, ModelCost};
use elevate::rise::{print_definition, registry, NatEnv, Program, Term};
use elevate::strategies::search::{drivers, Cost, Search, SearchBudget, Space, Status};
use serde_json::json;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

const MATMUL: &str = "def mm(a: n.k.f32, b: k.m.f32) : n.m.f32 =
  a |> map(fun(arow => transpose(b) |> map(fun(bcol =>
    zip(arow, bcol) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))";

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn start(n: i64) -> Term {
    let program = Program::load(MATMUL, None).expect("the matmul type-checks");
    let mut nats = NatEnv::default();
    for name in ["n", "m", "k"] {
        nats.insert(elevate::rise::nat::NatVar::Named(name.into()), n);
    }
    program.instantiate(&nats).expect("the matmul instantiates")
}

fn auto() -> Space<Term> {
    Space::parse_with_auto("auto", Arc::new(registry()), Auto::host()).expect("auto reads")
}

/// The distinct programs (after `defaultLowering`'s input: the points' programs) an
/// `evolve` search by the model meets first, up to `count`.
fn candidates(start: &Term, count: usize) -> Vec<Term> {
    let report = Search::new(auto(), drivers::evolve(32), ModelCost::default())
        .budget(SearchBudget::default().evaluations(count * 2))
        .seed(1)
        .run(start);
    let mut seen = HashSet::new();
    report
        .log
        .iter()
        .filter(|c| c.status == Status::Ok && seen.insert(c.program_hash))
        .filter_map(|c| {
            let strategy = registry().parse(&c.strategy).ok()?;
            strategy.apply(start, &mut Context::default()).ok()
        })
        .take(count)
        .collect()
}

/// The reference values: `par`'s on the inputs of seed 0.
fn reference(start: &Term, inputs: &[elevate::rise::Value]) -> serde_json::Value {
    let par = registry().parse("par").expect("par parses");
    elevate::bridge::compile_term("f", start, Some(&par), &Options::default())
        .expect("par compiles")
        .run(inputs)
        .expect("par runs")
        .to_json()
        .expect("as JSON")
}

/// Compiles and times `programs` in this process: compiled on `jobs` threads (the
/// first alone, as MLIR registers its passes), then each run alone (the threads take
/// turns). Seconds of wall time.
fn in_process(start: &Term, programs: &[Term], jobs: usize, values: &serde_json::Value) -> f64 {
    let began = Instant::now();
    let key = |p: &Term| format!("{:016x}", fingerprint(p));
    {
        let mut first = Engine::of_term(start, 0, None).expect("inputs");
        let _ = first.compile(&key(&programs[0]), &programs[0]);
    }
    let chunk = programs.len().div_ceil(jobs.max(1)).max(1);
    let parts: Vec<&[Term]> = programs.chunks(chunk).collect();
    let compiled = std::sync::Barrier::new(parts.len());
    // The best median so far; whoever holds it runs, alone.
    let turn: std::sync::Mutex<Option<f64>> = std::sync::Mutex::new(None);
    std::thread::scope(|scope| {
        for part in &parts {
            let (compiled, turn, values) = (&compiled, &turn, values.clone());
            std::thread::Builder::new()
                .stack_size(64 << 20)
                .spawn_scoped(scope, move || {
                    let mut engine = Engine::of_term(start, 0, None).expect("inputs");
                    engine.expect(values);
                    for p in part.iter() {
                        let _ = engine.compile(&key(p), p);
                    }
                    compiled.wait();
                    let mut best = turn.lock().unwrap_or_else(|e| e.into_inner());
                    for p in part.iter() {
                        if let Ok(runs) = engine.run(
                            &key(p),
                            p,
                            &RunSpec {
                                best_ms: *best,
                                ..RunSpec::default()
                            },
                        ) {
                            let mut t = runs.times_ms.clone();
                            t.sort_by(f64::total_cmp);
                            if let (Some(&median), false) = (t.get(t.len() / 2), runs.raced) {
                                *best = Some(best.map_or(median, |b| b.min(median)));
                            }
                        }
                    }
                })
                .expect("a thread");
        }
    });
    began.elapsed().as_secs_f64()
}

/// The same in workers, `per_round` candidates a round. Seconds of wall time, and how
/// many candidates got a cost.
fn in_workers(
    start: &Term,
    programs: &[Term],
    jobs: usize,
    per_round: usize,
    values: &serde_json::Value,
) -> (f64, usize) {
    let cost = measured(start).with_reference(values.clone());
    cost.start_worker().expect("a worker starts");
    let began = Instant::now();
    let mut ok = 0;
    for round in programs.chunks(per_round.max(1)) {
        let refs: Vec<&Term> = round.iter().collect();
        ok += cost
            .evaluate_all(&refs, jobs)
            .iter()
            .filter(|r| r.is_ok())
            .count();
    }
    (began.elapsed().as_secs_f64(), ok)
}

fn measured(start: &Term) -> Measured {
    Measured::new(start)
        .expect("inputs")
        .worker(WorkerCommand::this_program().expect("this program"))
}

/// What a worker costs: starting one, and a round trip against the same run in
/// process (a small program, compiled already in both).
fn overheads(jobs: usize) -> serde_json::Value {
    let small = start(16);
    let spawns: Vec<f64> = (0..5)
        .map(|_| {
            let cost = measured(&small);
            let began = Instant::now();
            cost.start_worker().expect("a worker starts");
            began.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let cost = measured(&small).runs(1);
    let _ = cost.evaluate(&small);
    let trips: Vec<f64> = (0..50)
        .map(|_| {
            let began = Instant::now();
            let _ = cost.compare(&[&small], 1, None);
            began.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let mut engine = Engine::of_term(&small, 0, None).expect("inputs");
    let key = format!("{:016x}", fingerprint(&small));
    let _ = engine.compile(&key, &small);
    let local: Vec<f64> = (0..50)
        .map(|_| {
            let began = Instant::now();
            let _ = engine.run(
                &key,
                &small,
                &RunSpec {
                    check: false,
                    runs: 1,
                    ..RunSpec::default()
                },
            );
            began.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (trip, local) = (median(trips), median(local));
    json!({
        "bench": "worker_overhead", "jobs": jobs,
        "spawn_and_setup_ms": round(median(spawns)),
        "round_trip_ms": round(trip), "same_run_in_process_ms": round(local),
        "send_and_receive_ms": round(trip - local),
    })
}

fn main() {
    // The workers of `measured` are this program, started again as one.
    elevate::bridge::measure::serve_if_asked();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let seconds: u64 = args
        .iter()
        .find_map(|a| a.parse().ok())
        .unwrap_or(if quick { 10 } else { 20 });
    let sizes: &[i64] = if quick { &[64, 128] } else { &[256, 1024] };
    let count = if quick { 12 } else { 32 };
    let jobs = std::thread::available_parallelism().map_or(1, |c| c.get());
    for &n in sizes {
        let start = start(n);
        let programs = candidates(&start, count);
        let inputs = measured(&start).inputs().to_vec();
        let values = reference(&start, &inputs);
        let local = in_process(&start, &programs, jobs, &values);
        let (rounds, ok) = in_workers(&start, &programs, jobs, 4 * jobs, &values);
        let (whole, _) = in_workers(&start, &programs, jobs, programs.len(), &values);
        let per_s = |s: f64| round(programs.len() as f64 / s);
        println!(
            "{}",
            json!({
                "bench": "measured_candidates", "matmul": n, "candidates": programs.len(),
                "measured": ok, "jobs": jobs,
                "in_process_per_s": per_s(local),
                "workers_per_s": per_s(rounds),
                "workers_whole_batch_per_s": per_s(whole),
                "ratio_workers_over_in_process": round(local / rounds),
                "ratio_whole_batch_over_in_process": round(local / whole),
            })
        );
    }
    println!("{}", overheads(jobs));
    // A measured search of `auto`, with a time budget.
    let n = sizes[0];
    let start = start(n);
    let cost = measured(&start);
    let began = Instant::now();
    let report = Search::new(auto(), drivers::evolve(32), &cost)
        .budget(SearchBudget::default().time(Duration::from_secs(seconds)))
        .seed(1)
        .jobs(jobs)
        .baseline(start.clone())
        .run(&start);
    println!(
        "{}",
        json!({
            "bench": "measured_search", "matmul": n, "driver": report.driver,
            "budget_s": seconds, "seconds": round(began.elapsed().as_secs_f64()),
            "evaluations": report.evaluations, "candidates_per_s": round(report.candidates_per_s()),
            "failed": report.failed, "speedup": report.speedup().map(round),
            "workers_started": cost.workers_started(),
            "program": print_definition("mm", &start).lines().next(),
        })
    );
}
