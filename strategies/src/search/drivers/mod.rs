//! Drivers: how a search explores its space. Each is deterministic for a given seed
//! when the cost is (the model cost; measured times vary).
//!
//! A driver works on decisions through the [`Explorer`]: it walks [`State`]s from the
//! root, has final states evaluated (in batches, which the cost may evaluate in
//! parallel), and stops when [`Explorer::exhausted`] says the budget is spent.
//!
//! The drivers that learn from what they evaluated ([`Beam`], [`Anneal`], [`Mcts`],
//! [`Evolve`]) spend the budget only on programs the search has not seen: a program
//! already in the explorer's cache (or a point already known to fail) is answered
//! from there, and is not logged again. Each stops when the budget is spent, when the
//! space is done, or after a long run of proposals that were all known.
//!
//! [`State`]: super::State

mod anneal;
mod beam;
mod evolve;
mod exhaustive;
mod mcts;
mod random;

use super::cost::Fingerprint;
use super::explorer::Explorer;
use super::space::State;
use elevate_core::Traversable;
use rand::RngExt;
use rustc_hash::FxHashSet;

pub use anneal::Anneal;
pub use beam::Beam;
pub use evolve::Evolve;
pub use exhaustive::Exhaustive;
pub use mcts::Mcts;
pub use random::Random;

/// How many final states a driver hands to the cost at once, at most: enough for
/// every core to compile one.
pub const BATCH: usize = 32;

/// A way to explore a space.
pub trait Driver<P>: Send {
    /// The driver as text, e.g. `beam(8)`.
    fn name(&self) -> String;

