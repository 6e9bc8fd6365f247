//! The measured cost: candidates compiled through MLIR and timed on the machine.

use crate::driver::{compile_term, Options};
use crate::jit::{Compiled, OpenMp};
use elevate_rise::search::{fingerprint, ModelCost};
use elevate_rise::{evaluate, io, NatEnv, Term, Value};
use elevate_strategies::search::{
    evaluate_as_batch, parallel_map, Cost, Measure, Rejection, Status,
};
use serde_json::Value as Json;
use std::collections::HashSet;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Why a measured cost cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// The program's inputs cannot be made (sizes not concrete, too large).
    #[error("the inputs of the program cannot be made: {0}")]
    Inputs(#[from] elevate_rise::Error),
}

/// What every candidate of a [`Measured`] cost shares.
struct Setup {
    name: String,
    options: Options,
    inputs: Vec<Value>,
    program: Term,
    runs: usize,
    timeout: Duration,
    /// The interpreter's result on the inputs, computed once, when first needed.
    reference: OnceLock<Result<Arc<Json>, String>>,
    /// The best median so far, in milliseconds (infinite before any).
    best_ms: Mutex<f64>,
    /// How many candidates were not timed past their warm-up.
    raced: Mutex<usize>,
    /// The threads of each candidate's parallel loops (`None`: the OpenMP runtime's
    /// default, one per core).
    threads: Option<usize>,
    /// The model whose estimate each measured candidate also gets.
    model: Option<ModelCost>,
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

/// A candidate whose first run after the warm-up already takes this many times the
/// best median so far is not timed further: its cost is that run's time. A slow
/// candidate then costs two runs instead of six, which is most of a search's time
/// at large sizes. The warm-up itself says too little: it touches its buffers for
/// the first time (on large arrays, ten times slower than a later run) and may
/// start the OpenMP runtime's threads.
pub const RACE_FACTOR: f64 = 3.0;

/// How much slower a warm-up run may be than a later run of the same program (first
/// touch of fresh buffers, the OpenMP runtime starting): a candidate whose warm-up
/// takes more than this times [`RACE_FACTOR`] times the best median is not run again.
const WARM_UP_SLOWDOWN: f64 = 10.0;

/// The measured cost: compiled through the bridge, timed, checked (see the
/// [module](self) documentation). The cost of a candidate is its median run time in
/// milliseconds.
pub struct Measured {
    setup: Arc<Setup>,
    /// The fingerprints of the programs whose values were checked.
    checked: Mutex<HashSet<u64>>,
    compile_rate: Mutex<CompileRate>,
}

/// A compilation slot: at most `jobs` compile at once.
struct Slots {
    free: Mutex<usize>,
    freed: Condvar,
}

impl Slots {
    fn take(&self) {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
    }

    fn give(&self) {
        *self.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.freed.notify_one();
    }
}

/// What a candidate may take beyond its runs: filling its buffers, comparing its
/// values with the interpreter's.
const SETUP_TIME: Duration = Duration::from_secs(2);

/// Whether a compilation has finished in this process: the first runs alone.
static FIRST_COMPILATION: Mutex<bool> = Mutex::new(false);

/// The stack of a thread that compiles and runs a candidate.
const CANDIDATE_STACK_BYTES: usize = 64 << 20;

fn compile_candidate(setup: &Setup, term: &Term) -> Result<(Compiled, f64), Rejection> {
    let compile = || {
        let start = Instant::now();
        compile_term(&setup.name, term, None, &setup.options)
            .map(|c| (c, start.elapsed().as_secs_f64() * 1e3))
            .map_err(|e| Rejection::new(Status::CompileFailed, e.to_string()))
    };
    let mut done = FIRST_COMPILATION.lock().unwrap_or_else(|e| e.into_inner());
    if *done {
        drop(done);
        return compile();
    }
    let result = compile();
    *done = true;
    result
}

/// What a candidate's thread reports.
enum Report {
    Compiled(f64),
    Measured(Result<Measure, Rejection>),
}

impl Measured {
    /// The measured cost of candidates of `program` (the program the search starts
    /// from: a closed, typed function with concrete sizes), on random inputs (seed 0),
    /// with 5 runs per candidate and a timeout of 10 s per run.
    pub fn new(program: &Term) -> Result<Measured, MeasureError> {
        Measured::with_seed(program, 0)
    }

