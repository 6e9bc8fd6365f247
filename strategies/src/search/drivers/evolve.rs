//! `evolve(population)`: evolutionary search over decision vectors, as Ansor's.

use super::{evaluate_starts, single_point, Driver, Evaluator, Outcome, Path, BATCH};
use crate::search::cost::Fingerprint;
use crate::search::explorer::Explorer;
use elevate_core::Traversable;
use rand::RngExt;

/// Evolutionary search: a population of points, first the space's points to start
/// from ([`Explorer::starts`], each evaluated on its own), then random ones. Each
/// generation keeps the best eighth of the population (elitism, at least one) and
/// breeds the rest:
/// two parents picked by tournaments of [`Evolve::TOURNAMENT`], with probability
/// [`Evolve::CROSSOVER`] crossed at one point of their decision vectors (the first
/// parent's decisions up to the cut, the second's after it, repaired where no longer
/// legal and completed at random), the child then mutated (one decision changed,
/// sometimes a second) with probability [`Evolve::MUTATION`]. A child whose program
/// the search already knows is mutated again, a few times at most, so the budget goes
/// to new programs. Each generation's children are evaluated together.
pub struct Evolve {
    population: usize,
}

/// A member of the population.
#[derive(Clone)]
struct Individual<P> {
    path: Path<P>,
    cost: f64,
}

impl Evolve {
    /// The population of `evolve` without an argument.
    pub const DEFAULT_POPULATION: usize = 32;
    /// How many members a tournament compares.
    pub const TOURNAMENT: usize = 3;
    /// The probability that a child is a crossover of two parents.
    pub const CROSSOVER: f64 = 0.7;
    /// The probability that a child is mutated.
    pub const MUTATION: f64 = 0.5;
    /// Mutations tried at most to turn a known child into a new one.
    const NOVELTY_TRIES: usize = 4;
    /// Generations in a row with nothing new end the search.
    const STALE_GENERATIONS: usize = 4;

    /// An evolutionary search of `population` points (at least 2).
    pub fn new(population: usize) -> Self {
        Evolve {
            population: population.max(2),
        }
    }

    /// The size of the population.
    pub fn population(&self) -> usize {
        self.population
    }

    /// The winner of a tournament: the lowest cost, the first on ties.
    fn tournament<'a, P: Traversable + Fingerprint>(
        explorer: &mut Explorer<'_, P>,
        members: &'a [Individual<P>],
    ) -> &'a Individual<P> {
        let mut winner = explorer.rng().random_range(0..members.len());
        for _ in 1..Self::TOURNAMENT {
            let other = explorer.rng().random_range(0..members.len());
            if (members[other].cost, other) < (members[winner].cost, winner) {
                winner = other;
            }
        }
        &members[winner]
    }

    /// One-point crossover: `a`'s decisions before a random cut, `b`'s from it on.
    fn crossover<P: Traversable + Fingerprint>(
        explorer: &mut Explorer<'_, P>,
        a: &Path<P>,
        b: &Path<P>,
    ) -> Path<P> {
        let shorter = a.states.len().min(b.states.len()) - 1;
        if shorter < 2 {
            return a.clone();
        }
        let cut = explorer.rng().random_range(1..shorter);
        let b_decisions = b.decisions();
        Path::follow(explorer, &a.states[..=cut], &b_decisions[cut..])
    }

    /// A child of the population.
    fn breed<P: Traversable + Fingerprint>(
        explorer: &mut Explorer<'_, P>,
        members: &[Individual<P>],
    ) -> Path<P> {
        let a = Self::tournament(explorer, members).path.clone();
        let child = if explorer.rng().random_bool(Self::CROSSOVER) {
            let b = &Self::tournament(explorer, members).path;
            Self::crossover(explorer, &a, b)
        } else {
            a
        };
        if explorer.rng().random_bool(Self::MUTATION) {
            Self::mutate(explorer, child)
        } else {
            child
        }
    }

    /// `path` with one decision changed, and a second one time in four.
    fn mutate<P: Traversable + Fingerprint>(
        explorer: &mut Explorer<'_, P>,
        path: Path<P>,
    ) -> Path<P> {
        let Some(once) = path.mutate(explorer) else {
            return path;
        };
        if explorer.rng().random_bool(0.25) {
            if let Some(twice) = once.mutate(explorer) {
                return twice;
            }
        }
        once
    }
}

impl<P: Traversable + Fingerprint> Driver<P> for Evolve {
    fn name(&self) -> String {
        format!("evolve({})", self.population)
    }

    fn explore(&mut self, explorer: &mut Explorer<'_, P>) {
        if single_point(explorer) {
            return;
        }
        let mut evaluator = Evaluator::default();
        let root = explorer.root().clone();
        // The first population: the points to start from, then random ones.
        let mut members: Vec<Individual<P>> = evaluate_starts(explorer, &mut evaluator)
            .into_iter()
            .take(self.population)
            .map(|(path, outcome)| Individual {
                path,
                cost: outcome.value(),
            })
            .collect();
        let mut first: Vec<Path<P>> = Vec::with_capacity(self.population.min(BATCH));
        while members.len() + first.len() < self.population && !out_of_time(explorer, first.len()) {
            first.push(Path::random(explorer, &root));
        }
        members.extend(evaluate(explorer, &mut evaluator, first));
        let elites = (self.population / 8).max(1);
        let mut stale = 0;
        while !explorer.exhausted() && stale < Self::STALE_GENERATIONS && !members.is_empty() {
            // Stable: equal costs keep their order, so a seed gives one population.
            members.sort_by(|a, b| a.cost.total_cmp(&b.cost));
            let mut children = Vec::with_capacity(self.population.min(BATCH));
            while children.len() + elites.min(members.len()) < self.population
                && !out_of_time(explorer, children.len())
            {
                let mut child = Self::breed(explorer, &members);
                for _ in 0..Self::NOVELTY_TRIES {
                    if evaluator.known(explorer, child.end()).is_none() {
                        break;
                    }
                    child = Self::mutate(explorer, child);
                }
                children.push(child);
            }
            let spent = evaluator.spent;
            let children = evaluate(explorer, &mut evaluator, children);
            stale = if evaluator.spent == spent {
                stale + 1
            } else {
                0
            };
            members.truncate(elites);
            members.extend(children);
        }
    }
}

/// Whether a time budget ran out while a generation of `made` points so far was
/// being made: checked once per batch, since making a point may take a while.
fn out_of_time<P: Traversable + Fingerprint>(explorer: &Explorer<'_, P>, made: usize) -> bool {
    made > 0 && made.is_multiple_of(BATCH) && explorer.exhausted()
}

/// The members `paths` make, with their costs; those the budget left out are dropped.
fn evaluate<P: Traversable + Fingerprint>(
    explorer: &mut Explorer<'_, P>,
    evaluator: &mut Evaluator,
    paths: Vec<Path<P>>,
) -> Vec<Individual<P>> {
    let ends: Vec<_> = paths.iter().map(|p| p.end().clone()).collect();
    let outcomes = evaluator.evaluate(explorer, &ends);
    paths
        .into_iter()
        .zip(outcomes)
        .filter(|(_, o)| *o != Outcome::Skipped)
        .map(|(path, o)| Individual {
            path,
            cost: o.value(),
        })
        .collect()
}
