//! The `elevate` command line: a thin layer over the library (see `spec/cli.md`).

mod arrays;
mod bridge_cmd;
#[cfg(feature = "mlir")]
mod gpu_cmd;
mod import_cmd;
mod inputs;
#[cfg(feature = "mlir")]
mod network_cmd;
#[cfg(feature = "mlir")]
mod network_search_cmd;
mod output;
#[cfg(feature = "egraph")]
mod saturate_cmd;
mod search_cmd;

use clap::{Parser, Subcommand};
use elevate_core::{Budget, Context, Traversable as _};
use elevate_rise::{evaluate, infer, io, print_definition, Error, Program, Term};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// A strategy-combinator rewriting engine for RISE.
#[derive(Parser)]
#[command(name = "elevate", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and infer types; print `NAME : TYPE` for every definition, the entry
    /// point last.
    Check {
        /// The RISE file.
        program: PathBuf,
        /// The entry point (default: the last definition).
        #[arg(long)]
        entry: Option<String>,
    },
    /// Apply a strategy; print the rewritten program as RISE text that parses again.
    Rewrite {
        /// The RISE file.
        program: PathBuf,
        /// Strategy text, or `@FILE.elv`.
        #[arg(long)]
        strategy: String,
        /// The entry point (default: the last definition).
        #[arg(long)]
        entry: Option<String>,
        /// Print each successful rule application as `RULE @ PATH` (standard error).
        #[arg(long)]
        trace: bool,
        /// Print one JSON line of statistics (standard error).
        #[arg(long)]
        stats: bool,
        /// Re-check the result's type and compare the interpreter's output on random
        /// inputs with the input program's.
        #[arg(long)]
        check: bool,
        /// Sizes for `--check`'s random inputs (default 16 for every nat).
        #[arg(long = "nat", value_parser = parse_nat_binding)]
        nats: Vec<(String, i64)>,
        /// At most this many steps, where a step is one strategy application of any
        /// kind: a rule tried (whether or not it matches), `id`, a combinator, a
        /// traversal visiting a node, a reference to a `def`. `--stats` reports them
        /// as `applications` (and successful rewrites as `steps`).
        #[arg(long, default_value_t = 100_000_000)]
        budget_steps: u64,
        /// At most this many milliseconds.
        #[arg(long, default_value_t = 60_000)]
        budget_ms: u64,
    },
    /// List every named rule, strategy and traversal with its arguments and meaning.
    Strategies,
    /// Bridge to MLIR and show a stage: `rise` (the program compiled, after the
    /// strategy and `defaultLowering`), `loops` (its loop program: buffers and kernels
    /// as loop nests with their schedule), `payload` (the MLIR module), `transform` (its
    /// Transform-dialect script), `mlir` (the payload after the script, lowered to the
    /// LLVM dialect), `llvm` (LLVM IR).
    Compile {
        /// The RISE file.
        program: PathBuf,
        /// The entry point (default: the last definition).
        #[arg(long)]
        entry: Option<String>,
        /// Strategy text, or `@FILE.elv`, applied before `defaultLowering`.
        #[arg(long)]
        strategy: Option<String>,
        /// The target: `cpu`, or `gpu` (each kernel a launch of blocks and threads
        /// from its GPU maps; `--emit ptx` prints its PTX for sm_90).
        #[arg(long, default_value = "cpu")]
        target: String,
        /// The stage to show: `rise`, `loops`, `payload`, `transform`, `mlir`, `llvm`, or for
        /// the GPU target `ptx` (its kernels) and `launch` (their grids, blocks and
        /// parameters, as JSON).
        /// `transform` prints the module holding `@__transform_main`; for a payload
        /// without a script, a `// no transform script` comment line and a sequence that
        /// does nothing.
        #[arg(long)]
        emit: String,
        /// Sizes: the payload is specialized to them, e.g. `--nat n=1024`.
        #[arg(long = "nat", value_parser = parse_nat_binding)]
        nats: Vec<(String, i64)>,
        /// Weights for the parameters after the first, by name: checked against
        /// their types, and the sizes their shapes give.
        #[arg(long, value_name = "FILE.safetensors")]
        weights: Option<PathBuf>,
        /// Write to this file instead of standard output.
        #[arg(short = 'o')]
        output: Option<PathBuf>,
    },
    /// Compile through MLIR, run on the CPU (or the GPU), and print the result as JSON.
    Run {
        /// The RISE file.
        program: PathBuf,
        /// The entry point (default: the last definition).
        #[arg(long)]
        entry: Option<String>,
        /// Strategy text, or `@FILE.elv`, applied before `defaultLowering`.
        #[arg(long)]
        strategy: Option<String>,
        /// Inputs, one file per parameter, in order: JSON, or NumPy `.npy` (by
        /// extension). With `--weights`, the first parameter's only.
        #[arg(long = "input", num_args = 1.., conflicts_with = "random")]
        inputs: Vec<PathBuf>,
        /// Reproducible pseudo-random inputs from this seed (with `--weights`, the
        /// first parameter's only).
        #[arg(long)]
        random: Option<u64>,
        /// Sizes for random inputs, e.g. `--nat n=1024`.
        #[arg(long = "nat", value_parser = parse_nat_binding)]
        nats: Vec<(String, i64)>,
        /// The parameters after the first, by name, from a safetensors file (passed
        /// to the compiled function as its remaining arguments).
        #[arg(long, value_name = "FILE.safetensors")]
        weights: Option<PathBuf>,
        /// Write the result into FILE.npy or FILE.json instead of printing it.
        #[arg(long, value_name = "FILE", value_parser = inputs::parse_out)]
        out: Option<PathBuf>,
        /// Compare the result with the reference interpreter's (standard error).
        #[arg(long)]
        check: bool,
        /// Time N calls and print one JSON line instead of the result (at most
        /// 1,000,000; 0 counts as 1).
        #[arg(long, allow_negative_numbers = true, value_parser = bridge_cmd::parse_bench_runs)]
        bench: Option<usize>,
        /// Threads for the parallel loops (`mapPar`; default: one per core; at most
        /// 4096; 0 counts as 1).
        #[arg(long, allow_negative_numbers = true, value_parser = bridge_cmd::parse_threads)]
        threads: Option<usize>,
        /// The target: `cpu`, or `gpu` (the PTX launched through the CUDA driver,
        /// loaded at run time; exit 1 where there is no GPU or driver).
        #[arg(long, default_value = "cpu")]
        target: String,
        /// For the GPU target: write into this folder what a runner without LLVM needs
        /// (each kernel's PTX, `manifest.json`, the inputs, and with `--check` the
        /// interpreter's result) instead of running (no GPU needed).
        #[arg(long)]
        bundle: Option<PathBuf>,
    },
    /// Equality saturation, then extraction: print the best program as RISE text that
    /// parses again, then, as the last line, one JSON object with what the saturation
    /// did.
    ///
    /// The JSON line has `stop_reason` (saturated, iterations, nodes, time, memory),
    /// `iterations`, `enodes`, `eclasses`, `ms`, `peak_mb` (resident memory), `cost`
    /// (the extracted program's), `cost_model`, `rules` and `applied` (`[RULE, COUNT]`
    /// pairs, most applied first). While it runs, each iteration's e-nodes, e-classes,
    /// memory and most applied rule show on standard error.
    #[cfg(feature = "egraph")]
    Saturate {
        /// The RISE file.
        program: PathBuf,
        /// The entry point (default: the last definition).
        #[arg(long)]
        entry: Option<String>,
        /// The rewrites: comma-separated rule names (`mapFusion`, `splitJoin(32)`,
        /// `betaReduction`) and sets (`algorithmic`, `lowering`, `default` for both).
        /// With several `--sketch`es, one `--rules` for all steps or one per step.
        #[arg(long, required = true)]
        rules: Vec<String>,
        /// Guide the search with a sketch (`?`, `contains(S)`, `or(S, S)`, `fun(S)`,
        /// `map[32](S, S)`, ...): saturate until a program of that shape exists, and
        /// extract the cheapest such program. Repeat it for a sketch-guided search:
        /// each step saturates from the previous step's program.
        #[arg(long = "sketch", value_name = "SKETCH")]
        sketches: Vec<String>,
        /// When to stop, whichever comes first: `iterations=N,nodes=N,ms=N,mb=N`
        /// (any subset; the rest keep their defaults).
        #[arg(long, default_value_t = elevate_rise::egraph::SaturationLimits::default())]
        limits: elevate_rise::egraph::SaturationLimits,
        /// How extraction ranks programs: `lowered` (a work model of low-level RISE:
        /// loops cost their trip counts times their bodies, parallel and vector loops
        /// less, high-level `map`/`reduce` prohibitively much) or `size` (nodes).
        #[arg(long, default_value = "lowered", value_parser = saturate_cmd::parse_cost)]
        cost: elevate_rise::egraph::CostModel,
        /// Write the final e-graph in Graphviz format to FILE (e-graphs of at most
        /// 2,000 e-nodes; larger ones are refused).
        #[arg(long, value_name = "FILE")]
        dot: Option<PathBuf>,
        /// Prove the result equal to the input: print on standard error the input,
        /// then one line `RULE: PROGRAM` per rewrite (`RULE <=` for a rule used from
        /// right to left), each with the whole program after it. Slower.
        #[arg(long)]
        explain: bool,
    },
    /// Search a space of strategies for the fastest program (`spec/search.md`): a
    /// progress bar on standard error, then one JSON line, the report: `driver`,
    /// `seed`, `cost`, `evaluations`, `distinct_programs`, `failed`, `space_size`,
    /// `seconds`, `candidates_per_s`, `baseline_ms`/`best_ms` (measured costs; the
    /// model's unit: `baseline_cost`/`best_cost`), `speedup`, `best_strategy`,
    /// `best_program_hash`, `found_at`.
    Search {
        /// The RISE file.
        program: PathBuf,
        /// The entry point (default: the last definition).
        #[arg(long)]
        entry: Option<String>,
        /// The space: strategy text with choice points `{a, b}`, `steps(N, {a, b})`
        /// and `auto`; or `@FILE.elv`; or `auto`.
        #[arg(long)]
        space: String,
        /// How to explore: `exhaustive`, `random`, `beam(WIDTH)`, `anneal`, `mcts`,
        /// `evolve` (default `random`; a resumed search's own).
        #[arg(long)]
        driver: Option<String>,
        /// How to rank: `model` (analytical, no compilation), `measured` (compiled and
        /// timed in worker processes, values checked), `model+measured` (default
        /// `model`; a resumed search's own).
        #[arg(long)]
        cost: Option<String>,
        /// When to stop: `evals=N`, `time=S` (seconds) or both. The whole search (the
        /// baseline's and the final timings included) ends within 10% of `time`.
        #[arg(long, default_value = "evals=1000", value_parser = search_cmd::parse_budget)]
        budget: elevate_strategies::search::SearchBudget,
        /// What each measured candidate may take before its worker is killed:
        /// `compile=S,run=S,memory=SIZE`, any of them (default: 60 s to compile, or a
        /// tenth of a `time=` budget if less; 10 s a run; three quarters of the
        /// machine's memory shared by the jobs).
        #[arg(long)]
        limits: Option<String>,
        /// Seed of the driver's random decisions (default 0; a resumed search's own).
        #[arg(long)]
        seed: Option<u64>,
        /// Candidates compiled (or modelled) at once (default: one per core).
        #[arg(long, allow_negative_numbers = true, value_parser = bridge_cmd::parse_threads)]
        jobs: Option<usize>,
        /// Sizes, e.g. `--nat n=1024`: every size the program has.
        #[arg(long = "nat", value_parser = parse_nat_binding)]
        nats: Vec<(String, i64)>,
        /// Threads for the parallel loops of measured candidates (default: one per core).
        #[arg(long, allow_negative_numbers = true, value_parser = bridge_cmd::parse_threads)]
        threads: Option<usize>,
        /// Write `log.jsonl`, `report.json`, `best.elv`, `best.rise`, `best.mlir`,
        /// `progress.svg` and `progress.png` into this directory.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Weights for the parameters after the first, by name: checked against
        /// their types, the sizes their shapes give used as `--nat`s. With a network
        /// (the form `import` writes), its distinct layers are searched, the budget
        /// spread by a task scheduler, and `best.elv` is the network's strategy.
        #[arg(long, value_name = "FILE.safetensors")]
        weights: Option<PathBuf>,
        /// Go on with the search in this directory (written by `--out`) to the budget
        /// given: its logged candidates are not evaluated again, its driver and seed
        /// are its own.
        #[arg(long, value_name = "DIR", conflicts_with = "out")]
        resume: Option<PathBuf>,
        /// Where candidates are evaluated: `local` (this process, on `--jobs`
        /// threads), or a Ray cluster: `ray` (a local one), `ray://HOST:PORT` or
        /// `auto` (a running one), through `python -m elevate.executors` (the Python
        /// package; the Python is `ELEVATE_PYTHON`, or `python3`).
        #[arg(long, default_value = "local")]
        executor: String,
    },
    /// Import an ONNX model (`spec/networks.md`): write `DIR/NAME.rise` (a def per
    /// layer kind, the network's def last: its input, then its weights) and
    /// `DIR/NAME.safetensors` (the weights, by parameter name), and print one JSON
    /// line: `model`, `nodes`, `layers`, `parameters`, `weights_bytes`, `rise`,
    /// `weights`, `flops`.
    Import {
        /// The ONNX file.
        model: PathBuf,
        /// The folder to write into (default: the current one; made if missing).
        #[arg(short = 'o', value_name = "DIR")]
        output: Option<PathBuf>,
        /// The batch size a symbolic batch becomes (default 1).
        #[arg(long, value_parser = import_cmd::parse_batch)]
        batch: Option<i64>,
    },
    /// Run the reference interpreter; print the result as JSON.
    Eval {
        /// The RISE file.
        program: PathBuf,
        /// The entry point (default: the last definition).
        #[arg(long)]
        entry: Option<String>,
        /// Inputs, one file per parameter, in order: JSON, or NumPy `.npy` (by
        /// extension). With `--weights`, the first parameter's only.
        #[arg(long = "input", num_args = 1.., conflicts_with = "random")]
        inputs: Vec<PathBuf>,
        /// Reproducible pseudo-random inputs from this seed (with `--weights`, the
        /// first parameter's only).
        #[arg(long)]
        random: Option<u64>,
        /// Sizes for random inputs, e.g. `--nat n=1024`.
        #[arg(long = "nat", value_parser = parse_nat_binding, requires = "random")]
        nats: Vec<(String, i64)>,
        /// The parameters after the first, by name, from a safetensors file.
        #[arg(long, value_name = "FILE.safetensors")]
        weights: Option<PathBuf>,
        /// Write the result into FILE.npy or FILE.json instead of printing it.
        #[arg(long, value_name = "FILE", value_parser = inputs::parse_out)]
        out: Option<PathBuf>,
    },
}

