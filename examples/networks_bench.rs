//! Whole networks compiled by `elevate` against ONNX Runtime and PyTorch eager, in one
//! run, as JSON lines (on stdout, and into `target/networks_bench/networks_bench.jsonl`):
//!
//! - the machine: `{"bench": "networks", "cpu", "cores", "load_1min", "threads"}`;
//! - the peers first, so that they run on the machine as it is at the start:
//!   `benches/peers/networks/setup` makes their virtual environment once
//!   (`target/networks-venv`: torch, torchvision, onnx, onnxruntime),
//!   `export_models.py` exports torchvision's ResNet-18, ResNet-50, VGG-11 and
//!   MobileNetV2 with seeded random weights into `target/models/` (with a seeded input
//!   and ONNX Runtime's output on it, the reference), and `peers.py` times ONNX Runtime
//!   and PyTorch on that input at each thread count: one line per (network, peer,
//!   threads), `{"network", "peer", "threads", "ms", "min_ms", "max_ms", "runs",
//!   "gflops", "correct", ...}`. Where their environment cannot be made, the run says
//!   so and goes on (without models there is nothing of ours to run either: each
//!   network's line says why);
//! - ours: each network imported (`elevate::onnx`), compiled with the library's
//!   `network` strategy at each thread count and run on the same input, its output
//!   checked against ONNX Runtime's (top-1 equal, within 1e-3 of it relative to its
//!   largest magnitude: `"correct"`), timed as the peers are (a warm-up, then the
//!   median, min and max of up to `--runs` runs, fewer past 15 s, 3 at least): one line
//!   per (network, version, threads), `{"network", "version", "strategy", "threads",
//!   "ms", "min_ms", "max_ms", "runs", "gflops", "vs_onnxruntime", "vs_pytorch",
//!   "compile_s", "import_s", "correct", "top1", "max_rel_err", "cpu_per_wall",
//!   "units", "layers"}`; `vs_*` is the peer's time over ours at the same thread count
//!   (above 1: we are faster); `compile_s` runs from the written files (program and
//!   weights read, planned, compiled, the weights bound) to the callable;
//!   `cpu_per_wall` is the process's CPU time over the wall time of the timed runs
//!   (about 1 on one thread, more where the threads took effect). Before them, a line
//!   with the import's summary (`"import"`) beside the export's FLOPs;
//! - then `benches/peers/networks/plot_networks.py` draws each network's time, ours
//!   beside the peers', per thread count, into `target/networks_bench/networks.png`
//!   and `.svg` (with the repository's `.venv`, which has Matplotlib); with
//!   `--profile`, `plot_layers.py` draws each layer's time, ours (each unit's median)
//!   beside ONNX Runtime's own profile (`peers.py --profile`), into `layers.png`.
//!
//! GFLOPS are of the model's FLOPs as `export_models.py` counts them on the ONNX graph
//! (2 x the multiply-adds of every Conv, Gemm and MatMul), the same for everyone.
//!
//! `cargo run --release --example networks_bench [-- --quick] [--only NAME...]
//! [--threads LIST] [--runs N] [--no-peers] [--profile] [--strategy S]`: `--quick` runs ResNet-18 only, with
//! fewer runs; `--only` the networks named (resnet18, resnet50, vgg11, mobilenet_v2);
//! `--threads` the thread counts, comma-separated (default: 1 and every core);
//! `--no-peers` leaves the peers out (the models must have been exported); `--profile`
//! adds a line per compiled unit: its layers, strategy, median milliseconds and GFLOPS;
//! `--strategy` compiles ours with a network strategy other than the library's `network`;
//! `--search SECONDS` also searches each network layer by layer first
//! (`elevate::network_search`: `auto`, measured on the first thread count, the
//! directory `target/networks_bench/NAME/search/`), and times the strategy found beside
//! the library's at every thread count: its lines' `"version"` is `"search"`, with
//! the search's `"search_s"`, `"searched_layers"` and `"layers_speedup"`.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The networks, in the order they run.
const NETWORKS: [&str; 4] = ["resnet18", "resnet50", "vgg11", "mobilenet_v2"];
/// The peers, as `peers.py` names them.
const PEERS: [&str; 2] = ["onnxruntime", "pytorch"];
/// Outputs agree when within this much of the reference's largest magnitude.
const TOLERANCE: f64 = 1e-3;
/// No more timed runs once this many seconds have passed (3 runs at least).
const SECONDS: f64 = 15.0;
/// The library's strategy for a whole network.
const STRATEGY: &str = "network";

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn scripts() -> PathBuf {
    root().join("benches/peers/networks")
}

