//! The saturation loop: rounds of searching every rule, applying what matched and
//! restoring the e-graph's invariants, until the e-graph is saturated or a limit is
//! reached.
//!
//! egg's `Runner` checks its time limit between iterations and between rules, so one
//! long search or one rule with many matches runs past it. Here the limits live in
//! the e-graph's analysis while the loop runs, and the searcher and the appliers ask
//! before each class and each match ([`super::lang::may_grow`]): the loop stops within
//! one match of its deadline. The deadline leaves time for extraction, more as the
//! e-graph grows ([`Reserve`]). Rules are scheduled as egg does by default (a
//! [`BackoffScheduler`] bans a rule for a while when it matches too often).

use super::lang::{Rise, RiseAnalysis, RiseGraph};
use super::rewrite::RiseRewrite;
use egg::{BackoffScheduler, Id, RewriteScheduler};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// When a saturation stops, whichever comes first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SaturationLimits {
    /// Iterations (rounds of applying every rule).
    pub iterations: usize,
    /// E-nodes.
    pub nodes: usize,
    /// Wall-clock time, of growing the e-graph and extracting from it.
    pub time: Duration,
    /// Resident memory of the process, in MB.
    pub memory_mb: usize,
}

impl Default for SaturationLimits {
    /// 30 iterations, 100,000 e-nodes, 10 s, 4 GB.
    fn default() -> Self {
        SaturationLimits {
            iterations: 30,
            nodes: 100_000,
            time: Duration::from_secs(10),
            memory_mb: 4096,
        }
    }
}

impl std::fmt::Display for SaturationLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "iterations={},nodes={},ms={},mb={}",
            self.iterations,
            self.nodes,
            self.time.as_millis(),
            self.memory_mb
        )
    }
}

/// Why limits text does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SaturationLimitsError {
    /// A part is not `key=value`.
    #[error("a limit is `key=value`, found `{0}`")]
    NotKeyValue(String),
    /// A value is not a whole number.
    #[error("the limit `{key}` needs a whole number, found `{value}`")]
    NotANumber {
        /// The limit.
        key: String,
        /// What was given.
        value: String,
    },
    /// The key names no limit.
    #[error("unknown limit `{0}` (iterations, nodes, ms, s, mb)")]
    Unknown(String),
}

impl std::str::FromStr for SaturationLimits {
    type Err = SaturationLimitsError;

    /// `iterations=30,nodes=100000,ms=10000,mb=4096` (any subset, the rest default).
    fn from_str(s: &str) -> Result<SaturationLimits, SaturationLimitsError> {
        let mut limits = SaturationLimits::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| SaturationLimitsError::NotKeyValue(part.to_string()))?;
            let number: u64 =
                value
                    .trim()
                    .parse()
                    .map_err(|_| SaturationLimitsError::NotANumber {
                        key: key.trim().to_string(),
                        value: value.to_string(),
                    })?;
            let count = usize::try_from(number).unwrap_or(usize::MAX);
            match key.trim() {
                "iterations" | "iters" => limits.iterations = count,
                "nodes" => limits.nodes = count,
                "ms" | "time" => limits.time = Duration::from_millis(number),
                "s" => limits.time = Duration::from_secs(number),
                "mb" | "memory" => limits.memory_mb = count,
                other => return Err(SaturationLimitsError::Unknown(other.to_string())),
            }
        }
        Ok(limits)
    }
}

/// One iteration, for progress reports.
#[derive(Debug, Clone)]
pub struct Progress {
    /// The iteration (from 1).
    pub iteration: usize,
    /// E-nodes.
    pub enodes: usize,
    /// E-classes.
    pub eclasses: usize,
    /// Resident memory of the process, MB.
    pub memory_mb: f64,
    /// The rule applied most often in the last iteration, with its count.
    pub top_rule: Option<(String, usize)>,
    /// Time since the start.
    pub elapsed: Duration,
}