fn parse_nat_binding(text: &str) -> Result<(String, i64), String> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=VALUE, found `{text}`"))?;
    let value = value
        .trim()
        .parse::<i64>()
        .map_err(|_| format!("expected a non-negative integer for `{name}`, found `{value}`"))?;
    if value < 0 {
        return Err(format!("`{name}` must not be negative"));
    }
    Ok((name.trim().to_string(), value))
}

/// A failure of a command: a message for standard error (exit status 1). An empty
/// message ends the command quietly with exit status 0: standard output was closed by
/// its reader, which is not an error (see [`output`]).
struct Failure(String);

impl Failure {
    /// A failure that says nothing: the reader of standard output went away.
    fn quiet() -> Failure {
        Failure(String::new())
    }
}

fn read(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure(format!("{}: cannot read: {e}", path.display())))
}

/// `elevate run`: on the GPU where `--target gpu`, else on the CPU.
fn run_command(o: bridge_cmd::RunOptions) -> Result<(), Failure> {
    #[cfg(feature = "mlir")]
    if o.target == "gpu" {
        return gpu_cmd::run(o);
    }
    #[cfg(feature = "mlir")]
    if let Some(net) = network_cmd::network(&o) {
        return network_cmd::run(&o, &net);
    }
    bridge_cmd::run(o)
}