/// The folder of the exported models.
fn models() -> PathBuf {
    root().join("target/models")
}

/// The benchmark's settings, from its arguments.
struct Settings {
    networks: Vec<String>,
    threads: Vec<usize>,
    runs: usize,
    peers: bool,
    profile: bool,
    strategy: String,
    /// Seconds of a network search per network, if any.
    search: Option<f64>,
}

impl Settings {
    fn parse(args: &[String]) -> Result<Settings, String> {
        let quick = args.iter().any(|a| a == "--quick");
        let all = std::thread::available_parallelism().map_or(1, |c| c.get());
        let values = |flag: &str| -> Vec<String> {
            args.iter()
                .skip_while(|a| *a != flag)
                .skip(1)
                .take_while(|a| !a.starts_with("--"))
                .cloned()
                .collect()
        };
        let only = values("--only");
        for name in &only {
            if !NETWORKS.contains(&name.as_str()) {
                return Err(format!(
                    "unknown network `{name}` (the networks: {})",
                    NETWORKS.join(", ")
                ));
            }
        }
        let networks: Vec<String> = if !only.is_empty() {
            only
        } else if quick {
            vec!["resnet18".to_string()]
        } else {
            NETWORKS.iter().map(|n| n.to_string()).collect()
        };
        let listed = values("--threads").join(",");
        let mut threads: Vec<usize> = Vec::new();
        for t in listed.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            match t.parse::<usize>() {
                Ok(n) if n > 0 => threads.push(n),
                _ => return Err(format!("--threads: `{t}` is not a positive count")),
            }
        }
        if threads.is_empty() {
            threads = vec![1, all];
        }
        threads.dedup();
        let runs = match values("--runs").first() {
            Some(n) => n
                .parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("--runs: `{n}` is not a positive count"))?,
            None if quick => 5,
            None => 20,
        };
        let peers = !args.iter().any(|a| a == "--no-peers");
        let profile = args.iter().any(|a| a == "--profile");
        let strategy = values("--strategy").join(" ");
        let strategy = if strategy.is_empty() {
            STRATEGY.to_string()
        } else {
            strategy
        };
        let search =
            match values("--search").first() {
                Some(t) => Some(t.parse::<f64>().ok().filter(|&t| t > 0.0).ok_or_else(|| {
                    format!("--search: `{t}` is not a positive number of seconds")
                })?),
                None => None,
            };
        Ok(Settings {
            networks,
            threads,
            runs,
            peers,
            profile,
            strategy,
            search,
        })
    }
}

/// What `what` printed on stdout where it ran and exited 0 (its stderr shown as it
/// goes), else why not.
fn stdout_of(what: &str, command: &mut Command) -> Result<String, String> {
    let output = command
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("{what} did not start: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!("{what} failed ({})", output.status))
    }
}

/// The peers' python (`setup` makes their environment once), or why not.
fn peers_python() -> Result<String, String> {
    let printed = stdout_of(
        "benches/peers/networks/setup",
        Command::new("bash").arg(scripts().join("setup")),
    )?;
    let python = printed.lines().last().unwrap_or("").trim().to_string();
    if python.is_empty() {
        return Err("benches/peers/networks/setup printed no python".to_string());
    }
    Ok(python)
}

/// The peers' lines by (network, peer, threads).
type Peers = HashMap<(String, String, usize), Value>;

/// The peers' lines, after exporting the models; or why there are none.
fn run_peers(settings: &Settings) -> Result<Peers, String> {
    let python = peers_python()?;
    stdout_of(
        "export_models.py",
        Command::new(&python)
            .arg(scripts().join("export_models.py"))
            .arg("--only")
            .args(&settings.networks),
    )?;
    let threads: Vec<String> = settings.threads.iter().map(|t| t.to_string()).collect();
    let printed = stdout_of(
        "peers.py",
        Command::new(&python)
            .arg(scripts().join("peers.py"))
            .arg("--only")
            .args(&settings.networks)
            .arg("--threads")
            .args(&threads)
            .arg("--runs")
            .arg(settings.runs.to_string())
            .arg("--seconds")
            .arg(SECONDS.to_string())
            .args(settings.profile.then_some("--profile")),
    )?;
    Ok(printed
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|line| {
            // A peer's profile (`--profile`) is kept as the peer `NAME/profile`.
            let peer = line.get("peer")?.as_str()?;
            let peer = match line.get("profile") {
                Some(_) => format!("{peer}/profile"),
                None => peer.to_string(),
            };
            let key = (
                line.get("network")?.as_str()?.to_string(),
                peer,
                line.get("threads")?.as_u64()? as usize,
            );
            Some((key, line))
        })
        .collect())
}

