//! Apache TVM as a peer of the operator suite (`examples/ops_bench.rs`):
//! `benches/peers/setup` makes the peers' virtual environment once, then
//! `benches/peers/tvm_ops.py` builds each operator with TVM's TensorIR schedules,
//! checks it against NumPy, times it on one thread and prints a JSON line for it
//! (`{"op", "peer": "tvm", "schedule", "ms", "threads"}`, or `"error"` where no
//! schedule of it built and checked).

#![allow(dead_code)]

use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Output};

/// The folder of the peers' scripts.
fn peers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/peers")
}

/// What `what` printed on stdout where it ran and exited 0, else why not (the last
/// line it printed on stderr).
fn stdout_of(what: &str, output: std::io::Result<Output>) -> Result<String, String> {
    let output = output.map_err(|e| format!("{what} did not start: {e}"))?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    Err(format!(
        "{what} failed ({}): {}",
        output.status,
        last.trim()
    ))
}

/// The peers' python (`benches/peers/setup` makes its environment once), or why not.
fn python() -> Result<String, String> {
    let setup = Command::new("bash").arg(peers_dir().join("setup")).output();
    let python = stdout_of("benches/peers/setup", setup)?;
    let python = python.lines().last().unwrap_or("").trim().to_string();
    if python.is_empty() {
        return Err("benches/peers/setup printed no python".to_string());
    }
    Ok(python)
}

/// The python of the peers' environment (with NumPy and Matplotlib), or `None` after
/// a one-line warning where it cannot be made.
pub fn peers_python() -> Option<String> {
    python()
        .map_err(|e| eprintln!("warning: no peers' environment: {e}"))
        .ok()
}

/// TVM's lines (`--quick`: at the quick sizes), by operator name.
fn run(quick: bool) -> Result<HashMap<String, Value>, String> {
    let dir = peers_dir();
    let python = python()?;
    let mut script = Command::new(&python);
    script
        .arg(dir.join("tvm_ops.py"))
        .env("TVM_NUM_THREADS", "1");
    if quick {
        script.arg("--quick");
    }
    let printed = stdout_of("tvm_ops.py", script.output())?;
    Ok(printed
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|line| Some((line.get("op")?.as_str()?.to_string(), line)))
        .collect())
}

/// TVM's line for each operator of the suite (at the quick sizes when `quick`), by its
/// "op" name; empty, after a one-line warning on stderr, where the environment cannot
/// be set up (no network, no python) or the script fails.
pub fn tvm_peer(quick: bool) -> HashMap<String, Value> {
    run(quick).unwrap_or_else(|e| {
        eprintln!("warning: no TVM peer: {e}");
        HashMap::new()
    })
}