    /// [`Measured::new`] on the random inputs of `seed`.
    pub fn with_seed(program: &Term, seed: u64) -> Result<Measured, MeasureError> {
        let signature = io::signature(program);
        let inputs = io::random_inputs(&signature, &NatEnv::default(), seed)?;
        Ok(Measured {
            setup: Arc::new(Setup {
                name: "f".into(),
                options: Options::default(),
                inputs,
                program: program.clone(),
                runs: 5,
                timeout: Duration::from_secs(10),
                reference: OnceLock::new(),
                best_ms: Mutex::new(f64::INFINITY),
                raced: Mutex::new(0),
                threads: None,
                model: None,
            }),
            checked: Mutex::new(HashSet::new()),
            compile_rate: Mutex::new(CompileRate::default()),
        })
    }

    fn change(self, f: impl FnOnce(&mut Setup)) -> Measured {
        let s = &self.setup;
        let mut setup = Setup {
            name: s.name.clone(),
            options: s.options,
            inputs: s.inputs.clone(),
            program: s.program.clone(),
            runs: s.runs,
            timeout: s.timeout,
            // The same inputs: the same reference values.
            reference: s.reference.clone(),
            best_ms: Mutex::new(*s.best_ms.lock().unwrap_or_else(|e| e.into_inner())),
            raced: Mutex::new(0),
            threads: s.threads,
            model: s.model,
        };
        f(&mut setup);
        Measured {
            setup: Arc::new(setup),
            checked: self.checked,
            compile_rate: self.compile_rate,
        }
    }

    /// The same cost, taking the median of `runs` runs (at least 1) after the warm-up.
    pub fn runs(self, runs: usize) -> Measured {
        self.change(|s| s.runs = runs.max(1))
    }

    /// The same cost, where a run may take at most `timeout`.
    pub fn timeout(self, timeout: Duration) -> Measured {
        self.change(|s| s.timeout = timeout)
    }

    /// The same cost, compiling with `options` (the budget of `defaultLowering`, the
    /// limits of the buffers).
    pub fn options(self, options: Options) -> Measured {
        self.change(|s| s.options = options)
    }

    /// The same cost, checking candidates against `values` (what the program computes
    /// on these inputs: [`Measured::inputs`]) instead of the interpreter's result, which
    /// takes minutes for large programs (the 1024-cubed matmul, about five).
    pub fn with_reference(self, values: Json) -> Measured {
        let measured = self.change(|_| {});
        let _ = measured.setup.reference.set(Ok(Arc::new(values)));
        measured
    }

    /// The same cost, running each candidate's parallel loops on `threads` threads (at
    /// least 1) instead of one per core. Where the OpenMP runtime is not installed,
    /// programs with parallel loops do not compile, and this changes nothing.
    pub fn threads(self, threads: usize) -> Measured {
        self.change(|s| s.threads = Some(threads.max(1)))
    }

    /// The same cost, giving every measured candidate `model`'s estimate too
    /// ([`Measure::model`]), so that a search can tell how well the model ranks.
    pub fn with_model(self, model: ModelCost) -> Measured {
        self.change(|s| s.model = Some(model))
    }

    /// How fast candidates compiled so far.
    pub fn compile_rate(&self) -> CompileRate {
        self.compile_rate
            .lock()
            .map_or(CompileRate::default(), |r| *r)
    }

    /// The inputs every candidate runs on.
    pub fn inputs(&self) -> &[Value] {
        &self.setup.inputs
    }

