//! A whole search: a space, a driver and a cost, with a budget and a seed; its report.

use super::cost::{Cost, Fingerprint, Measure, Rejection, Status};
use super::drivers::Driver;
use super::explorer::{ranks_before, Candidate, Explorer, Pending, Progress, SearchBudget};
use super::space::Space;
use elevate_core::Traversable;
use rustc_hash::FxHashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Results known before a search, by program fingerprint ([`Search::known`]).
pub type Known = FxHashMap<u64, Result<Measure, Rejection>>;

/// Turns of the final comparison of the best with the baseline (one run of each a
/// turn), time permitting.
pub const COMPARE_TURNS: usize = 5;

/// The part of a time budget the final comparison may take at most: the exploration
/// ends that much earlier when the baseline is slow.
const COMPARE_SHARE: f64 = 0.15;

/// How far past its time budget a search may go to finish what it started (the
/// final comparison's last turn, writing its files): the budget holds within 10%.
const OVERRUN_SHARE: f64 = 0.05;

/// A function called after every candidate.
type Observer<'o> = Box<dyn FnMut(&Progress<'_>) + 'o>;

/// A search, configured and then [`run`](Search::run) on a program.
pub struct Search<'o, P> {
    space: Space<P>,
    driver: Box<dyn Driver<P>>,
    cost: Box<dyn Cost<P> + 'o>,
    budget: SearchBudget,
    seed: u64,
    jobs: usize,
    baseline: Option<P>,
    observer: Option<Observer<'o>>,
    stop: Option<Arc<AtomicBool>>,
    known: FxHashMap<u64, Result<Measure, Rejection>>,
    pending: Option<Pending>,
}

impl<'o, P: Traversable + Fingerprint> Search<'o, P> {
    /// A search of `space` by `driver`, ranked by `cost`; by default 1,000
    /// evaluations, seed 0, one job.
    pub fn new(space: Space<P>, driver: Box<dyn Driver<P>>, cost: impl Cost<P> + 'o) -> Self {
        Search {
            space,
            driver,
            cost: Box::new(cost),
            budget: SearchBudget::default().evaluations(1_000),
            seed: 0,
            jobs: 1,
            baseline: None,
            observer: None,
            stop: None,
            known: FxHashMap::default(),
            pending: None,
        }
    }

    /// Shows the candidates being evaluated in `pending` (for a progress display).
    pub fn pending(mut self, pending: Pending) -> Self {
        self.pending = Some(pending);
        self
    }

    /// Resumes a search: the results of programs it evaluated before, by fingerprint
    /// (its log's), are not evaluated again. With the same space, driver, seed and a
    /// deterministic cost, the search then logs what it would have logged had it
    /// never stopped.
    pub fn known(mut self, known: FxHashMap<u64, Result<Measure, Rejection>>) -> Self {
        self.known = known;
        self
    }

    /// Stops the search, as a spent budget does, once `stop` is set (by an interrupt,
    /// another thread, an observer): the report holds what was evaluated by then.
    pub fn stop_on(mut self, stop: Arc<AtomicBool>) -> Self {
        self.stop = Some(stop);
        self
    }

    /// Limits the search.
    pub fn budget(mut self, budget: SearchBudget) -> Self {
        self.budget = budget;
        self
    }