/// A `.npy` file of `f32`s, flattened.
fn read_npy(path: &Path) -> Result<Vec<f32>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    npyz::NpyFile::new(&bytes[..])
        .and_then(|npy| npy.into_vec::<f32>())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// How an output compares with the reference: (correct, top-1 class, max|y - ref| /
/// max|ref|).
fn check(y: &[f32], reference: &[f32]) -> (bool, Option<usize>, Option<f64>) {
    if y.len() != reference.len() || y.iter().any(|v| !v.is_finite()) {
        return (false, None, None);
    }
    let argmax = |v: &[f32]| {
        (0..v.len())
            .max_by(|&a, &b| v[a].total_cmp(&v[b]))
            .unwrap_or(0)
    };
    let scale = reference
        .iter()
        .fold(0.0f64, |m, r| m.max(f64::from(r.abs())))
        .max(1e-30);
    let err = y
        .iter()
        .zip(reference)
        .fold(0.0f64, |m, (a, b)| m.max(f64::from((a - b).abs())))
        / scale;
    let top1 = argmax(y);
    (
        top1 == argmax(reference) && err <= TOLERANCE,
        Some(top1),
        Some(err),
    )
}

/// The CPU seconds this process has used (user and system, every thread), from
/// `/proc/self/stat` (in clock ticks of 1/100 s).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command's name (which is in parentheses).
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<f64>().ok();
    Some((ticks(11)? + ticks(12)?) / 100.0)
}

/// What [`timed`] measured.
struct Timed {
    /// Each run's milliseconds, sorted.
    times: Vec<f64>,
    /// The process's CPU time over the wall time of the timed runs: about 1 on one
    /// thread, more where the threads took effect.
    cpu_per_wall: Option<f64>,
    /// The last output.
    out: Vec<f32>,
}

