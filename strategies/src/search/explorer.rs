//! What a driver sees of a search: the start state, a seeded random source, the
//! budget, and evaluation of final states through the cost, with a cache keyed by
//! program fingerprint and a log of every candidate.

use super::cost::{Cost, Fingerprint, Measure, Rejection, Status};
use super::space::State;
use elevate_core::Traversable;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Limits on a search: evaluations and wall time. A driver stops cleanly at either.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchBudget {
    /// Candidates evaluated (a program reached again counts, but costs nothing).
    pub evaluations: Option<usize>,
    /// Wall time from the start of the search.
    pub time: Option<Duration>,
}

impl SearchBudget {
    /// At most `n` evaluations.
    pub fn evaluations(mut self, n: usize) -> Self {
        self.evaluations = Some(n);
        self
    }

    /// At most `limit` of wall time.
    pub fn time(mut self, limit: Duration) -> Self {
        self.time = Some(limit);
        self
    }
}

/// One evaluated candidate, as the log records it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Its position in the log, from 0.
    pub index: usize,
    /// The point as strategy text (replays its program).
    pub strategy: String,
    /// The decisions that made it.
    pub decisions: Vec<usize>,
    /// Its program's fingerprint.
    pub program_hash: u64,
    /// How it went.
    pub status: Status,
    /// Why it failed (empty when `ok`).
    pub reason: String,
    /// Its measure, when `ok`.
    pub measure: Option<Measure>,
    /// Whether its program had been evaluated before in this search.
    pub cached: bool,
    /// The best cost of the log up to and including this candidate.
    pub best_so_far: Option<f64>,
}

impl Candidate {
    /// Its cost, when `ok`.
    pub fn cost(&self) -> Option<f64> {
        self.measure.map(|m| m.cost)
    }
}

/// Progress of a search, for observers (progress bars, logs).
#[derive(Debug)]
pub struct Progress<'a> {
    /// The candidate just evaluated.
    pub candidate: &'a Candidate,
    /// Evaluations so far.
    pub evaluations: usize,
    /// The evaluation budget, if any.
    pub max_evaluations: Option<usize>,
    /// Time since the search started.
    pub elapsed: Duration,
    /// The time budget, if any.
    pub max_time: Option<Duration>,
    /// The best cost so far.
    pub best: Option<f64>,
    /// Every candidate so far, in order (the last is [`candidate`](Self::candidate)).
    pub log: &'a [Candidate],
    /// Whether this candidate is the last of a batch the driver asked for (a round):
    /// a moment to save what the search has found so far.
    pub end_of_round: bool,
}

/// A driver's view of the search (see the [`search`](crate::search) module).
pub struct Explorer<'s, P> {
    root: State<P>,
    starts: Vec<State<P>>,
    cost: &'s dyn Cost<P>,
    jobs: usize,
    rng: ChaCha8Rng,
    budget: SearchBudget,
    started: Instant,
    cache: FxHashMap<u64, Result<Measure, Rejection>>,
    /// Results known before the search (a search resumed from its log): each is taken
    /// into the cache, as if evaluated, when its program is first met.
    known: FxHashMap<u64, Result<Measure, Rejection>>,
    log: Vec<Candidate>,
    best: Option<usize>,
    /// The program of the best candidate.
    best_program: Option<P>,
    distinct: usize,
    /// Fingerprints of the complete candidates logged so far.
    logged: rustc_hash::FxHashSet<u64>,
    observer: Option<&'s mut dyn FnMut(&Progress<'_>)>,
    /// Set from elsewhere to stop the search (an interrupt), as a spent budget does.
    stop: Option<Arc<AtomicBool>>,
    /// Where the batch being evaluated is shown (fingerprints and strategy text).
    pending: Option<Pending>,
}

/// The candidates a search is evaluating now, by fingerprint with their strategy
/// text: for a progress display to name what it waits for.
pub type Pending = Arc<std::sync::Mutex<Vec<(u64, String)>>>;

/// Whether a candidate measured `a` is a better best than one measured `b`: a
/// measured time ranks before an estimate (a cost that measures some candidates
/// only, `model+measured`, gives the others the model's scaled estimate, which guides
/// a driver but is no time), then the lower cost.
pub(crate) fn ranks_before(a: &Measure, b: &Measure) -> bool {
    match (a.ms.is_some(), b.ms.is_some()) {
        (true, false) => true,
        (false, true) => false,
        _ => a.cost < b.cost,
    }
}

/// Under a time budget, how many candidates per job are evaluated between two looks
/// at the clock (a cost that takes time stops at the deadline by itself,
/// [`Cost::evaluate_until`]: rounds of a few candidates a job keep what it stops few,
/// and its workers busy).
const CANDIDATES_PER_JOB: usize = 4;

