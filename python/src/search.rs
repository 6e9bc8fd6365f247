//! Search from Python: `search` (a space, a driver, a cost, a budget; the report and
//! the log as `elevate search` writes them), the environment for learning agents, and
//! the pieces of a search whose candidates are evaluated elsewhere (an executor such
//! as a Ray cluster): [`RemoteCost`] sends a round's programs to it as RISE text, and
//! [`PyCostEvaluator`] evaluates them where they arrive.

use crate::errors::{located, ParseError, SearchError};
use crate::program::PyProgram;
use crate::strategy::registry;
use elevate::search_costs::{self, Measuring};
use elevate::search_dir::{self, Asked, Settings};
use elevate::search_remote::{measure_json, Executor, RemoteCost};
use elevate::search_report::{log_line, report_json};
use elevate_bridge::measure::{CandidateLimits, WorkerCommand};
use elevate_rise::{print_definition, Program, Term};
use elevate_strategies::search::{
    drivers, Action, Cost, Environment, Known, Rejection, Search, SearchBudget, Space, Status,
};
use numpy::{PyArray1, ToPyArray};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The space text (or `auto`), read against the RISE library.
fn space(text: &str) -> PyResult<Space<Term>> {
    Space::parse_with_auto(text, registry(), search_costs::auto()).map_err(|e| {
        let (line, column) = e.line_col(text);
        located::<ParseError>(
            format!("space:{line}:{column}: space error: {e}"),
            Some("space"),
            Some((line, column)),
        )
    })
}

pub(crate) fn search_error(message: String) -> PyErr {
    located::<SearchError>(message, None, None)
}

/// The start of a search: the entry point at concrete sizes.
fn start(program: &PyProgram, nats: Option<&BTreeMap<String, i64>>) -> PyResult<Term> {
    let env = program.nat_env(nats)?;
    program
        .program
        .instantiate(&env)
        .map_err(|e| crate::errors::rise_error(&e, &program.file, &program.source))
}

/// The command that starts a worker of a measured cost from Python: this Python,
/// `-m elevate.worker` (the package's; the same protocol as `elevate`'s workers).
pub(crate) fn worker_command(py: Python<'_>) -> PyResult<WorkerCommand> {
    let python: String = py.import("sys")?.getattr("executable")?.extract()?;
    if python.is_empty() {
        return Err(search_error(
            "cost: this Python does not say where its executable is (sys.executable), \
             which measured candidates' workers run"
                .into(),
        ));
    }
    Ok(WorkerCommand::new(python, &["-m", "elevate.worker"]))
}

/// The cost `name` for searches from `start`, its measured candidates in workers
/// (`python -m elevate.worker`) under `limits`, stopped once `stop` is set.
fn make_cost(
    py: Python<'_>,
    name: &str,
    start: &Term,
    threads: Option<usize>,
    limits: Option<CandidateLimits>,
    stop: Option<Arc<AtomicBool>>,
    time: Option<Duration>,
) -> PyResult<Box<dyn Cost<Term>>> {
    let measuring = Measuring {
        threads,
        limits,
        worker: Some(worker_command(py)?),
        stop,
        time,
    };
    let made = py
        .detach(|| search_costs::make(name, start, &measuring))
        .map_err(|e| search_error(format!("cost: {e}")))?;
    Ok(made.cost)
}

/// An executor that is a Python object with `evaluate(programs, cost, start, jobs)`
/// (`elevate.executors.RayExecutor`, say).
struct PyExecutor(Py<PyAny>);

impl Executor for PyExecutor {
    fn evaluate(
        &self,
        programs: Vec<String>,
        cost: &str,
        start: &str,
        jobs: usize,
    ) -> Result<Vec<String>, String> {
        Python::attach(|py| {
            self.0
                .call_method1(py, "evaluate", (programs, cost, start, jobs))?
                .extract(py)
        })
        .map_err(|e: PyErr| e.to_string())
    }
}