fn load(path: &Path, entry: Option<&str>) -> Result<(Program, String), Failure> {
    let source = read(path)?;
    let program = Program::load(&source, entry).map_err(|e| render(&e, path, &source))?;
    Ok((program, source))
}

fn render(e: &Error, path: &Path, source: &str) -> Failure {
    Failure(e.render(&path.display().to_string(), source))
}

struct RewriteOptions {
    strategy: String,
    trace: bool,
    stats: bool,
    check: bool,
    nats: Vec<(String, i64)>,
    budget: Budget,
}

/// The strategy given as text or as `@FILE.elv`.
fn parse_strategy(text: &str) -> Result<elevate_core::Strategy<Term>, Failure> {
    let (strategy_file, strategy_text) = match text.strip_prefix('@') {
        Some(file) => (file.to_string(), read(Path::new(file))?),
        None => ("strategy".to_string(), text.to_string()),
    };
    elevate_rise::registry()
        .parse(&strategy_text)
        .map_err(|e| Failure(e.render(&strategy_file, &strategy_text)))
}

fn rewrite(path: &Path, entry: Option<&str>, options: RewriteOptions) -> Result<(), Failure> {
    let (program, source) = load(path, entry)?;
    let strategy = parse_strategy(&options.strategy)?;
    let entry = program.entry();
    let mut cx = Context::new(options.budget);
    if options.trace {
        cx = cx.with_trace();
    }
    let started = Instant::now();
    let outcome = strategy.apply(&entry.term, &mut cx);
    let elapsed = started.elapsed();
    let result = outcome.map_err(|e| {
        if options.stats {
            // How far it got, when it ran out of budget or failed.
            output::eprintln(&run_stats(&cx, elapsed, None));
        }
        Failure(format!(
            "{}: the strategy {strategy} failed: {e}",
            path.display()
        ))
    })?;
    if options.trace {
        for step in cx.take_trace() {
            output::eprintln(&step.to_string());
        }
    }
    let typed = infer(&result).map_err(|e| {
        Failure(format!(
            "{}: the rewritten program does not type-check: {e}\n{}",
            path.display(),
            print_definition(&entry.name, &result)
        ))
    })?;
    if options.stats {
        let before: std::collections::HashSet<_> = collect_nodes(&entry.term);
        let after = collect_nodes(&typed);
        let sizes = serde_json::json!({
            "nodes": result.size(),
            "nodes_allocated": collect_nodes(&result).difference(&before).count(),
            "typed_nodes": after.len(),
            // As `elevate search` logs it, so that a logged candidate can be replayed.
            "program_hash": format!("{:016x}", elevate_rise::search::fingerprint(&result)),
        });
        output::eprintln(&run_stats(&cx, elapsed, Some(sizes)));
    }
    if options.check {
        check_same_values(&program, &typed, &options.nats)
            .map_err(|e| Failure(format!("{}: --check: {e}", path.display())))?;
        output::eprintln("check: same type, same values on random inputs");
    }
    let _ = source;
    output::print(&print_definition(&entry.name, &typed))
}

