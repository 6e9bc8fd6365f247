//! A network searched layer by layer (`spec/networks.md`, "Search"): each distinct
//! layer once, the time spent where it pays, the best of each layer assembled into
//! the network's strategy.
//!
//! - **The layers searched** ([`tasks`]) are the distinct kernels of the library's
//!   plan of the network (`network`): its convolutions, products and poolings, each
//!   one unit, one task per distinct unit program (kind and sizes), standing for
//!   every layer that has that program. The elementwise units between them keep the
//!   library's fused schedules, and so do the pointwise convolutions the library
//!   computes as products (a strategy for the layer is one for its definition's form).
//! - **Each task is an ordinary search** of its unit's program (the same space,
//!   driver and cost as `elevate search`, its candidates measured in worker processes)
//!   in rounds: a round resumes the task's search with a few more evaluations, its
//!   logged programs known. Its first round measures the library's schedule of the
//!   unit too: the task's baseline.
//! - **The scheduler** ([`Scheduler`]), in the manner of Ansor's: every task gets a
//!   first round, heaviest first; then the next round goes to the task with the most
//!   to gain, its share of the network's time (its best time times the layers it
//!   stands for) times how fast its best is still improving (the last round's relative
//!   gain, or, optimistically, a share that shrinks with the rounds it had).
//! - **The result** is the network's strategy: `layer(i, S)` for each layer whose
//!   search beat the library's schedule, then `network`.
//!
//! A search's directory (`--out DIR`) holds `search.json` (what the search is),
//! `log.jsonl` (a line per candidate with its layer, as it comes), `report.json` and
//! `best.elv` (the network's strategy, both rewritten after every round) and
//! `layers/TASK/`, each task's own search directory, from which `--resume` goes on.
//!
//! ```
//! use elevate::network::Network;
//! use elevate::network_search::tasks;
//! let net = Network::parse("
//!     def relu(x: n.c.f32) : n.c.f32 = x |> map(map(fun(v => max(v, 0.0))))
//!     def gemm_tb(x: n.k.f32, w: m.k.f32) : n.m.f32 =
//!       x |> map(fun(row => w |> map(fun(col =>
//!         zip(row, col) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))
//!     def net(input: 1.8.f32, w1: 8.8.f32, w2: 8.8.f32, w3: 4.8.f32) : 1.4.f32 =
//!       let a = gemm_tb(input, w1) in
//!       let b = relu(a) in
//!       let c = gemm_tb(b, w2) in
//!       let d = gemm_tb(c, w3) in
//!       d").unwrap();
//! let tasks = tasks(&net, 16).unwrap();
//! // The two 8x8 products are one task; the 4x8 product is another; the ReLU is none.
//! assert_eq!(tasks.len(), 2);
//! assert_eq!(tasks[0].layers, [0, 2]);
//! assert_eq!(tasks[1].layers, [3]);
//! ```

mod scheduler;

pub use scheduler::{Scheduler, TaskState};

use crate::network::{Network, NetworkStrategy, UnitPlan, KERNELS};
use crate::search_costs::{self, Measuring};
use crate::search_dir::{self, Asked, Settings};
use crate::search_report::log_line;
use elevate_rise::search::fingerprint;
use elevate_rise::{Program, Term};
use elevate_strategies::search::{
    drivers, Cost, Known, Measure, Progress, Rejection, Search, SearchBudget, Space, Status,
    COMPARE_TURNS,
};
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One layer to search: a distinct unit of the library's plan.
#[derive(Debug, Clone)]
pub struct Task {
    /// Its name in the log and the directory: its position and its definition.
    pub name: String,
    /// Its layers' definition.
    pub def: String,
    /// Its layers' kind.
    pub kind: String,
    /// Every layer of the network it stands for.
    pub layers: Vec<usize>,
    /// The unit's program (the network's definitions, then `def unit(...)`).
    pub source: String,
    /// The library's strategies for it, best first.
    pub library: Vec<String>,
}

