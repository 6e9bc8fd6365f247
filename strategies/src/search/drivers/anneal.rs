//! `anneal`: simulated annealing over decision vectors, with restarts.

use super::{evaluate_starts, single_point, Driver, Evaluator, Outcome, Path};
use crate::search::cost::Fingerprint;
use crate::search::explorer::Explorer;
use elevate_core::Traversable;
use rand::RngExt;

/// Simulated annealing: from the best of the space's points to start from
/// ([`Explorer::starts`], each evaluated on its own) or, without one, from a random
/// point, each step proposes
/// [`Anneal::PROPOSALS`] neighbours (one decision changed at a random depth, the later
/// decisions kept where still legal and the rest completed at random), evaluates them
/// together, and moves to the best of them by the Metropolis rule on the relative
/// cost: always when it is no worse, otherwise with probability `exp(-Δ/T)`, where
/// `Δ` is how much worse it is relative to the current cost. The temperature `T`
/// falls geometrically from [`Anneal::T_START`] to [`Anneal::T_END`] as the budget
/// (evaluations or time, whichever is further spent) is used up. After
/// [`Anneal::PATIENCE`] steps without improving on the best of the current run, the
/// walk restarts from the best point so far or from a random point (even odds; always
/// a random point when the last step found nothing new).
pub struct Anneal;

impl Anneal {
    /// Neighbours proposed and evaluated together at each step.
    pub const PROPOSALS: usize = 8;
    /// Steps without improvement before a restart.
    pub const PATIENCE: usize = 8;
    /// The temperature at the start: a neighbour 10% worse is taken with odds `e^-1`.
    pub const T_START: f64 = 0.1;
    /// The temperature when the budget is spent.
    pub const T_END: f64 = 0.002;
    /// Without a budget, the temperature falls over this many evaluations.
    const NOMINAL_EVALUATIONS: f64 = 1_000.0;
    /// Steps in a row whose proposals were all known end the search (a small space
    /// is done).
    const STALE_STEPS: usize = 32;

    /// How far the search is through its budget, from 0 to 1.
    fn progress<P: Traversable + Fingerprint>(explorer: &Explorer<'_, P>) -> f64 {
        let budget = explorer.budget();
        let used = explorer.log().len() as f64;
        let by_evaluations = match budget.evaluations {
            Some(n) => used / n.max(1) as f64,
            None if budget.time.is_none() => used / Self::NOMINAL_EVALUATIONS,
            None => 0.0,
        };
        let by_time = budget.time.map_or(0.0, |limit| {
            explorer.elapsed().as_secs_f64() / limit.as_secs_f64().max(1e-9)
        });
        by_evaluations.max(by_time).clamp(0.0, 1.0)
    }

    /// The temperature at `progress`.
    fn temperature(progress: f64) -> f64 {
        Self::T_START * (Self::T_END / Self::T_START).powf(progress)
    }

    /// Whether to move from cost `current` to cost `proposed` at temperature `t`.
    fn accept<P: Traversable + Fingerprint>(
        explorer: &mut Explorer<'_, P>,
        current: f64,
        proposed: f64,
        t: f64,
    ) -> bool {
        if proposed <= current || current.is_infinite() {
            // A failed current point: any neighbour, failed or not, is a way out.
            return true;
        }
        if proposed.is_infinite() {
            return false;
        }
        let worse = (proposed - current) / current.abs().max(f64::MIN_POSITIVE);
        explorer.rng().random::<f64>() < (-worse / t).exp()
    }
}

impl<P: Traversable + Fingerprint> Driver<P> for Anneal {
    fn name(&self) -> String {
        "anneal".into()
    }

    fn explore(&mut self, explorer: &mut Explorer<'_, P>) {
        if single_point(explorer) {
            return;
        }
        let mut evaluator = Evaluator::default();
        let root = explorer.root().clone();
        // From the best point to start from, or a random one.
        let best_start = evaluate_starts(explorer, &mut evaluator)
            .into_iter()
            .map(|(start, outcome)| (start, outcome.value()))
            .filter(|(_, cost)| cost.is_finite())
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let (mut current, mut cost) = match best_start {
            Some((path, cost)) => (path, cost),
            None => {
                let path = Path::random(explorer, &root);
                match evaluator.evaluate(explorer, &[path.end().clone()])[0] {
                    Outcome::Skipped => return,
                    outcome => (path, outcome.value()),
                }
            }
        };
        let mut best = (current.clone(), cost);
        let mut run_best = cost;
        let (mut without_improvement, mut stale) = (0, 0);
        while !explorer.exhausted() && stale < Self::STALE_STEPS {
            let proposals: Vec<Path<P>> = (0..Self::PROPOSALS)
                .filter_map(|_| current.mutate(explorer))
                .collect();
            if proposals.is_empty() {
                // No decision has a second option: the space is this one point.
                return;
            }
            let spent = evaluator.spent;
            let ends: Vec<_> = proposals.iter().map(|p| p.end().clone()).collect();
            let outcomes = evaluator.evaluate(explorer, &ends);
            stale = if evaluator.spent == spent {
                stale + 1
            } else {
                0
            };
            // The best proposal; ties go to the first, for determinism.
            let Some((chosen, proposed)) = outcomes
                .iter()
                .enumerate()
                .filter(|(_, o)| **o != Outcome::Skipped)
                .map(|(i, o)| (i, o.value()))
                .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
            else {
                return;
            };
            if proposed < best.1 {
                best = (proposals[chosen].clone(), proposed);
            }
            let t = Self::temperature(Self::progress(explorer));
            if Self::accept(explorer, cost, proposed, t) {
                current = proposals[chosen].clone();
                cost = proposed;
            }
            if proposed < run_best {
                run_best = proposed;
                without_improvement = 0;
            } else {
                without_improvement += 1;
            }
            if without_improvement >= Self::PATIENCE {
                without_improvement = 0;
                // From the best, unless the walk has stopped finding new programs
                // there: then somewhere new.
                if stale == 0 && explorer.rng().random_bool(0.5) {
                    (current, cost) = best.clone();
                } else {
                    current = Path::random(explorer, &root);
                    cost = match evaluator.evaluate(explorer, &[current.end().clone()])[0] {
                        Outcome::Skipped => return,
                        outcome => outcome.value(),
                    };
                    if cost < best.1 {
                        best = (current.clone(), cost);
                    }
                }
                run_best = cost;
            }
        }
    }
}
