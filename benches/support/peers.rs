//! The operator suite's peers that run in Python (`examples/ops_bench.rs`), each in a
//! virtual environment its setup script makes once:
//!
//! - Apache TVM (`benches/peers/setup`): `benches/peers/tvm_ops.py` builds each
//!   operator with TVM's TensorIR schedules, checks it against NumPy and times it on
//!   one thread (`{"op", "peer": "tvm", "schedule", "ms", "threads"}`);
//! - ONNX Runtime and PyTorch (`benches/peers/networks/setup`, the networks
//!   benchmark's environment): `benches/peers/runtimes_ops.py` runs each operator as
//!   one ONNX node (or a few) and as its `torch.nn.functional` call, checks the two
//!   against each other and times each on one thread (`{"op", "peer": "onnxruntime" |
//!   "pytorch", "peer_version", "form", "ms", "threads"}`).
//!
//! A peer's line is `"error"` where it did not build, run or check.

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

/// The python of the environment that `setup` (a script under `benches/peers`) makes
/// once, or why not.
fn python_of(setup: &str) -> Result<String, String> {
    let what = format!("benches/peers/{setup}");
    let output = Command::new("bash").arg(peers_dir().join(setup)).output();
    let python = stdout_of(&what, output)?;
    let python = python.lines().last().unwrap_or("").trim().to_string();
    if python.is_empty() {
        return Err(format!("{what} printed no python"));
    }
    Ok(python)
}

/// The peers' python (`benches/peers/setup` makes its environment once), or why not.
fn python() -> Result<String, String> {
    python_of("setup")
}

/// The JSON lines `script` printed.
fn json_lines(printed: &str) -> impl Iterator<Item = Value> + '_ {
    printed
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
}

/// The python of the peers' environment (with NumPy and Matplotlib), or `None` after
/// a one-line warning where it cannot be made.
pub fn peers_python() -> Option<String> {
    python()
        .map_err(|e| eprintln!("warning: no peers' environment: {e}"))
        .ok()
}

/// TVM's lines (`--quick`: at the quick sizes), by operator name.
fn run_tvm(quick: bool) -> Result<HashMap<String, Value>, String> {
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
    Ok(json_lines(&printed)
        .filter_map(|line| Some((line.get("op")?.as_str()?.to_string(), line)))
        .collect())
}

/// TVM's line for each operator of the suite (at the quick sizes when `quick`), by its
/// "op" name; empty, after a one-line warning on stderr, where the environment cannot
/// be set up (no network, no python) or the script fails.
pub fn tvm_peer(quick: bool) -> HashMap<String, Value> {
    run_tvm(quick).unwrap_or_else(|e| {
        eprintln!("warning: no TVM peer: {e}");
        HashMap::new()
    })
}

/// ONNX Runtime's and PyTorch's lines (`--quick`: at the quick sizes), by operator
/// name and peer.
fn run_runtimes(quick: bool) -> Result<HashMap<(String, String), Value>, String> {
    let python = python_of("networks/setup")?;
    let mut script = Command::new(&python);
    script
        .arg(peers_dir().join("runtimes_ops.py"))
        .env("OMP_NUM_THREADS", "1");
    if quick {
        script.arg("--quick");
    }
    let printed = stdout_of("runtimes_ops.py", script.output())?;
    Ok(json_lines(&printed)
        .filter_map(|line| {
            let op = line.get("op")?.as_str()?.to_string();
            let peer = line.get("peer")?.as_str()?.to_string();
            Some(((op, peer), line))
        })
        .collect())
}

/// ONNX Runtime's and PyTorch's line for each operator of the suite (at the quick
/// sizes when `quick`), by its "op" name and "peer"; empty, after a one-line warning
/// on stderr, where their environment cannot be set up or the script fails.
pub fn runtimes_peer(quick: bool) -> HashMap<(String, String), Value> {
    run_runtimes(quick).unwrap_or_else(|e| {
        eprintln!("warning: no ONNX Runtime or PyTorch peer: {e}");
        HashMap::new()
    })
}