/// Runs a search; the report and the log as JSON text (see `elevate.search`).
#[pyfunction]
#[pyo3(signature = (program, space_text, driver, cost, evals, seconds, seed, jobs, nats, threads, executor, limits=None, out=None, resume=false))]
#[allow(clippy::too_many_arguments)]
pub fn _search(
    py: Python<'_>,
    program: &PyProgram,
    space_text: &str,
    driver: Option<&str>,
    cost: Option<&str>,
    evals: Option<usize>,
    seconds: Option<f64>,
    seed: Option<u64>,
    jobs: Option<usize>,
    nats: Option<BTreeMap<String, i64>>,
    threads: Option<usize>,
    executor: Option<Py<PyAny>>,
    limits: Option<&str>,
    out: Option<std::path::PathBuf>,
    resume: bool,
) -> PyResult<(String, Vec<String>)> {
    let start = start(program, nats.as_ref())?;
    let space = space(space_text)?;
    let mut budget = SearchBudget::default();
    match (evals, seconds) {
        (None, None) => return Err(search_error("budget: give evals=N, time=S or both".into())),
        (Some(0), _) => return Err(search_error("budget: evals must be at least 1".into())),
        (_, Some(s)) if !(s > 0.0 && s <= 1e7) => {
            return Err(search_error(format!(
                "budget: time must be more than 0 and at most 10^7 seconds, found {s}"
            )))
        }
        _ => {}
    }
    if let Some(n) = evals {
        budget = budget.evaluations(n);
    }
    if let Some(s) = seconds {
        budget = budget.time(Duration::from_secs_f64(s));
    }
    let jobs = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let defaults = CandidateLimits::defaults(jobs, budget.time);
    let limits = limits
        .map(|text| CandidateLimits::parse(text, defaults))
        .transpose()
        .map_err(|e| search_error(format!("limits: {e}")))?
        .unwrap_or(defaults);
    // The search's directory: a new one, or (resume) the search in it to go on with.
    let program_hash = format!("{:016x}", elevate_rise::search::fingerprint(&start));
    let asked = Asked {
        program_hash: &program_hash,
        space: space_text,
        driver,
        seed,
        cost,
    };
    let (mut dir, settings, known) = match &out {
        Some(out) => {
            let resume = resume && search_dir::holds_search(out);
            let (opened, settings, known) = search_dir::open(out, resume, &asked)
                .map_err(|e| search_error(format!("out {}: {e}", out.display())))?;
            (Some(opened), settings, known)
        }
        None if resume => {
            return Err(search_error(
                "resume: give out=DIR, the search's directory".into(),
            ))
        }
        None => (
            None,
            Settings {
                program_hash: program_hash.clone(),
                space: space_text.to_string(),
                driver: driver.unwrap_or(search_dir::DEFAULT_DRIVER).to_string(),
                seed: seed.unwrap_or(0),
                cost: cost.unwrap_or(search_dir::DEFAULT_COST).to_string(),
            },
            Known::default(),
        ),
    };
    let driver = drivers::from_text::<Term>(&settings.driver)
        .map_err(|e| search_error(format!("driver: {e}")))?;
    // Ctrl-C (any Python signal handler that raises) stops the search after the
    // candidate in hand, killing its workers; the exception is raised when it has
    // stopped, after the directory has what it found.
    let stop = Arc::new(AtomicBool::new(false));
    let cost: Box<dyn Cost<Term>> = match executor {
        None => make_cost(
            py,
            &settings.cost,
            &start,
            threads,
            Some(limits),
            Some(stop.clone()),
            budget.time,
        )?,
        Some(executor) => {
            // The name is checked here, where the search starts.
            if !search_costs::is_cost(&settings.cost) {
                return Err(search_error(format!(
                    "cost: unknown cost `{}` (model, measured, model+measured)",
                    settings.cost
                )));
            }
            Box::new(RemoteCost {
                name: settings.cost.clone(),
                executor: PyExecutor(executor),
                entry: program.name().to_string(),
                start: print_definition(program.name(), &start),
            })
        }
    };
    let space_size = space.start(&start).size_estimate();
    let replay_from = start.clone();
    let interrupted: Mutex<Option<PyErr>> = Mutex::new(None);
    let unsaved: Mutex<Option<String>> = Mutex::new(None);
    let report = py.detach(|| {
        let flag = stop.clone();
        Search::new(space, driver, cost)
            .budget(budget)
            .seed(settings.seed)
            .jobs(jobs)
            .baseline(start.clone())
            .known(known)
            .stop_on(stop.clone())
            .observe(|p| {
                if let Some(dir) = dir.as_mut() {
                    if let Err(e) = dir.record(p, &settings, space_size) {
                        flag.store(true, Ordering::Relaxed);
                        if let Ok(mut slot) = unsaved.lock() {
                            slot.get_or_insert(e);
                        }
                    }
                }
                if let Err(e) = Python::attach(|py| py.check_signals()) {
                    flag.store(true, Ordering::Relaxed);
                    if let Ok(mut slot) = interrupted.lock() {
                        slot.get_or_insert(e);
                    }
                }
            })
            .run(&start)
    });
    if let Some(e) = unsaved.into_inner().ok().flatten() {
        return Err(search_error(format!(
            "out: {e} (the search stopped; what was written before is kept)"
        )));
    }
    // The report names the best strategy only where it replays, as the command's does.
    let replayed: Option<Term> = report.best().and_then(|best| {
        let strategy = registry().parse(&best.strategy).ok()?;
        strategy
            .apply(&replay_from, &mut elevate_core::Context::default())
            .ok()
    });
    if let Some(dir) = dir.as_mut() {
        let program = &program.program;
        py.detach(|| dir.finish(&report, program, replayed.as_ref()))
            .map_err(|e| search_error(format!("out {}: {e}", dir.path().display())))?;
    }
    if let Some(e) = interrupted.into_inner().ok().flatten() {
        return Err(e);
    }
    let line = report_json(&report, &report.cost, replayed.as_ref()).to_string();
    let log = report.log.iter().map(|c| log_line(c).to_string()).collect();
    Ok((line, log))
}

