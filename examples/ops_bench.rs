//! The operator suite (`examples/rise/ops/`) against the machine's roofs and OpenBLAS,
//! in one run, as JSON lines:
//!
//! - the roofs: the FMA peak of one core, one core's copy and triad bandwidth;
//! - every operator at the suite's size, on one thread, with `defaultLowering` alone,
//!   with its library strategy where it has one (`microKernel` for the matrix
//!   products, `convKernel` for the convolutions), and with the best point of a
//!   search of `auto` on one thread (`evolve`, `model+measured` with the model's
//!   best two of each round timed, 300 evaluations, seed 1; the search starts from the
//!   library's schedules, each timed; its starts and its four fastest are then timed
//!   in one session with the library strategy, in turns, each the fastest of seven
//!   medians of five runs, and the point is the fastest, or the best start where that
//!   is within 5%, the noise of a program timed against a copy of itself): its
//!   time, GFLOPS (computing operators, against the FMA peak) or GB/s (moving ones:
//!   the bytes read and written once, against the copy bandwidth), the fraction of
//!   that roof, and the ratio to `defaultLowering` and, for the matrix products, to
//!   OpenBLAS's `sgemm` on its fastest core type (one thread);
//! - the 1024 matmul's library strategy and OpenBLAS on every core as well, with
//!   `vs_one_thread`: the library's program on one thread and on every core timed in
//!   turns (each the fastest of seven medians of five), the second's speed-up;
//! - the peers' lines (`"peer": "openblas"`; `"peer": "tvm"`: Apache TVM's TensorIR
//!   schedules, `benches/peers/tvm_ops.py`, in its own virtual environment, which
//!   `benches/peers/setup` makes; `"peer": "onnxruntime"` and `"pytorch"`: each
//!   operator as an ONNX node and as its `torch.nn.functional` call,
//!   `benches/peers/runtimes_ops.py`, in the networks benchmark's environment, which
//!   `benches/peers/networks/setup` makes; the Python peers run first, on one thread),
//!   with the same roofs, and on each of our lines on one thread the ratio to each
//!   (`vs_tvm`, `vs_onnxruntime`, `vs_pytorch`) and to the fastest peer of the
//!   operator (`vs_best_peer`, with `best_peer` naming it);
//! - the lines are also written to `target/ops_bench/ops_bench.jsonl`, and
//!   `benches/peers/plot_ops.py` draws every operator's fraction of its roof, ours
//!   beside the peers', into `target/ops_bench/ops_roofs.png` and `.svg`.
//!
//! The register tiles of the library strategies are the machine's: 4 rows by 64 lanes
//! where it has AVX-512 (16 accumulators of its 32 registers), 6 rows by 16 lanes with
//! AVX2 (12 of its 16).
//!
//! `cargo run --release --example ops_bench [-- --quick] [--no-search] [--only NAME...]`:
//! `--quick` runs each operator at a quarter of its size in each dimension (the matrix
//! products that are not square at their size, without the 1000 one), without the
//! searches; `--no-search` leaves out the searches of `auto` (most of the run: a
//! measured search takes minutes per operator); `--only` runs the operators whose
//! names start with one of the names given.

#[path = "../benches/support/bridge.rs"]
mod bridge;
#[path = "../benches/support/ops.rs"]
mod ops;
#[path = "../benches/support/peers.rs"]
mod peers;
#[path = "../benches/support/roofs.rs"]
mod roofs;

