//! `mcts`: Monte-Carlo tree search over the decisions.

use super::{evaluate_starts, single_point, Driver, Evaluator, Outcome, Path};
use crate::search::cost::Fingerprint;
use crate::search::explorer::Explorer;
use crate::search::space::State;
use elevate_core::Traversable;
use rand::RngExt;

/// Monte-Carlo tree search with the UCT rule. The tree's nodes are the search's
/// persistent [`State`]s, so every prefix is computed once and shared by all that lies
/// below it.
///
/// Each iteration descends from the root by UCT (mean reward plus
/// [`Mcts::EXPLORATION`]` * sqrt(ln N / n)`) to a node with an option not yet tried,
/// adds the child that option leads to, and completes it by random decisions (a
/// rollout). The rollout's reward is `best / cost`, with `best` the lowest cost the
/// search knows when the round's costs come back: 1 for a new best, less the worse the
/// point; a failed point earns 0. [`Mcts::ROUND`] iterations are evaluated together;
/// within a round each iteration counts as a visit with no reward yet (a virtual
/// loss), so the round's iterations spread over the tree. A subtree all of whose
/// points have been evaluated is never entered again; the search ends when the whole
/// tree is, or the budget is spent.
pub struct Mcts;

impl Mcts {
    /// Iterations whose rollouts are evaluated together.
    pub const ROUND: usize = 8;
    /// The weight of exploration in the UCT rule (rewards lie between 0 and 1).
    pub const EXPLORATION: f64 = 0.5;
    /// Iterations in a row whose rollouts were all known end the search.
    const STALE_ITERATIONS: usize = 1_024;
}

/// A node of the tree: a state, its statistics and its children.
struct Node<P> {
    state: State<P>,
    parent: Option<usize>,
    /// Children added so far (indices into the tree).
    children: Vec<usize>,
    /// Options not yet tried, in random order (the next is popped from the end).
    untried: Vec<usize>,
    visits: f64,
    reward: f64,
    /// Whether every point below has been evaluated (or is being, this round).
    done: bool,
}

/// The tree, in an arena: nodes refer to each other by index.
struct Tree<P> {
    nodes: Vec<Node<P>>,
}

impl<P: Traversable + Fingerprint> Tree<P> {
    fn add(
        &mut self,
        explorer: &mut Explorer<'_, P>,
        state: State<P>,
        parent: Option<usize>,
    ) -> usize {
        // Fisher-Yates with the search's random source, so the order is seeded.
        let mut untried: Vec<usize> = (0..state.options()).collect();
        for i in (1..untried.len()).rev() {
            let j = explorer.rng().random_range(0..=i);
            untried.swap(i, j);
        }
        let done = state.is_final();
        self.nodes.push(Node {
            state,
            parent,
            children: Vec::new(),
            untried,
            visits: 0.0,
            reward: 0.0,
            done,
        });
        self.nodes.len() - 1
    }

    /// Marks `node` done, and each ancestor all of whose children are done.
    fn finish(&mut self, mut node: usize) {
        self.nodes[node].done = true;
        while let Some(parent) = self.nodes[node].parent {
            let p = &self.nodes[parent];
            if !p.untried.is_empty() || p.children.iter().any(|&c| !self.nodes[c].done) {
                return;
            }
            self.nodes[parent].done = true;
            node = parent;
        }
    }

    /// The child of `node` with the highest UCT score among those not done.
    fn select_child(&self, node: usize) -> Option<usize> {
        let n = &self.nodes[node];
        let log_visits = n.visits.max(1.0).ln();
        let score = |c: usize| {
            let child = &self.nodes[c];
            if child.visits == 0.0 {
                return f64::INFINITY;
            }
            child.reward / child.visits + Mcts::EXPLORATION * (log_visits / child.visits).sqrt()
        };
        n.children
            .iter()
            .copied()
            .filter(|&c| !self.nodes[c].done)
            .map(|c| (c, score(c)))
            // The first of the best, for determinism.
            .fold(None, |best: Option<(usize, f64)>, (c, s)| match best {
                Some((_, b)) if b >= s => best,
                _ => Some((c, s)),
            })
            .map(|(c, _)| c)
    }

    /// Descends by UCT and adds a child: the new node, or `None` if the tree is done.
    fn expand(&mut self, explorer: &mut Explorer<'_, P>) -> Option<usize> {
        let mut node = 0;
        loop {
            if self.nodes[0].done {
                return None;
            }
            if let Some(option) = self.nodes[node].untried.pop() {
                let Some(state) = self.nodes[node].state.choose(option) else {
                    continue;
                };
                let child = self.add(explorer, state, Some(node));
                self.nodes[node].children.push(child);
                if self.nodes[child].done {
                    // A final child: its own evaluation is all there is below it.
                    self.finish(child);
                }
                return Some(child);
            }
            match self.select_child(node) {
                Some(child) => node = child,
                None => {
                    // Everything below is done (or is being evaluated): start over.
                    self.finish(node);
                    node = 0;
                }
            }
        }
    }

    /// Adds a visit to `node` and its ancestors, with `reward`.
    fn backup(&mut self, mut node: usize, visits: f64, reward: f64) {
        loop {
            let n = &mut self.nodes[node];
            n.visits += visits;
            n.reward += reward;
            match n.parent {
                Some(parent) => node = parent,
                None => return,
            }
        }
    }
}

impl<P: Traversable + Fingerprint> Driver<P> for Mcts {
    fn name(&self) -> String {
        "mcts".into()
    }

    fn explore(&mut self, explorer: &mut Explorer<'_, P>) {
        if single_point(explorer) {
            return;
        }
        let mut evaluator = Evaluator::default();
        // The points to start from are evaluated first, each on its own: known to
        // the search (and its best) from the start.
        evaluate_starts(explorer, &mut evaluator);
        let mut tree = Tree { nodes: Vec::new() };
        let root = explorer.root().clone();
        tree.add(explorer, root, None);
        let mut stale = 0;
        while !explorer.exhausted() && stale < Self::STALE_ITERATIONS {
            // The round's new nodes and their rollouts.
            let mut leaves: Vec<usize> = Vec::with_capacity(Self::ROUND);
            let mut rollouts: Vec<State<P>> = Vec::with_capacity(Self::ROUND);
            while leaves.len() < Self::ROUND {
                let Some(leaf) = tree.expand(explorer) else {
                    break;
                };
                tree.backup(leaf, 1.0, 0.0);
                let state = tree.nodes[leaf].state.clone();
                rollouts.push(Path::random(explorer, &state).end().clone());
                leaves.push(leaf);
            }
            if leaves.is_empty() {
                return;
            }
            let spent = evaluator.spent;
            let outcomes = evaluator.evaluate(explorer, &rollouts);
            if evaluator.spent == spent {
                stale += leaves.len();
            } else {
                stale = 0;
            }
            let best = outcomes
                .iter()
                .map(|o| o.value())
                .fold(explorer.best_cost().unwrap_or(f64::INFINITY), f64::min);
            for (&leaf, outcome) in leaves.iter().zip(&outcomes) {
                let reward = match *outcome {
                    Outcome::Cost(cost) if cost > 0.0 && best.is_finite() => {
                        (best / cost).clamp(0.0, 1.0)
                    }
                    // A cost of 0 (or less) cannot be beaten.
                    Outcome::Cost(cost) if cost <= 0.0 => 1.0,
                    _ => 0.0,
                };
                tree.backup(leaf, 0.0, reward);
            }
        }
    }
}
