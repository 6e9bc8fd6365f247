//! `elevate compile` and `elevate run`: the program a strategy chose, through MLIR.

use crate::{load, parse_strategy, read_inputs, render, Failure};
use elevate_core::Context;
use elevate_rise::nat::NatVar;
use elevate_rise::{io, print_definition, rules, NatEnv, Term};
use std::path::{Path, PathBuf};
use std::time::Instant;

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

fn sizes(nats: &[(String, i64)]) -> NatEnv {
    let mut env = NatEnv::default();
    for (name, value) in nats {
        env.insert(NatVar::Named(name.as_str().into()), *value);
    }
    env
}

/// The program to compile: the entry point at these sizes, rewritten by the strategy,
/// then made low-level by `defaultLowering`.
fn chosen(
    path: &Path,
    entry: &Term,
    strategy: Option<&str>,
    nats: &NatEnv,
) -> Result<Term, Failure> {
    let at = |e: &dyn std::fmt::Display| Failure(format!("{}: {e}", path.display()));
    let mut term = elevate_bridge::instantiate(entry, nats).map_err(|e| at(&e))?;
    if let Some(text) = strategy {
        let strategy = parse_strategy(text)?;
        term = strategy
            .apply(&term, &mut Context::default())
            .map_err(|e| at(&format!("the strategy {strategy} failed: {e}")))?;
    }
    rules::default_lowering()
        .apply(&term, &mut Context::default())
        .map_err(|e| at(&format!("defaultLowering failed: {e}")))
}

fn bridge_failure(path: &Path, source: &str, e: elevate_bridge::BridgeError) -> Failure {
    match e.span {
        Some(span) => render(
            &elevate_rise::Error::new(elevate_rise::ErrorKind::Eval, span, e.to_string()),
            path,
            source,
        ),
        None => Failure(format!("{}: {e}", path.display())),
    }
}

/// What `--emit transform` prints for a payload without a Transform script: a comment
/// saying why (the program is not a sequence of structured loop nests, so its loops
/// are the payload's own), then a script that does nothing, so that the output is
/// always a valid transform module (for `mlir-opt --transform-interpreter`, or to start
/// one from).
fn no_transform(why: Option<&str>) -> String {
    format!(
        "// no transform script: the payload is explicit loops, which are its schedule ({}); this script does nothing
module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    transform.yield
  }}
}}
",
        why.unwrap_or("not structured")
    )
}