use bridge::median_ms;
use elevate::bridge::jit::{Call, Compiled, OpenMp};
use elevate::bridge::measure::{Measured, ModelMeasured};
use elevate::rise::search::{Auto, Machine, ModelCost};
use elevate::rise::Value;
use elevate::rise::{registry, Term};
use elevate::strategies::search::{drivers, Search, SearchBudget, Space};
use ops::{compiled, suite};
use roofs::{answered_blas_child, blas_best, copy_gb_per_s, fma_peak_gflops, triad_gb_per_s};
use serde_json::json;
use std::sync::Arc;

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The finalists of a search of `auto` for `term` on one thread, as the versions are
/// compared (`model+measured`: the model, of a machine of one core, ranks each round,
/// its best two are compiled and timed on one thread; the library's schedules, where
/// the search starts, are timed first): the points it started from, then its
/// [`CONFIRMED`] fastest, each program once, as strategy text without the final
/// `defaultLowering`, each with whether it is a start. A search times each candidate
/// a few times on a noisy machine: the finalists are timed again beside the library's
/// strategy ([`in_turns`]), and the point is chosen from those timings.
fn auto_finalists(term: &Term) -> Vec<(String, bool)> {
    let Ok(space) = Space::parse_with_auto("auto", Arc::new(registry()), Auto::host()) else {
        return Vec::new();
    };
    let starts: Vec<String> = space.starts(term).iter().map(|s| s.text()).collect();
    let Ok(measured) = Measured::new(term) else {
        return Vec::new();
    };
    let one_core = Machine {
        cores: 1,
        ..Machine::host()
    };
    let cost = ModelMeasured::new(ModelCost::new(one_core), measured.runs(3).threads(1), 2);
    let report = Search::new(space, drivers::evolve(32), cost)
        .budget(SearchBudget::default().evaluations(300))
        .seed(1)
        .jobs(1)
        .run(term);
    let mut timed: Vec<(bool, f64, u64, String)> = report
        .log
        .iter()
        .filter_map(|c| {
            let start = starts.contains(&c.strategy);
            Some((!start, c.measure?.ms?, c.program_hash, c.strategy.clone()))
        })
        .collect();
    // The starts first, then the fastest: each program once.
    timed.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut seen = std::collections::HashSet::new();
    timed.retain(|c| seen.insert(c.2));
    let starts_timed = timed.iter().filter(|c| !c.0).count();
    timed
        .into_iter()
        .take(starts_timed + CONFIRMED)
        .map(|(found, _, _, text)| {
            let text = text.strip_suffix(" ; defaultLowering").unwrap_or(&text);
            (text.to_string(), !found)
        })
        .collect()
}

/// The point `auto` takes among timed `candidates` (`(time, is a start)`): the
/// fastest, unless it is no start and the fastest start is within [`NOISE`] of it.
fn chosen(candidates: &[(f64, bool)]) -> Option<usize> {
    let fastest = |starts_only: bool| {
        (0..candidates.len())
            .filter(|&i| !starts_only || candidates[i].1)
            .min_by(|&a, &b| candidates[a].0.total_cmp(&candidates[b].0))
    };
    match (fastest(false), fastest(true)) {
        (Some(found), Some(start)) if candidates[found].0 > candidates[start].0 * (1.0 - NOISE) => {
            Some(start)
        }
        (found, _) => found,
    }
}

