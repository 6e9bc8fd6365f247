//! The measured cost: candidates compiled and timed in worker processes.

mod reference;
mod rounds;

use super::limits::CandidateLimits;
use super::pool::{Pool, WorkerCommand};
use super::protocol::Request;
use elevate_rise::search::ModelCost;
use elevate_rise::{io, print_definition, NatEnv, Term, Value};
use elevate_strategies::search::{evaluate_as_batch, Cost, Measure, Rejection};
use serde_json::Value as Json;
use std::collections::HashSet;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Why a measured cost cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// The program's inputs cannot be made (sizes not concrete, too large).
    #[error("the inputs of the program cannot be made: {0}")]
    Inputs(#[from] elevate_rise::Error),
    /// No worker can be started.
    #[error("{0}")]
    Worker(String),
}

/// How fast candidates compiled: how many, in how many seconds of wall time spent
/// compiling (all jobs together).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CompileRate {
    /// Candidates whose compilation finished (compiled, or failed to).
    pub candidates: usize,
    /// Wall time of the rounds' compilation phases, in seconds.
    pub seconds: f64,
}

impl CompileRate {
    /// Candidates compiled per second of wall time.
    pub fn per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.candidates as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// What a worker may take beyond its runs: filling its buffers, comparing its
/// values with the interpreter's.
const SETUP_TIME: Duration = Duration::from_secs(2);

/// How long the interpreter may take for the reference values, by default.
pub const REFERENCE_TIME: Duration = Duration::from_secs(600);

/// A candidate in flight, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InFlight {
    /// The worker's slot.
    pub slot: usize,
    /// Its program's fingerprint.
    pub program_hash: u64,
    /// `compiling` or `running`.
    pub phase: &'static str,
    /// Since when.
    pub since: Instant,
}

/// What the evaluations of a measured cost change.
struct DeepRc {
    pool: Pool,
    /// The best median so far, in milliseconds.
    best_ms: Option<f64>,
    /// Candidates not timed past their first run, being slower than the best.
    raced: usize,
    /// The fingerprints of the programs whose values were checked.
    checked: HashSet<u64>,
    compile_rate: CompileRate,
    /// The reference values as JSON text, once known (or why there are none).
    reference: Option<Result<Arc<String>, Rejection>>,
}

/// The measured cost: each candidate compiled through the bridge and timed, in
/// worker processes ([`super`]); its cost is its median run time in milliseconds.
pub struct Measured {
    start: Term,
    seed: u64,
    inputs: Vec<Value>,
    runs: usize,
    limits: CandidateLimits,
    /// How long the interpreter may take for the reference values before the start
    /// program compiled with `defaultLowering` alone gives them instead.
    reference_time: Duration,
    threads: Option<usize>,
    model: Option<ModelCost>,
    stop: Option<Arc<AtomicBool>>,
    shared: Mutex<DeepRc>,
    in_flight: Arc<Mutex<Vec<InFlight>>>,
    /// Where the reference values came from, once known.
    reference_source: Arc<Mutex<Option<&'static str>>>,
}

/// One candidate of a round, through the phases.
#[derive(Clone)]
struct Candidate {
    /// Its program's fingerprint in hexadecimal: what the worker knows it by.
    key: String,
    hash: u64,
    /// Its program as RISE text, as the worker reads it.
    text: String,
}

impl Candidate {
    fn of(program: &Term) -> Candidate {
        let hash = elevate_rise::search::fingerprint(program);
        Candidate {
            key: format!("{hash:016x}"),
            hash,
            text: print_definition("f", program),
        }
    }
}

impl Measured {
    /// The measured cost of candidates of `program` (the program the search starts
    /// from: a closed, typed function with concrete sizes), on random inputs (seed 0),
    /// 5 runs per candidate, the default limits, its workers started from
    /// [`WorkerCommand::from_env`].
    pub fn new(program: &Term) -> Result<Measured, MeasureError> {
        Measured::with_seed(program, 0)
    }

