//! The JSON of a search (`spec/search.md`): its report line and the lines of its log,
//! as `elevate search` prints and writes them and as the Python package returns them.

use elevate_rise::Term;
use elevate_strategies::search::{Candidate, Measure, Report, Status};
use serde_json::json;

/// The report line of `spec/search.md`.
pub fn report_json(report: &Report, cost: &str, best_program: Option<&Term>) -> serde_json::Value {
    let best = report.best();
    let unit = if cost.contains("measured") {
        "ms"
    } else {
        "cost"
    };
    // The spread of the final comparison's turns (measured costs).
    let spread = |m: Option<Measure>| m.and_then(|m| m.spread_ms).map(|(lo, hi)| [lo, hi]);
    let compared = report.compared;
    let mut json = json!({
        "driver": report.driver,
        "seed": report.seed,
        "cost": cost,
        "evaluations": report.evaluations,
        "distinct_programs": report.distinct_programs,
        "failed": report.failed,
        "space_size": report.space_size,
        "seconds": round(report.seconds, 3),
        "candidates_per_s": round(report.candidates_per_s(), 2),
        format!("baseline_{unit}"): report.baseline_cost(),
        format!("best_{unit}"): report.best_cost(),
        format!("baseline_spread_{unit}"): spread(compared.map(|c| c.baseline)),
        format!("best_spread_{unit}"): spread(compared.map(|c| c.best)),
        "speedup": report.speedup().map(|s| round(s, 3)),
        "best_strategy": best.map(|b| b.strategy.clone()),
        "best_program_hash": best.map(|b| format!("{:016x}", b.program_hash)),
        "found_at": best.map(|b| b.index),
        "model_spearman": model_spearman(report).map(|r| round(r, 3)),
        "statuses": statuses(report),
    });
    if let (Some(object), None) = (json.as_object_mut(), best_program) {
        object.insert("best_strategy".into(), serde_json::Value::Null);
    }
    json
}

/// How well the model ranks: Spearman's correlation between the model's cost and the
/// measured time over the candidates that have both (distinct programs; at least 3).
fn model_spearman(report: &Report) -> Option<f64> {
    let mut seen = std::collections::HashSet::new();
    let pairs: Vec<(f64, f64)> = report
        .log
        .iter()
        .filter(|c| seen.insert(c.program_hash))
        .filter_map(|c| {
            let m = c.measure?;
            Some((m.model?, m.ms?))
        })
        .collect();
    if pairs.len() < 3 {
        return None;
    }
    let ranks = |values: Vec<f64>| -> Vec<f64> {
        let mut order: Vec<usize> = (0..values.len()).collect();
        order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        let mut ranks = vec![0.0; values.len()];
        let mut i = 0;
        while i < order.len() {
            // Ties share the mean of their ranks.
            let mut j = i;
            while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
                j += 1;
            }
            for &k in &order[i..=j] {
                ranks[k] = (i + j) as f64 / 2.0;
            }
            i = j + 1;
        }
        ranks
    };
    let x = ranks(pairs.iter().map(|p| p.0).collect());
    let y = ranks(pairs.iter().map(|p| p.1).collect());
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (mx, my) = (mean(&x), mean(&y));
    let cov: f64 = x.iter().zip(&y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum::<f64>().sqrt();
    let sy: f64 = y.iter().map(|b| (b - my).powi(2)).sum::<f64>().sqrt();
    (sx > 0.0 && sy > 0.0).then(|| cov / (sx * sy))
}

/// How many candidates ended in each status other than `ok` (those present).
fn statuses(report: &Report) -> serde_json::Value {
    let mut counts = serde_json::Map::new();
    for status in Status::ALL.into_iter().filter(|s| *s != Status::Ok) {
        let n = report.log.iter().filter(|c| c.status == status).count();
        if n > 0 {
            counts.insert(status.as_str().into(), n.into());
        }
    }
    counts.into()
}

fn round(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

/// One line of `log.jsonl`.
pub fn log_line(c: &Candidate) -> serde_json::Value {
    let m = c.measure.unwrap_or_default();
    json!({
        "index": c.index,
        "strategy": c.strategy,
        "program_hash": format!("{:016x}", c.program_hash),
        "status": c.status.as_str(),
        "reason": c.reason,
        "cost": c.cost(),
        "ms": m.ms,
        "min_ms": m.spread_ms.map(|s| s.0),
        "median_ms": m.ms,
        "max_ms": m.spread_ms.map(|s| s.1),
        "compile_ms": m.compile_ms,
        "model_cost": m.model,
        "cached": c.cached,
        "best_so_far": c.best_so_far,
    })
}