impl<'s, P: Traversable + Fingerprint> Explorer<'s, P> {
    /// An explorer from `root`, ranking with `cost` on up to `jobs` threads.
    pub fn new(
        root: State<P>,
        cost: &'s dyn Cost<P>,
        budget: SearchBudget,
        seed: u64,
        jobs: usize,
    ) -> Self {
        Explorer {
            root,
            starts: Vec::new(),
            cost,
            jobs: jobs.max(1),
            rng: ChaCha8Rng::seed_from_u64(seed),
            budget,
            started: Instant::now(),
            cache: FxHashMap::default(),
            known: FxHashMap::default(),
            log: Vec::new(),
            best: None,
            best_program: None,
            distinct: 0,
            logged: rustc_hash::FxHashSet::default(),
            observer: None,
            stop: None,
            pending: None,
        }
    }

    /// The same explorer, showing the batch it evaluates in `pending`.
    pub fn with_pending(mut self, pending: Pending) -> Self {
        self.pending = Some(pending);
        self
    }

    /// The same explorer, stopped (as when its budget is spent) once `stop` is set.
    pub fn with_stop(mut self, stop: Arc<AtomicBool>) -> Self {
        self.stop = Some(stop);
        self
    }

    /// The same explorer, knowing the results of programs evaluated before (by
    /// fingerprint: a search resumed from its log): they are not evaluated again, and
    /// count as evaluated when first met, so the search goes as it went.
    pub fn with_known(mut self, known: FxHashMap<u64, Result<Measure, Rejection>>) -> Self {
        self.known = known;
        self
    }

    /// The same explorer, with points to start from ([`Space::starts`]): the drivers
    /// that learn from what they evaluate evaluate these first, each on its own.
    ///
    /// [`Space::starts`]: super::Space::starts
    pub fn with_starts(mut self, starts: Vec<State<P>>) -> Self {
        self.starts = starts;
        self
    }

    /// The points to start from.
    pub fn starts(&self) -> &[State<P>] {
        &self.starts
    }