    /// [`Measured::new`] on the random inputs of `seed`.
    pub fn with_seed(program: &Term, seed: u64) -> Result<Measured, MeasureError> {
        let signature = io::signature(program);
        let inputs = io::random_inputs(&signature, &NatEnv::default(), seed)?;
        let command = WorkerCommand::from_env().map_err(MeasureError::Worker)?;
        let limits = CandidateLimits::defaults(1, None);
        let measured = Measured {
            start: program.clone(),
            seed,
            inputs,
            runs: 5,
            limits,
            reference_time: REFERENCE_TIME,
            threads: None,
            model: None,
            stop: None,
            shared: Mutex::new(DeepRc {
                pool: Pool::new(command, Request::Reference, 0),
                best_ms: None,
                raced: 0,
                checked: HashSet::new(),
                compile_rate: CompileRate::default(),
                reference: None,
            }),
            reference_source: Arc::new(Mutex::new(None)),
            in_flight: Arc::new(Mutex::new(Vec::new())),
        };
        Ok(measured.with_pool(None))
    }

    /// A new pool of workers for the current settings (by `command`, or the one it
    /// had).
    fn with_pool(self, command: Option<WorkerCommand>) -> Measured {
        let setup = Request::Setup {
            start: print_definition("f", &self.start),
            seed: self.seed,
            threads: self.threads,
            memory: self.limits.memory,
            stack: self.limits.stack,
        };
        let mut shared = self.shared.into_inner().unwrap_or_else(|e| e.into_inner());
        let command = command.unwrap_or_else(|| shared.pool.command().clone());
        shared.pool = Pool::new(command, setup, self.limits.memory);
        Measured {
            shared: Mutex::new(shared),
            ..self
        }
    }

    /// The same cost, its workers started by `command` (the Python package's
    /// `python -m elevate.worker`; a test's `elevate`).
    pub fn worker(self, command: WorkerCommand) -> Measured {
        self.with_pool(Some(command))
    }

    /// The same cost, taking the median of up to `runs` runs (at least 1) after the
    /// warm-up.
    pub fn runs(mut self, runs: usize) -> Measured {
        self.runs = runs.max(1);
        self
    }

    /// The same cost, where a run may take at most `timeout`.
    pub fn timeout(self, timeout: Duration) -> Measured {
        let limits = CandidateLimits {
            run: timeout,
            ..self.limits
        };
        self.limits(limits)
    }

    /// The same cost, where the interpreter may take `time` to compute the reference
    /// values (once); past it (the 1024-cubed matmul takes it minutes), candidates are
    /// checked against the start program compiled with `defaultLowering` alone (whose
    /// values are the interpreter's in every test of the bridge) instead.
    pub fn reference_time(mut self, time: Duration) -> Measured {
        self.reference_time = time;
        self
    }

