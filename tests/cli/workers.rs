//! Measured searches left to run unattended: candidates in worker processes whose
//! limits hold (a compilation of minutes, a worker killed by a signal, one out of
//! memory), time budgets that hold, logs written as the search goes, SIGTERM in the
//! middle, `--resume`, and no process left behind.

use super::{assert_fails_with, elevate, example, stderr, stdout};
use serde_json::Value as Json;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A point of `auto` for the matmul whose compilation takes long: 6 s at 64 cubed, 22
/// s at 128, minutes at 256 (as in `tests/bridge/measure.rs`).
const SLOW_TO_COMPILE: &str = "DFNF ; try(fuseReduceMap @ topDown) ; tileNDList([4, 16]) @ outermost(mapNest(2)) ;; try(reduceMapFission @ outermost(isApplied(isApplied(isApplied(isReduceSeq))))) ;; splitStrategy(2) @ innermost(isFullyAppliedReduce) ;; unroll @ innermost(isReduceSeq) ;; vectorize(8) @ innermost(isFullyAppliedMap) ;; function(mapSeqUnroll) @ innermost(isApplied(isMap) ; argument(isLambda) ; contains(\"asVector(8)\"))";

fn dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("elevate-workers-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A search with `args`, tagged (in its environment, which its workers inherit) so
/// that its processes can be found.
fn search<A: AsRef<std::ffi::OsStr>>(tag: &str, args: &[A]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_elevate"));
    command
        .arg("search")
        .args(args)
        .env("ELEVATE_TEST_TAG", tag);
    command
}

/// The matmul at 128 cubed, as arguments.
fn matmul128() -> Vec<String> {
    ["n", "m", "k"]
        .iter()
        .flat_map(|n| ["--nat".to_string(), format!("{n}=128")])
        .chain([example("matmul.rise")])
        .collect()
}

/// The arguments of a measured search of the slow point and `blocking` at 128
/// cubed, one job, into `out`, with `extra`.
fn slow_search(out: &Path, extra: &[&str]) -> Vec<String> {
    let space = format!("{{{SLOW_TO_COMPILE}, blocking}}");
    let mut args: Vec<String> = [
        "--space",
        &space,
        "--driver",
        "exhaustive",
        "--cost",
        "measured",
    ]
    .into_iter()
    .chain(["--budget", "evals=10", "--jobs", "1"])
    .chain(["--out", out.to_str().unwrap()])
    .chain(extra.iter().copied())
    .map(String::from)
    .collect();
    args.extend(matmul128());
    args
}

/// The processes whose environment has `tag`.
fn tagged(tag: &str) -> Vec<u32> {
    let needle = format!("ELEVATE_TEST_TAG={tag}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
        })
        .collect()
}

/// Asserts that nothing the search with `tag` started is still there.
fn assert_nothing_left(tag: &str) {
    let patience = Instant::now() + Duration::from_secs(5);
    while !tagged(tag).is_empty() && Instant::now() < patience {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        tagged(tag),
        Vec::<u32>::new(),
        "processes outlived the search"
    );
}

fn report(o: &Output) -> Json {
    let text = stdout(o);
    let last = text
        .lines()
        .last()
        .unwrap_or_else(|| panic!("no report: {}", stderr(o)));
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {last}"))
}

