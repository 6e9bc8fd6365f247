//! `elevate compile` and `elevate run`: the program a strategy chose, through MLIR, by
//! the bridge's driver ([`elevate_bridge::emit`], [`elevate_bridge::compile`]).

use crate::inputs::{self, InputOptions};
use crate::{load, output, parse_strategy, render, Failure};
use elevate_bridge::{Emit, Options, Target};
use elevate_rise::nat::NatVar;
use elevate_rise::{io, NatEnv, Program};
use std::path::Path;

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
    pub inputs: InputOptions<'a>,
    pub out: Option<&'a Path>,
    pub check: bool,
    pub bench: Option<usize>,
    pub threads: Option<usize>,
    pub target: &'a str,
    pub bundle: Option<&'a Path>,
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
    match e.diagnostic(program.entry().term.span()) {
        Ok(error) => render(&error, path, source),
        // No GPU, or the driver refused: about the machine, not the program.
        Err(message) => Failure(format!("{}: {message}", path.display())),
    }
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
        None => output::print(&text),
    }
}

#[cfg(not(feature = "mlir"))]
pub fn run(_: RunOptions) -> Result<(), Failure> {
    Err(Failure(
        "this elevate was built without MLIR (feature `mlir`)".into(),
    ))
}

/// What `run` has once the program is compiled for its target: the program, its
/// sizes and inputs, the compiled form, and the milliseconds the compilation took.
#[cfg(feature = "mlir")]
pub struct Prepared<T> {
    pub program: Program,
    pub source: String,
    pub nats: NatEnv,
    pub values: Vec<elevate_rise::Value>,
    pub compiled: T,
    pub compile_ms: f64,
}

/// Loads the program, compiles it by `compile` (program, sizes, strategy, options)
/// and makes its inputs: compiled first where the sizes come from the command line,
/// so that the compilation checks the buffers' sizes before random inputs of those
/// sizes are made.
#[cfg(feature = "mlir")]
pub fn prepare<T>(
    o: &RunOptions,
    target: Target,
    compile: impl Fn(
        &Program,
        &NatEnv,
        Option<&elevate_core::Strategy<elevate_rise::Term>>,
        &Options,
    ) -> Result<T, elevate_bridge::Error>,
) -> Result<Prepared<T>, Failure> {
    use std::time::Instant;
    let (program, source) = load(o.path, o.entry)?;
    let strategy = o.strategy.map(parse_strategy).transpose()?;
    let options = Options {
        target,
        ..Options::default()
    };
    let compiled = |nats: &NatEnv| {
        let started = Instant::now();
        let compiled = compile(&program, nats, strategy.as_ref(), &options)
            .map_err(|e| failure(o.path, &source, &program, e))?;
        Ok::<_, Failure>((compiled, started.elapsed().as_secs_f64() * 1e3))
    };
    // Random values are made after the compilation has checked their sizes.
    let binding = inputs::bind(o.path, &source, &program, o.inputs)?;
    let nats = binding.nats.clone();
    let (compiled, compile_ms) = compiled(&nats)?;
    let values = binding.values(o.path, &source)?;
    Ok(Prepared {
        program,
        source,
        nats,
        values,
        compiled,
        compile_ms,
    })
}

#[cfg(feature = "mlir")]
impl<T> Prepared<T> {
    /// A bridge error of a run, as a diagnostic of the program's file.
    pub fn fail(&self, path: &Path, e: elevate_bridge::Error) -> Failure {
        failure(path, &self.source, &self.program, e)
    }

    /// The interpreter's result on the same inputs.
    pub fn expected(&self, path: &Path) -> Result<elevate_rise::Value, Failure> {
        elevate_rise::evaluate(&self.program.entry().term, &self.nats, &self.values)
            .map_err(|e| render(&e, path, &self.source))
    }