/// A version's timing: its name, strategy, threads, and time or why it has none.
type Run = (&'static str, Option<String>, usize, Result<f64, String>);

/// The program `strategy` makes of `term`, by its fingerprint (`None` where it fails).
fn program_of(term: &Term, strategy: &str) -> Option<u64> {
    let strategy = registry().parse(strategy).ok()?;
    let mut cx = elevate::core::Context::default();
    let program = strategy.apply(term, &mut cx).ok()?;
    Some(elevate::rise::search::fingerprint(&program))
}

/// How much faster than the best start a point must be to be taken instead: the
/// noise of timings in turns on this kind of machine (the same program, compiled
/// twice and timed in turns on inputs of its own, differed by up to this much: where
/// its buffers lie matters as much).
const NOISE: f64 = 0.05;

/// How many of a search's fastest candidates are timed again, besides its starts.
const CONFIRMED: usize = 4;

/// The time of each of `functions` on `inputs`, timed in turns (the median of 5 runs
/// of each, seven turns; the fastest turn of each), so that a slow moment of the
/// machine falls on all of them alike.
fn in_turns(functions: &[&Compiled], inputs: &[Value]) -> Vec<f64> {
    let mut calls: Vec<Call<'_>> = functions
        .iter()
        .map(|f| f.prepare(inputs).expect("the inputs fit"))
        .collect();
    let mut best = vec![f64::INFINITY; calls.len()];
    for _ in 0..7 {
        for (call, best) in calls.iter_mut().zip(&mut best) {
            *best = best.min(median_ms(|| call.invoke().expect("it runs"), 5));
        }
    }
    best
}

fn main() {
    // Its measured candidates' workers are this program, started again as one.
    elevate::bridge::measure::serve_if_asked();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if answered_blas_child(&args) {
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    let search = !quick && !args.iter().any(|a| a == "--no-search");
    let only: Vec<&String> = args
        .iter()
        .skip_while(|a| *a != "--only")
        .skip(1)
        .take_while(|a| !a.starts_with("--"))
        .collect();
    let mut lines = Lines::default();
    let fma = fma_peak_gflops();
    let (copy, triad) = (copy_gb_per_s(), triad_gb_per_s());
    let lanes = Machine::host().lanes;
    lines.emit(
        json!({"bench": "roofs", "cpu": cpu_name(), "f32_lanes": lanes,
        "fma_gflops_per_core": fma.map(round),
        "copy_gb_per_s_one_core": round(copy), "triad_gb_per_s_one_core": round(triad)}),
    );
    // The peers first, so that they run on the machine as it is at the start.
    let tvm = peers::tvm_peer(quick);
    let runtimes = peers::runtimes_peer(quick);
    let all = std::thread::available_parallelism().map_or(1, |c| c.get());
    // The OpenMP runtime is there once a compiled function has loaded it.
    let set_threads = |t: usize| {
        if let Some(omp) = OpenMp::get() {
            omp.set_threads(t);
        }
    };
    for (i, op) in suite(if quick { 4 } else { 1 }, lanes).iter().enumerate() {
        if !only.is_empty() && !only.iter().any(|name| op.name.starts_with(name.as_str())) {
            continue;
        }
        let term = op.term();
        let inputs = Measured::new(&term).expect("inputs").inputs().to_vec();
        let blas = op.gemm.and_then(|(m, n, k)| blas_best(m, n, k, 1));
        let tvm_ms = tvm.get(&op.name).and_then(|line| line.get("ms")?.as_f64());
        let runtime = |peer: &str| runtimes.get(&(op.name.clone(), peer.to_string()));
        let runtime_ms = |peer: &str| runtime(peer).and_then(|line| line.get("ms")?.as_f64());
        let (ort_ms, torch_ms) = (runtime_ms("onnxruntime"), runtime_ms("pytorch"));
        // The fastest peer of the operator on one thread.
        let best_peer = [
            ("openblas", blas.as_ref().map(|b| b.0)),
            ("tvm", tvm_ms),
            ("onnxruntime", ort_ms),
            ("pytorch", torch_ms),
        ]
        .into_iter()
        .filter_map(|(peer, ms)| Some((peer, ms?)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
        // `defaultLowering` alone; then the library's strategy and `auto`'s finalists
        // at one thread, in turns (the library's own program once), `auto`'s point
        // chosen from those timings; and the first operator's library strategy on
        // every core.
        let mut runs: Vec<Run> = Vec::new();
        set_threads(1);
        let default_ms = match compiled(&term, None) {
            Err(e) => {
                runs.push(("defaultLowering", None, 1, Err(e)));
                None
            }
            Ok(f) => {
                let mut call = f.prepare(&inputs).expect("the inputs fit");
                // A slow version (a naive 1024 matmul takes seconds) runs fewer times.
                let once = std::time::Instant::now();
                call.invoke().expect("it runs");
                let slow = once.elapsed().as_secs_f64() > 0.5;
                let n = if quick || slow { 3 } else { 10 };
                let ms = median_ms(|| call.invoke().expect("it runs"), n);
                runs.push(("defaultLowering", None, 1, Ok(ms)));
                Some(ms)
            }
        };
        // (strategy, is a start of `auto`, is the library's), compiled.
        let mut contenders: Vec<(String, bool, bool, Compiled)> = Vec::new();
        if let Some(library) = &op.library {
            match compiled(&term, Some(library)) {
                Ok(f) => contenders.push((library.clone(), true, true, f)),
                Err(e) => runs.push(("library", Some(library.clone()), 1, Err(e))),
            }
        }
        if search {
            let library = op.library.as_ref().and_then(|l| program_of(&term, l));
            for (point, start) in auto_finalists(&term) {
                if library.is_some() && program_of(&term, &point) == library {
                    continue;
                }
                if let Ok(f) = compiled(&term, Some(&point)) {
                    contenders.push((point, start, false, f));
                }
            }
        }
        let functions: Vec<&Compiled> = contenders.iter().map(|c| &c.3).collect();
        let ms = in_turns(&functions, &inputs);
        if let Some(at) = contenders.iter().position(|c| c.2) {
            runs.push(("library", Some(contenders[at].0.clone()), 1, Ok(ms[at])));
        }
        let mut auto_is_library = false;
        if search {
            let auto_candidates: Vec<(f64, bool)> = contenders
                .iter()
                .zip(&ms)
                .map(|(c, ms)| (*ms, c.1))
                .collect();
            match chosen(&auto_candidates) {
                Some(at) => {
                    auto_is_library = contenders[at].2;
                    runs.push(("auto", Some(contenders[at].0.clone()), 1, Ok(ms[at])));
                }
                None => runs.push(("auto", None, 1, Err("no point found".into()))),
            }
        }
        // How the library's program scales: one thread and every core in turns, as
        // the machine's load changes from second to second.
        let mut scaling = None;
        if i == 0 && all > 1 {
            if let Some((strategy, _, _, f)) = contenders.iter().find(|c| c.2) {
                let mut call = f.prepare(&inputs).expect("the inputs fit");
                let (mut one, mut every) = (f64::INFINITY, f64::INFINITY);
                for _ in 0..7 {
                    set_threads(1);
                    one = one.min(median_ms(|| call.invoke().expect("it runs"), 5));
                    set_threads(all);
                    every = every.min(median_ms(|| call.invoke().expect("it runs"), 5));
                }
                scaling = Some(one / every);
                runs.push(("library", Some(strategy.clone()), all, Ok(every)));
            }
        }
        for (version, strategy, t, ms) in runs {
            let line = match ms {
                Err(e) => {
                    json!({"op": op.name, "version": version, "strategy": strategy, "error": e})
                }
                Ok(ms) => {
                    let (rate, roof, unit) = op.rate(ms, t, fma, copy);
                    let t_blas = if t == 1 {
                        blas.as_ref().map(|b| b.0)
                    } else {
                        op.gemm
                            .and_then(|(m, n, k)| blas_best(m, n, k, t))
                            .map(|b| b.0)
                    };
                    // A peer's ratio to this line, on one thread.
                    let ratio = |peer: Option<f64>| peer.filter(|_| t == 1).map(|p| round(p / ms));
                    let best = best_peer.filter(|_| t == 1);
                    json!({
                        "op": op.name, "version": version, "threads": t,
                        "strategy": strategy, "ms": round(ms), unit: round(rate),
                        "of_roof": roof.map(|r| round(rate / r)),
                        "vs_default": default_ms.map(|d| round(d / ms)),
                        "vs_openblas": t_blas.map(|b| round(b / ms)),
                        "openblas_core_type": blas.as_ref().map(|b| b.1.clone()),
                        "vs_tvm": ratio(tvm_ms),
                        "vs_onnxruntime": ratio(ort_ms),
                        "vs_pytorch": ratio(torch_ms),
                        "vs_best_peer": best.map(|(_, p)| round(p / ms)),
                        "best_peer": best.map(|(peer, _)| peer),
                    })
                }
            };
            let mut line = line;
            if version == "auto" && auto_is_library {
                line["same_program_as_library"] = json!(true);
            }
            if let (Some(x), true) = (scaling, t > 1) {
                line["vs_one_thread"] = json!(round(x));
            }
            lines.emit(line);
        }
        // The peers' own lines, against the same roofs.
        if let Some((ms, core_type)) = &blas {
            let (rate, roof, unit) = op.rate(*ms, 1, fma, copy);
            lines.emit(json!({"op": op.name, "peer": "openblas", "threads": 1,
                "core_type": core_type, "ms": round(*ms), unit: round(rate),
                "of_roof": roof.map(|r| round(rate / r))}));
        }
        let python_peers = [
            tvm.get(&op.name),
            runtime("onnxruntime"),
            runtime("pytorch"),
        ];
        for line in python_peers.into_iter().flatten() {
            let mut line = line.clone();
            if let Some(ms) = line.get("ms").and_then(|ms| ms.as_f64()) {
                let (rate, roof, unit) = op.rate(ms, 1, fma, copy);
                line[unit] = json!(round(rate));
                line["of_roof"] = json!(roof.map(|r| round(rate / r)));
            }
            lines.emit(line);
        }
        set_threads(all);
    }
    lines.save_and_plot();
}

/// The lines printed, kept for the JSON file and the plot.
#[derive(Default)]
struct Lines(Vec<serde_json::Value>);

impl Lines {
    /// Prints `line` and keeps it.
    fn emit(&mut self, line: serde_json::Value) {
        println!("{line}");
        self.0.push(line);
    }

    /// Writes the lines to `target/ops_bench/ops_bench.jsonl` and draws the plot of
    /// every operator's fraction of its roof beside it (where the peers' environment,
    /// which has Matplotlib, could be made).
    fn save_and_plot(&self) {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let out = root.join("target/ops_bench");
        let file = out.join("ops_bench.jsonl");
        let text: String = self.0.iter().map(|l| format!("{l}\n")).collect();
        if let Err(e) = std::fs::create_dir_all(&out).and_then(|_| std::fs::write(&file, text)) {
            eprintln!("warning: {}: {e}", file.display());
            return;
        }
        let Some(python) = peers::peers_python() else {
            return;
        };
        let plotted = std::process::Command::new(python)
            .arg(root.join("benches/peers/plot_ops.py"))
            .arg(&file)
            .arg("--out")
            .arg(&out)
            .status();
        match plotted {
            Ok(s) if s.success() => eprintln!("plot: {}/ops_roofs.png and .svg", out.display()),
            other => eprintln!("warning: no plot ({other:?})"),
        }
    }
}

/// The processor's name, as the kernel reports it.
fn cpu_name() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("model name"))?;
    Some(line.split_once(':')?.1.trim().to_string())
}
