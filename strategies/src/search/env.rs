//! The search's decisions as a step-by-step environment for learning agents, in the
//! spirit of the MLIR RL environment (`spec/search.md`).
//!
//! The action space is fixed for an episode and multi-discrete: a *transformation*
//! (which option of a choice; for `steps`, 0 to stop or `1 + k` for the `k`-th
//! alternative) and its *parameter* (for a step, the location among those where the
//! alternative applies; 0 otherwise). [`Environment::mask`] says which pairs are legal
//! now. The history is a persistent list of [`State`]s, so [`Environment::undo`] is a
//! pointer move and gives back the exact previous program.

use super::cost::{Cost, Fingerprint, Rejection};
use super::space::{Space, State};
use elevate_core::Traversable;
use rpds::ListSync as List;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// The most programs whose cost an environment keeps (it forgets them all beyond).
const KEPT_COSTS: usize = 1 << 16;

/// Numbers that describe a program to an agent (a Rise implementation describes each
/// loop nest: trip counts, loop order, vector width, parallel loops, buffers,
/// arithmetic intensity).
pub trait Features<P>: Send + Sync {
    /// How many numbers [`describe`](Self::describe) gives: the same for every program.
    fn len(&self) -> usize;

    /// Whether there are no features.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The numbers for `program`.
    fn describe(&self, program: &P) -> Vec<f64>;
}

/// An action: a transformation and its parameter (see the [`search`](crate::search) module).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Action {
    /// Which transformation.
    pub transformation: usize,
    /// Its parameter.
    pub parameter: usize,
}

/// The shape of the action space: `transformations x parameters` actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActionShape {
    /// The number of transformations.
    pub transformations: usize,
    /// The number of parameters of each.
    pub parameters: usize,
}

/// What a step did.
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    /// 0 until the episode ends; then the log of the speedup over the baseline by the
    /// cost, or [`FAILED_REWARD`] for a point that failed.
    pub reward: f64,
    /// Whether the episode ended (every decision made, or a strategy failed).
    pub done: bool,
    /// The end's cost, or why the point has none.
    pub outcome: Option<Result<f64, Rejection>>,
}

/// The reward of a point that fails (a strategy that fails, a program that does not
/// compile): as bad as a program 2.7 times slower than the baseline.
pub const FAILED_REWARD: f64 = -1.0;

/// An action that is not legal in the current state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the action ({}, {}) is not legal here", .0.transformation, .0.parameter)]
pub struct IllegalAction(pub Action);

/// The environment: reset, legal actions with a mask, step, undo, features.
pub struct Environment<P> {
    space: Space<P>,
    cost: Box<dyn Cost<P>>,
    features: Option<Arc<dyn Features<P>>>,
    history: List<State<P>>,
    shape: ActionShape,
    baseline: Option<f64>,
    /// The program of the last reset, its start state and the action space's shape: a
    /// reset on the very same program (the same shared node) starts from them again
    /// without recomputing.
    last_start: Option<(P, State<P>, ActionShape)>,
    /// The cost of each program an episode ended on, by fingerprint: an agent that
    /// comes back to a program (as a search does) does not pay for its cost again.
    costs: FxHashMap<u64, Result<f64, Rejection>>,
}

impl<P: Traversable + Fingerprint> Environment<P> {
    /// An environment over `space`, rewarded by `cost`; call [`reset`](Self::reset)
    /// before anything else.
    pub fn new(space: Space<P>, cost: impl Cost<P> + 'static) -> Self {
        Environment {
            space,
            cost: Box::new(cost),
            features: None,
            history: List::new_sync(),
            shape: ActionShape {
                transformations: 1,
                parameters: 1,
            },
            baseline: None,
            last_start: None,
            costs: FxHashMap::default(),
        }
    }

    /// Adds the program's own features to [`features`](Self::features).
    pub fn with_features(mut self, features: impl Features<P> + 'static) -> Self {
        self.features = Some(Arc::new(features));
        self
    }

    /// Starts an episode on `program`: its cost is the baseline of the rewards.
    /// Starting again on the very same program reuses the baseline and the start.
    pub fn reset(&mut self, program: &P) -> &State<P> {
        let same = |(p, _, _): &(P, State<P>, ActionShape)| {
            p.node_id().is_some() && p.node_id() == program.node_id()
        };
        let (start, shape) = match self.last_start.as_ref().filter(|last| same(last)) {
            Some((_, start, shape)) => (start.clone(), *shape),
            None => {
                self.baseline = self.cost_of(program).ok();
                let start = self.space.start(program);
                let (transformations, parameters) = start.action_shape();
                let shape = ActionShape {
                    transformations,
                    parameters,
                };
                self.last_start = Some((program.clone(), start.clone(), shape));
                (start, shape)
            }
        };
        self.shape = shape;
        self.history = List::new_sync().push_front(start);
        self.state()
    }

