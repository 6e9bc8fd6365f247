//! Sketch-guided equality saturation on the seven ELEVATE matmul goals, from the
//! high-level 1024x1024 matmul: one JSON line per goal,
//! `{"goal":..,"found":..,"sketches":..,"ms":..,"peak_mb":..,"enodes":..,"eclasses":..,"iterations":..,"strategy_ms":..,"vs_strategy":..}`
//! (`strategy_ms`: the hand-written ELEVATE strategy reaching the same goal by
//! rewriting, measured in the same run; `vs_strategy`: the search's time over it),
//! then two lines for unguided saturation under 10 s and 4 GB, with the guides' rules
//! alone and with the whole `default` set as well: which goals' last sketches its
//! e-graph satisfies when the limit stops it.
//!
//! `cargo run --release --example eqsat_bench [-- N [SECONDS]]` (N = 1024, 10 s).

use elevate::rise::egraph::goals::{matmul, matmul_goals, reach, Goal};
use elevate::rise::egraph::sketch::satisfied;
use elevate::rise::egraph::{CostModel, RuleSet, Saturation, SaturationLimits};
use elevate::rise::rules;
use elevate::rise::Term;
use serde_json::json;
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: i64 = args.next().map_or(1024, |a| a.parse().expect("N"));
    let seconds: u64 = args.next().map_or(10, |a| a.parse().expect("SECONDS"));
    let input = matmul(n);
    let goals = matmul_goals(n);
    let strategies = rules::matmul_strategies();
    for goal in &goals {
        let reached = reach(goal, &input);
        let strategy = &strategies
            .iter()
            .find(|(name, _)| *name == goal.name)
            .expect("a strategy per goal")
            .1;
        let start = Instant::now();
        let by_strategy = strategy.run(&input).is_ok();
        let strategy_ms = start.elapsed().as_secs_f64() * 1e3;
        let ms = reached.time.as_secs_f64() * 1e3;
        let (iterations, eclasses) = reached.outcome.as_ref().map_or((0, 0), |o| {
            (
                o.steps.iter().map(|s| s.report.iterations).sum::<usize>(),
                o.steps.iter().map(|s| s.report.eclasses).max().unwrap_or(0),
            )
        });
        println!(
            "{}",
            json!({
                "goal": goal.name,
                "found": reached.found(),
                "sketches": goal.steps.len(),
                "ms": round(ms),
                "peak_mb": round(reached.peak_mb()),
                "enodes": reached.enodes(),
                "eclasses": eclasses,
                "iterations": iterations,
                "strategy_ms": round(strategy_ms),
                "strategy_ok": by_strategy,
                "vs_strategy": round(ms / strategy_ms),
                "error": reached.outcome.as_ref().err().map(|e| e.to_string()),
            })
        );
    }
    // Unguided: the guides' rules alone, then with the whole `default` set too.
    let mut names: Vec<String> = Vec::new();
    for goal in &goals {
        for step in &goal.steps {
            for r in step.rules.rewrites() {
                let name = r.name.to_string();
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
    }
    unguided(&input, &goals, "guides", names.clone(), seconds);
    for r in RuleSet::parse("default")
        .expect("the default rules")
        .rewrites()
    {
        let name = r.name.to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    unguided(&input, &goals, "guides+default", names, seconds);
}

/// One saturation with `names` from the high-level matmul, for the whole time limit
/// (no goal checks during it, so that they cost it nothing); then each goal's last
/// sketch is looked for in the e-graph. Prints one JSON line.
fn unguided(input: &Term, goals: &[Goal], label: &str, names: Vec<String>, seconds: u64) {
    let rules = RuleSet::parse(&names.join(",")).expect("the rules");
    let limits = SaturationLimits {
        iterations: 1_000_000,
        nodes: usize::MAX,
        time: Duration::from_secs(seconds),
        memory_mb: 4096,
    };
    let grown = Saturation::new(rules, limits, CostModel::Lowered)
        .grow(input)
        .expect("the matmul enters the e-graph");
    let reached: Vec<&str> = goals
        .iter()
        .filter(|g| {
            let last = &g.steps.last().expect("a step").sketch;
            satisfied(&grown.egraph, grown.root, last)
        })
        .map(|g| g.name)
        .collect();
    let r = &grown.report;
    println!(
        "{}",
        json!({
            "unguided": label,
            "rules": names.len(),
            "limit_s": seconds,
            "limit_mb": 4096,
            "stop_reason": r.stop_reason,
            "iterations": r.iterations,
            "enodes": r.enodes,
            "eclasses": r.eclasses,
            "ms": round(r.time.as_secs_f64() * 1e3),
            "peak_mb": round(r.peak_mb),
            "search_ms": round(r.phases.search.as_secs_f64() * 1e3),
            "apply_ms": round(r.phases.apply.as_secs_f64() * 1e3),
            "rebuild_ms": round(r.phases.rebuild.as_secs_f64() * 1e3),
            "found": reached.len(),
            "goals_found": reached,
        })
    );
}

fn round(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}
