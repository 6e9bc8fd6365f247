//! Searches whose candidates are evaluated elsewhere: a [`RemoteCost`] sends each
//! round's programs, as RISE text, to an [`Executor`] (a Ray cluster behind
//! `python -m elevate.executors`, a Python object) and reads one result per program
//! back, in order, as JSON. The model cost's results are exact through JSON, so a
//! search logs the same whatever executes it.

use elevate_rise::{print_definition, Term};
use elevate_strategies::search::{evaluate_as_batch, Cost, Measure, Rejection, Status};
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

/// What evaluates a round of candidates elsewhere.
pub trait Executor: Send + Sync {
    /// One JSON object per program (see [`measure_json`]), in order, for `programs`
    /// (RISE text) by `cost` in searches from `start` (RISE text), on up to `jobs`
    /// workers at once; `Err` when the executor itself failed.
    fn evaluate(
        &self,
        programs: Vec<String>,
        cost: &str,
        start: &str,
        jobs: usize,
    ) -> Result<Vec<String>, String>;
}

/// A measure, or why there is none, as one JSON object: `cost`, `model`, `ms`,
/// `compile_ms`, `min_ms`, `max_ms`; or `status` and `reason`.
pub fn measure_json(m: &Result<Measure, Rejection>) -> serde_json::Value {
    match m {
        Ok(m) => json!({
            "cost": m.cost,
            "model": m.model,
            "ms": m.ms,
            "compile_ms": m.compile_ms,
            "min_ms": m.spread_ms.map(|s| s.0),
            "max_ms": m.spread_ms.map(|s| s.1),
        }),
        Err(r) => json!({"status": r.status.as_str(), "reason": r.reason}),
    }
}

/// The measure or rejection [`measure_json`] wrote.
pub fn measure_of(json: &serde_json::Value) -> Result<Measure, Rejection> {
    let number = |key: &str| json.get(key).and_then(serde_json::Value::as_f64);
    if let Some(cost) = number("cost") {
        return Ok(Measure {
            cost,
            model: number("model"),
            ms: number("ms"),
            compile_ms: number("compile_ms"),
            spread_ms: number("min_ms").zip(number("max_ms")),
        });
    }
    let status = json
        .get("status")
        .and_then(|s| s.as_str())
        .and_then(Status::parse)
        .filter(|s| *s != Status::Ok)
        .unwrap_or(Status::CompileFailed);
    let reason = json
        .get("reason")
        .and_then(|r| r.as_str())
        .unwrap_or("the executor gave no cost");
    Err(Rejection::new(status, reason))
}

/// A cost (named as the executor's: `model`, `measured`, ...) evaluated by an
/// [`Executor`].
pub struct RemoteCost<E> {
    /// The cost's name, as the executor's workers make it.
    pub name: String,
    /// The entry point's name (the candidates' definitions are named so).
    pub entry: String,
    /// The start program as RISE text (a measured cost's reference values).
    pub start: String,
    /// Where candidates go.
    pub executor: E,
}

impl<E: Executor> Cost<Term> for RemoteCost<E> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn evaluate(&self, program: &Term) -> Result<Measure, Rejection> {
        evaluate_as_batch(self, program)
    }

    fn evaluate_all(&self, programs: &[&Term], jobs: usize) -> Vec<Result<Measure, Rejection>> {
        let texts = programs
            .iter()
            .map(|p| print_definition(&self.entry, p))
            .collect();
        let failed = |reason: String| {
            vec![Err(Rejection::new(Status::CompileFailed, reason)); programs.len()]
        };
        match self.executor.evaluate(texts, &self.name, &self.start, jobs) {
            Ok(answers) if answers.len() == programs.len() => answers
                .iter()
                .map(|a| match serde_json::from_str(a) {
                    Ok(json) => measure_of(&json),
                    Err(e) => Err(Rejection::new(
                        Status::CompileFailed,
                        format!("executor: not JSON: {e}"),
                    )),
                })
                .collect(),
            Ok(answers) => failed(format!(
                "executor: {} answers for {} programs",
                answers.len(),
                programs.len()
            )),
            Err(e) => failed(format!("executor: {e}")),
        }
    }
}

/// The Python program that runs executors: `ELEVATE_PYTHON`, or `python3`.
pub const PYTHON_ENV: &str = "ELEVATE_PYTHON";

/// An executor in a child process, `PYTHON -m elevate.executors TARGET` (the Python
/// package's), asked one JSON line per round and answering one.
pub struct ProcessExecutor {
    pipes: Mutex<Pipes>,
    command: String,
}

struct Pipes {
    child: Child,
    /// `None` once closed, which ends the executor.
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl ProcessExecutor {
    /// Starts the executor for `target` (`ray`, `ray://HOST:PORT`, `auto`, `local`)
    /// and checks that it answers.
    pub fn start(target: &str) -> Result<ProcessExecutor, String> {
        let python = std::env::var(PYTHON_ENV).unwrap_or_else(|_| "python3".into());
        let command = format!("{python} -m elevate.executors {target}");
        let mut child = Command::new(&python)
            .args(["-m", "elevate.executors", target])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start `{command}`: {e} (set {PYTHON_ENV} to a Python with the elevate package)"))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(format!("`{command}`: no pipes"));
        };
        let executor = ProcessExecutor {
            pipes: Mutex::new(Pipes {
                child,
                stdin: Some(stdin),
                stdout: BufReader::new(stdout),
            }),
            command,
        };
        executor.evaluate(Vec::new(), "model", "", 1).map_err(|e| {
            format!("{e} (is the elevate Python package installed for it? set {PYTHON_ENV})")
        })?;
        Ok(executor)
    }
}

impl Executor for ProcessExecutor {
    fn evaluate(
        &self,
        programs: Vec<String>,
        cost: &str,
        start: &str,
        jobs: usize,
    ) -> Result<Vec<String>, String> {
        let mut pipes = self
            .pipes
            .lock()
            .map_err(|_| "the executor's pipes were poisoned".to_string())?;
        let Pipes { stdin, stdout, .. } = &mut *pipes;
        let Some(stdin) = stdin.as_mut() else {
            return Err(format!("`{}` was closed", self.command));
        };
        let request = json!({"programs": programs, "cost": cost, "start": start, "jobs": jobs});
        writeln!(stdin, "{request}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("`{}` stopped: {e}", self.command))?;
        let mut line = String::new();
        let read = stdout
            .read_line(&mut line)
            .map_err(|e| format!("`{}`: {e}", self.command))?;
        if read == 0 {
            return Err(format!("`{}` exited", self.command));
        }
        let answers: Vec<serde_json::Value> = serde_json::from_str(&line)
            .map_err(|e| format!("`{}` answered other than JSON: {e}", self.command))?;
        Ok(answers.iter().map(ToString::to_string).collect())
    }
}

impl Drop for ProcessExecutor {
    fn drop(&mut self) {
        let Ok(pipes) = self.pipes.get_mut() else {
            return;
        };
        // The end of its input ends the executor (and its cluster connection); one
        // that has not ended after a while is stopped.
        drop(pipes.stdin.take());
        let child = &mut pipes.child;
        let patience = std::time::Instant::now();
        while patience.elapsed() < std::time::Duration::from_secs(10) {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}