    /// Explores until the space is done or the budget is spent.
    fn explore(&mut self, explorer: &mut Explorer<'_, P>);
}

/// Every point, depth first, in the order of the options.
pub fn exhaustive<P: Traversable + Fingerprint>() -> Box<dyn Driver<P>> {
    Box::new(Exhaustive)
}

/// Points with uniformly random decisions.
pub fn random<P: Traversable + Fingerprint>() -> Box<dyn Driver<P>> {
    Box::new(Random)
}

/// Beam search keeping the `width` most promising partial points of each level
/// (`width` of 0 counts as 1).
pub fn beam<P: Traversable + Fingerprint>(width: usize) -> Box<dyn Driver<P>> {
    Box::new(Beam::new(width))
}

/// Simulated annealing over decision vectors, with restarts.
pub fn anneal<P: Traversable + Fingerprint>() -> Box<dyn Driver<P>> {
    Box::new(Anneal)
}

/// Monte-Carlo tree search (UCT) over the decisions, with random rollouts.
pub fn mcts<P: Traversable + Fingerprint>() -> Box<dyn Driver<P>> {
    Box::new(Mcts)
}

/// Evolutionary search with a population of `population` points (at least 2).
pub fn evolve<P: Traversable + Fingerprint>(population: usize) -> Box<dyn Driver<P>> {
    Box::new(Evolve::new(population))
}

/// A driver named in text that does not exist or has bad arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DriverError(pub String);

/// The drivers [`from_text`] knows, as its messages list them.
const NAMES: &str = "exhaustive, random, beam(width), anneal, mcts, evolve(population)";

/// The largest width of `beam` and population of `evolve` that [`from_text`] accepts.
pub const MAX_ARGUMENT: usize = 4_096;

/// The driver `text` names: `exhaustive`, `random`, `beam(width)` (`beam` alone is
/// `beam(8)`), `anneal`, `mcts`, `evolve(population)` (`evolve` alone is
/// `evolve(32)`); widths and populations from 1 (2 for a population) to
/// [`MAX_ARGUMENT`].
///
/// ```
/// use elevate_core::arith::Term;
/// use elevate_strategies::search::drivers;
/// assert_eq!(drivers::from_text::<Term>("beam(4)").unwrap().name(), "beam(4)");
/// assert_eq!(drivers::from_text::<Term>(" evolve ").unwrap().name(), "evolve(32)");
/// assert!(drivers::from_text::<Term>("beam(0)").is_err());
/// assert!(drivers::from_text::<Term>("greedy").is_err());
/// ```
pub fn from_text<P: Traversable + Fingerprint>(
    text: &str,
) -> Result<Box<dyn Driver<P>>, DriverError> {
    let text = text.trim();
    let (name, args) = match text.split_once('(') {
        Some((name, rest)) => {
            let Some(args) = rest.trim_end().strip_suffix(')') else {
                return Err(DriverError(format!("`{text}`: expected `)` at the end")));
            };
            (name.trim(), Some(args.trim()))
        }
        None => (text, None),
    };
    let no_args = |d: Box<dyn Driver<P>>| match args {
        None => Ok(d),
        Some(_) => Err(DriverError(format!("`{name}` takes no arguments"))),
    };
    // The one positive integer argument of `beam` and `evolve`, or `default`.
    let count = |what: &str, default: usize| -> Result<usize, DriverError> {
        let Some(arg) = args else {
            return Ok(default);
        };
        match arg.parse::<usize>() {
            Ok(0) => Err(DriverError(format!(
                "`{name}`: the {what} must be at least 1"
            ))),
            Ok(n) if n > MAX_ARGUMENT => Err(DriverError(format!(
                "`{name}({n})`: the {what} must be at most {MAX_ARGUMENT}"
            ))),
            Ok(n) => Ok(n),
            Err(_) if arg.is_empty() => Err(DriverError(format!(
                "`{name}()`: expected the {what}, e.g. `{name}({default})`"
            ))),
            Err(_) if arg.bytes().all(|b| b.is_ascii_digit()) => Err(DriverError(format!(
                "`{name}({arg})`: the {what} must be at most {MAX_ARGUMENT}"
            ))),
            Err(_) => Err(DriverError(format!(
                "`{name}({arg})`: the {what} must be a positive integer"
            ))),
        }
    };
    match name {
        "exhaustive" => no_args(exhaustive()),
        "random" => no_args(random()),
        "anneal" => no_args(anneal()),
        "mcts" => no_args(mcts()),
        "beam" => Ok(beam(count("width", Beam::DEFAULT_WIDTH)?)),
        "evolve" => {
            let population = count("population", Evolve::DEFAULT_POPULATION)?;
            if population < 2 {
                return Err(DriverError(format!(
                    "`{name}`: the population must be at least 2"
                )));
            }
            Ok(evolve(population))
        }
        "" => Err(DriverError(format!("expected a driver ({NAMES})"))),
        _ => Err(DriverError(format!("unknown driver `{name}` ({NAMES})"))),
    }
}

/// If the space has a single point (the root is final), evaluates it and says so:
/// every driver starts with this, so none has to handle a root without options.
fn single_point<P: Traversable + Fingerprint>(explorer: &mut Explorer<'_, P>) -> bool {
    if explorer.root().is_final() {
        let root = explorer.root().clone();
        explorer.evaluate(&[root]);
        return true;
    }
    false
}

/// The explorer's points to start from ([`Explorer::starts`]), each evaluated on its
/// own (a cost that measures only the best few of each round measures every one), as
/// paths from the root with their outcomes; those the budget left out are dropped.
fn evaluate_starts<P: Traversable + Fingerprint>(
    explorer: &mut Explorer<'_, P>,
    evaluator: &mut Evaluator,
) -> Vec<(Path<P>, Outcome)> {
    let root = explorer.root().clone();
    let starts = explorer.starts().to_vec();
    let mut evaluated = Vec::with_capacity(starts.len());
    for start in starts {
        let outcome = evaluator.evaluate(explorer, std::slice::from_ref(&start))[0];
        if outcome != Outcome::Skipped {
            let decisions: Vec<usize> = start.decisions().collect();
            let path = Path::follow(explorer, std::slice::from_ref(&root), &decisions);
            evaluated.push((path, outcome));
        }
    }
    evaluated
}

/// What evaluating a final state found.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Outcome {
    /// Its cost.
    Cost(f64),
    /// It failed (its strategy, or the cost rejected its program).
    Failed,
    /// Not evaluated: the budget ran out first.
    Skipped,
}

impl Outcome {
    /// The cost to rank by: failed and skipped points rank last.
    fn value(self) -> f64 {
        match self {
            Outcome::Cost(c) if !c.is_nan() => c,
            _ => f64::INFINITY,
        }
    }
}

/// Evaluates final states for a driver that may propose the same point or program
/// many times: programs the explorer has cached and points known to fail are answered
/// without spending the budget (and are not logged again); the others go to the
/// explorer together, in rounds of at most [`BATCH`].
#[derive(Default)]
struct Evaluator {
    /// Decisions of points whose strategy failed (their program has no cost to cache).
    failed: FxHashSet<Vec<usize>>,
    /// How many candidates this evaluator had the explorer evaluate.
    spent: usize,
}

impl Evaluator {
    /// What is already known of a final state, without evaluating it.
    fn known<P: Traversable + Fingerprint>(
        &self,
        explorer: &Explorer<'_, P>,
        state: &State<P>,
    ) -> Option<Outcome> {
        if state.failure().is_some() {
            let decisions: Vec<usize> = state.decisions().collect();
            return self.failed.contains(&decisions).then_some(Outcome::Failed);
        }
        explorer
            .cached(state.program().fingerprint())
            .map(|result| match result {
                Ok(measure) => Outcome::Cost(measure.cost),
                Err(_) => Outcome::Failed,
            })
    }