    /// Seeds the driver's random choices.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Evaluates candidates on up to `jobs` threads.
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.jobs = jobs.max(1);
        self
    }

    /// Also evaluates `baseline` (not counted as a candidate): first, so that a time
    /// budget leaves room for the final comparison, and at the end in turns with the
    /// best ([`Cost::compare`]), for the speedup. Both count in the time budget.
    pub fn baseline(mut self, baseline: P) -> Self {
        self.baseline = Some(baseline);
        self
    }

    /// Calls `observer` after every candidate.
    pub fn observe(mut self, observer: impl FnMut(&Progress<'_>) + 'o) -> Self {
        self.observer = Some(Box::new(observer));
        self
    }

    /// Runs the search on `program`.
    ///
    /// Under a time budget the whole search, the baseline and the final comparison
    /// included, ends within 10% of it: the exploration stops early enough for the
    /// comparison (at most [`COMPARE_SHARE`] of the budget), and what still runs at a
    /// deadline is stopped.
    pub fn run(mut self, program: &P) -> Report {
        let started = Instant::now();
        let limit = self.budget.time;
        let end = limit.map(|t| started + t);
        let root = self.space.start(program);
        let space_size = root.size_estimate();
        let starts = self.space.starts(program);
        // The baseline first, within half of the budget.
        let first_baseline = self.baseline.as_ref().map(|b| {
            let deadline = limit.map(|t| started + t / 2);
            first(self.cost.evaluate_until(&[b], 1, deadline))
        });
        let baseline_ms = first_baseline
            .as_ref()
            .and_then(|b| b.as_ref().ok())
            .and_then(|m| m.ms);
        let mut budget = self.budget;
        if let Some(t) = limit {
            // Room for the comparison: a turn of the baseline (the best is faster), a
            // few turns if they fit, and compiling both again where the cost compiles.
            let baseline_measure = first_baseline.as_ref().and_then(|b| b.as_ref().ok());
            let compile_ms = baseline_measure.and_then(|m| m.compile_ms).unwrap_or(0.0);
            let reserve = baseline_ms.map_or(Duration::ZERO, |ms| {
                let turns = Duration::from_secs_f64((3.0 * ms + 2.0 * compile_ms) / 1e3);
                turns.min(t.mul_f64(COMPARE_SHARE))
            });
            budget.time = Some(t.saturating_sub(started.elapsed() + reserve));
        }
        let mut explorer = Explorer::new(root, &*self.cost, budget, self.seed, self.jobs)
            .with_starts(starts)
            .with_known(std::mem::take(&mut self.known));
        if let Some(stop) = self.stop.clone() {
            explorer = explorer.with_stop(stop);
        }
        if let Some(pending) = self.pending.clone() {
            explorer = explorer.with_pending(pending);
        }
        if let Some(observer) = self.observer.as_mut() {
            explorer.observe(&mut **observer);
        }
        self.driver.explore(&mut explorer);
        let (log, distinct_programs, best_program) = explorer.into_log();
        let stopped = self
            .stop
            .as_ref()
            .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed));
        // The best and the baseline again, in turns (not when told to stop).
        let compared = match (&self.baseline, &best_program, stopped) {
            (Some(baseline), Some(best), false) => {
                let deadline = end.zip(limit).map(|(e, t)| e + t.mul_f64(OVERRUN_SHARE));
                match &self
                    .cost
                    .compare(&[baseline, best], COMPARE_TURNS, deadline)[..]
                {
                    [Some(b), Some(best)] => Some(Compared {
                        baseline: *b,
                        best: *best,
                    }),
                    _ => None,
                }
            }
            _ => None,
        };
        let seconds = started.elapsed().as_secs_f64();
        Report {
            driver: self.driver.name(),
            seed: self.seed,
            cost: self.cost.name(),
            evaluations: log.len(),
            distinct_programs,
            failed: log.iter().filter(|c| c.status != Status::Ok).count(),
            space_size,
            seconds,
            baseline: first_baseline,
            compared,
            log,
        }
    }
}

/// The one result of a batch of one.
fn first(results: Vec<Result<Measure, Rejection>>) -> Result<Measure, Rejection> {
    results
        .into_iter()
        .next()
        .unwrap_or_else(|| Err(Rejection::new(Status::Stopped, "not evaluated")))
}

/// The best and the baseline evaluated again in turns, at the end of a search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Compared {
    /// The baseline's measure (its median, fastest and slowest turn).
    pub baseline: Measure,
    /// The best's.
    pub best: Measure,
}

/// What a search did and found.
#[derive(Debug, Clone)]
pub struct Report {
    /// The driver, as text (`beam(8)`).
    pub driver: String,
    /// The seed.
    pub seed: u64,
    /// The cost's name.
    pub cost: String,
    /// Candidates evaluated.
    pub evaluations: usize,
    /// Distinct programs the cost evaluated.
    pub distinct_programs: usize,
    /// Candidates that failed.
    pub failed: usize,
    /// The space's size, estimated at the start.
    pub space_size: f64,
    /// Wall time of the search, the baseline's evaluations included.
    pub seconds: f64,
    /// The baseline's measure at the start, if one was given.
    pub baseline: Option<Result<Measure, Rejection>>,
    /// The best and the baseline evaluated again in turns at the end, where both
    /// could be.
    pub compared: Option<Compared>,
    /// Every candidate, in order.
    pub log: Vec<Candidate>,
}

impl Report {
    /// The best candidate: the first of the lowest cost among those with a measured
    /// time if there are any (a cost that measures some candidates only ranks the
    /// others by an estimate), among all otherwise.
    pub fn best(&self) -> Option<&Candidate> {
        let mut best: Option<&Candidate> = None;
        for c in &self.log {
            let Some(m) = &c.measure else { continue };
            if best
                .and_then(|b| b.measure.as_ref())
                .is_none_or(|b| ranks_before(m, b))
            {
                best = Some(c);
            }
        }
        best
    }

    /// Candidates per second.
    pub fn candidates_per_s(&self) -> f64 {
        self.evaluations as f64 / self.seconds.max(1e-9)
    }

    /// The baseline's cost over the best's, where both exist: from the final
    /// comparison where there was one, else from the baseline's first measure and the
    /// best's in the log.
    pub fn speedup(&self) -> Option<f64> {
        if let Some(c) = &self.compared {
            return Some(c.baseline.cost / c.best.cost);
        }
        let baseline = self.baseline.as_ref()?.as_ref().ok()?.cost;
        Some(baseline / self.best()?.cost()?)
    }

    /// The baseline's cost: the final comparison's, else its first measure's.
    pub fn baseline_cost(&self) -> Option<f64> {
        match &self.compared {
            Some(c) => Some(c.baseline.cost),
            None => self.baseline.as_ref()?.as_ref().ok().map(|m| m.cost),
        }
    }

    /// The best's cost: the final comparison's, else its log's.
    pub fn best_cost(&self) -> Option<f64> {
        match &self.compared {
            Some(c) => Some(c.best.cost),
            None => self.best()?.cost(),
        }
    }

    /// The wall time as a duration.
    pub fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.seconds)
    }
}