    /// `--check`: the result against the interpreter's (as JSON).
    pub fn check(&self, path: &Path, result: &elevate_rise::Value) -> Result<(), Failure> {
        let expected = json(path, self.expected(path)?)?;
        if !io::approx_eq(&expected, &json(path, result.clone())?) {
            return Err(Failure(format!(
                "{}: --check: the compiled program computes other values than the interpreter",
                path.display()
            )));
        }
        output::eprintln("check: same values as the interpreter");
        Ok(())
    }
}

/// A value as JSON (an error naming the file where it has none: a function).
fn json(path: &Path, v: elevate_rise::Value) -> Result<serde_json::Value, Failure> {
    v.to_json()
        .map_err(|e| Failure(format!("{}: {e}", path.display())))
}

/// `--bench`'s line: the median, least and most of `times` (milliseconds, sorted
/// here), the compilation's milliseconds, GFLOPS at the median, and `extra` fields.
pub fn bench_line(
    mut times: Vec<f64>,
    compile_ms: f64,
    flops: u64,
    extra: serde_json::Value,
) -> Result<(), Failure> {
    times.sort_by(f64::total_cmp);
    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    let median = times[times.len() / 2];
    let mut line = serde_json::json!({
        "median_ms": round(median),
        "min_ms": round(times[0]),
        "max_ms": round(times[times.len() - 1]),
        "runs": times.len(),
        "compile_ms": round(compile_ms),
        "gflops": round(flops as f64 / median / 1e6),
    });
    if let (Some(line), serde_json::Value::Object(extra)) = (line.as_object_mut(), extra) {
        line.extend(extra);
    }
    output::println(&line.to_string())
}

#[cfg(feature = "mlir")]
pub fn run(o: RunOptions) -> Result<(), Failure> {
    use std::time::Instant;
    // `--target gpu` is `gpu_cmd::run`'s.
    let _: Target = o.target.parse().map_err(Failure)?;
    if o.bundle.is_some() {
        return Err(Failure(
            "--bundle is the GPU target's (--target gpu): a CPU run needs no runner".into(),
        ));
    }
    if let Some(threads) = o.threads {
        // Read by the OpenMP runtime when the JIT loads it (before any parallel loop).
        std::env::set_var("OMP_NUM_THREADS", threads.max(1).to_string());
    }
    let p = prepare(&o, Target::Cpu, elevate_bridge::compile)?;
    let mut call = p
        .compiled
        .prepare(&p.values)
        .map_err(|e| p.fail(o.path, e))?;
    call.invoke().map_err(|e| p.fail(o.path, e))?;
    let result = call.try_output().map_err(|e| p.fail(o.path, e))?;
    let flops = p.compiled.payload().flops;
    let threads = serde_json::json!({"threads": o.threads});
    report(&o, &p, &result, flops, threads, || {
        let t = Instant::now();
        call.invoke()?;
        Ok(t.elapsed().as_secs_f64() * 1e3)
    })
}

/// After a run's first call: `--check` (the result against the interpreter's), then
/// `--bench N`'s line (each call timed by `time`, in milliseconds, with `extra`
/// fields) or the result (streamed as JSON, as `eval` prints it); with `--out`, the
/// result goes into that file (and `--bench` still prints its line).
#[cfg(feature = "mlir")]
pub fn report<T>(
    o: &RunOptions,
    p: &Prepared<T>,
    result: &elevate_rise::Value,
    flops: u64,
    extra: serde_json::Value,
    mut time: impl FnMut() -> Result<f64, elevate_bridge::Error>,
) -> Result<(), Failure> {
    if o.check {
        p.check(o.path, result)?;
    }
    match o.bench {
        Some(runs) => {
            if let Some(out) = o.out {
                inputs::write_out(out, result)?;
            }
            // At most MAX_BENCH_RUNS (checked when the command line was read).
            let mut times = Vec::with_capacity(runs.max(1));
            for _ in 0..runs.max(1) {
                times.push(time().map_err(|e| p.fail(o.path, e))?);
            }
            bench_line(times, p.compile_ms, flops, extra)
        }
        None => inputs::result(o.path, result, o.out),
    }
}
