//! `elevate compile` and `elevate run`: the program a strategy chose, through MLIR, by
//! the bridge's driver ([`elevate_bridge::emit`], [`elevate_bridge::compile`]).

use crate::{load, parse_strategy, read_inputs, render, Failure};
use elevate_bridge::{Emit, Options, Target};
use elevate_rise::nat::NatVar;
use elevate_rise::{io, Error, ErrorKind, NatEnv, Program, Span};
use std::path::{Path, PathBuf};

/// The most calls `--bench` times.
pub const MAX_BENCH_RUNS: u64 = 1_000_000;

/// The most threads `--threads` asks for.
pub const MAX_THREADS: u64 = 4096;

pub struct CompileOptions<'a> {
    pub path: &'a Path,
    pub entry: Option<&'a str>,
    pub strategy: Option<&'a str>,
    pub target: &'a str,
    pub emit: &'a str,
    pub nats: &'a [(String, i64)],
    pub output: Option<&'a Path>,
}

pub struct RunOptions<'a> {
    pub path: &'a Path,
    pub entry: Option<&'a str>,
    pub strategy: Option<&'a str>,
    pub inputs: &'a [PathBuf],
    pub random: Option<u64>,
    pub nats: &'a [(String, i64)],
    pub check: bool,
    pub bench: Option<usize>,
    pub threads: Option<usize>,
}

/// Why a count given on the command line (`--bench`, `--threads`) is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CountError {
    /// A negative number.
    #[error("must be non-negative, found {0}")]
    Negative(String),
    /// Not a number.
    #[error("expected a non-negative integer, found `{0}`")]
    NotANumber(String),
    /// More than the maximum (`what` counts: runs, threads).
    #[error("{text} is over the maximum of {max} {what}")]
    TooLarge {
        /// The count as written.
        text: String,
        /// The maximum.
        max: u64,
        /// What is counted.
        what: &'static str,
    },
}

/// `--bench N`: a count of runs, at most [`MAX_BENCH_RUNS`].
pub fn parse_bench_runs(text: &str) -> Result<usize, CountError> {
    count(text, MAX_BENCH_RUNS, "runs")
}

/// `--threads N`: a count of threads, at most [`MAX_THREADS`].
pub fn parse_threads(text: &str) -> Result<usize, CountError> {
    count(text, MAX_THREADS, "threads")
}

/// A non-negative count of at most `max` (the command line takes `-1` as a number, so
/// that this says what is wrong with it).
fn count(text: &str, max: u64, what: &'static str) -> Result<usize, CountError> {
    let t = text.trim();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if t.strip_prefix('-').is_some_and(digits) {
        return Err(CountError::Negative(t.to_string()));
    }
    if !digits(t) {
        return Err(CountError::NotANumber(t.to_string()));
    }
    t.parse::<u64>()
        .ok()
        .filter(|&n| n <= max)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| CountError::TooLarge {
            text: t.to_string(),
            max,
            what,
        })
}

fn sizes(nats: &[(String, i64)]) -> NatEnv {
    let mut env = NatEnv::default();
    for (name, value) in nats {
        env.insert(NatVar::Named(name.as_str().into()), *value);
    }
    env
}

/// A bridge error as a diagnostic of the file: located at its construct, or at the
/// entry point where it has no location of its own. Inputs that do not fit are input
/// errors and traps evaluation errors, as the interpreter's; the rest compile errors.
fn failure(path: &Path, source: &str, program: &Program, e: elevate_bridge::Error) -> Failure {
    let entry: Option<Span> = program.entry().term.span();
    let error = match e {
        elevate_bridge::Error::Rise(e) => Error {
            span: e.span.or(entry),
            ..e
        },
        e => {
            let kind = match e {
                elevate_bridge::Error::Input { .. } => ErrorKind::Input,
                elevate_bridge::Error::Trap { .. } => ErrorKind::Eval,
                _ => ErrorKind::Compile,
            };
            Error {
                kind,
                span: e.span().or(entry),
                message: e.to_string(),
            }
        }
    };
    render(&error, path, source)
}