/// The distinct kernels of `network` under its library strategy, for a machine of
/// `lanes` f32 lanes, in the order they first run.
pub fn tasks(network: &Network, lanes: u32) -> Result<Vec<Task>, String> {
    let plan =
        UnitPlan::new(network, &NetworkStrategy::library(), lanes).map_err(|e| e.to_string())?;
    let mut tasks: Vec<Task> = Vec::new();
    let mut by_source: HashMap<String, usize> = HashMap::new();
    for unit in &plan.units {
        let [layer] = unit.layers[..] else { continue };
        let l = &network.layers()[layer];
        // A unit in another form than its layer's definition: what its search found
        // would not apply to the layer (`layer(i, S)` is on the definition's form).
        if !KERNELS.contains(&l.kind.as_str()) || unit.reformed {
            continue;
        }
        match by_source.get(&unit.source) {
            Some(&t) => tasks[t].layers.push(layer),
            None => {
                by_source.insert(unit.source.clone(), tasks.len());
                tasks.push(Task {
                    name: format!("{:02}_{}", tasks.len(), l.def),
                    def: l.def.clone(),
                    kind: l.kind.clone(),
                    layers: vec![layer],
                    source: unit.source.clone(),
                    library: unit.strategies.clone(),
                });
            }
        }
    }
    Ok(tasks)
}

/// How a network search runs.
pub struct Options<'a> {
    /// The space of every task (`auto`, or space text).
    pub space: &'a str,
    /// The driver (default [`search_dir::DEFAULT_DRIVER`]).
    pub driver: Option<&'a str>,
    /// The cost (default [`search_dir::DEFAULT_COST`]).
    pub cost: Option<&'a str>,
    /// The seed of every task's driver (default 0).
    pub seed: Option<u64>,
    /// The budget of the whole search: its evaluations (every task's together) and
    /// its time.
    pub budget: SearchBudget,
    /// Candidates evaluated at once.
    pub jobs: usize,
    /// How the measured cost measures (its `time` is set for each task here).
    pub measuring: Measuring,
    /// The search's directory, if any.
    pub out: Option<&'a Path>,
    /// Whether to go on with the search in `out`.
    pub resume: bool,
    /// Ends the search with what it found once set.
    pub stop: Arc<AtomicBool>,
    /// Told after every round (a line for a progress display).
    pub on_round: &'a dyn Fn(&str),
}

/// Evaluations a task's round adds (at least; a few per job).
const ROUND_PER_JOB: usize = 2;
const ROUND_LEAST: usize = 4;

/// A task's outcome.
#[derive(Debug, Clone)]
pub struct TaskResult {
    /// The task.
    pub task: Task,
    /// Its scheduler's state at the end.
    pub state: TaskState,
    /// The library's strategy that compiled it, measured.
    pub library_strategy: Option<String>,
    /// Its search's best strategy, if any candidate was measured.
    pub best_strategy: Option<String>,
    /// Its search's best cost.
    pub best_cost: Option<f64>,
    /// Candidates its search logged.
    pub evaluations: usize,
    /// The library's cost and the best's evaluated again, in turns, at the end.
    pub compared: Option<(f64, f64)>,
}

impl TaskResult {
    /// Whether its search beat the library (by more than 1%): in the final
    /// comparison where there was one.
    pub fn improved(&self) -> bool {
        if let Some((library, best)) = self.compared {
            return best < 0.99 * library;
        }
        match (self.best_cost, self.state.library) {
            (Some(b), Some(l)) => b < 0.99 * l,
            (Some(_), None) => true,
            _ => false,
        }
    }
}

