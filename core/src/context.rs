//! The rewrite context a caller owns: counters, trace, budget, memo tables, log, and
//! the supply of fresh names.

use crate::failure::{BudgetLimit, Failure};
use crate::{Name, NameSupply, Path};
use rustc_hash::FxHashMap;
use std::any::Any;
use std::time::{Duration, Instant};

/// Limits on one run. Running out is a [`Failure`] of kind
/// [`Budget`](crate::FailureKind::Budget) that no combinator recovers from.
///
/// [`applications`](Self::applications) is the limit that bounds every strategy,
/// whatever it does: every application of any strategy counts (a rule tried, whether
/// or not it matches; `id`; a combinator; a traversal at each node it visits; a
/// reference to a definition), so even `repeat(id)` and `repeatN(10^11, id)` stop
/// there. It is what the command line's `--budget-steps` limits.
/// [`steps`](Self::steps) counts only successful rule applications (rewrites).
///
/// ```
/// use std::time::Duration;
/// use elevate_core::Budget;
/// let budget = Budget::unlimited().steps(10_000).time(Duration::from_secs(2));
/// assert_eq!(budget.max_steps, Some(10_000));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Budget {
    /// Maximum successful rule applications (rewrites).
    pub max_steps: Option<u64>,
    /// Maximum strategy applications: every application of any strategy counts.
    pub max_applications: Option<u64>,
    /// Maximum wall-clock time, counted from the context's creation (or
    /// [`Context::restart_clock`]).
    pub max_time: Option<Duration>,
}

impl Budget {
    /// No limits.
    pub fn unlimited() -> Self {
        Budget::default()
    }

    /// Limits successful rule applications.
    pub fn steps(mut self, n: u64) -> Self {
        self.max_steps = Some(n);
        self
    }

    /// Limits strategy applications.
    pub fn applications(mut self, n: u64) -> Self {
        self.max_applications = Some(n);
        self
    }

    /// Limits wall-clock time.
    pub fn time(mut self, limit: Duration) -> Self {
        self.max_time = Some(limit);
        self
    }
}

/// Counters of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Strategy applications: every rule and combinator application counts.
    pub applications: u64,
    /// Successful rule applications ("rewrite steps").
    pub steps: u64,
    /// Successful strategy applications of any kind (rules, combinators, traversals,
    /// predicates): what ELEVATE counts as rewrite steps.
    pub successes: u64,
}

/// One successful rule application: which rule, where (from the root of the program
/// the run started on, as far as the traversals can tell).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceEntry {
    /// The rule's name.
    pub rule: Name,
    /// Where it applied.
    pub path: Path,
}

impl std::fmt::Display for TraceEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} @ {}", self.rule, self.path)
    }
}

/// Where `debug` and `peek` messages go.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Log {
    /// Printed to standard error.
    #[default]
    Stderr,
    /// Collected in memory (see [`Context::messages`]).
    Collect(Vec<String>),
    /// Discarded.
    Silent,
}

/// How often the deadline is checked at most and at least, in strategy applications.
/// Reading the clock on every application would dominate cheap rules, and reading it
/// every few hundred would overshoot the deadline when applications are slow: the
/// interval adapts between these bounds so that the clock is read about every
/// [`CLOCK_INTERVAL`].
const CLOCK_EVERY: (u64, u64) = (1, 1024);
/// The time between two reads of the clock that the interval adapts to.
const CLOCK_INTERVAL: Duration = Duration::from_micros(200);

/// Everything a run needs besides the program and the strategy, owned by the caller.
///
/// There is no global mutable state: two contexts are two independent runs, which may
/// proceed in parallel on shared programs. Even the identities of the names that rules
/// make come from the context's own [`NameSupply`] ([`names_mut`](Self::names_mut)),
/// so a run in a new context gives the very same result whatever ran before it.
///
/// ```
/// use elevate_core::{Budget, Context};
/// let mut cx = Context::new(Budget::unlimited().steps(100)).with_trace();
/// assert_eq!(cx.stats().steps, 0);
/// assert!(cx.trace().unwrap().is_empty());
/// ```
pub struct Context {
    stats: Stats,
    budget: Budget,
    started: Instant,
    deadline: Option<Instant>,
    exhausted: Option<BudgetLimit>,
    /// The application count at which [`enter`](Self::enter) next leaves its fast
    /// path to check the budget: one comparison per application otherwise.
    next_check: u64,
    /// Applications between two reads of the clock (adapts, see `CLOCK_EVERY`).
    clock_every: u64,
    /// When the clock was last read.
    last_clock: Instant,
    trace: Option<Vec<TraceEntry>>,
    path: Vec<u32>,
    /// Strategy applications in progress, nested in each other (see
    /// [`nested`](Self::nested)).
    nesting: u32,
    log: Log,
    memo_enabled: bool,
    memos: FxHashMap<(usize, &'static str), Box<dyn Any + Send + Sync>>,
    names: NameSupply,
}

impl Default for Context {
    fn default() -> Self {
        Context::new(Budget::unlimited())
    }
}

impl Context {
    /// A fresh context with the given budget; its clock starts now.
    pub fn new(budget: Budget) -> Self {
        let started = Instant::now();
        Context {
            stats: Stats::default(),
            budget,
            started,
            deadline: budget.max_time.map(|t| started + t),
            exhausted: None,
            next_check: 0,
            clock_every: CLOCK_EVERY.0,
            last_clock: started,
            trace: None,
            path: Vec::new(),
            nesting: 0,
            log: Log::default(),
            memo_enabled: false,
            memos: FxHashMap::default(),
            names: NameSupply::new(),
        }
    }

