//! The measured cost: candidates compiled and timed in worker processes.

use super::limits::CandidateLimits;
use super::pool::{Busy, Pool, WorkerCommand};
use super::protocol::{Reply, Request};
use elevate_rise::search::{fingerprint, ModelCost};
use elevate_rise::{io, print_definition, NatEnv, Term, Value};
use elevate_strategies::search::{
    evaluate_as_batch, parallel_map, Cost, Measure, Rejection, Status,
};
use serde_json::Value as Json;
use std::collections::{HashSet, VecDeque};
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
struct Shared {
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
    shared: Mutex<Shared>,
    in_flight: Arc<Mutex<Vec<InFlight>>>,
    /// Where the reference values came from, once known.
    reference_source: Arc<Mutex<Option<&'static str>>>,
}

/// One candidate of a round, through the phases.
#[derive(Clone)]
struct Candidate {
    key: String,
    hash: u64,
    text: String,
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
            shared: Mutex::new(Shared {
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

    fn lock(&self) -> MutexGuard<'_, Shared> {
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

    /// Compiles `candidates` on up to `jobs` workers at once: for each, the slot of
    /// the worker that holds it and its compile time, or why it has none.
    fn compile_all(
        &self,
        shared: &mut Shared,
        candidates: &[Candidate],
        deadline: Option<Instant>,
    ) -> Vec<Result<(usize, f64), Rejection>> {
        let mut results: Vec<Option<Result<(usize, f64), Rejection>>> =
            vec![None; candidates.len()];
        let mut queue: VecDeque<usize> = (0..candidates.len()).collect();
        let mut busy: Vec<Busy> = Vec::new();
        let mut working: Vec<Option<usize>> = vec![None; shared.pool.len()];
        loop {
            // Every idle worker takes the next candidate.
            let idle: Vec<usize> = (0..working.len())
                .filter(|&s| working[s].is_none())
                .collect();
            for slot in idle {
                let Some(&i) = queue.front() else { break };
                if let Err(why) = shared.pool.ensure(slot) {
                    queue.pop_front();
                    results[i] = Some(Err(Rejection::new(Status::Crashed, why)));
                    continue;
                }
                let c = &candidates[i];
                let request = Request::Compile {
                    key: c.key.clone(),
                    program: c.text.clone(),
                };
                queue.pop_front();
                match shared.pool.send(slot, &request) {
                    Ok(()) => {
                        working[slot] = Some(i);
                        self.flying(slot, Some((c, "compiling")));
                        busy.push(Busy {
                            slot,
                            since: Instant::now(),
                            limit: self.limits.compile,
                            over: Status::CompileTimeout,
                            what: "the compile limit",
                        });
                    }
                    Err(r) => results[i] = Some(Err(r)),
                }
            }
            if busy.is_empty() {
                break;
            }
            let (slot, outcome) = shared.pool.wait(&mut busy, deadline, self.stop_flag());
            let Some(i) = working[slot].take() else {
                continue;
            };
            self.flying(slot, None);
            results[i] = Some(match outcome {
                Ok(Reply::Compiled { compile_ms, .. }) => {
                    shared.pool.served(slot, &candidates[i].key);
                    Ok((slot, compile_ms))
                }
                Ok(reply) => Err(failure(reply)),
                Err(r) => Err(r),
            });
            if results[i]
                .as_ref()
                .is_some_and(|r| r.as_ref().is_err_and(|r| r.status == Status::Stopped))
            {
                // The rest of the round is stopped too.
                for j in queue.drain(..) {
                    results[j] = Some(Err(r_stopped()));
                }
            }
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(r_stopped())))
            .collect()
    }

    /// The reference values, computed by a worker the first time.
    fn reference(
        &self,
        shared: &mut Shared,
        deadline: Option<Instant>,
    ) -> Result<Arc<String>, Rejection> {
        if let Some(known) = &shared.reference {
            return known.clone();
        }
        let slot = 0;
        shared
            .pool
            .ensure(slot)
            .map_err(|why| Rejection::new(Status::Crashed, why))?;
        shared.pool.send(slot, &Request::Reference)?;
        let mut busy = vec![Busy {
            slot,
            since: Instant::now(),
            limit: self.reference_time,
            over: Status::Timeout,
            what: "the time the interpreter may take for the reference values",
        }];
        let why = |w: String| {
            Rejection::new(
                Status::WrongValues,
                format!("the interpreter cannot compute the reference values: {w}"),
            )
        };
        let outcome = shared.pool.wait(&mut busy, deadline, self.stop_flag()).1;
        let known = match outcome {
            Ok(Reply::Reference { values }) => {
                shared.pool.set_has_reference(slot);
                self.set_source("the interpreter");
                Ok(Arc::new(values))
            }
            Ok(Reply::Error { reason }) => Err(why(reason)),
            Ok(other) => Err(why(format!("the worker answered {other:?}"))),
            // Stopped: not known yet, asked again next time.
            Err(r) if r.status == Status::Stopped => return Err(r),
            // Too slow: the start program compiled with `defaultLowering` alone.
            Err(r) if r.status == Status::Timeout => self.compiled_reference(shared, deadline),
            // Its worker died or passed a limit: that is what the candidate gets.
            Err(r) => Err(Rejection::new(
                r.status,
                format!(
                    "the interpreter could not compute the reference values: {}",
                    r.reason
                ),
            )),
        };
        if let Err(r) = &known {
            if r.status == Status::Stopped {
                return known;
            }
        }
        shared.reference = Some(known.clone());
        known
    }

    /// The values of the start program compiled with `defaultLowering` alone, as the
    /// reference (where the interpreter takes too long).
    fn compiled_reference(
        &self,
        shared: &mut Shared,
        deadline: Option<Instant>,
    ) -> Result<Arc<String>, Rejection> {
        let hash = fingerprint(&self.start);
        let start = Candidate {
            key: format!("{hash:016x}"),
            hash,
            text: print_definition("f", &self.start),
        };
        let how = Runs {
            check: false,
            warm_up: false,
            runs: 1,
            race: false,
            output: true,
        };
        let slot = Self::any_slot(shared);
        match self.run_one(shared, slot, &start, how, deadline)? {
            Reply::Measured {
                output: Some(values),
                ..
            } => {
                self.set_source("the start program compiled with defaultLowering alone");
                Ok(Arc::new(values))
            }
            other => Err(Rejection::new(
                Status::WrongValues,
                format!(
                    "no reference values: the interpreter took too long, and the start program compiled gave none ({})",
                    failure(other).reason
                ),
            )),
        }
    }

    /// Runs candidate `c` on the worker in `slot` (compiling it there if it does not
    /// hold it), alone.
    fn run_one(
        &self,
        shared: &mut Shared,
        slot: usize,
        c: &Candidate,
        how: Runs,
        deadline: Option<Instant>,
    ) -> Result<Reply, Rejection> {
        let Runs {
            check,
            warm_up,
            runs,
            race,
            output,
        } = how;
        shared
            .pool
            .ensure(slot)
            .map_err(|why| Rejection::new(Status::Crashed, why))?;
        if check && !shared.pool.has_reference(slot) {
            let values = self.reference(shared, deadline)?;
            if !shared.pool.has_reference(slot) {
                shared.pool.send(
                    slot,
                    &Request::Expect {
                        values: values.to_string(),
                    },
                )?;
                let mut busy = vec![Busy {
                    slot,
                    since: Instant::now(),
                    limit: SETUP_TIME * 10,
                    over: Status::Timeout,
                    what: "the time to take the reference values",
                }];
                match shared.pool.wait(&mut busy, deadline, self.stop_flag()).1? {
                    Reply::Ready { .. } => shared.pool.set_has_reference(slot),
                    other => return Err(failure(other)),
                }
            }
        }
        let compiles = !shared.pool.holds(slot, &c.key);
        let request = Request::Run {
            key: c.key.clone(),
            program: c.text.clone(),
            check,
            warm_up,
            runs,
            best_ms: shared.best_ms.filter(|_| race),
            run_limit_ms: self.limits.run.as_secs_f64() * 1e3,
            output,
        };
        shared.pool.send(slot, &request)?;
        self.flying(slot, Some((c, "running")));
        // Every run up to its limit, time to set up the call and compare its values,
        // and the compilation if this worker must compile it.
        let mut limit = self.limits.run * (runs as u32 + 1) + SETUP_TIME;
        if compiles {
            limit += self.limits.compile;
        }
        let mut busy = vec![Busy {
            slot,
            since: Instant::now(),
            limit,
            over: if compiles {
                Status::CompileTimeout
            } else {
                Status::Timeout
            },
            what: if compiles {
                "the compile limit and the run limit of each run"
            } else {
                "the run limit of each run"
            },
        }];
        let outcome = shared.pool.wait(&mut busy, deadline, self.stop_flag()).1;
        self.flying(slot, None);
        let reply = outcome?;
        shared.pool.served(slot, &c.key);
        Ok(reply)
    }

    /// A slot whose worker runs, or the first.
    fn any_slot(shared: &Shared) -> usize {
        (0..shared.pool.len())
            .find(|&s| shared.pool.id(s).is_some())
            .unwrap_or(0)
    }
}

/// How to run a candidate.
#[derive(Debug, Clone, Copy)]
struct Runs {
    /// Check its values against the reference.
    check: bool,
    /// Run it once untimed first.
    warm_up: bool,
    /// The most timed runs.
    runs: usize,
    /// Time it less when it is much slower than the best so far.
    race: bool,
    /// Answer with its values too.
    output: bool,
}

fn r_stopped() -> Rejection {
    Rejection::new(
        Status::Stopped,
        "stopped by the budget: the search's time was up",
    )
}

/// The rejection a worker's reply other than the one hoped for stands for.
fn failure(reply: Reply) -> Rejection {
    match reply {
        Reply::Failed { status, reason, .. } => Rejection::new(
            Status::parse(&status)
                .filter(|s| *s != Status::Ok)
                .unwrap_or(Status::CompileFailed),
            reason,
        ),
        Reply::Error { reason } => Rejection::new(Status::Crashed, reason),
        other => Rejection::new(Status::Crashed, format!("its worker answered {other:?}")),
    }
}

/// The measure of a worker's runs: the median of its timed runs (the warm-up's time
/// where it had none), their spread.
fn measure_of(reply: &Reply, compile_ms: Option<f64>) -> Option<Measure> {
    let Reply::Measured {
        compile_ms: compiled_now,
        warm_up_ms,
        times_ms,
        ..
    } = reply
    else {
        return None;
    };
    let mut times = times_ms.clone();
    times.sort_by(f64::total_cmp);
    let median = match times.len() {
        0 => (*warm_up_ms)?,
        n => times[n / 2],
    };
    Some(Measure {
        cost: median,
        model: None,
        ms: Some(median),
        compile_ms: compiled_now.or(compile_ms),
        spread_ms: (times.len() > 1).then(|| (times[0], times[times.len() - 1])),
    })
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
        let candidates: Vec<Candidate> = programs
            .iter()
            .map(|p| {
                let hash = fingerprint(p);
                Candidate {
                    key: format!("{hash:016x}"),
                    hash,
                    text: print_definition("f", p),
                }
            })
            .collect();
        let mut guard = self.lock();
        let shared = &mut *guard;
        shared.pool.resize(jobs.max(1));
        // Every candidate compiles (or fails to) before any runs.
        let compiling = Instant::now();
        let compiled = self.compile_all(shared, &candidates, deadline);
        shared.compile_rate.candidates += compiled
            .iter()
            .filter(|r| {
                r.as_ref()
                    .map_or_else(|r| r.status != Status::Stopped, |_| true)
            })
            .count();
        shared.compile_rate.seconds += compiling.elapsed().as_secs_f64();
        // Then each runs alone, on the worker that compiled it where it still runs.
        let mut results = Vec::with_capacity(candidates.len());
        for (c, compiled) in candidates.iter().zip(compiled) {
            let (slot, compile_ms) = match compiled {
                Ok(done) => done,
                Err(r) => {
                    results.push(Err(r));
                    continue;
                }
            };
            let slot = match shared.pool.holds(slot, &c.key) {
                true => slot,
                false => Self::any_slot(shared),
            };
            let check = !shared.checked.contains(&c.hash);
            let how = Runs {
                check,
                warm_up: true,
                runs: self.runs,
                race: true,
                output: false,
            };
            let outcome = self.run_one(shared, slot, c, how, deadline);
            let result = outcome.and_then(|reply| {
                let raced = matches!(reply, Reply::Measured { raced: true, .. });
                match measure_of(&reply, Some(compile_ms)) {
                    Some(m) => {
                        if raced {
                            shared.raced += 1;
                        } else {
                            shared.best_ms = Some(shared.best_ms.map_or(m.cost, |b| b.min(m.cost)));
                        }
                        Ok(m)
                    }
                    None => Err(failure(reply)),
                }
            });
            if check && result.is_ok() {
                shared.checked.insert(c.hash);
            }
            results.push(result);
        }
        self.idle();
        shared.pool.retire_worn();
        drop(guard);
        if let Some(model) = &self.model {
            let ok: Vec<usize> = (0..programs.len())
                .filter(|&i| results[i].is_ok())
                .collect();
            let chosen: Vec<&Term> = ok.iter().map(|&i| programs[i]).collect();
            let estimates = parallel_map(&chosen, jobs, |p| model.evaluate(p));
            for (i, estimate) in ok.into_iter().zip(estimates) {
                if let (Ok(m), Ok(e)) = (&mut results[i], estimate) {
                    m.model = Some(e.cost);
                }
            }
        }
        results
    }

