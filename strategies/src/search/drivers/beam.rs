//! `beam(width)`: level by level over the decision tree, keeping the most promising
//! partial points.

use super::{evaluate_starts, single_point, Driver, Evaluator, Path, BATCH};
use crate::search::cost::Fingerprint;
use crate::search::explorer::Explorer;
use crate::search::space::State;
use elevate_core::Traversable;
use rustc_hash::FxHashMap;

/// Beam search: every state of the beam is expanded by each of its options; a child
/// that is a final point is evaluated, and a partial one gets [`Beam::ROLLOUTS`]
/// random completions (programs already evaluated cost nothing). A child's score is
/// the best cost of every point evaluated below it so far: its own completions and
/// those of earlier levels that passed through it. The `width` best-scored children
/// make the next beam. The search ends when the beam is empty (every child was final)
/// or the budget is spent.
pub struct Beam {
    width: usize,
}

impl Beam {
    /// The width of `beam` without an argument.
    pub const DEFAULT_WIDTH: usize = 8;

    /// Random completions that score one partial child.
    pub const ROLLOUTS: usize = 3;

    /// A beam of `width` states (at least 1).
    pub fn new(width: usize) -> Self {
        Beam {
            width: width.max(1),
        }
    }

    /// How many states the beam keeps.
    pub fn width(&self) -> usize {
        self.width
    }
}

impl<P: Traversable + Fingerprint> Driver<P> for Beam {
    fn name(&self) -> String {
        format!("beam({})", self.width)
    }

    fn explore(&mut self, explorer: &mut Explorer<'_, P>) {
        if single_point(explorer) {
            return;
        }
        let mut evaluator = Evaluator::default();
        // The points to start from are evaluated first, each on its own: known to
        // the search (and its best) from the start.
        evaluate_starts(explorer, &mut evaluator);
        // The best cost below each prefix of decisions (looked up, never iterated).
        let mut below: FxHashMap<Vec<usize>, f64> = FxHashMap::default();
        let mut beam: Vec<State<P>> = vec![explorer.root().clone()];
        while !beam.is_empty() && !explorer.exhausted() {
            let (finals, partial): (Vec<State<P>>, Vec<State<P>>) = beam
                .iter()
                .flat_map(|state| (0..state.options()).filter_map(|i| state.choose(i)))
                .partition(State::is_final);
            evaluator.evaluate(explorer, &finals);
            if partial.is_empty() || explorer.exhausted() {
                return;
            }
            // The level's rollouts, a batch at a time: the cost sees each batch at once,
            // and a time budget is checked between batches.
            for children in partial.chunks((BATCH / Self::ROLLOUTS).max(1)) {
                if explorer.exhausted() {
                    return;
                }
                let rollouts: Vec<State<P>> = children
                    .iter()
                    .flat_map(|child| vec![child; Self::ROLLOUTS])
                    .map(|child| Path::random(explorer, child).end().clone())
                    .collect();
                let outcomes = evaluator.evaluate(explorer, &rollouts);
                for (state, outcome) in rollouts.iter().zip(outcomes) {
                    let decisions: Vec<usize> = state.decisions().collect();
                    for depth in 0..=decisions.len() {
                        let best = below
                            .entry(decisions[..depth].to_vec())
                            .or_insert(f64::INFINITY);
                        *best = best.min(outcome.value());
                    }
                }
            }
            let mut scored: Vec<(f64, usize)> = partial
                .iter()
                .map(|child| {
                    let decisions: Vec<usize> = child.decisions().collect();
                    below.get(&decisions).copied().unwrap_or(f64::INFINITY)
                })
                .zip(0..)
                .collect();
            // Ties keep the order of the options, so the beam is the same for a seed.
            scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            beam = scored
                .iter()
                .take(self.width)
                .map(|&(_, i)| partial[i].clone())
                .collect();
        }
    }
}