pub fn compile(o: CompileOptions) -> Result<(), Failure> {
    if o.target != "cpu" {
        return Err(Failure(format!(
            "target `{}` is not available yet (only `cpu`; the GPU target comes with PTX generation)",
            o.target
        )));
    }
    let (program, source) = load(o.path, o.entry)?;
    let entry = program.entry();
    let term = chosen(o.path, &entry.term, o.strategy, &sizes(o.nats))?;
    let text = match o.emit {
        "rise" => print_definition(&entry.name, &term),
        "payload" | "transform" | "mlir" | "llvm" => {
            let payload = elevate_bridge::payload(&entry.name, &term)
                .map_err(|e| bridge_failure(o.path, &source, e))?;
            match o.emit {
                "payload" => payload.mlir,
                "transform" => match payload.transform {
                    Some(script) => script,
                    None => no_transform(payload.loops_because.as_deref()),
                },
                stage => lowered(o.path, &source, &payload, stage == "llvm")?,
            }
        }
        "ptx" => {
            return Err(Failure(
                "--emit ptx is not available yet (this version emits rise, payload, transform, mlir and llvm)"
                    .into(),
            ))
        }
        other => {
            return Err(Failure(format!(
                "unknown stage `{other}` (rise, payload, transform, mlir, llvm)"
            )))
        }
    };
    match o.output {
        Some(file) => std::fs::write(file, text)
            .map_err(|e| Failure(format!("{}: cannot write: {e}", file.display()))),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

/// The payload, after its Transform script (if any), lowered to the LLVM dialect, or
/// translated to LLVM IR.
#[cfg(feature = "mlir")]
fn lowered(
    path: &Path,
    source: &str,
    payload: &elevate_bridge::Payload,
    llvm_ir: bool,
) -> Result<String, Failure> {
    let result = if llvm_ir {
        elevate_bridge::jit::payload_llvm_ir(payload)
    } else {
        elevate_bridge::jit::lower_payload(payload)
    };
    result.map_err(|e| bridge_failure(path, source, e))
}

#[cfg(not(feature = "mlir"))]
fn lowered(_: &Path, _: &str, _: &elevate_bridge::Payload, _: bool) -> Result<String, Failure> {
    Err(Failure(
        "this elevate was built without MLIR (feature `mlir`)".into(),
    ))
}

#[cfg(not(feature = "mlir"))]
pub fn run(_: RunOptions) -> Result<(), Failure> {
    Err(Failure(
        "this elevate was built without MLIR (feature `mlir`)".into(),
    ))
}

#[cfg(feature = "mlir")]
pub fn run(o: RunOptions) -> Result<(), Failure> {
    if let Some(threads) = o.threads {
        // Read by the OpenMP runtime when the JIT loads it (before any parallel loop).
        std::env::set_var("OMP_NUM_THREADS", threads.max(1).to_string());
    }
    let (program, source) = load(o.path, o.entry)?;
    let entry = program.entry();
    let signature = program.signature();
    let (nats, values) = match o.random {
        Some(seed) => {
            let nats = sizes(o.nats);
            let values = io::random_inputs(&signature, &nats, seed)
                .map_err(|e| render(&e, o.path, &source))?;
            (nats, values)
        }
        None => io::bind_inputs(&signature, &read_inputs(o.inputs)?)
            .map_err(|e| render(&e, o.path, &source))?,
    };
    let json: Vec<serde_json::Value> = values
        .iter()
        .map(|v| {
            v.to_json()
                .map_err(|e| Failure(format!("{}: {e}", o.path.display())))
        })
        .collect::<Result<_, _>>()?;
    let term = chosen(o.path, &entry.term, o.strategy, &nats)?;
    let started = Instant::now();
    let payload = elevate_bridge::payload(&entry.name, &term)
        .map_err(|e| bridge_failure(o.path, &source, e))?;
    let compiled =
        elevate_bridge::jit::compile(&payload).map_err(|e| bridge_failure(o.path, &source, e))?;
    let compile_ms = started.elapsed().as_secs_f64() * 1e3;
    let mut call = compiled
        .prepare(&json)
        .map_err(|e| bridge_failure(o.path, &source, e))?;
    call.invoke()
        .map_err(|e| bridge_failure(o.path, &source, e))?;
    let result = call.output();
    if o.check {
        let expected = elevate_rise::evaluate(&entry.term, &nats, &values)
            .map_err(|e| render(&e, o.path, &source))?
            .to_json()
            .map_err(|e| Failure(format!("{}: {e}", o.path.display())))?;
        if !io::approx_eq(&expected, &result) {
            return Err(Failure(format!(
                "{}: --check: the compiled program computes other values than the interpreter",
                o.path.display()
            )));
        }
        eprintln!("check: same values as the interpreter");
    }
    match o.bench {
        Some(runs) => {
            let mut times = Vec::with_capacity(runs.max(1));
            for _ in 0..runs.max(1) {
                let t = Instant::now();
                call.invoke()
                    .map_err(|e| bridge_failure(o.path, &source, e))?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            times.sort_by(f64::total_cmp);
            let round = |x: f64| (x * 1000.0).round() / 1000.0;
            println!(
                "{}",
                serde_json::json!({
                    "median_ms": round(times[times.len() / 2]),
                    "min_ms": round(times[0]),
                    "max_ms": round(times[times.len() - 1]),
                    "runs": times.len(),
                    "compile_ms": round(compile_ms),
                    "threads": o.threads,
                    "gflops": round(payload.flops as f64 / times[times.len() / 2] / 1e6),
                })
            );
        }
        None => println!("{result}"),
    }
    Ok(())
}