/// A network search's outcome.
#[derive(Debug, Clone)]
pub struct NetworkReport {
    /// Each task's.
    pub tasks: Vec<TaskResult>,
    /// The network's strategy: `layer(i, S)` where a search beat the library, then
    /// `network`.
    pub strategy: NetworkStrategy,
    /// Every task's logged candidates.
    pub evaluations: usize,
    /// The search's duration.
    pub seconds: f64,
    /// The cost's name.
    pub cost: String,
    /// The driver, as text.
    pub driver: String,
    /// The seed.
    pub seed: u64,
}

impl NetworkReport {
    /// The report as JSON: the search, the tasks' costs weighed by their layers
    /// (`library_cost`, `best_cost`), and each task's line.
    pub fn to_json(&self) -> Json {
        let total = |f: &dyn Fn(&TaskResult) -> Option<f64>| -> Option<f64> {
            self.tasks
                .iter()
                .map(|t| f(t).map(|c| c * t.task.layers.len() as f64))
                .sum()
        };
        let library = total(&|t| t.state.library);
        let best = total(&|t| t.state.best());
        json!({
            "cost": self.cost,
            "driver": self.driver,
            "seed": self.seed,
            "tasks": self.tasks.len(),
            "evaluations": self.evaluations,
            "seconds": (self.seconds * 1e3).round() / 1e3,
            "library_cost": library,
            "best_cost": best,
            "layers_speedup": library.zip(best).map(|(l, b)| l / b),
            "best_strategy": self.strategy.to_string(),
            "layers": self.tasks.iter().map(|t| json!({
                "layer": t.task.name,
                "kind": t.task.kind,
                "layers": t.task.layers,
                "rounds": t.state.history.len(),
                "evaluations": t.evaluations,
                "library_strategy": t.library_strategy,
                "library_cost": t.state.library,
                "best_strategy": t.best_strategy,
                "best_cost": t.best_cost,
                "compared_library_cost": t.compared.map(|c| c.0),
                "compared_best_cost": t.compared.map(|c| c.1),
                "improved": t.improved(),
            })).collect::<Vec<_>>(),
        })
    }
}

/// One task's search: its program, cost, directory and what it found.
struct Searched {
    program: Program,
    start: Term,
    cost: Option<Box<dyn Cost<Term>>>,
    dir: Option<PathBuf>,
    library_strategy: Option<String>,
    best: Option<(String, f64)>,
    logged: usize,
    /// What its rounds measured, where it has no directory to resume from.
    known: Known,
    /// Its rounds' time, in rounds' shares.
    patience: u32,
    /// The library's cost and the best's, evaluated again in turns at the end.
    compared: Option<(f64, f64)>,
}

/// The most shares of time one round of a task takes.
const MAX_PATIENCE: u32 = 16;