/// Serves the worker protocol on standard input and output, then ends the process:
/// `python -m elevate.worker`, started by a measured cost.
#[pyfunction]
pub fn _serve_worker(py: Python<'_>) {
    py.detach(|| elevate_bridge::measure::serve_stdio())
}

/// Evaluates programs sent as RISE text with a cost of a search's start program:
/// what an executor's worker runs (`elevate.executors`).
#[pyclass(name = "CostEvaluator", module = "elevate._native", frozen)]
pub struct PyCostEvaluator {
    cost: Box<dyn Cost<Term>>,
}

#[pymethods]
impl PyCostEvaluator {
    /// The cost `cost` (`model`, `measured`, `model+measured`) of searches from
    /// `start` (RISE text of the start program, at concrete sizes).
    #[new]
    #[pyo3(signature = (cost, start, threads=None))]
    fn new(cost: &str, start: &str, threads: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let threads = crate::convert::threads_of(threads, "threads")?;
        let start = Program::load(start, None)
            .map_err(|e| crate::errors::rise_error(&e, "start", start))?;
        let cost = Python::attach(|py| {
            make_cost(py, cost, &start.entry().term, threads, None, None, None)
        })?;
        Ok(PyCostEvaluator { cost })
    }

    /// One JSON object per program (`cost`, `model`, `ms`, `compile_ms`; or `status`
    /// and `reason`), in order.
    #[pyo3(signature = (programs, jobs=None))]
    fn evaluate(
        &self,
        py: Python<'_>,
        programs: Vec<String>,
        jobs: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<String>> {
        let jobs = crate::convert::threads_of(jobs, "jobs")?.unwrap_or(1);
        Ok(py.detach(|| {
            let parsed: Vec<Result<Term, String>> = programs
                .iter()
                .map(|text| {
                    Program::load(text, None)
                        .map(|p| p.entry().term.clone())
                        .map_err(|e| format!("the candidate does not parse: {}", e.message))
                })
                .collect();
            let ok: Vec<&Term> = parsed.iter().filter_map(|p| p.as_ref().ok()).collect();
            let mut measured = self.cost.evaluate_all(&ok, jobs.max(1)).into_iter();
            parsed
                .iter()
                .map(|p| match p {
                    Ok(_) => measured.next().unwrap_or_else(|| {
                        Err(Rejection::new(Status::CompileFailed, "nothing measured"))
                    }),
                    Err(reason) => Err(Rejection::new(Status::CompileFailed, reason.clone())),
                })
                .map(|m| measure_json(&m).to_string())
                .collect()
        }))
    }
}

/// The search's decisions, a step at a time, for learning agents (`elevate.gym`
/// wraps it as a Gymnasium environment).
#[pyclass(name = "Environment", module = "elevate._native")]
pub struct PyEnvironment {
    env: Environment<Term>,
    start: Term,
    entry: String,
    file: String,
    /// The cost's name and threads, for a space without decisions: its one point's
    /// cost is asked for once, on the no-op step that takes it.
    cost: String,
    threads: Option<usize>,
    /// That point's reward and cost, once asked for.
    only_point: Option<(f64, Result<f64, Rejection>)>,
}

impl PyEnvironment {
    /// The reward and the cost of the only point of a space without decisions (the
    /// start state is final): the log speedup of its program over the start's by the
    /// cost (0 where it is the start program itself), or the failed reward.
    fn only_point(&mut self) -> PyResult<(f64, Result<f64, Rejection>)> {
        if let Some(end) = &self.only_point {
            return Ok(end.clone());
        }
        let state = self.env.state();
        let end = if let Some(reason) = state.failure() {
            let failed = Rejection::new(Status::StrategyFailed, reason.to_string());
            (elevate_strategies::search::FAILED_REWARD, Err(failed))
        } else {
            use elevate_strategies::search::Fingerprint;
            let program = state.program().clone();
            let baseline = self.env.baseline();
            let cost = match baseline {
                Some(b) if program.fingerprint() == self.start.fingerprint() => Ok(b),
                _ => Python::attach(|py| {
                    make_cost(py, &self.cost, &self.start, self.threads, None, None, None)
                })?
                .evaluate(&program)
                .map(|m| m.cost),
            };
            let reward = match (&cost, baseline) {
                (Ok(c), Some(b)) if *c > 0.0 && b > 0.0 => (b / c).ln(),
                (Ok(_), _) => 0.0,
                (Err(_), _) => elevate_strategies::search::FAILED_REWARD,
            };
            (reward, cost)
        };
        self.only_point = Some(end.clone());
        Ok(end)
    }
}

#[pymethods]
impl PyEnvironment {
    /// An environment over `space` (text or `auto`) from `program` at sizes `nats`,
    /// rewarded by `cost` (`model` or `measured`); reset once. `features`: `state`
    /// (decisions made, options now, log10 of the space left) or `loops` (those, then
    /// the program's loop nests: trip counts, loop kinds, vector lanes, parallel
    /// loops, bytes read and written, arithmetic intensity; the program is lowered and
    /// traced for them, once per program).
    #[new]
    #[pyo3(signature = (program, space="auto", cost="model", nats=None, threads=None, features="state"))]
    fn new(
        program: &PyProgram,
        space: &str,
        cost: &str,
        nats: Option<&Bound<'_, PyAny>>,
        threads: Option<&Bound<'_, PyAny>>,
        features: &str,
    ) -> PyResult<Self> {
        let nats = crate::convert::nats_of(nats)?;
        let threads = crate::convert::threads_of(threads, "threads")?;
        let start = start(program, nats.as_ref())?;
        let space = self::space(space)?;
        let cost_name = cost;
        let cost = Python::attach(|py| make_cost(py, cost, &start, threads, None, None, None))?;
        let mut env = Environment::new(space, cost);
        match features {
            "state" => {}
            "loops" => env = env.with_features(elevate_rise::search::LoopNests::default()),
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown features `{other}` (state, loops)"
                )))
            }
        }
        env.reset(&start);
        Ok(PyEnvironment {
            env,
            start,
            entry: program.name().to_string(),
            file: program.file.clone(),
            cost: cost_name.to_string(),
            threads,
            only_point: None,
        })
    }

    /// Starts a new episode from the program; its features.
    fn reset<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyArray1<f32>> {
        self.env.reset(&self.start);
        self.features(py)
    }

    /// `(transformations, parameters)`: the multi-discrete action space.
    #[getter]
    fn shape(&self) -> (usize, usize) {
        let s = self.env.shape();
        (s.transformations, s.parameters)
    }

    /// Takes the action `(transformation, parameter)`: `(reward, done, cost)` where
    /// `cost` is the end's cost, `None` before the end, or a dict with `status` and
    /// `reason` for an end that failed. A `ValueError` for an illegal action, or for
    /// one outside `shape` (naming the argument). A space without decisions (its
    /// start is already done) has one action, the no-op `(0, 0)`: it gives the end of
    /// the episode on the space's one point (the reward 0 for `id`).
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        transformation: &Bound<'py, PyAny>,
        parameter: &Bound<'py, PyAny>,
    ) -> PyResult<(f64, bool, Option<Bound<'py, PyAny>>)> {
        let shape = self.env.shape();
        let action = Action {
            transformation: crate::convert::count_usize(
                transformation,
                "transformation",
                0,
                shape.transformations as u64 - 1,
            )?,
            parameter: crate::convert::count_usize(
                parameter,
                "parameter",
                0,
                shape.parameters as u64 - 1,
            )?,
        };
        let no_op = Action {
            transformation: 0,
            parameter: 0,
        };
        let t = if action == no_op && self.env.steps_taken() == 0 && self.env.state().is_final() {
            let (reward, outcome) = py.detach(|| self.only_point())?;
            elevate_strategies::search::Transition {
                reward,
                done: true,
                outcome: Some(outcome),
            }
        } else {
            py.detach(|| self.env.step(action))
                .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?
        };
        let outcome = match t.outcome {
            None => None,
            Some(Ok(cost)) => Some(cost.into_pyobject(py)?.into_any()),
            Some(Err(r)) => {
                let d = PyDict::new(py);
                d.set_item("status", r.status.as_str())?;
                d.set_item("reason", r.reason)?;
                Some(d.into_any())
            }
        };
        Ok((t.reward, t.done, outcome))
    }

    /// The legal actions now, as `(transformation, parameter)`.
    fn legal_actions(&self) -> Vec<(usize, usize)> {
        self.env
            .legal_actions()
            .into_iter()
            .map(|a| (a.transformation, a.parameter))
            .collect()
    }

    /// The legal actions as a boolean mask over `transformations * parameters`
    /// actions, row-major.
    fn mask<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        self.env.mask().to_pyarray(py)
    }

    /// The legal actions as one mask per dimension, concatenated (sb3-contrib's
    /// MaskablePPO form): `transformations` entries (legal now), then `parameters`
    /// entries (legal for some legal transformation).
    fn action_masks<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        let shape = self.env.shape();
        let mut mask = vec![false; shape.transformations + shape.parameters];
        for a in self.env.legal_actions() {
            mask[a.transformation] = true;
            mask[shape.transformations + a.parameter] = true;
        }
        mask.to_pyarray(py)
    }

    /// How many parameters `transformation` has now (its legal ones are `0..count`);
    /// 0 where it is not legal.
    fn parameter_count(&self, transformation: &Bound<'_, PyAny>) -> PyResult<usize> {
        let transformation =
            crate::convert::count_usize(transformation, "transformation", 0, u64::MAX)?;
        Ok(self
            .env
            .legal_actions()
            .iter()
            .filter(|a| a.transformation == transformation)
            .map(|a| a.parameter + 1)
            .max()
            .unwrap_or(0))
    }

    /// Goes back one step (in constant time); `False` at the start of an episode.
    fn undo(&mut self) -> bool {
        self.env.undo()
    }

    /// The state's features: decisions made, options now, log10 of the space left
    /// (as float32, Gymnasium's `Box` observations).
    fn features<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f32>> {
        let features: Vec<f32> = self.env.features().iter().map(|x| *x as f32).collect();
        features.to_pyarray(py)
    }

    /// How many numbers `features` gives.
    #[getter]
    fn feature_len(&self) -> usize {
        self.env.feature_len()
    }

    /// Steps taken in this episode.
    #[getter]
    fn steps_taken(&self) -> usize {
        self.env.steps_taken()
    }

    /// Whether the episode has ended.
    #[getter]
    fn done(&self) -> bool {
        self.env.state().is_final()
    }

    /// The baseline's cost (the start program's), if it has one.
    #[getter]
    fn baseline(&self) -> Option<f64> {
        self.env.baseline()
    }

    /// The decisions so far, as strategy text.
    #[getter]
    fn strategy(&self) -> String {
        self.env.state().text()
    }

    /// The options at this state, as text.
    fn options(&self) -> Vec<String> {
        let state = self.env.state();
        (0..state.options())
            .filter_map(|i| state.option_text(i))
            .collect()
    }

    /// The program at this state.
    #[getter]
    fn program(&self) -> PyResult<PyProgram> {
        PyProgram::from_term(&self.entry, self.env.state().program(), &self.file)
    }
}