    /// The outcomes of final `states` (a state that is not final is completed at
    /// random first), in order.
    fn evaluate<P: Traversable + Fingerprint>(
        &mut self,
        explorer: &mut Explorer<'_, P>,
        states: &[State<P>],
    ) -> Vec<Outcome> {
        let mut outcomes = vec![Outcome::Skipped; states.len()];
        // Each new point once: (index in `states`, the state), and for the others the
        // index of the new point they repeat.
        let mut fresh: Vec<(usize, State<P>)> = Vec::new();
        let mut repeats: Vec<(usize, usize)> = Vec::new();
        let mut queued_programs: rustc_hash::FxHashMap<u64, usize> = Default::default();
        let mut queued_failures: rustc_hash::FxHashMap<Vec<usize>, usize> = Default::default();
        for (i, state) in states.iter().enumerate() {
            let state = if state.is_final() {
                state.clone()
            } else {
                explorer.random_completion(state)
            };
            if let Some(known) = self.known(explorer, &state) {
                outcomes[i] = known;
                continue;
            }
            let first = if state.failure().is_some() {
                *queued_failures
                    .entry(state.decisions().collect())
                    .or_insert(i)
            } else {
                *queued_programs
                    .entry(state.program().fingerprint())
                    .or_insert(i)
            };
            if first == i {
                fresh.push((i, state));
            } else {
                repeats.push((i, first));
            }
        }
        for chunk in fresh.chunks(BATCH) {
            if explorer.exhausted() {
                break;
            }
            let batch: Vec<State<P>> = chunk.iter().map(|(_, s)| s.clone()).collect();
            let costs = explorer.evaluate(&batch);
            self.spent += costs.len();
            for ((i, state), cost) in chunk.iter().zip(costs) {
                outcomes[*i] = match cost {
                    Some(c) => Outcome::Cost(c),
                    None => {
                        if state.failure().is_some() {
                            self.failed.insert(state.decisions().collect());
                        }
                        Outcome::Failed
                    }
                };
            }
        }
        for (i, first) in repeats {
            outcomes[i] = outcomes[first];
        }
        outcomes
    }
}

/// A point with every state on the way to it: `states[0]` is where it started (the
/// root, for a whole point) and `states[d]` the state after `d` more decisions. The
/// states share their prefixes, so keeping a path costs little, and a neighbour that
/// differs at depth `d` starts from `states[d]` instead of the root.
#[derive(Clone)]
struct Path<P> {
    states: Vec<State<P>>,
}

impl<P: Traversable + Fingerprint> Path<P> {
    /// From `start`: `decisions` in turn, each taken modulo the options there (so
    /// decisions of another point stay legal), then random options until the point is
    /// final.
    fn follow(explorer: &mut Explorer<'_, P>, start: &[State<P>], decisions: &[usize]) -> Self {
        let mut states = start.to_vec();
        let mut decisions = decisions.iter();
        while let Some(state) = states.last() {
            let options = state.options();
            if options == 0 {
                break;
            }
            let option = match decisions.next() {
                Some(&d) => d % options,
                None => explorer.rng().random_range(0..options),
            };
            // Every option below `options()` exists; should one not, the point stays
            // partial and the explorer completes it.
            let Some(next) = state.choose(option) else {
                break;
            };
            states.push(next);
        }
        Path { states }
    }

    /// A uniformly random point below `state`.
    fn random(explorer: &mut Explorer<'_, P>, state: &State<P>) -> Self {
        Path::follow(explorer, std::slice::from_ref(state), &[])
    }

    /// The final state.
    fn end(&self) -> &State<P> {
        self.states.last().expect("a path holds its start")
    }

    /// The decisions taken after the start, one per step.
    fn decisions(&self) -> Vec<usize> {
        let start = self.states[0].depth();
        self.end().decisions().skip(start).collect()
    }

    /// Depths (from the start) where the point could have taken another option.
    fn open_depths(&self) -> Vec<usize> {
        (0..self.states.len().saturating_sub(1))
            .filter(|&d| self.states[d].options() > 1)
            .collect()
    }

    /// The point with the decision at a random open depth changed to another option,
    /// the later decisions kept (modulo the options) and completed at random; `None`
    /// if no decision has another option (the space is one path).
    fn mutate(&self, explorer: &mut Explorer<'_, P>) -> Option<Self> {
        let open = self.open_depths();
        if open.is_empty() {
            return None;
        }
        let depth = open[explorer.rng().random_range(0..open.len())];
        let decisions = self.decisions();
        let options = self.states[depth].options();
        // Another option than the one taken: a shift of 1..options, modulo options.
        let shift = explorer.rng().random_range(1..options);
        let mut changed = decisions[depth..].to_vec();
        changed[0] = (decisions[depth] + shift) % options;
        Some(Path::follow(explorer, &self.states[..=depth], &changed))
    }
}