    /// Records a trace of successful rule applications.
    pub fn with_trace(mut self) -> Self {
        self.trace = Some(Vec::new());
        self
    }

    /// Sends `debug`/`peek` output to `log`.
    pub fn with_log(mut self, log: Log) -> Self {
        self.log = log;
        self
    }

    /// Lets whole-program traversals remember, across applications in this context,
    /// that a strategy failed on a shared subterm, and skip that subterm next time.
    ///
    /// Sound when strategies are functions of the program they are applied to (rules
    /// and Elevate's combinators are); it trades memory (the table keeps the failed
    /// subterms alive until [`clear_memo`](Self::clear_memo)) for time when the same
    /// traversal runs again and again over versions of a program that share most of
    /// their nodes, as in a search. `normalize` always memoizes within one application.
    pub fn with_failure_memo(mut self) -> Self {
        self.memo_enabled = true;
        self
    }

    /// Starts the context's name supply at `names` (by default one from 0); a caller
    /// that applies strategies to a part of a larger program gives a supply above the
    /// whole program's [`name_floor`](crate::Traversable::name_floor).
    pub fn with_names(mut self, names: NameSupply) -> Self {
        self.names = names;
        self
    }

    /// The supply of fresh names of this run.
    pub fn names(&self) -> &NameSupply {
        &self.names
    }