/// `--stats`: `applications` (what `--budget-steps` counts), `steps` (successful rule
/// applications: rewrites), `successes` (successful strategy applications), the time,
/// and the result's sizes when there is a result.
fn run_stats(cx: &Context, elapsed: Duration, sizes: Option<serde_json::Value>) -> String {
    let stats = cx.stats();
    let mut json = serde_json::json!({
        "steps": stats.steps,
        "applications": stats.applications,
        "successes": stats.successes,
        "ms": (elapsed.as_secs_f64() * 1e6).round() / 1e3,
    });
    if let (Some(object), Some(serde_json::Value::Object(sizes))) = (json.as_object_mut(), sizes) {
        object.extend(sizes);
    }
    json.to_string()
}

/// The identities of a term's distinct nodes.
fn collect_nodes(t: &Term) -> std::collections::HashSet<elevate_core::NodeId> {
    let mut seen = std::collections::HashSet::new();
    let mut pending = vec![t.clone()];
    while let Some(node) = pending.pop() {
        if let Some(id) = node.node_id() {
            if seen.insert(id) {
                pending.extend((0..node.arity()).map(|i| node.child(i).clone()));
            }
        }
    }
    seen
}

fn check_same_values(
    program: &Program,
    rewritten: &Term,
    sizes: &[(String, i64)],
) -> Result<(), String> {
    let entry = program.entry();
    if rewritten.ty() != entry.term.ty() {
        return Err(format!(
            "the type changed from {} to {}",
            entry.term.ty().map(ToString::to_string).unwrap_or_default(),
            rewritten.ty().map(ToString::to_string).unwrap_or_default()
        ));
    }
    let signature = io::signature(&entry.term);
    let nats = io::bind_nats(&signature, sizes, Some(16)).map_err(|e| e.to_string())?;
    for seed in 0..3 {
        let inputs = io::random_inputs(&signature, &nats, seed).map_err(|e| e.to_string())?;
        let before = evaluate(&entry.term, &nats, &inputs).map_err(|e| e.to_string())?;
        let after = evaluate(rewritten, &nats, &inputs).map_err(|e| {
            let hint = if e.to_string().contains("cannot evaluate the nat") {
                " (sizes for --check come from --nat NAME=VALUE, 16 by default; \
                     choose sizes that the program's divisions divide)"
            } else {
                ""
            };
            format!("the rewritten program fails: {e}{hint}")
        })?;
        let json = |v: elevate_rise::Value| v.to_json().map_err(|e| e.to_string());
        let (before, after) = (json(before)?, json(after)?);
        if let Some(difference) = io::first_difference(&before, &after) {
            return Err(format!(
                "different values on random inputs (seed {seed}) {difference}"
            ));
        }
    }
    Ok(())
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Rewrite {
            program,
            strategy,
            entry,
            trace,
            stats,
            check,
            nats,
            budget_steps,
            budget_ms,
        } => {
            // A step is any strategy application, so that `repeatN(10^11, id)` stops.
            let budget = Budget::unlimited()
                .applications(budget_steps)
                .time(Duration::from_millis(budget_ms));
            rewrite(
                &program,
                entry.as_deref(),
                RewriteOptions {
                    strategy,
                    trace,
                    stats,
                    check,
                    nats,
                    budget,
                },
            )?;
        }
        Command::Strategies => {
            let registry = elevate_rise::registry();
            let network = elevate::network::VOCABULARY;
            let width = registry
                .entries()
                .map(|e| e.name.len() + e.params.len())
                .chain(network.iter().map(|(n, p, _)| n.len() + p.len()))
                .max()
                .unwrap_or(0);
            for e in registry.entries() {
                let signature = format!("{}{}", e.name, e.params);
                output::println(&format!("{signature:width$}  {}", e.doc))?;
            }
            for (name, params, doc) in network {
                let signature = format!("{name}{params}");
                output::println(&format!("{signature:width$}  {doc}"))?;
            }
        }
        Command::Compile {
            program,
            entry,
            strategy,
            target,
            emit,
            nats,
            weights,
            output,
        } => bridge_cmd::compile(bridge_cmd::CompileOptions {
            path: &program,
            entry: entry.as_deref(),
            strategy: strategy.as_deref(),
            target: &target,
            emit: &emit,
            nats: &inputs::sizes_with_weights(
                &program,
                entry.as_deref(),
                &nats,
                weights.as_deref(),
            )?,
            output: output.as_deref(),
        })?,
        Command::Run {
            program,
            entry,
            strategy,
            inputs,
            random,
            nats,
            weights,
            out,
            check,
            bench,
            threads,
            target,
            bundle,
        } => run_command(bridge_cmd::RunOptions {
            path: &program,
            entry: entry.as_deref(),
            strategy: strategy.as_deref(),
            inputs: inputs::InputOptions {
                files: &inputs,
                random,
                nats: &nats,
                weights: weights.as_deref(),
            },
            out: out.as_deref(),
            check,
            bench,
            threads,
            target: &target,
            bundle: bundle.as_deref(),
        })?,
        #[cfg(feature = "egraph")]
        Command::Saturate {
            program,
            entry,
            rules,
            sketches,
            limits,
            cost,
            dot,
            explain,
        } => saturate_cmd::saturate(saturate_cmd::SaturateOptions {
            path: &program,
            entry: entry.as_deref(),
            rules: &rules,
            sketches: &sketches,
            limits,
            cost,
            dot: dot.as_deref(),
            explain,
        })?,
        Command::Search {
            program,
            entry,
            space,
            driver,
            cost,
            budget,
            limits,
            seed,
            jobs,
            nats,
            threads,
            out,
            weights,
            resume,
            executor,
        } => {
            let options = search_cmd::SearchOptions {
                path: &program,
                entry: entry.as_deref(),
                space: &space,
                driver: driver.as_deref(),
                cost: cost.as_deref(),
                budget,
                limits: limits.as_deref(),
                seed,
                jobs,
                nats: &inputs::sizes_with_weights(
                    &program,
                    entry.as_deref(),
                    &nats,
                    weights.as_deref(),
                )?,
                threads,
                out: out.as_deref(),
                resume: resume.as_deref(),
                executor: &executor,
                weights: weights.as_deref(),
            };
            // A network (the form `import` writes) with its weights: its layers.
            #[cfg(feature = "mlir")]
            if let Some((network, weights)) = search_cmd::network_of(&options) {
                return network_search_cmd::search(&options, &network, weights);
            }
            search_cmd::search(options)?
        }
        Command::Import {
            model,
            output,
            batch,
        } => import_cmd::import(&model, output.as_deref(), batch)?,
        Command::Check { program, entry } => {
            let (program, _) = load(&program, entry.as_deref())?;
            for line in program.summary() {
                output::println(&line)?;
            }
        }
        Command::Eval {
            program,
            entry,
            inputs,
            random,
            nats,
            weights,
            out,
        } => inputs::eval(inputs::EvalOptions {
            path: &program,
            entry: entry.as_deref(),
            inputs: inputs::InputOptions {
                files: &inputs,
                random,
                nats: &nats,
                weights: weights.as_deref(),
            },
            out: out.as_deref(),
        })?,
    }
    Ok(())
}

