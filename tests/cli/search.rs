//! `elevate search`: the report, the files of `--out`, candidates that replay through
//! `elevate rewrite`, determinism under a seed, and located errors.

use super::{assert_fails_with, elevate, example, stderr, stdout};
use serde_json::Value as Json;

fn out_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("elevate-search-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn search(args: &[&str]) -> std::process::Output {
    let mut all = vec!["search", &example("mm64.rise")[..]]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    all.extend(args.iter().map(|a| a.to_string()));
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    elevate(&refs)
}

fn report(o: &std::process::Output) -> Json {
    assert!(o.status.success(), "{}", stderr(o));
    let text = stdout(o);
    let last = text.lines().last().expect("a report line");
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {last}"))
}

#[test]
fn a_model_search_reports_writes_its_files_and_its_candidates_replay() {
    let dir = out_dir("model");
    let o = search(&[
        "--space",
        "auto",
        "--driver",
        "random",
        "--budget",
        "evals=40",
        "--seed",
        "3",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let r = report(&o);
    for key in [
        "driver",
        "seed",
        "cost",
        "evaluations",
        "distinct_programs",
        "failed",
        "space_size",
        "seconds",
        "candidates_per_s",
        "baseline_cost",
        "best_cost",
        "speedup",
        "best_strategy",
        "best_program_hash",
        "found_at",
    ] {
        assert!(r.get(key).is_some(), "no {key} in {r}");
    }
    assert_eq!(r["evaluations"], 40);
    assert_eq!(
        (r["driver"].as_str(), r["cost"].as_str()),
        (Some("random"), Some("model"))
    );
    assert!(
        r["speedup"].as_f64().unwrap() > 1.0,
        "auto beats defaultLowering: {r}"
    );
    for file in [
        "log.jsonl",
        "report.json",
        "best.elv",
        "best.rise",
        "best.mlir",
        "progress.svg",
        "progress.png",
    ] {
        let meta = std::fs::metadata(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(meta.len() > 0, "{file} is empty");
    }
    let log = std::fs::read_to_string(dir.join("log.jsonl")).unwrap();
    let lines: Vec<Json> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 40);
    // Candidates replay: the strategy, given to `elevate rewrite`, makes the program
    // with the logged hash (a few of them, each a process).
    for line in lines.iter().filter(|l| l["status"] == "ok").take(3) {
        let strategy = line["strategy"].as_str().unwrap();
        let o = elevate(&[
            "rewrite",
            &example("mm64.rise"),
            "--strategy",
            strategy,
            "--stats",
        ]);
        assert!(o.status.success(), "{strategy}: {}", stderr(&o));
        let stats: Json = serde_json::from_str(stderr(&o).lines().last().unwrap()).unwrap();
        assert_eq!(stats["program_hash"], line["program_hash"], "{strategy}");
    }
    let best = std::fs::read_to_string(dir.join("best.elv")).unwrap();
    assert_eq!(best.trim(), r["best_strategy"].as_str().unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_same_seed_gives_the_same_log() {
    let logs: Vec<String> = (0..2)
        .map(|i| {
            let dir = out_dir(&format!("seed{i}"));
            let o = search(&[
                "--space",
                "auto",
                "--driver",
                "evolve",
                "--budget",
                "evals=30",
                "--seed",
                "7",
                "--jobs",
                if i == 0 { "1" } else { "2" },
                "--out",
                dir.to_str().unwrap(),
            ]);
            report(&o);
            let log = std::fs::read_to_string(dir.join("log.jsonl")).unwrap();
            let _ = std::fs::remove_dir_all(&dir);
            log
        })
        .collect();
    assert_eq!(logs[0], logs[1]);
}

#[test]
fn bad_spaces_drivers_costs_and_budgets_are_located_errors() {
    let o = search(&["--space", "DFNF ; {id, tile(8, 8) @ outermost(mapNest(2))"]);
    assert_fails_with(&o, "space:1:8: space error: `{` is never closed");
    let o = search(&["--space", "DFNF ; {id, tilez(8)}"]);
    assert_fails_with(&o, "space:1:13: space error: unknown strategy `tilez`");
    let o = search(&["--space", "try(auto)"]);
    assert_fails_with(
        &o,
        "space:1:5: space error: `steps(...)` and `auto` must each be a whole item",
    );
    let o = search(&["--space", ""]);
    assert_fails_with(&o, "space error: expected a strategy");
    let o = search(&["--space", "auto", "--driver", "beam(0)"]);
    assert_fails_with(&o, "--driver: ");
    let o = search(&["--space", "auto", "--driver", "tabu"]);
    assert_fails_with(&o, "unknown driver `tabu`");
    let o = search(&["--space", "auto", "--cost", "guess"]);
    assert_fails_with(
        &o,
        "--cost: unknown cost `guess` (model, measured, model+measured)",
    );
    let o = search(&["--space", "auto", "--budget", "evals=0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("evals must be at least 1"),
        "{}",
        stderr(&o)
    );
    let o = elevate(&["search", &example("matmul.rise"), "--space", "auto"]);
    assert_fails_with(&o, "no size for `n` (give it with --nat n=N");
}

#[test]
fn a_measured_search_times_compiled_candidates() {
    let dir = out_dir("measured");
    let o = search(&[
        "--space",
        "auto",
        "--driver",
        "random",
        "--cost",
        "measured",
        "--budget",
        "evals=6",
        "--threads",
        "1",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let r = report(&o);
    assert_eq!(r["cost"], "measured");
    assert!(r["baseline_ms"].as_f64().unwrap() > 0.0, "{r}");
    assert!(r["best_ms"].as_f64().unwrap() > 0.0, "{r}");
    let log = std::fs::read_to_string(dir.join("log.jsonl")).unwrap();
    let ok: Vec<Json> = log
        .lines()
        .map(|l| serde_json::from_str::<Json>(l).unwrap())
        .filter(|l| l["status"] == "ok")
        .collect();
    assert!(!ok.is_empty(), "{log}");
    let distinct: std::collections::HashSet<String> =
        ok.iter().map(|l| l["program_hash"].to_string()).collect();
    for line in &ok {
        assert!(line["ms"].as_f64().unwrap() > 0.0, "{line}");
        assert!(line["compile_ms"].as_f64().unwrap() > 0.0, "{line}");
        // Every measured candidate has the model's estimate too.
        assert!(line["model_cost"].as_f64().unwrap() > 0.0, "{line}");
    }
    // How well the model ranked them, once there are three programs to rank.
    let spearman = &r["model_spearman"];
    if distinct.len() >= 3 {
        let rho = spearman.as_f64().unwrap_or_else(|| panic!("{r}"));
        assert!((-1.0..=1.0).contains(&rho), "{r}");
    } else {
        assert!(spearman.is_null(), "{r}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The Python of the repository's virtual environment (`scripts/install-python`).
fn project_python() -> String {
    let python = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/install-python (the test command does)",
        python.display()
    );
    python.display().to_string()
}

#[test]
fn a_search_on_a_ray_cluster_logs_what_a_local_search_logs() {
    let python = project_python();
    let run = |executor: &str| {
        let dir = out_dir(&format!("executor-{}", executor.replace(':', "-")));
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_elevate"))
            .args([
                "search",
                &example("mm64.rise"),
                "--space",
                "auto",
                "--driver",
                "evolve(6)",
            ])
            .args([
                "--budget",
                "evals=14",
                "--seed",
                "4",
                "--jobs",
                "2",
                "--executor",
                executor,
            ])
            .args(["--out", dir.to_str().unwrap()])
            .env("ELEVATE_PYTHON", &python)
            .output()
            .expect("elevate runs");
        let r = report(&o);
        let log = std::fs::read_to_string(dir.join("log.jsonl")).expect("a log");
        (r, log)
    };
    let (local, local_log) = run("local");
    let (ray, ray_log) = run("ray");
    assert_eq!(ray_log, local_log);
    assert_eq!(ray_log.lines().count(), 14);
    for key in [
        "best_strategy",
        "best_program_hash",
        "evaluations",
        "failed",
    ] {
        assert_eq!(ray[key], local[key], "{key}");
    }
}

#[test]
fn an_executor_that_cannot_start_is_an_error_naming_it() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_elevate"))
        .args([
            "search",
            &example("mm64.rise"),
            "--space",
            "auto",
            "--budget",
            "evals=3",
        ])
        .args(["--executor", "ray"])
        .env("ELEVATE_PYTHON", "/nonexistent/python3")
        .output()
        .expect("elevate runs");
    assert_fails_with(
        &o,
        "--executor ray: cannot start `/nonexistent/python3 -m elevate.executors ray`",
    );
}