    /// The current state.
    pub fn state(&self) -> &State<P> {
        self.history
            .first()
            .expect("reset starts the history, and undo keeps its first state")
    }

    /// The action space's shape for this episode.
    pub fn shape(&self) -> ActionShape {
        self.shape
    }

    /// The baseline's cost (the program the episode started from), if it has one.
    pub fn baseline(&self) -> Option<f64> {
        self.baseline
    }

    /// The legal actions now, in the order of the state's options.
    pub fn legal_actions(&self) -> Vec<Action> {
        let state = self.state();
        (0..state.options())
            .filter_map(|i| state.option_action(i))
            .map(|(t, p)| Action {
                transformation: t,
                parameter: p,
            })
            .filter(|a| self.in_shape(*a))
            .collect()
    }

    /// Legal actions as a mask over the whole action space, row-major
    /// (`transformation * parameters + parameter`).
    pub fn mask(&self) -> Vec<bool> {
        let ActionShape {
            transformations,
            parameters,
        } = self.shape;
        let mut mask = vec![false; transformations * parameters];
        for a in self.legal_actions() {
            mask[a.transformation * parameters + a.parameter] = true;
        }
        mask
    }

    fn in_shape(&self, a: Action) -> bool {
        a.transformation < self.shape.transformations && a.parameter < self.shape.parameters
    }

    /// Takes `action`.
    pub fn step(&mut self, action: Action) -> Result<Transition, IllegalAction> {
        let state = self.state().clone();
        let option = (0..state.options())
            .find(|&i| state.option_action(i) == Some((action.transformation, action.parameter)))
            .filter(|_| self.in_shape(action))
            .ok_or(IllegalAction(action))?;
        let next = state.choose(option).ok_or(IllegalAction(action))?;
        let transition = self.transition(&next);
        self.history = self.history.push_front(next);
        Ok(transition)
    }

    fn transition(&mut self, state: &State<P>) -> Transition {
        if !state.is_final() {
            return Transition {
                reward: 0.0,
                done: false,
                outcome: None,
            };
        }
        if let Some(reason) = state.failure() {
            return Transition {
                reward: FAILED_REWARD,
                done: true,
                outcome: Some(Err(Rejection::new(
                    super::cost::Status::StrategyFailed,
                    reason,
                ))),
            };
        }
        let outcome = self.cost_of(state.program());
        let reward = match (&outcome, self.baseline) {
            (Ok(cost), Some(baseline)) if *cost > 0.0 && baseline > 0.0 => (baseline / cost).ln(),
            (Ok(_), _) => 0.0,
            (Err(_), _) => FAILED_REWARD,
        };
        Transition {
            reward,
            done: true,
            outcome: Some(outcome),
        }
    }

    /// The cost of `program`, evaluated once.
    fn cost_of(&mut self, program: &P) -> Result<f64, Rejection> {
        let key = program.fingerprint();
        if let Some(cost) = self.costs.get(&key) {
            return cost.clone();
        }
        if self.costs.len() >= KEPT_COSTS {
            self.costs.clear();
        }
        let cost = self.cost.evaluate(program).map(|m| m.cost);
        self.costs.insert(key, cost.clone());
        cost
    }

    /// Goes back one step; `false` at the start of the episode.
    pub fn undo(&mut self) -> bool {
        match self.history.drop_first() {
            Some(rest) if !rest.is_empty() => {
                self.history = rest;
                true
            }
            _ => false,
        }
    }

    /// How many steps the episode has taken.
    pub fn steps_taken(&self) -> usize {
        self.history.len().saturating_sub(1)
    }

    /// The state's feature vector: decisions made, options now, the space left
    /// (log10 of its estimated size), then the program's features, if any.
    pub fn features(&self) -> Vec<f64> {
        let state = self.state();
        let mut out = vec![
            state.depth() as f64,
            state.options() as f64,
            state.size_estimate().max(1.0).log10(),
        ];
        if let Some(features) = &self.features {
            out.extend(features.describe(state.program()));
        }
        out
    }