/// Searches `network` (see the module); `lanes` is the machine's vector width.
pub fn search(
    network: &Network,
    lanes: u32,
    options: &Options<'_>,
) -> Result<NetworkReport, String> {
    let started = Instant::now();
    let tasks = tasks(network, lanes)?;
    if tasks.is_empty() {
        return Err("the network has no convolution, product or pooling to search".into());
    }
    let program_hash = format!("{:016x}", fingerprint(&network.program().entry().term));
    let asked = Asked {
        program_hash: &program_hash,
        space: options.space,
        driver: options.driver,
        seed: options.seed,
        cost: options.cost,
    };
    let settings = match options.out {
        Some(dir) => open_network_dir(dir, options.resume, &asked)?,
        None => Settings {
            program_hash: program_hash.clone(),
            space: options.space.to_string(),
            driver: options.driver.unwrap_or(search_dir::DEFAULT_DRIVER).into(),
            seed: options.seed.unwrap_or(0),
            cost: options.cost.unwrap_or(search_dir::DEFAULT_COST).into(),
        },
    };
    // Validate the space and the driver once, before any worker starts.
    read_space(&settings.space)?;
    drivers::from_text::<Term>(&settings.driver).map_err(|e| format!("--driver: {e}"))?;
    let log = match options.out {
        Some(dir) => Some(
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(dir.join("log.jsonl"))
                .map_err(|e| format!("log.jsonl: {e}"))?,
        ),
        None => None,
    };
    let mut searched = Vec::with_capacity(tasks.len());
    let mut states = Vec::with_capacity(tasks.len());
    for task in &tasks {
        let program = Program::load(&task.source, None).map_err(|e| e.to_string())?;
        let start = program
            .instantiate(&Default::default())
            .map_err(|e| e.to_string())?;
        let dir = options.out.map(|d| d.join("layers").join(&task.name));
        let mut state = TaskState {
            count: task.layers.len(),
            work: network.layer_multiply_adds(task.layers[0]),
            ..TaskState::default()
        };
        let mut s = Searched {
            program,
            start,
            cost: None,
            dir,
            library_strategy: None,
            best: None,
            logged: 0,
            known: Known::default(),
            patience: 1,
            compared: None,
        };
        if options.resume {
            resume_task(&mut s, &mut state)?;
        }
        searched.push(s);
        states.push(state);
    }
    let mut scheduler = Scheduler::new(states);
    let end = options.budget.time.map(|t| started + t);
    // The rounds end early enough for the final comparisons.
    let deadline = options
        .budget
        .time
        .map(|t| started + t.mul_f64(1.0 - COMPARE_SHARE));
    let mut shared = Shared {
        settings: &settings,
        options,
        end,
        log,
    };
    // A round's share of the time: enough rounds for every task to have a few.
    let slice = options
        .budget
        .time
        .map(|t| (t / (3 * tasks.len() as u32)).max(Duration::from_secs(1)));
    let per_round = (ROUND_PER_JOB * options.jobs).max(ROUND_LEAST);
    let report = |scheduler: &Scheduler, searched: &[Searched]| {
        assemble(
            &tasks,
            scheduler,
            searched,
            &settings,
            started.elapsed().as_secs_f64(),
        )
    };
    loop {
        if options.stop.load(Ordering::Relaxed) {
            break;
        }
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left.is_some_and(|l| l < Duration::from_millis(200)) {
            break;
        }
        let done: usize = searched.iter().map(|s| s.logged).sum();
        let evals_left = options.budget.evaluations.map(|n| n.saturating_sub(done));
        if evals_left == Some(0) {
            break;
        }
        let Some(t) = scheduler.next() else { break };
        let budget = SearchBudget {
            evaluations: Some(searched[t].logged + per_round.min(evals_left.unwrap_or(usize::MAX))),
            time: match (slice, left) {
                (Some(s), Some(l)) => Some((s * searched[t].patience).min(l)),
                _ => None,
            },
        };
        let before = searched[t].logged;
        let round_started = Instant::now();
        round(
            &tasks[t],
            &mut searched[t],
            &mut scheduler.tasks[t],
            budget,
            &mut shared,
        )?;
        let best = searched[t].best.as_ref().map(|b| b.1);
        // Nothing new in a round that neither was stopped nor used its time: the
        // driver has nothing more to give.
        let stopped = options.stop.load(Ordering::Relaxed);
        let timed_out = budget
            .time
            .is_some_and(|t| round_started.elapsed() >= t.mul_f64(0.9));
        let nothing_new = searched[t].logged == before;
        scheduler.record(t, best, nothing_new && !stopped && !timed_out);
        // A round too short for even one of the task's candidates: the next is longer.
        if nothing_new && timed_out {
            searched[t].patience = (searched[t].patience * 2).min(MAX_PATIENCE);
        }
        let current = report(&scheduler, &searched);
        if let Some(dir) = options.out {
            write_network_dir(dir, &current)?;
        }
        let s = &scheduler.tasks[t];
        let shown = |c: Option<f64>| c.map_or("none".to_string(), |c| format!("{c:.4}"));
        (options.on_round)(&format!(
            "layer {} (x{}): round {}, {} evaluations, best {} (library {}), {:.0} s",
            tasks[t].name,
            s.count,
            s.history.len(),
            searched[t].logged,
            shown(best),
            shown(s.library),
            started.elapsed().as_secs_f64()
        ));
    }
    if !options.stop.load(Ordering::Relaxed) {
        for (s, state) in searched.iter_mut().zip(&scheduler.tasks) {
            compare(s, state, end);
        }
    }
    Ok(report(&scheduler, &searched))
}