    /// Where the reference values came from, once known: `the interpreter` or `the
    /// start program compiled with defaultLowering alone`.
    pub fn reference_source(&self) -> Option<&'static str> {
        self.reference_source.lock().ok().and_then(|s| *s)
    }

    /// Where [`reference_source`](Self::reference_source) is kept, for a display on
    /// another thread.
    pub fn reference_source_handle(&self) -> Arc<Mutex<Option<&'static str>>> {
        self.reference_source.clone()
    }

    fn set_source(&self, source: &'static str) {
        if let Ok(mut s) = self.reference_source.lock() {
            *s = Some(source);
        }
    }

    /// The same cost under `limits`.
    pub fn limits(mut self, limits: CandidateLimits) -> Measured {
        self.limits = limits;
        self.with_pool(None)
    }

    /// The limits of each candidate.
    pub fn candidate_limits(&self) -> CandidateLimits {
        self.limits
    }

    /// The same cost, checking candidates against `values` (what the program computes
    /// on these inputs: [`Measured::inputs`]) instead of the interpreter's result, which
    /// takes minutes for large programs.
    pub fn with_reference(self, values: Json) -> Measured {
        self.lock().reference = Some(Ok(Arc::new(values.to_string())));
        self.set_source("the values given");
        self
    }

    /// The same cost, running each candidate's parallel loops on `threads` threads (at
    /// least 1) instead of one per core.
    pub fn threads(mut self, threads: usize) -> Measured {
        self.threads = Some(threads.max(1));
        self.with_pool(None)
    }

    /// The same cost, giving every measured candidate `model`'s estimate too
    /// ([`Measure::model`]), so that a search can tell how well the model ranks.
    pub fn with_model(mut self, model: ModelCost) -> Measured {
        self.model = Some(model);
        self
    }

    /// The same cost, stopping what its workers do (killing them) once `stop` is set:
    /// the candidates in hand are [`Status::Stopped`].
    pub fn stop_on(mut self, stop: Arc<AtomicBool>) -> Measured {
        self.stop = Some(stop);
        self
    }

    /// Starts a worker now, so that one that cannot be started is an error before a
    /// search begins rather than a failed candidate.
    pub fn start_worker(&self) -> Result<(), MeasureError> {
        let mut shared = self.lock();
        shared.pool.resize(1);
        shared.pool.ensure(0).map_err(MeasureError::Worker)
    }

    fn lock(&self) -> MutexGuard<'_, DeepRc> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How fast candidates compiled so far.
    pub fn compile_rate(&self) -> CompileRate {
        self.lock().compile_rate
    }

    /// The inputs every candidate runs on.
    pub fn inputs(&self) -> &[Value] {
        &self.inputs
    }

    /// How many candidates were not timed past their first run, being
    /// [`RACE_FACTOR`](super::RACE_FACTOR) times slower than the best so far.
    pub fn raced(&self) -> usize {
        self.lock().raced
    }

    /// How many distinct programs had their values checked.
    pub fn checked_programs(&self) -> usize {
        self.lock().checked.len()
    }

    /// How many worker processes were started so far.
    pub fn workers_started(&self) -> usize {
        self.lock().pool.started
    }

    /// The resident memory of each running worker, in bytes.
    pub fn worker_memory(&self) -> Vec<u64> {
        self.lock().pool.resident()
    }

    /// Where the candidates in flight are kept, for a display on another thread.
    pub fn in_flight_handle(&self) -> Arc<Mutex<Vec<InFlight>>> {
        self.in_flight.clone()
    }

    /// The candidates in flight now (compiling or running), the longest first.
    pub fn in_flight(&self) -> Vec<InFlight> {
        let mut now = self.in_flight.lock().map(|f| f.clone()).unwrap_or_default();
        now.sort_by_key(|f| f.since);
        now
    }

    fn flying(&self, slot: usize, candidate: Option<(&Candidate, &'static str)>) {
        let Ok(mut f) = self.in_flight.lock() else {
            return;
        };
        f.retain(|i| i.slot != slot);
        if let Some((c, phase)) = candidate {
            f.push(InFlight {
                slot,
                program_hash: c.hash,
                phase,
                since: Instant::now(),
            });
        }
    }

    fn idle(&self) {
        if let Ok(mut f) = self.in_flight.lock() {
            f.clear();
        }
    }

    fn stop_flag(&self) -> Option<&AtomicBool> {
        self.stop.as_deref()
    }
}

impl Cost<Term> for Measured {
    fn name(&self) -> String {
        "measured".into()
    }

    fn evaluate(&self, program: &Term) -> Result<Measure, Rejection> {
        evaluate_as_batch(self, program)
    }

    fn evaluate_all(&self, programs: &[&Term], jobs: usize) -> Vec<Result<Measure, Rejection>> {
        self.evaluate_until(programs, jobs, None)
    }

    fn evaluate_until(
        &self,
        programs: &[&Term],
        jobs: usize,
        deadline: Option<Instant>,
    ) -> Vec<Result<Measure, Rejection>> {
        self.round(programs, jobs, deadline)
    }

    fn compare(
        &self,
        programs: &[&Term],
        turns: usize,
        deadline: Option<Instant>,
    ) -> Vec<Option<Measure>> {
        self.turns(programs, turns, deadline)
    }
}
