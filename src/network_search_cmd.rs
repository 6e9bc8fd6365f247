//! `elevate search NET.rise --weights NET.safetensors ...` for a network: its layers
//! searched by [`elevate::network_search`], then (where the cost measures) the whole
//! network timed under the strategy found against the library's `network`, each in
//! an `elevate run` of its own, their outputs compared. The report is the last line
//! of standard output; with `--out DIR`, `report.json` holds it too.

use crate::search_cmd::{on_signals, signal_exit, SearchOptions};
use crate::{output, Failure};
use elevate::bridge::measure::CandidateLimits;
use elevate::network::{Network, NetworkStrategy};
use elevate::network_search::{self, NetworkReport};
use elevate::search_costs::Measuring;
use elevate_rise::search::library::host_f32_lanes;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// The share of a time budget kept for timing the whole network at the end.
const FINAL_SHARE: f64 = 0.15;

/// Runs of each whole network in each of its turns at the end.
const FINAL_RUNS: usize = 10;

/// Searches the network `net` whose weights are in `weights` (see the module).
pub fn search(options: &SearchOptions<'_>, net: &Network, weights: &Path) -> Result<(), Failure> {
    if options.executor != "local" {
        return Err(Failure(
            "--executor: a network's layers are searched on this machine (local)".into(),
        ));
    }
    let jobs = options
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut budget = options.budget;
    let whole = budget.time;
    if let Some(t) = whole {
        budget.time = Some(t.mul_f64(1.0 - FINAL_SHARE));
    }
    let defaults = CandidateLimits::defaults(jobs, budget.time);
    let limits = match options.limits {
        Some(text) => {
            CandidateLimits::parse(text, defaults).map_err(|e| Failure(format!("--limits: {e}")))?
        }
        None => defaults,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let signal = Arc::new(AtomicUsize::new(0));
    on_signals(&stop, &signal)?;
    let (out, resume) = match (options.resume, options.out) {
        (Some(dir), _) => (Some(dir), true),
        (None, dir) => (dir, false),
    };
    let said = |line: &str| output::eprintln(&format!("search: {line}"));
    let searched = network_search::search(
        net,
        host_f32_lanes(),
        &network_search::Options {
            space: options.space,
            driver: options.driver,
            cost: options.cost,
            seed: options.seed,
            budget,
            jobs,
            measuring: Measuring {
                threads: options.threads,
                limits: Some(limits),
                ..Measuring::default()
            },
            out,
            resume,
            stop: stop.clone(),
            on_round: &said,
        },
    )
    .map_err(|e| Failure(format!("{}: {e}", options.path.display())))?;
    let mut report = searched.to_json();
    let stopped = stop.load(Ordering::Relaxed);
    if searched.cost.contains("measured") && !stopped {
        said("timing the whole network: the library's `network`, then the strategy found");
        let timed = time_networks(options, weights, &searched, out)?;
        if let Some(o) = report.as_object_mut() {
            o.extend(timed);
        }
    }
    if let Some(dir) = out {
        let path = dir.join("report.json");
        elevate::search_dir::write_whole(&path, &format!("{report}\n"))
            .map_err(|e| Failure(format!("{}: {e}", dir.display())))?;
    }
    output::println(&report.to_string())?;
    signal_exit(&signal)
}

/// The whole network under the library's `network` and under the strategy found, in
/// turns, each an `elevate run` of its own: the faster median of each's turns, and
/// the largest difference between their outputs.
fn time_networks(
    options: &SearchOptions<'_>,
    weights: &Path,
    searched: &NetworkReport,
    out: Option<&Path>,
) -> Result<serde_json::Map<String, Json>, Failure> {
    let library = NetworkStrategy::library();
    let found = &searched.strategy;
    let scratch = match out {
        Some(dir) => dir.to_path_buf(),
        None => std::env::temp_dir().join(format!("elevate-network-search-{}", std::process::id())),
    };
    std::fs::create_dir_all(&scratch)
        .map_err(|e| Failure(format!("{}: {e}", scratch.display())))?;
    let strategies: Vec<&NetworkStrategy> = if found == &library {
        vec![&library]
    } else {
        vec![&library, found, &library, found]
    };
    let mut best: [Option<f64>; 2] = [None, None];
    let mut outputs: [Option<PathBuf>; 2] = [None, None];
    for (turn, strategy) in strategies.iter().enumerate() {
        let which = usize::from(*strategy != &library);
        let result = scratch.join(format!("network-{}.npy", ["library", "found"][which]));
        let ms = run_network(options, weights, strategy, &result)?;
        best[which] = Some(best[which].map_or(ms, |b: f64| b.min(ms)));
        if turn < 2 {
            outputs[which] = Some(result);
        }
    }
    let library_ms = best[0];
    let found_ms = best[1].or(library_ms);
    let difference = match &outputs {
        [Some(a), Some(b)] => Some(max_difference(a, b)?),
        _ => None,
    };
    if out.is_none() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    let mut timed = serde_json::Map::new();
    timed.insert("network_library_ms".into(), library_ms.into());
    timed.insert("network_best_ms".into(), found_ms.into());
    timed.insert(
        "speedup".into(),
        library_ms
            .zip(found_ms)
            .map(|(l, b)| ((l / b) * 1e3).round() / 1e3)
            .into(),
    );
    timed.insert("max_difference".into(), difference.map(f64::from).into());
    Ok(timed)
}

/// One `elevate run` of the network under `strategy` on `--random 1`: its median time,
/// its output written to `result`.
fn run_network(
    options: &SearchOptions<'_>,
    weights: &Path,
    strategy: &NetworkStrategy,
    result: &Path,
) -> Result<f64, Failure> {
    let exe = std::env::current_exe().map_err(|e| Failure(format!("elevate itself: {e}")))?;
    let mut command = Command::new(exe);
    command
        .arg("run")
        .arg(options.path)
        .arg("--weights")
        .arg(weights)
        .args(["--random", "1", "--bench", &FINAL_RUNS.to_string()])
        .arg("--strategy")
        .arg(strategy.to_string())
        .arg("--out")
        .arg(result);
    if let Some(threads) = options.threads {
        command.args(["--threads", &threads.to_string()]);
    }
    let ran = command
        .output()
        .map_err(|e| Failure(format!("cannot run the network: {e}")))?;
    let failed = || {
        Failure(format!(
            "the network under `{strategy}` did not run: {}",
            String::from_utf8_lossy(&ran.stderr).trim()
        ))
    };
    if !ran.status.success() {
        return Err(failed());
    }
    let stdout = String::from_utf8_lossy(&ran.stdout);
    stdout
        .lines()
        .rev()
        .find_map(|l| {
            serde_json::from_str::<Json>(l)
                .ok()?
                .get("median_ms")?
                .as_f64()
        })
        .ok_or_else(failed)
}

/// The largest difference between two `.npy` files of f32s.
fn max_difference(a: &Path, b: &Path) -> Result<f32, Failure> {
    let read = |p: &Path| {
        crate::arrays::read_npy(p)
            .map_err(|e| Failure(format!("{}: {e}", p.display())))
            .and_then(|array| match array.data {
                crate::arrays::Data::F32(data) => Ok(data),
                _ => Err(Failure(format!("{}: not f32s", p.display()))),
            })
    };
    let (a, b) = (read(a)?, read(b)?);
    if a.len() != b.len() {
        return Err(Failure("the two networks' outputs differ in length".into()));
    }
    Ok(a.iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max))
}