fn log(dir: &Path) -> Vec<Json> {
    std::fs::read_to_string(dir.join("log.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn with_strategy<'a>(log: &'a [Json], part: &str) -> &'a Json {
    log.iter()
        .find(|c| c["strategy"].as_str().is_some_and(|s| s.contains(part)))
        .unwrap_or_else(|| panic!("no candidate with {part}"))
}

#[test]
fn a_compilation_of_minutes_is_a_compile_timeout_and_nothing_outlives_the_search() {
    let out = dir("slow");
    let tag = "slow";
    let started = Instant::now();
    let o = search(tag, &slow_search(&out, &["--limits", "compile=3"]))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // The compilation takes minutes: the search took its limit, and the others'.
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "{:?}",
        started.elapsed()
    );
    let log = log(&out);
    let slow = with_strategy(&log, "tileNDList([4, 16])");
    assert_eq!(slow["status"], "compile timeout", "{slow}");
    let reason = slow["reason"].as_str().unwrap();
    assert!(reason.contains("the compile limit of 3.0 s"), "{reason}");
    assert_eq!(with_strategy(&log, "blocking")["status"], "ok");
    let r = report(&o);
    assert_eq!(r["statuses"]["compile timeout"], 1, "{r}");
    assert!(
        r["best_strategy"].as_str().unwrap().contains("blocking"),
        "{r}"
    );
    assert_nothing_left(tag);
}

#[test]
fn a_worker_killed_by_a_signal_is_a_crashed_candidate_and_the_search_goes_on() {
    let out = dir("crash");
    let tag = "crash";
    let mut child: Child = search(tag, &slow_search(&out, &[]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let search_pid = child.id();
    // The progress names the candidate the search waits for: then its worker aborts
    // (as one whose OpenMP runtime gives up does). (A SIGSEGV sent by another process
    // is no fault: the handlers of Rust and LLVM take it and the worker goes on.)
    let stderr_lines = BufReader::new(child.stderr.take().unwrap());
    let mut said = Vec::new();
    for line in stderr_lines.lines() {
        let line = line.unwrap();
        said.push(line.clone());
        if line.contains("compiling") && line.contains("tileNDList([4, 16])") {
            for pid in tagged(tag).into_iter().filter(|&p| p != search_pid) {
                unsafe_kill(pid, "ABRT");
            }
            break;
        }
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{said:?}");
    let log = log(&out);
    let slow = with_strategy(&log, "tileNDList([4, 16])");
    assert_eq!(slow["status"], "crashed", "{slow}");
    assert!(
        slow["reason"].as_str().unwrap().contains("died of SIGABRT"),
        "{slow}"
    );
    assert_eq!(with_strategy(&log, "blocking")["status"], "ok");
    assert_nothing_left(tag);
}

/// Sends `signal` (`ABRT`, `TERM`) to process `pid`.
fn unsafe_kill(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_worker_over_its_memory_is_out_of_memory_and_the_search_ends() {
    // Inputs of 64 KiB, a result of 1 GiB (and its values for the interpreter's
    // check, more), for workers of 1 GiB.
    let tag = "memory";
    let o = search(
        tag,
        &[
            "--space",
            "{id, blocking}",
            "--driver",
            "exhaustive",
            "--cost",
            "measured",
            "--limits",
            "memory=1G",
            "--budget",
            "evals=4",
            "--jobs",
            "1",
            "--nat",
            "n=16384",
            "--nat",
            "m=16384",
            "--nat",
            "k=1",
            &example("matmul.rise"),
        ],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let r = report(&o);
    assert!(r["statuses"]["out of memory"].as_u64().unwrap() >= 1, "{r}");
    assert_nothing_left(tag);
}

#[test]
fn a_time_budget_holds_the_baseline_and_final_timings_included() {
    let out = dir("budget");
    let tag = "budget";
    let started = Instant::now();
    let o = search(
        tag,
        &[
            "--space",
            "auto",
            "--driver",
            "evolve",
            "--cost",
            "measured",
            "--budget",
            "time=15",
            "--seed",
            "1",
            "--out",
            out.to_str().unwrap(),
            &example("mm64.rise"),
        ],
    )
    .output()
    .unwrap();
    let wall = started.elapsed();
    assert!(o.status.success(), "{}", stderr(&o));
    let r = report(&o);
    // Within 10% of the budget (and a moment for the process to start and write its
    // pictures).
    assert!(r["seconds"].as_f64().unwrap() <= 16.5, "{r}");
    assert!(wall < Duration::from_secs(19), "{wall:?}");
    // The speedup is the final comparison's, with its spread.
    let spread = r["best_spread_ms"].as_array().expect("a spread");
    let best = r["best_ms"].as_f64().unwrap();
    assert!(
        spread[0].as_f64().unwrap() <= best && best <= spread[1].as_f64().unwrap(),
        "{r}"
    );
    let speedup = r["baseline_ms"].as_f64().unwrap() / best;
    assert!(
        (r["speedup"].as_f64().unwrap() / speedup - 1.0).abs() < 1e-2,
        "{r}"
    );
    // Every line has its runs' spread; the log and the report are there.
    for c in log(&out).iter().filter(|c| c["status"] == "ok") {
        assert!(c["median_ms"].is_f64() && c["median_ms"] == c["ms"], "{c}");
    }
    assert!(out.join("report.json").is_file());
    assert_nothing_left(tag);
}

#[test]
fn sigterm_ends_a_search_with_its_log_and_report_and_resume_finishes_it() {
    let out = dir("term");
    let tag = "term";
    let args = |budget: &str, which: &str| -> Vec<String> {
        [
            "--space",
            "auto",
            "--driver",
            "random",
            "--cost",
            "measured",
            "--seed",
            "4",
            "--budget",
            budget,
            which,
            out.to_str().unwrap(),
            &example("mm64.rise"),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let child = search(
        tag,
        &args("evals=40", "--out")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Once a few candidates are logged (the log grows as they come), SIGTERM.
    let patience = Instant::now() + Duration::from_secs(120);
    while Instant::now() < patience {
        let lines = std::fs::read_to_string(out.join("log.jsonl")).map_or(0, |t| t.lines().count());
        if lines >= 5 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    unsafe_kill(child.id(), "TERM");
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    let before = log(&out);
    assert!(before.len() >= 5 && before.len() < 40, "{}", before.len());
    let r: Json =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(r["evaluations"].as_u64(), Some(before.len() as u64));
    assert!(out.join("best.elv").is_file() && out.join("progress.png").is_file());
    assert_nothing_left(tag);
    // Resumed: the driver and seed are the log's; nothing logged is evaluated again
    // (its lines come back as they were, times and all); it goes on to 40.
    let mut resumed_args = args("evals=40", "--resume");
    resumed_args.retain(|a| a != "--driver" && a != "random" && a != "--seed" && a != "4");
    let o = search(
        tag,
        &resumed_args.iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let after = log(&out);
    assert_eq!(after.len(), 40);
    for (old, new) in before.iter().zip(&after) {
        if old["status"] != "stopped" {
            assert_eq!(old, new, "a logged candidate changed on resuming");
        }
    }
    assert_eq!(report(&o)["evaluations"], 40);
    assert_nothing_left(tag);
}

#[test]
fn with_the_model_cost_a_stopped_and_resumed_search_logs_what_one_never_stopped_logs() {
    let whole = dir("model-whole");
    let parts = dir("model-parts");
    let run = |budget: &str, flag: &str, dir: &Path| {
        let o = elevate(&[
            "search",
            &example("mm64.rise"),
            "--space",
            "auto",
            "--driver",
            "anneal",
            "--seed",
            "2",
            "--budget",
            budget,
            flag,
            dir.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        o
    };
    run("evals=90", "--out", &whole);
    run("evals=35", "--out", &parts);
    let o = run("evals=90", "--resume", &parts);
    let read = |d: &Path| std::fs::read(d.join("log.jsonl")).unwrap();
    assert_eq!(read(&whole), read(&parts), "the logs differ");
    assert_eq!(report(&o)["evaluations"], 90);
    // A search resumed with other settings is refused, saying which.
    let o = elevate(&[
        "search",
        &example("mm64.rise"),
        "--space",
        "auto",
        "--driver",
        "random",
        "--budget",
        "evals=95",
        "--resume",
        parts.to_str().unwrap(),
    ]);
    assert_fails_with(&o, "its search has the driver `anneal`, not `random`");
    let o = elevate(&[
        "search",
        &example("mm64.rise"),
        "--space",
        "auto",
        "--budget",
        "evals=95",
        "--resume",
        "/nonexistent/search",
    ]);
    assert_fails_with(
        &o,
        "--resume /nonexistent/search: /nonexistent/search/search.json",
    );
}

#[test]
fn bad_limits_and_workers_that_cannot_start_are_errors_before_the_search() {
    for (limits, why) in [
        ("compile=0", "`compile=0`: a time limit is more than 0"),
        ("run=-1", "`run=-1`: a time limit is more than 0"),
        ("memory=1B", "`memory=1B`: a worker needs at least 1.0 GiB"),
        ("memory=lots", "`memory=lots`: expected a size"),
        (
            "compile=1e12",
            "`compile=1e12`: a time limit is more than 0 and at most a day",
        ),
        ("speed=3", "`speed=3`: unknown limit `speed`"),
    ] {
        let o = elevate(&[
            "search",
            &example("mm64.rise"),
            "--space",
            "auto",
            "--cost",
            "measured",
            "--budget",
            "evals=2",
            "--limits",
            limits,
        ]);
        assert_fails_with(&o, &format!("--limits: {why}"));
    }
    let o = Command::new(env!("CARGO_BIN_EXE_elevate"))
        .args([
            "search",
            &example("mm64.rise"),
            "--space",
            "auto",
            "--cost",
            "measured",
            "--budget",
            "evals=2",
        ])
        .env("ELEVATE_WORKER", "/nonexistent/elevate")
        .output()
        .unwrap();
    assert_fails_with(&o, "cannot start the worker `/nonexistent/elevate`");
    assert!(stdout(&o).is_empty(), "no search ran");
}

#[test]
fn a_log_that_cannot_grow_stops_the_search_with_an_error_and_keeps_what_was_written() {
    // Files of at most 8 KiB (`ulimit -f`; SIGXFSZ ignored, so that a write past it
    // fails as a full disk's does).
    let out = dir("full");
    let script = format!(
        "trap '' XFSZ; ulimit -f 16; exec {} search {} --space auto --driver random --budget evals=500 --out {}",
        env!("CARGO_BIN_EXE_elevate"),
        example("mm64.rise"),
        out.display()
    );
    let o = Command::new("sh").args(["-c", &script]).output().unwrap();
    assert_fails_with(&o, "(the search stopped; what was written before is kept)");
    assert!(stderr(&o).contains("File too large"), "{}", stderr(&o));
    let text = std::fs::read_to_string(out.join("log.jsonl")).unwrap();
    let whole: Vec<&str> = text.lines().filter(|l| l.ends_with('}')).collect();
    assert!(whole.len() >= 5, "{text}");
    for line in whole {
        assert!(serde_json::from_str::<Json>(line).is_ok(), "{line}");
    }
}