/// Where a saturation's time went: building the e-graph, each phase over all
/// iterations, and extraction.
#[derive(Debug, Clone, Copy, Default)]
pub struct Phases {
    /// Adding the program to the e-graph.
    pub build: Duration,
    /// Searching for matches.
    pub search: Duration,
    /// Applying the matches.
    pub apply: Duration,
    /// Restoring the e-graph's invariants.
    pub rebuild: Duration,
    /// Extracting the result.
    pub extract: Duration,
}

/// The resident memory of this process, MB (0 where the platform does not say).
pub fn resident_mb() -> f64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(0.0, |pages| pages * 4096.0 / (1024.0 * 1024.0))
}

pub(crate) type ProgressFn = Arc<Mutex<dyn FnMut(&Progress) + Send>>;
pub(crate) type GoalFn = Arc<dyn Fn(&RiseGraph, Id) -> bool + Send + Sync>;

/// What one run of the loop is given.
pub(crate) struct Run<'a> {
    /// The rewrites, applied in this order.
    pub rewrites: &'a [RiseRewrite],
    pub limits: SaturationLimits,
    /// When the saturation started (progress reports count from there).
    pub start: Instant,
    /// When the time limit ends (growing and extracting).
    pub end: Instant,
    /// The time kept for extraction.
    pub reserve: Reserve,
    pub progress: Option<&'a ProgressFn>,
    pub goal: Option<&'a GoalFn>,
}

/// The time growing leaves for extraction: a share of the limit, or, for an e-graph
/// that took long to build (a deep program), as long per e-node as building took
/// (extraction visits each e-node about as often as adding it did).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reserve {
    /// At least this long.
    pub floor: Duration,
    /// This long per e-node.
    pub per_node: Duration,
}

impl Reserve {
    /// The time to keep for extracting from `nodes` e-nodes.
    fn for_nodes(self, nodes: usize) -> Duration {
        let nodes = u32::try_from(nodes).unwrap_or(u32::MAX);
        self.floor.max(self.per_node.saturating_mul(nodes))
    }
}

/// What the loop did.
pub(crate) struct Ran {
    /// `saturated`, `iterations`, `nodes`, `time`, `memory` or `goal`.
    pub stop_reason: &'static str,
    /// Iterations that searched and applied rules.
    pub iterations: usize,
    /// Successful applications by rule, most first.
    pub applied: Vec<(String, usize)>,
    pub phases: Phases,
    /// The largest resident memory seen, MB.
    pub peak_mb: f64,
}