    fn compare(
        &self,
        programs: &[&Term],
        turns: usize,
        deadline: Option<Instant>,
    ) -> Vec<Option<Measure>> {
        let candidates: Vec<Candidate> = programs
            .iter()
            .map(|p| {
                let hash = fingerprint(p);
                Candidate {
                    key: format!("{hash:016x}"),
                    hash,
                    text: print_definition("f", p),
                }
            })
            .collect();
        let mut guard = self.lock();
        let shared = &mut *guard;
        shared.pool.resize(1);
        // A warm-up run before each turn's timed one (the call's buffers are fresh
        // each time), except for programs whose run takes a second or more, for
        // which a first touch of their buffers is noise.
        const NO_WARM_UP_MS: f64 = 1_000.0;
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); candidates.len()];
        let mut failed = vec![false; candidates.len()];
        'turns: for turn in 0..turns.max(1) {
            for (k, c) in candidates.iter().enumerate() {
                if failed[k] {
                    continue;
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    break 'turns;
                }
                // On the worker that holds it compiled, if one does.
                let slot = (0..shared.pool.len())
                    .find(|&s| shared.pool.holds(s, &c.key))
                    .unwrap_or_else(|| Self::any_slot(shared));
                // One run a turn; the first turn warms the program up.
                let slow = times[k].last().is_some_and(|&ms| ms >= NO_WARM_UP_MS);
                let how = Runs {
                    check: false,
                    warm_up: turn == 0 || !slow,
                    runs: 1,
                    race: false,
                    output: false,
                };
                match self.run_one(shared, slot, c, how, deadline) {
                    Ok(Reply::Measured { times_ms, .. }) if !times_ms.is_empty() => {
                        times[k].extend(times_ms)
                    }
                    Ok(Reply::Measured {
                        warm_up_ms: Some(ms),
                        ..
                    }) => times[k].push(ms),
                    _ => failed[k] = true,
                }
            }
        }
        self.idle();
        times
            .into_iter()
            .map(|mut t| {
                if t.is_empty() {
                    return None;
                }
                t.sort_by(f64::total_cmp);
                let median = t[t.len() / 2];
                Some(Measure {
                    cost: median,
                    model: None,
                    ms: Some(median),
                    compile_ms: None,
                    spread_ms: Some((t[0], t[t.len() - 1])),
                })
            })
            .collect()
    }
}
