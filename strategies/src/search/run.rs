//! A whole search: a space, a driver and a cost, with a budget and a seed; its report.

use super::cost::{Cost, Fingerprint, Measure, Rejection, Status};
use super::drivers::Driver;
use super::explorer::{ranks_before, Candidate, Explorer, Progress, SearchBudget};
use super::space::Space;
use elevate_core::Traversable;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

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
        }
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

    /// Also evaluates `baseline` (not counted as a candidate, after the search and
    /// outside its time), for the speedup.
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
    pub fn run(mut self, program: &P) -> Report {
        let started = std::time::Instant::now();
        let root = self.space.start(program);
        let space_size = root.size_estimate();
        let starts = self.space.starts(program);
        let mut explorer =
            Explorer::new(root, &*self.cost, self.budget, self.seed, self.jobs).with_starts(starts);
        if let Some(stop) = self.stop.clone() {
            explorer = explorer.with_stop(stop);
        }
        if let Some(observer) = self.observer.as_mut() {
            explorer.observe(&mut **observer);
        }
        self.driver.explore(&mut explorer);
        let (log, distinct_programs) = explorer.into_log();
        let seconds = started.elapsed().as_secs_f64();
        // After the search, and outside its time: a measured cost then knows how fast
        // the best runs, and times a slow baseline once instead of six times.
        let baseline = self.baseline.as_ref().map(|b| self.cost.evaluate(b));
        Report {
            driver: self.driver.name(),
            seed: self.seed,
            cost: self.cost.name(),
            evaluations: log.len(),
            distinct_programs,
            failed: log.iter().filter(|c| c.status != Status::Ok).count(),
            space_size,
            seconds,
            baseline,
            log,
        }
    }
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
    /// Wall time of the search (the baseline's evaluation, after it, not included).
    pub seconds: f64,
    /// The baseline's measure, if one was given.
    pub baseline: Option<Result<Measure, Rejection>>,
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

    /// The baseline's cost over the best's, where both exist.
    pub fn speedup(&self) -> Option<f64> {
        let baseline = self.baseline.as_ref()?.as_ref().ok()?.cost;
        Some(baseline / self.best()?.cost()?)
    }

    /// The wall time as a duration.
    pub fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.seconds)
    }
}
