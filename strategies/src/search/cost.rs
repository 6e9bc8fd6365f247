//! Costs: what ranks the candidates of a search, behind one trait generic over the
//! program type, and the program fingerprints that the search's cache is keyed by.

use std::fmt;
use std::time::Instant;

/// A hash of a program's structure, equal for equal programs (for programs with
/// binders: equal up to the names of bound variables), so a search evaluates a
/// program it reaches twice only once.
pub trait Fingerprint {
    /// The fingerprint.
    fn fingerprint(&self) -> u64;
}

/// How a candidate failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Evaluated: it has a cost.
    Ok,
    /// Its strategy failed (or did not parse).
    StrategyFailed,
    /// Its program could not be compiled.
    CompileFailed,
    /// Its compiled program computes other values than the interpreter.
    WrongValues,
    /// Its evaluation (a run) took longer than allowed.
    Timeout,
    /// Its compilation took longer than allowed.
    CompileTimeout,
    /// What evaluated it died: a signal, an abort, a stack overflow in its code.
    Crashed,
    /// What evaluated it passed its memory limit.
    OutOfMemory,
    /// The search stopped (its budget spent, or told to) before it was evaluated.
    Stopped,
}

impl Status {
    /// Every status, in the order of the log's documentation.
    pub const ALL: [Status; 9] = [
        Status::Ok,
        Status::StrategyFailed,
        Status::CompileFailed,
        Status::WrongValues,
        Status::Timeout,
        Status::CompileTimeout,
        Status::Crashed,
        Status::OutOfMemory,
        Status::Stopped,
    ];

    /// As the log writes it: `ok`, `strategy failed`, `compile failed`, `wrong values`,
    /// `timeout`, `compile timeout`, `crashed`, `out of memory`, `stopped`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::StrategyFailed => "strategy failed",
            Status::CompileFailed => "compile failed",
            Status::WrongValues => "wrong values",
            Status::Timeout => "timeout",
            Status::CompileTimeout => "compile timeout",
            Status::Crashed => "crashed",
            Status::OutOfMemory => "out of memory",
            Status::Stopped => "stopped",
        }
    }

    /// The status [`as_str`](Self::as_str) writes as `text`.
    pub fn parse(text: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a candidate has no cost.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status}: {reason}")]
pub struct Rejection {
    /// Which kind of failure (never [`Status::Ok`]).
    pub status: Status,
    /// What happened, for the log.
    pub reason: String,
}

impl Rejection {
    /// A rejection of kind `status`.
    pub fn new(status: Status, reason: impl Into<String>) -> Self {
        Rejection {
            status,
            reason: reason.into(),
        }
    }
}

/// What evaluating a candidate found.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Measure {
    /// The cost that ranks candidates: lower is better (milliseconds for measured
    /// costs, the model's unit otherwise).
    pub cost: f64,
    /// The analytical model's cost, where one was computed.
    pub model: Option<f64>,
    /// The measured run time in milliseconds, where the program ran.
    pub ms: Option<f64>,
    /// Compilation time in milliseconds, where the program was compiled.
    pub compile_ms: Option<f64>,
    /// The fastest and the slowest of its timed runs, in milliseconds, where it ran
    /// more than once ([`ms`](Self::ms) is their median).
    pub spread_ms: Option<(f64, f64)>,
}

impl Measure {
    /// A measure that is only a cost.
    pub fn cost(cost: f64) -> Self {
        Measure {
            cost,
            ..Measure::default()
        }
    }
}

/// A cost: ranks programs, lower is better.
///
/// [`evaluate_all`](Self::evaluate_all) receives the candidates of one round together,
/// so that a cost can prepare them in parallel (compile on `jobs` threads) and still
/// measure one at a time with the machine to itself; the default evaluates them in
/// turn. Results come back in the order of the programs, which keeps a search
/// deterministic whatever the threads do.
pub trait Cost<P>: Send + Sync {
    /// The cost's name, as the report writes it (`model`, `measured`, ...).
    fn name(&self) -> String;