impl Run<'_> {
    /// Grows `egraph` (whose program is the class `root`) until a stop reason. The
    /// e-graph is left rebuilt, except when time ran out: then the rebuild, which
    /// cannot be interrupted, is skipped (extraction does not need it: every e-node
    /// of a class is equal to the class, canonical or not).
    pub(crate) fn run(&self, egraph: &mut RiseGraph, root: Id) -> Ran {
        self.update_deadline(egraph);
        egraph.analysis.node_limit = Some(self.limits.nodes);
        let ran = self.iterate(egraph, root);
        egraph.analysis.deadline = None;
        egraph.analysis.node_limit = None;
        ran
    }

    /// Sets the deadline the searcher and appliers check: the end of the time limit,
    /// less the time that extraction from an e-graph of this size needs.
    fn update_deadline(&self, egraph: &mut RiseGraph) {
        let reserve = self.reserve.for_nodes(egraph.total_size());
        let deadline = self.end.checked_sub(reserve).unwrap_or(self.start);
        egraph.analysis.deadline = Some(deadline);
    }

    fn iterate(&self, egraph: &mut RiseGraph, root: Id) -> Ran {
        let mut scheduler = BackoffScheduler::default();
        let mut applied: BTreeMap<String, usize> = BTreeMap::new();
        let mut phases = Phases::default();
        let mut peak_mb = resident_mb();
        let mut iterations = 0;
        let timed_out = |egraph: &RiseGraph| egraph.analysis.out_of_time();
        // The goal may hold before any rewrite.
        let reached = |egraph: &RiseGraph| {
            self.goal
                .is_some_and(|goal| goal(egraph, egraph.find(root)))
        };
        let stop_reason = loop {
            if iterations == 0 && reached(egraph) {
                break "goal";
            }
            if let Some(reason) = self.exceeded(egraph, iterations) {
                break reason;
            }
            let (nodes, classes) = (egraph.total_size(), egraph.number_of_classes());
            let started = Instant::now();
            let mut found = Vec::with_capacity(self.rewrites.len());
            for rewrite in self.rewrites {
                if timed_out(egraph) {
                    break;
                }
                found.push(scheduler.search_rewrite(iterations, egraph, rewrite));
            }
            self.update_deadline(egraph);
            let searched = Instant::now();
            phases.search += searched - started;
            let mut this_round: BTreeMap<String, usize> = BTreeMap::new();
            for (rewrite, matches) in self.rewrites.iter().zip(found) {
                if !super::lang::may_grow(egraph) {
                    break;
                }
                let n = scheduler.apply_rewrite(iterations, egraph, rewrite, matches);
                if n > 0 {
                    *this_round.entry(rewrite.name.to_string()).or_default() += n;
                }
                self.update_deadline(egraph);
            }
            let applied_at = Instant::now();
            phases.apply += applied_at - searched;
            iterations += 1;
            for (rule, n) in &this_round {
                *applied.entry(rule.clone()).or_default() += n;
            }
            // A rebuild cannot be interrupted: past the deadline, the e-graph stays as
            // the last rewrite left it (explanations need it rebuilt).
            if timed_out(egraph) && !egraph.are_explanations_enabled() {
                break "time";
            }
            egraph.rebuild();
            phases.rebuild += applied_at.elapsed();
            let mb = resident_mb();
            peak_mb = peak_mb.max(mb);
            self.report(egraph, iterations, mb, &this_round);
            if timed_out(egraph) {
                break "time";
            }
            let unchanged = this_round.is_empty()
                && egraph.total_size() == nodes
                && egraph.number_of_classes() == classes;
            if unchanged
                && RewriteScheduler::<Rise, RiseAnalysis>::can_stop(&mut scheduler, iterations - 1)
            {
                break "saturated";
            }
            if mb > self.limits.memory_mb as f64 {
                break "memory";
            }
            if reached(egraph) {
                break "goal";
            }
        };
        let mut applied: Vec<(String, usize)> = applied.into_iter().collect();
        applied.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        Ran {
            stop_reason,
            iterations,
            applied,
            phases,
            peak_mb: peak_mb.max(resident_mb()),
        }
    }

    /// The limit an iteration may not start past, if one is reached.
    fn exceeded(&self, egraph: &RiseGraph, iterations: usize) -> Option<&'static str> {
        if egraph.analysis.out_of_time() {
            Some("time")
        } else if iterations >= self.limits.iterations {
            Some("iterations")
        } else if egraph.total_size() > self.limits.nodes {
            Some("nodes")
        } else {
            None
        }
    }

    /// Calls the progress function, if any, after an iteration.
    fn report(
        &self,
        egraph: &RiseGraph,
        iteration: usize,
        memory_mb: f64,
        applied: &BTreeMap<String, usize>,
    ) {
        let Some(f) = self.progress else {
            return;
        };
        let top_rule = applied
            .iter()
            .max_by_key(|(_, &n)| n)
            .map(|(r, &n)| (r.clone(), n));
        let mut f = f.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&Progress {
            iteration,
            enodes: egraph.total_number_of_nodes(),
            eclasses: egraph.number_of_classes(),
            memory_mb,
            top_rule,
            elapsed: self.start.elapsed(),
        });
    }
}