    /// Calls `observer` after every candidate.
    pub fn observe(&mut self, observer: &'s mut dyn FnMut(&Progress<'_>)) {
        self.observer = Some(observer);
    }

    /// The state before any decision.
    pub fn root(&self) -> &State<P> {
        &self.root
    }

    /// The search's random source, seeded: the same seed, the same decisions.
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        &mut self.rng
    }

    /// Whether the budget is spent (or the search was told to stop): drivers stop
    /// when it is.
    pub fn exhausted(&self) -> bool {
        self.remaining() == Some(0)
            || self
                .stop
                .as_ref()
                .is_some_and(|s| s.load(Ordering::Relaxed))
            || self
                .budget
                .time
                .is_some_and(|limit| self.started.elapsed() >= limit)
    }

    /// The search's budget.
    pub fn budget(&self) -> SearchBudget {
        self.budget
    }

    /// Evaluations left, if the budget limits them.
    pub fn remaining(&self) -> Option<usize> {
        self.budget
            .evaluations
            .map(|n| n.saturating_sub(self.log.len()))
    }

    /// Evaluates final states (complete or failed; others are completed at random
    /// first), in order, and returns each one's cost (`None`: failed). Past the
    /// budget, the rest are not evaluated and are left out of the result.
    pub fn evaluate(&mut self, states: &[State<P>]) -> Vec<Option<f64>> {
        if self.exhausted() {
            return Vec::new();
        }
        let take = self
            .remaining()
            .map_or(states.len(), |r| r.min(states.len()));
        let finals: Vec<State<P>> = states[..take]
            .iter()
            .map(|s| {
                if s.is_final() {
                    s.clone()
                } else {
                    self.random_completion(s)
                }
            })
            .collect();
        // Programs new to the cache, each once, evaluated together.
        let hashes: Vec<u64> = finals.iter().map(|s| s.program().fingerprint()).collect();
        let mut fresh: Vec<usize> = Vec::new();
        let mut queued = rustc_hash::FxHashSet::default();
        for (i, s) in finals.iter().enumerate() {
            if !s.is_complete() || self.cache.contains_key(&hashes[i]) {
                continue;
            }
            if let Some(known) = self.known.remove(&hashes[i]) {
                self.cache.insert(hashes[i], known);
                self.distinct += 1;
            } else if queued.insert(hashes[i]) {
                fresh.push(i);
            }
        }
        // Under a time budget, a batch is evaluated a few candidates per job at a
        // time, so that a search stops within a small part of a batch of the limit.
        let chunk = match self.budget.time {
            Some(_) => self.jobs * CANDIDATES_PER_JOB,
            None => fresh.len().max(1),
        };
        for part in fresh.chunks(chunk) {
            if self.exhausted() {
                break;
            }
            let programs: Vec<&P> = part.iter().map(|&i| finals[i].program()).collect();
            if let Some(Ok(mut shown)) = self.pending.as_ref().map(|p| p.lock()) {
                *shown = part
                    .iter()
                    .map(|&i| (hashes[i], finals[i].text()))
                    .collect();
            }
            let results = self
                .cost
                .evaluate_until(&programs, self.jobs, self.deadline());
            for (&i, result) in part.iter().zip(results) {
                self.cache.insert(hashes[i], result);
                self.distinct += 1;
            }
        }
        // The candidates up to the first whose program was left unevaluated.
        let known = finals
            .iter()
            .zip(&hashes)
            .take_while(|(s, h)| !s.is_complete() || self.cache.contains_key(h))
            .count();
        finals
            .iter()
            .zip(hashes)
            .take(known)
            .enumerate()
            .map(|(i, (state, hash))| self.record(state, hash, i + 1 == known))
            .collect()
    }

    /// When the time budget ends, if there is one.
    fn deadline(&self) -> Option<Instant> {
        self.budget.time.map(|limit| self.started + limit)
    }

    fn record(&mut self, state: &State<P>, hash: u64, end_of_round: bool) -> Option<f64> {
        let (status, reason, measure, cached) = match state.failure() {
            Some(reason) => (Status::StrategyFailed, reason.to_string(), None, false),
            None => {
                let cached = !self.logged.insert(hash);
                match &self.cache[&hash] {
                    Ok(m) => (Status::Ok, String::new(), Some(*m), cached),
                    Err(r) => (r.status, r.reason.clone(), None, cached),
                }
            }
        };
        let index = self.log.len();
        let best = self.best.and_then(|b| self.log[b].measure);
        let better = match (&measure, &best) {
            (Some(m), Some(b)) => ranks_before(m, b),
            (Some(_), None) => true,
            (None, _) => false,
        };
        if better {
            self.best = Some(index);
            self.best_program = Some(state.program().clone());
        }
        let best_so_far = if better {
            measure.map(|m| m.cost)
        } else {
            best.map(|b| b.cost)
        };
        self.log.push(Candidate {
            index,
            strategy: state.text(),
            decisions: state.decisions().collect(),
            program_hash: hash,
            status,
            reason,
            measure,
            cached,
            best_so_far,
        });
        if let Some(observer) = self.observer.as_mut() {
            observer(&Progress {
                candidate: &self.log[index],
                evaluations: self.log.len(),
                max_evaluations: self.budget.evaluations,
                elapsed: self.started.elapsed(),
                max_time: self.budget.time,
                best: self
                    .best
                    .map(|b| self.log[b].cost().unwrap_or(f64::INFINITY)),
                log: &self.log,
                end_of_round,
            });
        }
        measure.map(|m| m.cost)
    }

    /// The state completed with uniformly random options.
    pub fn random_completion(&mut self, state: &State<P>) -> State<P> {
        let mut state = state.clone();
        while !state.is_final() {
            let i = self.rng.random_range(0..state.options());
            state = state.choose(i).expect("an option in range");
        }
        state
    }

    /// The state `decisions` lead to from the root, each taken modulo the options
    /// there (so decisions from another state stay legal), completed at random once
    /// they run out.
    pub fn replay(&mut self, decisions: &[usize]) -> State<P> {
        let mut state = self.root.clone();
        for &d in decisions {
            if state.is_final() {
                break;
            }
            state = state
                .choose(d % state.options())
                .expect("an option in range");
        }
        self.random_completion(&state)
    }

    /// The best candidate so far.
    pub fn best(&self) -> Option<&Candidate> {
        self.best.map(|b| &self.log[b])
    }

    /// The best cost so far.
    pub fn best_cost(&self) -> Option<f64> {
        self.best().and_then(Candidate::cost)
    }

    /// Every candidate so far, in order.
    pub fn log(&self) -> &[Candidate] {
        &self.log
    }

    /// How many distinct programs the cost evaluated.
    pub fn distinct_programs(&self) -> usize {
        self.distinct
    }

    /// Time since the search started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The cost of a program already evaluated, by fingerprint.
    pub fn cached(&self, hash: u64) -> Option<&Result<Measure, Rejection>> {
        self.cache.get(&hash)
    }

    /// The program of the best candidate so far.
    pub fn best_program(&self) -> Option<&P> {
        self.best_program.as_ref()
    }

    /// Ends the exploration: the log, the number of distinct programs evaluated, and
    /// the best candidate's program.
    pub fn into_log(self) -> (Vec<Candidate>, usize, Option<P>) {
        (self.log, self.distinct, self.best_program)
    }
}