    /// How many candidates cost their warm-up's time, being [`RACE_FACTOR`] times
    /// slower than the best so far.
    pub fn raced(&self) -> usize {
        *self.setup.raced.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many distinct programs had their values checked.
    pub fn checked_programs(&self) -> usize {
        self.checked.lock().map_or(0, |c| c.len())
    }

    /// The interpreter's result on the inputs (computed the first time).
    fn reference_values(&self) -> &Result<Arc<Json>, String> {
        let s = &self.setup;
        s.reference.get_or_init(|| {
            evaluate(&s.program, &NatEnv::default(), &s.inputs)
                .map_err(|e| e.to_string())
                .and_then(|v| v.to_json().map(Arc::new).map_err(|e| e.to_string()))
        })
    }

    /// Starts a thread for candidate `index`: it compiles `term` (taking a slot), then
    /// waits for its turn to run.
    fn spawn(
        &self,
        index: usize,
        term: Term,
        slots: Arc<Slots>,
        reports: Sender<(usize, Report)>,
    ) -> Sender<Option<Option<Arc<Json>>>> {
        let (go, turn) = channel::<Option<Option<Arc<Json>>>>();
        let setup = self.setup.clone();
        let failed = reports.clone();
        // The candidate's code runs on this thread: a stack as large as a main
        // thread's and more (a register tile's buffers live on it), not the 2 MiB of
        // a spawned thread's.
        let thread = std::thread::Builder::new().stack_size(CANDIDATE_STACK_BYTES);
        let spawned = thread.spawn(move || {
            slots.take();
            let compiled = compile_candidate(&setup, &term);
            slots.give();
            let compiled = match compiled {
                Ok((c, ms)) => {
                    let _ = reports.send((index, Report::Compiled(ms)));
                    (c, ms)
                }
                Err(r) => {
                    let _ = reports.send((index, Report::Measured(Err(r))));
                    return;
                }
            };
            // `Some(reference)`: run now, checking the values against the reference
            // if there is one; `None` or a closed channel: not needed.
            if let Ok(Some(reference)) = turn.recv() {
                let result = run(&setup, &compiled.0, compiled.1, reference.as_deref());
                // The machine code is freed before the round goes on: freeing it
                // runs LLVM (the JIT's deinitializers), which must not overlap the
                // process's exit, where LLVM's global objects are destroyed.
                drop(compiled);
                let _ = reports.send((index, Report::Measured(result)));
            }
        });
        if let Err(e) = spawned {
            let why = format!("no thread to compile and run it on: {e}");
            let rejection = Rejection::new(Status::CompileFailed, why);
            let _ = failed.send((index, Report::Measured(Err(rejection))));
        }
        go
    }
}

/// Times a compiled candidate: warm-up (checked against `reference`, if given), then
/// the median of the runs.
fn run(
    setup: &Setup,
    compiled: &Compiled,
    compile_ms: f64,
    reference: Option<&Json>,
) -> Result<Measure, Rejection> {
    let failed = |e: crate::Error| Rejection::new(Status::WrongValues, e.to_string());
    if let (Some(threads), Some(openmp)) = (setup.threads, OpenMp::get()) {
        openmp.set_threads(threads);
    }
    let mut call = compiled.prepare(&setup.inputs).map_err(failed)?;
    let start = Instant::now();
    call.invoke().map_err(failed)?;
    let warm_up = start.elapsed();
    if warm_up > setup.timeout {
        return Err(Rejection::new(
            Status::Timeout,
            format!(
                "a run took {:.1} ms, more than the timeout of {:.1} ms",
                warm_up.as_secs_f64() * 1e3,
                setup.timeout.as_secs_f64() * 1e3
            ),
        ));
    }
    if let Some(expected) = reference {
        let found = call
            .output()
            .to_json()
            .map_err(|e| Rejection::new(Status::WrongValues, e.to_string()))?;
        if let Some(d) = io::first_difference(expected, &found) {
            return Err(Rejection::new(
                Status::WrongValues,
                format!("the compiled program differs from the interpreter {d}"),
            ));
        }
    }
    let best_ms = *setup.best_ms.lock().unwrap_or_else(|e| e.into_inner());
    let warm_up_ms = warm_up.as_secs_f64() * 1e3;
    if warm_up_ms > WARM_UP_SLOWDOWN * RACE_FACTOR * best_ms {
        // So slow that even a first touch of the buffers cannot explain it: its
        // warm-up's time (an upper bound) says enough, and saves seconds per candidate
        // at large sizes.
        *setup.raced.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        return Ok(Measure {
            cost: warm_up_ms,
            model: None,
            ms: Some(warm_up_ms),
            compile_ms: Some(compile_ms),
        });
    }
    let time = |call: &mut crate::jit::Call<'_>| {
        let start = Instant::now();
        call.invoke().map_err(failed)?;
        Ok::<f64, Rejection>(start.elapsed().as_secs_f64() * 1e3)
    };
    let first = time(&mut call)?;
    if first > RACE_FACTOR * best_ms {
        // Clearly slower than the best: one timed run says enough.
        *setup.raced.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        return Ok(Measure {
            cost: first,
            model: None,
            ms: Some(first),
            compile_ms: Some(compile_ms),
        });
    }
    let mut times = vec![first];
    for _ in 1..setup.runs {
        times.push(time(&mut call)?);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let mut best = setup.best_ms.lock().unwrap_or_else(|e| e.into_inner());
    *best = best.min(median);
    drop(best);
    Ok(Measure {
        cost: median,
        model: None,
        ms: Some(median),
        compile_ms: Some(compile_ms),
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
        let slots = Arc::new(Slots {
            free: Mutex::new(jobs.max(1)),
            freed: Condvar::new(),
        });
        let (reports, incoming) = channel();
        let turns: Vec<_> = programs
            .iter()
            .enumerate()
            .map(|(i, p)| self.spawn(i, (*p).clone(), slots.clone(), reports.clone()))
            .collect();
        drop(reports);
        let mut results: Vec<Option<Result<Measure, Rejection>>> = vec![None; programs.len()];
        let mut compile_ms: Vec<Option<f64>> = vec![None; programs.len()];
        // Every candidate compiles (or fails to) before any runs.
        let compiling = Instant::now();
        let mut compiled = 0;
        for _ in 0..programs.len() {
            match incoming.recv() {
                Ok((i, Report::Compiled(ms))) => compile_ms[i] = Some(ms),
                Ok((i, Report::Measured(r))) => results[i] = Some(r),
                Err(_) => break,
            }
            compiled += 1;
        }
        if let Ok(mut rate) = self.compile_rate.lock() {
            rate.candidates += compiled;
            rate.seconds += compiling.elapsed().as_secs_f64();
        }
        for (i, program) in programs.iter().enumerate() {
            let Some(ms) = compile_ms[i] else {
                continue;
            };
            let key = fingerprint(program);
            let check = !self.checked.lock().is_ok_and(|c| c.contains(&key));
            let reference = match (check, self.reference_values()) {
                (false, _) => None,
                (true, Ok(values)) => Some(values.clone()),
                (true, Err(why)) => {
                    results[i] = Some(Err(Rejection::new(
                        Status::WrongValues,
                        format!("the interpreter cannot compute the reference values: {why}"),
                    )));
                    continue;
                }
            };
            if turns[i].send(Some(reference)).is_err() {
                continue;
            }
            // Every run up to the timeout, and time to set up the call and compare
            // its values.
            let patience = self.setup.timeout * (self.setup.runs as u32 + 1) + SETUP_TIME;
            let result = wait_for(&incoming, i, patience).map(|mut m| {
                m.compile_ms = Some(ms);
                m
            });
            if check && result.is_ok() {
                if let Ok(mut c) = self.checked.lock() {
                    c.insert(key);
                }
            }
            results[i] = Some(result);
        }
        let mut results: Vec<Result<Measure, Rejection>> = results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    Err(Rejection::new(
                        Status::CompileFailed,
                        "the compilation did not finish",
                    ))
                })
            })
            .collect();
        if let Some(model) = &self.setup.model {
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
}

/// Candidate `index`'s measurement, or a timeout after `patience` (reports of other
/// candidates, late after their own timeout, are dropped).
fn wait_for(
    incoming: &Receiver<(usize, Report)>,
    index: usize,
    patience: Duration,
) -> Result<Measure, Rejection> {
    let deadline = Instant::now() + patience;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match incoming.recv_timeout(left) {
        Ok((i, Report::Measured(r))) if i == index => return r,
        Ok(_) => continue,
        Err(RecvTimeoutError::Timeout) => {
            return Err(Rejection::new(
                Status::Timeout,
                format!(
                    "its runs did not finish within {:.1} s (the timeout of each run, and {} s to set up)",
                    patience.as_secs_f64(),
                    SETUP_TIME.as_secs()
                ),
            ))
        }
        Err(RecvTimeoutError::Disconnected) => {
            return Err(Rejection::new(Status::CompileFailed, "the candidate's thread ended"))
        }
    }
    }
}