    /// How many numbers [`features`](Self::features) gives.
    pub fn feature_len(&self) -> usize {
        3 + self.features.as_ref().map_or(0, |f| f.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::{Measure, Space};
    use crate::text::Registry;
    use elevate_core::arith::{self, Term};

    /// Shorter printed programs are better.
    struct Length;
    impl Cost<Term> for Length {
        fn name(&self) -> String {
            "length".into()
        }
        fn evaluate(&self, t: &Term) -> Result<Measure, Rejection> {
            Ok(Measure::cost(t.to_string().len() as f64))
        }
    }

    fn environment(space: &str) -> Environment<Term> {
        let mut registry = Registry::<Term>::with_combinators();
        registry.rule("addZero", "x + 0 -> x", arith::add_zero);
        registry.rule("mulOne", "x * 1 -> x", arith::mul_one);
        let space = Space::parse(space, Arc::new(registry)).unwrap();
        Environment::new(space, Length)
    }

    #[test]
    fn a_greedy_episode_earns_the_log_speedup_and_undo_gives_back_the_same_program() {
        let mut env = environment("{id, mulOne @ topDown} ; steps(3, {addZero})");
        let t: Term = "(a + 0) * 1 + (b + 0)".parse().unwrap();
        env.reset(&t);
        assert_eq!(env.baseline(), Some(t.to_string().len() as f64));
        let shape = env.shape();
        assert_eq!(
            (shape.transformations, shape.parameters),
            (2, crate::search::MAX_LOCATIONS)
        );
        assert_eq!(env.mask().iter().filter(|m| **m).count(), 2);
        let before = env.state().program().clone();
        let first = env
            .step(Action {
                transformation: 1,
                parameter: 0,
            })
            .unwrap();
        assert_eq!((first.reward, first.done), (0.0, false));
        // Two places where addZero applies, and stopping.
        let legal = env.legal_actions();
        assert_eq!(legal.len(), 3, "{legal:?}");
        let after_one = env.state().program().clone();
        env.step(Action {
            transformation: 1,
            parameter: 1,
        })
        .unwrap();
        assert!(env.undo());
        assert!(
            env.state().program().node_id() == after_one.node_id(),
            "undo gives back the very program"
        );
        let mut last = None;
        while !env.state().is_final() {
            let a = env.legal_actions()[env.legal_actions().len() - 1];
            last = Some(env.step(a).unwrap());
        }
        let last = last.unwrap();
        assert!(last.done);
        let end = env.state().program().to_string();
        assert_eq!(end, "a + b");
        let expected = (t.to_string().len() as f64 / end.len() as f64).ln();
        assert!((last.reward - expected).abs() < 1e-12);
        while env.undo() {}
        assert!(env.state().program().node_id() == before.node_id());
        assert_eq!(env.steps_taken(), 0);
        assert!(!env.undo());
    }

    /// [`Length`], counting its evaluations.
    struct Counted(Arc<std::sync::atomic::AtomicUsize>);
    impl Cost<Term> for Counted {
        fn name(&self) -> String {
            "counted length".into()
        }
        fn evaluate(&self, t: &Term) -> Result<Measure, Rejection> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Length.evaluate(t)
        }
    }

    #[test]
    fn episodes_that_end_on_the_same_program_ask_for_its_cost_once() {
        let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut registry = Registry::<Term>::with_combinators();
        registry.rule("addZero", "x + 0 -> x", arith::add_zero);
        let space = Space::parse("{id, try(topDown(addZero))}", Arc::new(registry)).unwrap();
        let mut env = Environment::new(space, Counted(count.clone()));
        let t: Term = "a + 0".parse().unwrap();
        let mut rewards = Vec::new();
        for _ in 0..3 {
            env.reset(&t);
            let end = env.step(env.legal_actions()[1]).unwrap();
            rewards.push(end.reward);
        }
        // The baseline and the one program the episodes end on.
        assert_eq!(count.load(std::sync::atomic::Ordering::Relaxed), 2);
        assert!(
            rewards.iter().all(|r| *r == rewards[0] && *r > 0.0),
            "{rewards:?}"
        );
    }

    #[test]
    fn illegal_actions_are_errors_and_failures_end_with_the_failed_reward() {
        let mut env = environment("{mulOne, addZero}");
        let t: Term = "a * 1".parse().unwrap();
        env.reset(&t);
        let bad = Action {
            transformation: 5,
            parameter: 0,
        };
        assert_eq!(env.step(bad), Err(IllegalAction(bad)));
        let t2 = env
            .step(Action {
                transformation: 1,
                parameter: 0,
            })
            .unwrap();
        assert_eq!((t2.reward, t2.done), (FAILED_REWARD, true));
        assert!(env.legal_actions().is_empty());
        assert_eq!(env.features().len(), env.feature_len());
    }
}
