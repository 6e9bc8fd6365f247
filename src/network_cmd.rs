//! `elevate run NET.rise --weights NET.safetensors ...` for a network (a program in
//! the form `elevate import` writes): compiled layer by layer ([`elevate::network`]),
//! its weights bound once, called on the input alone.

use crate::bridge_cmd::{bench_line, RunOptions};
use crate::{arrays, inputs, output, Failure};
use elevate::network::{f32_values, nested_value, Network, NetworkStrategy};
use elevate_onnx::weights::Weights;
use std::path::Path;
use std::time::Instant;

/// The longest `--check` lets the interpreter take before it says so instead.
const CHECK_SECONDS: f64 = 120.0;

/// The network in `o.path` where the program is one and `--weights` is given.
pub fn network(o: &RunOptions) -> Option<Network> {
    o.inputs.weights?;
    if o.entry.is_some() {
        return None;
    }
    let source = std::fs::read_to_string(o.path).ok()?;
    Network::parse(&source).ok()
}

/// Runs the network `net` (see the module).
pub fn run(o: &RunOptions, net: &Network) -> Result<(), Failure> {
    let path = o.path;
    let file = |m: String| Failure(format!("{}: {m}", path.display()));
    let weights_path = o
        .inputs
        .weights
        .ok_or_else(|| file("a network's weights come with --weights".into()))?;
    let strategy = match o.strategy {
        None => NetworkStrategy::library(),
        Some(text) => {
            let text = match text.strip_prefix('@') {
                Some(file) => crate::read(Path::new(file))?,
                None => text.to_string(),
            };
            NetworkStrategy::parse(&text).map_err(|e| Failure(format!("--strategy: {e}")))?
        }
    };
    let weights = Weights::read(weights_path).map_err(|e| Failure(format!("--weights: {e}")))?;
    let input = input(o, net)?;
    let started = Instant::now();
    let compiled = net
        .compile(&strategy, weights, o.threads)
        .map_err(|e| file(e.to_string()))?;
    let compile_ms = started.elapsed().as_secs_f64() * 1e3;
    let result = compiled.run(&input).map_err(|e| file(e.to_string()))?;
    if o.check {
        check(o, net, &input, &result)?;
    }
    let dims = compiled.output_dims();
    if let Some(runs) = o.bench {
        if let Some(out) = o.out {
            inputs::write_out(out, &nested_value(dims, &result))?;
        }
        let mut out = vec![0f32; result.len()];
        let mut times = Vec::with_capacity(runs.max(1));
        for _ in 0..runs.max(1) {
            let t = Instant::now();
            compiled
                .run_into(&input, &mut out)
                .map_err(|e| file(e.to_string()))?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let units = compiled.units();
        let extra = serde_json::json!({
            "threads": o.threads,
            "layers": net.layers().len(),
            "units": units.len(),
            "compiled_units": units.iter().filter(|u| !u.reused).count(),
            "prepared": units.iter().map(|u| u.prepared).sum::<usize>(),
        });
        return bench_line(times, compile_ms, network_flops(net) as u64, extra);
    }
    inputs::result(path, &nested_value(dims, &result), o.out)
}

/// The input: `--input FILE` (`.npy` or `.json`) or `--random SEED`, of the input's
/// type, as f32s in row-major order.
fn input(o: &RunOptions, net: &Network) -> Result<Vec<f32>, Failure> {
    let param = net.input();
    let dims: Vec<u64> = elevate::network::dims(&param.ty)
        .iter()
        .map(|d| *d as u64)
        .collect();
    let expected = || {
        format!(
            "parameter `{}`: expected {} (a float32 array of shape {})",
            param.name,
            param.ty,
            arrays::shape_text(&dims)
        )
    };
    match (o.inputs.files, o.inputs.random) {
        ([file], None) if file.extension().is_some_and(|e| e == "npy") => {
            let array =
                arrays::read_npy(file).map_err(|e| Failure(format!("{}: {e}", file.display())))?;
            match array.data {
                arrays::Data::F32(data) if array.shape == dims => Ok(data),
                _ => Err(Failure(format!(
                    "{}: input error: {}, found {}",
                    file.display(),
                    expected(),
                    array.describe()
                ))),
            }
        }
        ([file], None) => {
            let text = std::fs::read_to_string(file)
                .map_err(|e| Failure(format!("{}: cannot read it: {e}", file.display())))?;
            let json: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| Failure(format!("{}: not JSON: {e}", file.display())))?;
            let value =
                elevate_rise::io::to_value(&json, &param.ty, &Default::default()).map_err(|e| {
                    Failure(format!(
                        "{}: input error: {}: {e}",
                        file.display(),
                        expected()
                    ))
                })?;
            f32_values(&value).map_err(|e| Failure(format!("{}: {e}", file.display())))
        }
        ([], Some(seed)) => {
            let signature = elevate_rise::io::signature(&net.program().entry().term);
            let values = elevate_rise::io::random_inputs(&signature, &Default::default(), seed)
                .map_err(|e| Failure(format!("{}: {e}", o.path.display())))?;
            let first = values.first().ok_or_else(|| {
                Failure(format!("{}: a network takes an input", o.path.display()))
            })?;
            f32_values(first).map_err(|e| Failure(format!("{}: {e}", o.path.display())))
        }
        (files, _) => Err(Failure(format!(
            "a network takes one input, `{}` (--input FILE or --random SEED); found {} files",
            param.name,
            files.len()
        ))),
    }
}

/// `--check`: the interpreter's result, where it takes at most [`CHECK_SECONDS`];
/// for a larger network, how long it would take, on standard error.
fn check(o: &RunOptions, net: &Network, input: &[f32], result: &[f32]) -> Result<(), Failure> {
    let seconds = net.interpreter_seconds();
    if seconds > CHECK_SECONDS {
        output::eprintln(&format!(
            "check: skipped: the interpreter would take about {} for this network \
             (at most {CHECK_SECONDS:.0} s are spent on a check)",
            human(seconds)
        ));
        return Ok(());
    }
    let weights = Weights::read(o.inputs.weights.unwrap_or(Path::new("")))
        .map_err(|e| Failure(format!("--weights: {e}")))?;
    let expected = net
        .evaluate(input, &weights)
        .map_err(|e| Failure(format!("{}: --check: {e}", o.path.display())))?;
    let close = expected.len() == result.len()
        && expected
            .iter()
            .zip(result)
            .all(|(e, r)| (e - r).abs() <= 1e-4 * e.abs().max(1.0));
    if !close {
        return Err(Failure(format!(
            "{}: --check: the compiled network computes other values than the interpreter",
            o.path.display()
        )));
    }
    output::eprintln("check: same values as the interpreter");
    Ok(())
}

fn human(seconds: f64) -> String {
    match seconds {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.0} minutes", s / 60.0),
        s => format!("{:.1} hours", s / 3600.0),
    }
}

/// The network's floating-point operations (a multiply-add is two).
fn network_flops(net: &Network) -> f64 {
    2.0 * net.multiply_adds()
}