fn main() -> ExitCode {
    // Started by a search as one of its workers: serve it, and nothing else.
    #[cfg(feature = "mlir")]
    elevate::bridge::measure::serve_if_asked();
    match Cli::try_parse() {
        Ok(cli) => exit_status(run(cli)),
        Err(e) => command_line_error(&e),
    }
}

/// The exit status of a command's result, its message (if any) on standard error:
/// 0 for success and for a reader of standard output that went away, else 1.
fn exit_status(result: Result<(), Failure>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) if message.is_empty() => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            output::eprintln(message.trim_end());
            ExitCode::from(1)
        }
    }
}

/// What clap says when the command line is not a command to run: a usage error on
/// standard error (exit status 2, whether or not it could be written), or `--help` and
/// `--version` on standard output, under the rule of [`output`].
fn command_line_error(e: &clap::Error) -> ExitCode {
    use std::io::Write;
    let printed = e.print().and_then(|()| std::io::stdout().flush());
    if e.use_stderr() {
        return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
    }
    exit_status(printed.map_err(|e| output::write_failure(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_names_the_first_differing_index_and_both_values() {
        let load = |text: &str| Program::load(text, None).unwrap();
        let program = load("def f(x: n.f32) = x |> map(fun(v => v * 2.0))");
        let same = load("def f(x: n.f32) = x |> map(fun(v => v + v))");
        assert_eq!(check_same_values(&program, &same.entry().term, &[]), Ok(()));
        let wrong = load(
            "def f(x: n.f32) = generate(fun(i => select(indexAsNat(i) == 3i64, 5.0, idx(i, x) * 2.0))) : n.f32",
        );
        let e = check_same_values(&program, &wrong.entry().term, &[("n".into(), 8)]).unwrap_err();
        assert!(
            e.starts_with("different values on random inputs (seed 0) at [3]: expected "),
            "{e}"
        );
        assert!(e.ends_with(", found 5.0"), "{e}");
        let e = check_same_values(&program, &same.entry().term, &[("k".into(), 8)]).unwrap_err();
        assert!(e.contains("no nat parameter `k`"), "{e}");
    }
}