/// The share of a time budget kept for comparing each task's best with its library's.
const COMPARE_SHARE: f64 = 0.1;

/// Where a task's search found a program faster than the library's: both evaluated
/// again, in turns ([`COMPARE_TURNS`] of them, by `end`), which is what decides
/// whether the network takes it (a candidate measured while another compiles on the
/// next core, or once, can be a few percent off).
fn compare(s: &mut Searched, state: &TaskState, end: Option<Instant>) {
    let (Some((best, best_cost)), Some(library), Some(cost)) =
        (&s.best, &s.library_strategy, s.cost.as_deref())
    else {
        return;
    };
    if state.library.is_some_and(|l| *best_cost >= l) {
        return;
    }
    let registry = elevate_rise::registry();
    let apply = |text: &str| {
        let strategy = registry.parse(text).ok()?;
        strategy
            .apply(&s.start, &mut elevate_core::Context::default())
            .ok()
    };
    let (Some(library_program), Some(best_program)) = (apply(library), apply(best)) else {
        return;
    };
    if let [Some(l), Some(b)] =
        &cost.compare(&[&library_program, &best_program], COMPARE_TURNS, end)[..]
    {
        s.compared = Some((l.cost, b.cost));
    }
}

/// What every round shares: the search's settings and options, when it ends, the
/// network's log.
struct Shared<'s, 'o> {
    settings: &'s Settings,
    options: &'s Options<'o>,
    end: Option<Instant>,
    log: Option<File>,
}