    /// The supply of fresh names of this run, for rules that make names and for
    /// traversals, which [`reserve_above`](NameSupply::reserve_above) the
    /// [`name_floor`](crate::Traversable::name_floor) of each node they descend from.
    pub fn names_mut(&mut self) -> &mut NameSupply {
        &mut self.names
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The budget of this run.
    pub fn budget(&self) -> Budget {
        self.budget
    }

    /// Time since the context was created or its clock restarted.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Restarts the clock the time budget counts from, and clears a spent budget.
    pub fn restart_clock(&mut self) {
        self.started = Instant::now();
        self.last_clock = self.started;
        self.deadline = self.budget.max_time.map(|t| self.started + t);
        self.exhausted = None;
        self.next_check = self.stats.applications;
    }

    /// The trace, if recording.
    pub fn trace(&self) -> Option<&[TraceEntry]> {
        self.trace.as_deref()
    }

    /// Takes the trace recorded so far, leaving an empty one if recording.
    pub fn take_trace(&mut self) -> Vec<TraceEntry> {
        self.trace.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Messages collected under [`Log::Collect`].
    pub fn messages(&self) -> &[String] {
        match &self.log {
            Log::Collect(messages) => messages,
            _ => &[],
        }
    }

    /// Emits a `debug`/`peek` message.
    pub fn log(&mut self, message: impl FnOnce() -> String) {
        match &mut self.log {
            // Standard error on a full disk or closed: the message is lost, never a
            // panic (`eprintln!` would be one).
            Log::Stderr => {
                use std::io::Write;
                let _ = writeln!(std::io::stderr().lock(), "{}", message());
            }
            Log::Collect(messages) => messages.push(message()),
            Log::Silent => {}
        }
    }

    /// A mark in the trace, to [`rollback_trace`](Self::rollback_trace) to when the
    /// work after it is discarded.
    #[inline]
    pub fn trace_mark(&self) -> usize {
        self.trace.as_ref().map_or(0, Vec::len)
    }

    /// Forgets trace entries recorded after `mark`: their rewrites did not make it
    /// into the result (the strategy failed, or its result was dropped).
    #[inline]
    pub fn rollback_trace(&mut self, mark: usize) {
        if let Some(trace) = &mut self.trace {
            trace.truncate(mark);
        }
    }

    /// The limit that ran out, if any. Once spent, a budget stays spent.
    pub fn exhausted(&self) -> Option<BudgetLimit> {
        self.exhausted
    }

    /// Counts one strategy application and checks the budget. Called by
    /// [`Strategy::apply`](crate::Strategy::apply) before every application.
    #[inline]
    pub fn enter(&mut self, strategy: impl FnOnce() -> Name) -> Result<(), Failure> {
        self.stats.applications += 1;
        if self.stats.applications < self.next_check {
            return Ok(());
        }
        self.check_budget(strategy)
    }

    /// The slow path of [`enter`](Self::enter): checks every limit, and decides when
    /// to check next (at the application limit, or after `clock_every` applications
    /// when there is a deadline).
    #[cold]
    fn check_budget(&mut self, strategy: impl FnOnce() -> Name) -> Result<(), Failure> {
        if let Some(limit) = self.exhausted {
            return Err(Failure::budget(strategy(), limit));
        }
        let applications = self.stats.applications;
        if let Some(max) = self.budget.max_applications {
            if applications > max {
                return Err(self.exhaust(strategy(), BudgetLimit::Applications(max)));
            }
        }
        let mut at_clock = u64::MAX;
        if let Some(deadline) = self.deadline {
            let now = Instant::now();
            if now >= deadline {
                let ms = self.budget.max_time.unwrap_or_default().as_millis() as u64;
                return Err(self.exhaust(strategy(), BudgetLimit::Time(ms)));
            }
            let since = now.duration_since(self.last_clock);
            self.last_clock = now;
            self.clock_every = if since < CLOCK_INTERVAL / 2 {
                (self.clock_every * 2).min(CLOCK_EVERY.1)
            } else if since > CLOCK_INTERVAL * 2 {
                (self.clock_every / 2).max(CLOCK_EVERY.0)
            } else {
                self.clock_every
            };
            at_clock = applications + self.clock_every;
        }
        let at_limit = self.budget.max_applications.map_or(u64::MAX, |max| max + 1);
        self.next_check = at_limit.min(at_clock);
        Ok(())
    }

    /// Counts one successful strategy application (see [`Stats::successes`]).
    #[inline]
    pub fn count_success(&mut self) {
        self.stats.successes += 1;
    }

    /// Records a successful application of `rule` at the current location, and checks
    /// the step budget.
    #[inline]
    pub fn record_step(&mut self, rule: &Name) -> Result<(), Failure> {
        if let Some(max) = self.budget.max_steps {
            if self.stats.steps >= max {
                return Err(self.exhaust(rule.clone(), BudgetLimit::Steps(max)));
            }
        }
        self.stats.steps += 1;
        if let Some(trace) = &mut self.trace {
            trace.push(TraceEntry {
                rule: rule.clone(),
                path: Path::from(self.path.as_slice()),
            });
        }
        Ok(())
    }

    fn exhaust(&mut self, strategy: Name, limit: BudgetLimit) -> Failure {
        self.exhausted = Some(limit);
        self.next_check = 0;
        Failure::budget(strategy, limit)
    }

    /// The current location, relative to where the run started.
    pub fn location(&self) -> Path {
        Path::from(self.path.as_slice())
    }

    /// Runs `f` with the current location extended by child `index`. Traversals call
    /// this when they descend, so traces know where rules apply, and so that deep
    /// programs cannot overflow the stack: every few levels, `f` runs on a fresh stack
    /// segment if this one runs low (see [`stack`](crate::stack)).
    #[inline]
    pub fn descend<R>(&mut self, index: usize, f: impl FnOnce(&mut Self) -> R) -> R {
        self.path.push(index as u32);
        let result = if self
            .path
            .len()
            .is_multiple_of(crate::stack::CHECK_EVERY_LEVELS)
        {
            crate::stack::guard(|| f(self))
        } else {
            f(self)
        };
        self.path.pop();
        result
    }

    /// Runs `f` as one more strategy application nested in those in progress.
    /// [`Strategy::apply`](crate::Strategy::apply) calls this, so that strategies
    /// nested 100,000 deep (`try(try(...))`) cannot overflow the stack: every few
    /// levels, `f` runs on a fresh stack segment if this one runs low.
    #[inline]
    pub fn nested<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        self.nesting += 1;
        let result = if self
            .nesting
            .is_multiple_of(crate::stack::CHECK_EVERY_LEVELS as u32)
        {
            crate::stack::guard(|| f(self))
        } else {
            f(self)
        };
        self.nesting -= 1;
        result
    }

    /// Runs `f` with the current location extended by `path`.
    pub fn descend_path<R>(&mut self, path: &Path, f: impl FnOnce(&mut Self) -> R) -> R {
        let depth = self.path.len();
        self.path.extend_from_slice(path.as_slice());
        let result = crate::stack::guard(|| f(self));
        self.path.truncate(depth);
        result
    }

    /// Whether traversals should memoize failures across applications.
    pub fn failure_memo_enabled(&self) -> bool {
        self.memo_enabled
    }

    /// Takes the memo table stored under `key` (creating it if absent); give it back
    /// with [`put_memo`](Self::put_memo). Taking it out lets the owner use it while
    /// also borrowing the context. Keys are a strategy's [`key`](crate::Strategy::key)
    /// and the name of the traversal that memoizes it.
    pub fn take_memo<T: Default + Any + Send + Sync>(
        &mut self,
        key: (usize, &'static str),
    ) -> Box<T> {
        self.memos
            .remove(&key)
            .and_then(|table| table.downcast::<T>().ok())
            .unwrap_or_default()
    }

    /// Stores a memo table under `key`.
    pub fn put_memo<T: Any + Send + Sync>(&mut self, key: (usize, &'static str), table: Box<T>) {
        self.memos.insert(key, table);
    }

    /// Forgets all memoized failures (and releases the subterms they kept alive).
    pub fn clear_memo(&mut self) {
        self.memos.clear();
    }
}