/// `run` warmed up once, then timed up to `runs` times (at least 3, no more once
/// [`SECONDS`] have passed).
fn timed<E>(mut run: impl FnMut() -> Result<Vec<f32>, E>, runs: usize) -> Result<Timed, E> {
    let mut out = run()?;
    let (start, cpu) = (Instant::now(), cpu_seconds());
    let mut times = Vec::new();
    while times.len() < runs.max(1) {
        let t = Instant::now();
        out = run()?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
        if times.len() >= 3 && start.elapsed().as_secs_f64() > SECONDS {
            break;
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let cpu_per_wall = match (cpu, cpu_seconds()) {
        (Some(a), Some(b)) if wall > 0.0 => Some((b - a) / wall),
        _ => None,
    };
    times.sort_by(f64::total_cmp);
    Ok(Timed {
        times,
        cpu_per_wall,
        out,
    })
}

/// The median of sorted times.
fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Ours: the ONNX import and the network compiler.
mod ours {
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    /// A network imported: its RISE program and weights (written, and in memory), and
    /// the seconds it took.
    pub struct Imported {
        pub net: elevate::onnx::Imported,
        pub rise: PathBuf,
        pub weights: PathBuf,
        pub seconds: f64,
    }

    /// Imports the ONNX model at `onnx` (batch 1) and writes it into `dir`.
    pub fn import(onnx: &Path, dir: &Path) -> Result<Imported, String> {
        let started = Instant::now();
        let options = elevate::onnx::ImportOptions { batch: Some(1) };
        let net = elevate::onnx::import(onnx, &options).map_err(|e| e.to_string())?;
        let (rise, weights) = net.write(dir).map_err(|e| e.to_string())?;
        Ok(Imported {
            net,
            rise,
            weights,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// `imported` searched layer by layer for `seconds` (`auto`, measured on
    /// `threads` threads, its directory `dir`): the network's strategy found, and the
    /// report's fields for the lines.
    pub fn search(
        imported: &Imported,
        dir: &Path,
        seconds: f64,
        threads: usize,
    ) -> Result<(String, serde_json::Value), String> {
        use elevate::network_search::{search, Options};
        use elevate::strategies::search::SearchBudget;
        let started = Instant::now();
        let network = elevate::network::Network::load(&imported.rise)?;
        let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
        let said = |line: &str| eprintln!("networks_bench: search: {line}");
        let report = search(
            &network,
            elevate::rise::search::library::host_f32_lanes(),
            &Options {
                space: "auto",
                driver: None,
                cost: Some("measured"),
                seed: Some(0),
                budget: SearchBudget::default().time(std::time::Duration::from_secs_f64(seconds)),
                jobs,
                measuring: elevate::search_costs::Measuring {
                    threads: Some(threads),
                    ..Default::default()
                },
                out: Some(dir),
                resume: false,
                stop: Default::default(),
                on_round: &said,
            },
        )?;
        let json = report.to_json();
        let searched = report.tasks.iter().filter(|t| t.improved()).count();
        Ok((
            report.strategy.to_string(),
            serde_json::json!({
                "search_s": (started.elapsed().as_secs_f64() * 1e3).round() / 1e3,
                "search_threads": threads,
                "searched_layers": searched,
                "tasks": report.tasks.len(),
                "layers_speedup": json["layers_speedup"],
            }),
        ))
    }

    /// A network compiled at a thread count.
    pub struct Compiled {
        pub net: elevate::network::Network,
        pub network: elevate::network::CompiledNetwork,
        pub compile_seconds: f64,
    }

    impl Compiled {
        pub fn run(&self, input: &[f32]) -> Result<Vec<f32>, String> {
            self.network.run(input).map_err(|e| e.to_string())
        }
    }

    /// Compiles `imported` (its program and weights as written) with `strategy` for
    /// `threads` threads: from the files to a callable, all of it in the seconds.
    pub fn compile(
        imported: &Imported,
        strategy: &str,
        threads: usize,
    ) -> Result<Compiled, String> {
        let started = Instant::now();
        let strategy =
            elevate::network::NetworkStrategy::parse(strategy).map_err(|e| e.to_string())?;
        let network = elevate::network::Network::load(&imported.rise)?;
        let weights = elevate::onnx::Weights::read(&imported.weights).map_err(|e| e.to_string())?;
        let compiled = network
            .compile(&strategy, weights, Some(threads))
            .map_err(|e| e.to_string())?;
        Ok(Compiled {
            net: network,
            network: compiled,
            compile_seconds: started.elapsed().as_secs_f64(),
        })
    }
}

/// Our lines for `network`: one per thread count, a time or why not.
fn run_ours(network: &str, settings: &Settings, flops: Option<f64>, peers: &Peers) -> Vec<Value> {
    let base = models().join(network);
    let line = |threads: usize, fields: Value| {
        let mut line = json!({"network": network, "version": STRATEGY, "strategy": settings.strategy,
            "threads": threads});
        if let (Value::Object(line), Value::Object(fields)) = (&mut line, fields) {
            line.extend(fields);
        }
        line
    };
    let failed = |why: String| -> Vec<Value> {
        settings
            .threads
            .iter()
            .map(|&t| line(t, json!({"error": why})))
            .collect()
    };
    let onnx = base.with_extension("onnx");
    if !onnx.exists() {
        return failed(format!(
            "no model {} (export_models.py makes it)",
            onnx.display()
        ));
    }
    let (input, reference) = match (
        read_npy(&models().join("input.npy")),
        read_npy(&base.with_extension("ort.npy")),
    ) {
        (Ok(i), Ok(r)) => (i, r),
        (Err(e), _) | (_, Err(e)) => return failed(e),
    };
    let dir = root().join("target/networks_bench").join(network);
    let imported = match std::fs::create_dir_all(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))
        .and_then(|_| ours::import(&onnx, &dir))
    {
        Ok(imported) => imported,
        Err(e) => return failed(format!("import: {e}")),
    };
    // What the import made of it (its FLOPs beside the export's count).
    let mut lines = vec![json!({"network": network, "import": imported.net.summary(),
        "import_s": round(imported.seconds), "export_flops": flops})];
    let mut versions = vec![(STRATEGY, settings.strategy.clone(), json!({}))];
    if let Some(seconds) = settings.search {
        let threads = settings.threads[0];
        match ours::search(&imported, &dir.join("search"), seconds, threads) {
            Ok((strategy, report)) => versions.push(("search", strategy, report)),
            Err(e) => lines.push(json!({"network": network, "version": "search",
                "error": format!("search: {e}")})),
        }
    }
    let given = Given {
        imported: &imported,
        input: &input,
        reference: &reference,
        flops,
    };
    for (version, strategy, extra) in &versions {
        lines.extend(run_version(
            network,
            settings,
            peers,
            &given,
            (version, strategy, extra),
        ));
    }
    lines
}

/// A network as imported, its input and ONNX Runtime's output on it, its FLOPs.
struct Given<'a> {
    imported: &'a ours::Imported,
    input: &'a [f32],
    reference: &'a [f32],
    flops: Option<f64>,
}

/// Our lines for one version of a network (`network`, or the strategy a search
/// found, with `extra` fields): one per thread count.
fn run_version(
    network: &str,
    settings: &Settings,
    peers: &Peers,
    given: &Given<'_>,
    (version, strategy, extra): (&str, &str, &Value),
) -> Vec<Value> {
    let Given {
        imported,
        input,
        reference,
        flops,
    } = *given;
    let line = |threads: usize, fields: Value| {
        let mut line = json!({"network": network, "version": version, "strategy": strategy,
            "threads": threads});
        if let (Value::Object(line), Value::Object(fields)) = (&mut line, fields) {
            line.extend(fields);
        }
        if let (Value::Object(line), Value::Object(extra)) = (&mut line, extra) {
            line.extend(extra.clone());
        }
        line
    };
    let mut lines = Vec::new();
    for &t in &settings.threads {
        let compiled = match ours::compile(imported, strategy, t) {
            Ok(c) => c,
            Err(e) => {
                lines.push(line(t, json!({"error": format!("compile: {e}")})));
                continue;
            }
        };
        let Timed {
            times,
            cpu_per_wall,
            out: y,
        } = match timed(|| compiled.run(input), settings.runs) {
            Ok(timed) => timed,
            Err(e) => {
                lines.push(line(
                    t,
                    json!({"error": format!("run: {e}"),
                    "compile_s": round(compiled.compile_seconds)}),
                ));
                continue;
            }
        };
        let ms = median(&times);
        let (correct, top1, err) = check(&y, reference);
        let vs = |peer: &str| {
            let theirs = peers.get(&(network.to_string(), peer.to_string(), t))?;
            Some(round(theirs.get("ms")?.as_f64()? / ms))
        };
        lines.push(line(
            t,
            json!({
                "ms": round(ms), "min_ms": round(times[0]),
                "max_ms": round(times[times.len() - 1]), "runs": times.len(),
                "gflops": flops.map(|f| round(f / (ms * 1e6))),
                "vs_onnxruntime": vs("onnxruntime"), "vs_pytorch": vs("pytorch"),
                "compile_s": round(compiled.compile_seconds),
                "import_s": round(imported.seconds),
                "layers": imported.net.layers.len(),
                "cpu_per_wall": cpu_per_wall.map(round),
                "units": compiled.network.units().len(),
                "library_compile_s": round(compiled.network.compile_seconds()),
                "correct": correct, "top1": top1, "max_rel_err": err,
            }),
        ));
        if settings.profile {
            let nodes: Vec<&str> = imported
                .net
                .layers
                .iter()
                .map(|l| l.node.as_str())
                .collect();
            lines.extend(profile(network, t, &compiled, &nodes, input, settings.runs));
        }
    }
    lines
}

/// With `--profile`: a line per unit of the compiled network, `{"network", "threads",
/// "unit", "layers", "defs", "nodes" (the ONNX nodes of its layers), "strategy", "ms",
/// "gflops"}` (the unit's median over
/// `runs` runs of the whole network; GFLOPS of its layers' multiply-adds).
fn profile(
    network: &str,
    threads: usize,
    compiled: &ours::Compiled,
    nodes: &[&str],
    input: &[f32],
    runs: usize,
) -> Vec<Value> {
    let times = match compiled.network.profile(input, runs) {
        Ok(times) => times,
        Err(e) => {
            return vec![json!({"network": network, "threads": threads,
            "error": format!("profile: {e}")})]
        }
    };
    compiled
        .network
        .units()
        .iter()
        .zip(times)
        .enumerate()
        .map(|(i, (unit, ms))| {
            let macs: f64 = unit
                .layers
                .iter()
                .map(|&l| compiled.net.layer_multiply_adds(l))
                .sum();
            let onnx: Vec<&str> = unit
                .layers
                .iter()
                .filter_map(|&l| nodes.get(l).copied())
                .collect();
            json!({"network": network, "threads": threads, "unit": i,
                "layers": unit.layers, "defs": unit.defs, "nodes": onnx, "strategy": unit.strategy,
                "ms": round(ms), "gflops": round(2.0 * macs / (ms * 1e6))})
        })
        .collect()
}

/// The model's FLOPs, as `export_models.py` counted them.
fn flops_of(network: &str) -> Option<f64> {
    let text = std::fs::read_to_string(models().join(format!("{network}.json"))).ok()?;
    serde_json::from_str::<Value>(&text)
        .ok()?
        .get("flops")?
        .as_f64()
}

fn main() {
    // The measured search's workers are this program, started again as one.
    elevate::bridge::measure::serve_if_asked();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let settings = match Settings::parse(&args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("networks_bench: {e}");
            std::process::exit(2);
        }
    };
    let mut lines = Lines::default();
    lines.emit(json!({"bench": "networks", "cpu": cpu_name(),
        "cores": std::thread::available_parallelism().map_or(1, |c| c.get()),
        "load_1min": load_1min(), "threads": settings.threads,
        "networks": settings.networks, "strategy": settings.strategy}));
    let peers = if settings.peers {
        run_peers(&settings).unwrap_or_else(|e| {
            eprintln!("warning: no peers: {e}");
            HashMap::new()
        })
    } else {
        HashMap::new()
    };
    for network in &settings.networks {
        let flops = flops_of(network);
        for line in run_ours(network, &settings, flops, &peers) {
            lines.emit(line);
        }
        for &t in &settings.threads {
            for peer in PEERS
                .iter()
                .flat_map(|p| [p.to_string(), format!("{p}/profile")])
            {
                if let Some(line) = peers.get(&(network.clone(), peer, t)) {
                    lines.emit(line.clone());
                }
            }
        }
    }
    lines.save_and_plot();
}

/// The lines printed, each also appended to the JSON file as it comes (a run stopped
/// midway keeps what it measured), kept for the plot.
#[derive(Default)]
struct Lines {
    lines: Vec<Value>,
    file: Option<std::fs::File>,
}

impl Lines {
    /// `target/networks_bench/networks_bench.jsonl`.
    fn path() -> PathBuf {
        root().join("target/networks_bench/networks_bench.jsonl")
    }

    /// Prints `line`, appends it to the file and keeps it.
    fn emit(&mut self, line: Value) {
        use std::io::Write;
        println!("{line}");
        if self.file.is_none() && self.lines.is_empty() {
            let path = Self::path();
            let made = path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|_| std::fs::File::create(&path));
            match made {
                Ok(f) => self.file = Some(f),
                Err(e) => eprintln!("warning: {}: {e}", path.display()),
            }
        }
        if let Some(f) = &mut self.file {
            if let Err(e) = writeln!(f, "{line}").and_then(|_| f.flush()) {
                eprintln!("warning: {}: {e}", Self::path().display());
                self.file = None;
            }
        }
        self.lines.push(line);
    }

    /// Draws the plot beside the file (with a python that has Matplotlib: the
    /// repository's `.venv`).
    fn save_and_plot(&self) {
        let file = Self::path();
        if !file.exists() {
            return;
        }
        let out = root().join("target/networks_bench");
        let Some(python) = plotting_python() else {
            eprintln!("warning: no plot: no python with Matplotlib (the repository's .venv)");
            return;
        };
        // Each network's time, and with `--profile` each layer's beside ONNX Runtime's.
        let profiled = self.lines.iter().any(|l| l.get("profile").is_some());
        for (script, picture) in [
            ("plot_networks.py", "networks"),
            ("plot_layers.py", "layers"),
        ] {
            if picture == "layers" && !profiled {
                continue;
            }
            let plotted = Command::new(&python)
                .arg(scripts().join(script))
                .arg(&file)
                .stdout(Stdio::null())
                .status();
            match plotted {
                Ok(s) if s.success() => {
                    eprintln!("plot: {}/{picture}.png and .svg", out.display())
                }
                other => eprintln!("warning: no plot of {picture} ({other:?})"),
            }
        }
    }
}

/// A python with Matplotlib: the repository's `.venv`, else the peers' TVM one.
fn plotting_python() -> Option<PathBuf> {
    [".venv/bin/python", "benches/peers/.venv/bin/python"]
        .iter()
        .map(|p| root().join(p))
        .find(|p| {
            Command::new(p)
                .args(["-c", "import matplotlib"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
}

/// The processor's name, as the kernel reports it.
fn cpu_name() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("model name"))?;
    Some(line.split_once(':')?.1.trim().to_string())
}

/// The machine's load over the last minute: other work running beside the benchmark.
fn load_1min() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}