/// One round of task `task`: its library measured first (its first round), then its
/// search resumed with `budget`.
fn round(
    task: &Task,
    s: &mut Searched,
    state: &mut TaskState,
    budget: SearchBudget,
    shared: &mut Shared<'_, '_>,
) -> Result<(), String> {
    let Shared {
        settings,
        options,
        end,
        log,
    } = shared;
    let (settings, options, end) = (*settings, *options, *end);
    if s.cost.is_none() {
        let mut measuring = options.measuring.clone();
        measuring.time = budget.time;
        measuring.stop = Some(options.stop.clone());
        let made = search_costs::make(&settings.cost, &s.start, &measuring)
            .map_err(|e| format!("layer {}: {e}", task.name))?;
        s.cost = Some(made.cost);
    }
    let Some(cost) = s.cost.as_deref() else {
        return Ok(());
    };
    if state.library.is_none() && state.history.is_empty() {
        // The baseline gets what the whole search has left, not a round's share.
        let deadline = end;
        if let Some((strategy, measure)) = measure_library(task, &s.start, cost, deadline) {
            state.library = Some(measure.cost);
            s.library_strategy = Some(strategy.clone());
            if let Some(dir) = &s.dir {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                let line =
                    json!({"strategy": strategy, "cost": measure.cost, "median_ms": measure.ms});
                std::fs::write(dir.join(LIBRARY), format!("{line}\n"))
                    .map_err(|e| format!("{LIBRARY}: {e}"))?;
            }
        }
    }
    let program_hash = format!("{:016x}", fingerprint(&s.start));
    let asked = Asked {
        program_hash: &program_hash,
        space: &settings.space,
        driver: Some(&settings.driver),
        seed: Some(settings.seed),
        cost: Some(&settings.cost),
    };
    let (mut dir, known) = match &s.dir {
        Some(d) => {
            let resume = search_dir::holds_search(d);
            let (opened, _, known) = search_dir::open(d, resume, &asked)
                .map_err(|e| format!("layer {}: {e}", task.name))?;
            (Some(opened), known)
        }
        None => (None, s.known.clone()),
    };
    let space = read_space(&settings.space)?;
    let space_size = space.start(&s.start).size_estimate();
    let driver = drivers::from_text::<Term>(&settings.driver).map_err(|e| e.to_string())?;
    let mut failure: Option<String> = None;
    let logged_before = s.logged;
    let name = task.name.clone();
    let layers = task.layers.clone();
    let search = Search::new(space, driver, cost)
        .budget(budget)
        .seed(settings.seed)
        .jobs(options.jobs)
        .known(known)
        .stop_on(options.stop.clone())
        .observe(|p: &Progress<'_>| {
            if let Some(d) = dir.as_mut() {
                if let Err(e) = d.record(p, settings, space_size) {
                    failure.get_or_insert(e);
                    options.stop.store(true, Ordering::Relaxed);
                }
            }
            if p.candidate.index < logged_before {
                return;
            }
            if let Some(file) = log.as_mut() {
                let mut line = log_line(p.candidate);
                if let Some(o) = line.as_object_mut() {
                    o.insert("layer".into(), json!(name));
                    o.insert("layers".into(), json!(layers));
                }
                if let Err(e) = writeln!(file, "{line}").and_then(|()| file.flush()) {
                    failure.get_or_insert(format!("log.jsonl: {e}"));
                    options.stop.store(true, Ordering::Relaxed);
                }
            }
        });
    let report = search.run(&s.start);
    if let Some(e) = failure {
        return Err(e);
    }
    s.logged = report.log.len().max(s.logged);
    if let Some(best) = report.best() {
        if let Some(cost) = best.cost() {
            s.best = Some((best.strategy.clone(), cost));
        }
    }
    for c in &report.log {
        let result = match (c.status, c.measure) {
            (Status::Ok, Some(m)) => Ok(m),
            // Found again when the strategy is applied again; evaluated again.
            (Status::Ok | Status::StrategyFailed | Status::Stopped, _) => continue,
            (failed, _) => Err(Rejection::new(failed, c.reason.clone())),
        };
        s.known.insert(c.program_hash, result);
    }
    if let Some(d) = dir.as_mut() {
        let best_program = report
            .best()
            .and_then(|b| elevate_rise::registry().parse(&b.strategy).ok())
            .and_then(|st| {
                st.apply(&s.start, &mut elevate_core::Context::default())
                    .ok()
            });
        d.finish(&report, &s.program, best_program.as_ref())?;
    }
    Ok(())
}

/// The library's strategies for `task` measured in order: the first that compiles.
fn measure_library(
    task: &Task,
    start: &Term,
    cost: &dyn Cost<Term>,
    deadline: Option<Instant>,
) -> Option<(String, Measure)> {
    let registry = elevate_rise::registry();
    task.library.iter().find_map(|text| {
        let strategy = registry.parse(text).ok()?;
        let program = strategy
            .apply(start, &mut elevate_core::Context::default())
            .ok()?;
        let measured = cost.evaluate_until(&[&program], 1, deadline).pop()?;
        measured.ok().map(|m| (text.clone(), m))
    })
}

/// The file of a task's directory holding its library's measure.
const LIBRARY: &str = "library.json";

