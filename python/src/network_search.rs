//! `elevate.search(network, ...)`: a network searched layer by layer
//! ([`elevate::network_search`]), its measured candidates in workers of this Python
//! (`python -m elevate.worker`).

use crate::network::PyNetwork;
use crate::search::{search_error, worker_command};
use elevate::bridge::measure::CandidateLimits;
use elevate::network_search::{search, Options};
use elevate::search_costs::Measuring;
use elevate_rise::search::library::host_f32_lanes;
use elevate_strategies::search::SearchBudget;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Searches `network` layer by layer (the arguments as `_search`'s); the report as
/// JSON: each layer's line, the network's strategy (`best_strategy`).
#[pyfunction]
#[pyo3(signature = (network, space_text, driver, cost, evals, seconds, seed, jobs, threads, limits=None, out=None, resume=false))]
#[allow(clippy::too_many_arguments)]
pub fn _search_network(
    py: Python<'_>,
    network: &PyNetwork,
    space_text: &str,
    driver: Option<&str>,
    cost: Option<&str>,
    evals: Option<usize>,
    seconds: Option<f64>,
    seed: Option<u64>,
    jobs: Option<usize>,
    threads: Option<usize>,
    limits: Option<&str>,
    out: Option<std::path::PathBuf>,
    resume: bool,
) -> PyResult<String> {
    let mut budget = SearchBudget::default();
    match (evals, seconds) {
        (None, None) => return Err(search_error("budget: give evals=N, time=S or both".into())),
        (Some(0), _) => return Err(search_error("budget: evals must be at least 1".into())),
        (_, Some(s)) if !(s > 0.0 && s <= 1e7) => {
            return Err(search_error(format!(
                "budget: time must be more than 0 and at most 10^7 seconds, found {s}"
            )))
        }
        _ => {}
    }
    if let Some(n) = evals {
        budget = budget.evaluations(n);
    }
    if let Some(s) = seconds {
        budget = budget.time(Duration::from_secs_f64(s));
    }
    if resume && out.is_none() {
        return Err(search_error(
            "resume: give out=DIR, the search's directory".into(),
        ));
    }
    let jobs = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let defaults = CandidateLimits::defaults(jobs, budget.time);
    let limits = limits
        .map(|text| CandidateLimits::parse(text, defaults))
        .transpose()
        .map_err(|e| search_error(format!("limits: {e}")))?
        .unwrap_or(defaults);
    let worker = worker_command(py)?;
    // Ctrl-C stops the search after the round in hand; the exception is raised once
    // it has stopped, its directory holding what it found.
    let stop = Arc::new(AtomicBool::new(false));
    let interrupted: Mutex<Option<PyErr>> = Mutex::new(None);
    let on_round = |_: &str| {
        if let Err(e) = Python::attach(|py| py.check_signals()) {
            stop.store(true, Ordering::Relaxed);
            if let Ok(mut slot) = interrupted.lock() {
                slot.get_or_insert(e);
            }
        }
    };
    let resume = resume
        && out
            .as_deref()
            .is_some_and(elevate::search_dir::holds_search);
    let report = py.detach(|| {
        search(
            network.network(),
            host_f32_lanes(),
            &Options {
                space: space_text,
                driver,
                cost,
                seed,
                budget,
                jobs,
                measuring: Measuring {
                    threads,
                    limits: Some(limits),
                    worker: Some(worker),
                    ..Measuring::default()
                },
                out: out.as_deref(),
                resume,
                stop: stop.clone(),
                on_round: &on_round,
            },
        )
    });
    if let Some(e) = interrupted.into_inner().ok().flatten() {
        return Err(e);
    }
    let report = report.map_err(search_error)?;
    Ok(report.to_json().to_string())
}