pub fn compile(o: CompileOptions) -> Result<(), Failure> {
    let target: Target = o.target.parse().map_err(Failure)?;
    let stage: Emit = o.emit.parse().map_err(|e| Failure(format!("{e}")))?;
    let (program, source) = load(o.path, o.entry)?;
    let strategy = o.strategy.map(parse_strategy).transpose()?;
    let text = elevate_bridge::emit(
        &program,
        &sizes(o.nats),
        strategy.as_ref(),
        &Options {
            target,
            ..Options::default()
        },
        stage,
    )
    .map_err(|e| failure(o.path, &source, &program, e))?;
    match o.output {
        Some(file) => std::fs::write(file, text)
            .map_err(|e| Failure(format!("{}: cannot write: {e}", file.display()))),
        None => crate::output::print(&text),
    }
}

#[cfg(not(feature = "mlir"))]
pub fn run(_: RunOptions) -> Result<(), Failure> {
    Err(Failure(
        "this elevate was built without MLIR (feature `mlir`)".into(),
    ))
}

#[cfg(feature = "mlir")]
pub fn run(o: RunOptions) -> Result<(), Failure> {
    use std::time::Instant;
    if let Some(threads) = o.threads {
        // Read by the OpenMP runtime when the JIT loads it (before any parallel loop).
        std::env::set_var("OMP_NUM_THREADS", threads.max(1).to_string());
    }
    let (program, source) = load(o.path, o.entry)?;
    let signature = program.signature();
    let strategy = o.strategy.map(parse_strategy).transpose()?;
    let fail = |e| failure(o.path, &source, &program, e);
    // The compiled function, and the milliseconds from the program to it.
    let compile = |nats: &NatEnv| {
        let started = Instant::now();
        let compiled =
            elevate_bridge::compile(&program, nats, strategy.as_ref(), &Options::default())
                .map_err(fail)?;
        Ok::<_, Failure>((compiled, started.elapsed().as_secs_f64() * 1e3))
    };
    // Compiled first where the sizes come from the command line: the compilation
    // checks the buffers' sizes before random inputs of those sizes are made.
    let (nats, values, (compiled, compile_ms)) = match o.random {
        Some(seed) => {
            let nats = sizes(o.nats);
            let compiled = compile(&nats)?;
            let values = io::random_inputs(&signature, &nats, seed)
                .map_err(|e| render(&e, o.path, &source))?;
            (nats, values, compiled)
        }
        None => {
            let (nats, values) = io::bind_inputs(&signature, &read_inputs(o.inputs)?)
                .map_err(|e| render(&e, o.path, &source))?;
            let compiled = compile(&nats)?;
            (nats, values, compiled)
        }
    };
    let mut call = compiled.prepare(&values).map_err(fail)?;
    call.invoke().map_err(fail)?;
    let json = |v: elevate_rise::Value| {
        v.to_json()
            .map_err(|e| Failure(format!("{}: {e}", o.path.display())))
    };
    let result = json(call.output())?;
    if o.check {
        let expected = elevate_rise::evaluate(&program.entry().term, &nats, &values)
            .map_err(|e| render(&e, o.path, &source))?;
        if !io::approx_eq(&json(expected)?, &result) {
            return Err(Failure(format!(
                "{}: --check: the compiled program computes other values than the interpreter",
                o.path.display()
            )));
        }
        eprintln!("check: same values as the interpreter");
    }
    match o.bench {
        Some(runs) => {
            // At most MAX_BENCH_RUNS (checked when the command line was read).
            let runs = runs.max(1);
            let mut times = Vec::with_capacity(runs);
            for _ in 0..runs {
                let t = Instant::now();
                call.invoke().map_err(fail)?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            times.sort_by(f64::total_cmp);
            let round = |x: f64| (x * 1000.0).round() / 1000.0;
            let median = times[times.len() / 2];
            crate::output::println(
                &serde_json::json!({
                    "median_ms": round(median),
                    "min_ms": round(times[0]),
                    "max_ms": round(times[times.len() - 1]),
                    "runs": times.len(),
                    "compile_ms": round(compile_ms),
                    "threads": o.threads,
                    "gflops": round(compiled.payload().flops as f64 / median / 1e6),
                })
                .to_string(),
            )
        }
        None => crate::output::println(&result.to_string()),
    }
}