    /// The cost of `program`, or why it has none.
    fn evaluate(&self, program: &P) -> Result<Measure, Rejection>;

    /// The costs of `programs`, in order, using up to `jobs` threads.
    fn evaluate_all(&self, programs: &[&P], jobs: usize) -> Vec<Result<Measure, Rejection>> {
        let _ = jobs;
        programs.iter().map(|p| self.evaluate(p)).collect()
    }

    /// [`evaluate_all`](Self::evaluate_all), ending by `deadline`: a cost whose
    /// evaluations take time (compiled and run) stops what is still running then, and
    /// those programs are [`Status::Stopped`]. The default evaluates them all.
    fn evaluate_until(
        &self,
        programs: &[&P],
        jobs: usize,
        deadline: Option<Instant>,
    ) -> Vec<Result<Measure, Rejection>> {
        let _ = deadline;
        self.evaluate_all(programs, jobs)
    }

    /// Evaluates `programs` again, in turns (one run of each, then the next turn), up
    /// to `turns` turns or until `deadline`, so that what the machine does meanwhile
    /// affects them alike: what a search's report compares its best with its baseline
    /// by. `None` for a program with no cost. The default evaluates each once more.
    fn compare(
        &self,
        programs: &[&P],
        turns: usize,
        deadline: Option<Instant>,
    ) -> Vec<Option<Measure>> {
        let _ = turns;
        self.evaluate_until(programs, 1, deadline)
            .into_iter()
            .map(Result::ok)
            .collect()
    }
}

/// Evaluates `programs` with `evaluate` on up to `jobs` scoped threads, in order.
pub fn parallel_map<P: Sync, R: Send>(
    programs: &[&P],
    jobs: usize,
    evaluate: impl Fn(&P) -> R + Sync,
) -> Vec<R> {
    let jobs = jobs.clamp(1, programs.len().max(1));
    if jobs == 1 {
        return programs.iter().map(|p| evaluate(p)).collect();
    }
    let chunk = programs.len().div_ceil(jobs);
    std::thread::scope(|scope| {
        let handles: Vec<_> = programs
            .chunks(chunk)
            .map(|chunk| {
                let evaluate = &evaluate;
                scope.spawn(move || chunk.iter().map(|p| evaluate(p)).collect::<Vec<R>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// One program through [`Cost::evaluate_all`]: the `evaluate` of costs whose batch is
/// what they really implement (a measured cost compiles and times a batch together).
pub fn evaluate_as_batch<P, C: Cost<P> + ?Sized>(
    cost: &C,
    program: &P,
) -> Result<Measure, Rejection> {
    cost.evaluate_all(&[program], 1)
        .pop()
        .unwrap_or_else(|| Err(Rejection::new(Status::CompileFailed, "nothing measured")))
}

/// A cost behind a pointer (`Box<C>`, `&C`) is the cost it points to.
macro_rules! delegate_cost {
    ($($pointer:ty),+) => {$(
        impl<P, C: Cost<P> + ?Sized> Cost<P> for $pointer {
            fn name(&self) -> String {
                (**self).name()
            }

            fn evaluate(&self, program: &P) -> Result<Measure, Rejection> {
                (**self).evaluate(program)
            }

            fn evaluate_all(&self, programs: &[&P], jobs: usize) -> Vec<Result<Measure, Rejection>> {
                (**self).evaluate_all(programs, jobs)
            }

            fn evaluate_until(
                &self,
                programs: &[&P],
                jobs: usize,
                deadline: Option<Instant>,
            ) -> Vec<Result<Measure, Rejection>> {
                (**self).evaluate_until(programs, jobs, deadline)
            }

            fn compare(
                &self,
                programs: &[&P],
                turns: usize,
                deadline: Option<Instant>,
            ) -> Vec<Option<Measure>> {
                (**self).compare(programs, turns, deadline)
            }
        }
    )+};
}

// A borrowed cost lets its owner read what it kept (a measured cost's statistics)
// after the search.
delegate_cost!(Box<C>, &C);