/// What a task's directory holds, read back to resume it.
fn resume_task(s: &mut Searched, state: &mut TaskState) -> Result<(), String> {
    let Some(dir) = s.dir.clone() else {
        return Ok(());
    };
    if let Ok(text) = std::fs::read_to_string(dir.join(LIBRARY)) {
        let json: Json =
            serde_json::from_str(text.trim()).map_err(|e| format!("{LIBRARY}: {e}"))?;
        state.library = json.get("cost").and_then(Json::as_f64);
        s.library_strategy = json
            .get("strategy")
            .and_then(Json::as_str)
            .map(String::from);
    }
    if !search_dir::holds_search(&dir) {
        return Ok(());
    }
    let text = std::fs::read_to_string(dir.join("log.jsonl")).unwrap_or_default();
    for line in text.lines() {
        let Ok(json) = serde_json::from_str::<Json>(line) else {
            continue;
        };
        s.logged += 1;
        let cost = json.get("cost").and_then(Json::as_f64);
        let ok = json.get("status").and_then(Json::as_str) == Some("ok");
        let strategy = json.get("strategy").and_then(Json::as_str);
        if let (true, Some(cost), Some(strategy)) = (ok, cost, strategy) {
            if s.best.as_ref().is_none_or(|b| cost < b.1) {
                s.best = Some((strategy.to_string(), cost));
            }
        }
    }
    // The rounds it had count as one for the scheduler: it has had its first.
    state.history.push(s.best.as_ref().map(|b| b.1));
    Ok(())
}

/// The network's report so far.
fn assemble(
    tasks: &[Task],
    scheduler: &Scheduler,
    searched: &[Searched],
    settings: &Settings,
    seconds: f64,
) -> NetworkReport {
    let results: Vec<TaskResult> = tasks
        .iter()
        .zip(&scheduler.tasks)
        .zip(searched)
        .map(|((task, state), s)| TaskResult {
            task: task.clone(),
            state: state.clone(),
            library_strategy: s.library_strategy.clone(),
            best_strategy: s.best.as_ref().map(|b| b.0.clone()),
            best_cost: s.best.as_ref().map(|b| b.1),
            evaluations: s.logged,
            compared: s.compared,
        })
        .collect();
    let mut parts = String::new();
    for r in results.iter().filter(|r| r.improved()) {
        if let Some(best) = &r.best_strategy {
            for layer in &r.task.layers {
                parts.push_str(&format!("layer({layer}, {best}) ; "));
            }
        }
    }
    parts.push_str("network");
    let strategy = NetworkStrategy::parse(&parts).unwrap_or_else(|_| NetworkStrategy::library());
    NetworkReport {
        evaluations: results.iter().map(|r| r.evaluations).sum(),
        tasks: results,
        strategy,
        seconds,
        cost: settings.cost.clone(),
        driver: settings.driver.clone(),
        seed: settings.seed,
    }
}

/// Opens the network search's directory: its settings written (a new search) or
/// read and checked (a resumed one).
fn open_network_dir(dir: &Path, resume: bool, asked: &Asked<'_>) -> Result<Settings, String> {
    let settings = if resume {
        search_dir::read_settings(dir)?
    } else {
        search_dir::new_settings(asked)
    };
    if resume {
        settings.check_same(asked)?;
    } else {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot make the directory: {e}"))?;
        // A new search starts a new log.
        File::create(dir.join("log.jsonl")).map_err(|e| format!("log.jsonl: {e}"))?;
        search_dir::write_settings(dir, &settings)?;
    }
    Ok(settings)
}

/// `report.json` and `best.elv`, whole.
fn write_network_dir(dir: &Path, report: &NetworkReport) -> Result<(), String> {
    search_dir::write_whole(&dir.join("report.json"), &format!("{}\n", report.to_json()))?;
    search_dir::write_whole(&dir.join("best.elv"), &format!("{}\n", report.strategy))
}

/// The space as text, `@FILE.elv`, or `auto`.
fn read_space(text: &str) -> Result<Space<Term>, String> {
    let (name, source) = match text.strip_prefix('@') {
        Some(file) => (
            file.to_string(),
            std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?,
        ),
        None => ("space".to_string(), text.to_string()),
    };
    Space::parse_with_auto(
        &source,
        Arc::new(elevate_rise::registry()),
        search_costs::auto(),
    )
    .map_err(|e| {
        let (line, column) = e.line_col(&source);
        format!("{name}:{line}:{column}: space error: {e}")
    })
}
