//! What a space's strategies gave, kept for the next time: the parsed strategy of each
//! text, and the program each item of a part made from each program.
//!
//! Sibling branches, repeated episodes of an environment and drivers that walk the
//! same decisions again (from the start, as `evolve` and `mcts` do) all meet the same
//! items on the same programs; applying one is a function of the program, the text
//! and the names and budget the part's run has used so far (see [`Run`]), so its
//! result can be reused, the very same shared program. Both tables keep two
//! generations and drop the older when the newer is full, so that what is in use stays
//! and memory stays bounded.

use elevate_core::{Budget, Context, NameSupply, NodeId, Strategy, Traversable};
use rustc_hash::FxHashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Parsed strategies kept per generation.
const STRATEGIES: usize = 256;

/// Applications kept per generation.
const APPLICATIONS: usize = 2048;

/// Where one run of a part's strategy is, between two of its items: the next fresh
/// name and the budget spent. An item that starts from here behaves as it would
/// inside one run of the whole part.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Run {
    names: u64,
    spent: Spent,
}

/// The budget an application used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Spent {
    applications: u64,
    steps: u64,
    time: Duration,
}

impl Spent {
    fn plus(self, other: Spent) -> Spent {
        Spent {
            applications: self.applications + other.applications,
            steps: self.steps + other.steps,
            time: self.time + other.time,
        }
    }

    /// What is left of `budget` after this.
    fn left_of(self, budget: Budget) -> Budget {
        Budget {
            max_steps: budget.max_steps.map(|m| m.saturating_sub(self.steps)),
            max_applications: budget
                .max_applications
                .map(|m| m.saturating_sub(self.applications)),
            max_time: budget.max_time.map(|m| m.saturating_sub(self.time)),
        }
    }

    /// Whether `budget` allows this much.
    fn fits(self, budget: Budget) -> bool {
        budget.max_steps.is_none_or(|m| self.steps <= m)
            && budget
                .max_applications
                .is_none_or(|m| self.applications <= m)
            && budget.max_time.is_none_or(|m| self.time <= m)
    }
}

/// Why an item gave no program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ItemError {
    /// Its text does not parse (the message).
    Parse(String),
    /// It failed (the failure, printed); `budget`: for want of budget.
    Failed { reason: Arc<str>, budget: bool },
}

/// What applying an item gave: the program and the run after it, or why not.
type Outcome<P> = Result<(P, Run), ItemError>;

struct Application<P> {
    /// The program it was applied to, kept so that its identity is not reused.
    _input: P,
    /// The budget it used, and what it gave (relative to the run it started from).
    spent: Spent,
    result: Result<(P, u64), Arc<str>>,
}

/// An application: of which item, to which program, from which next fresh name.
type Key = (NodeId, Arc<str>, u64);

/// The tables of one space.
pub(super) struct Cache<P> {
    strategies: Mutex<Generations<Arc<str>, Strategy<P>>>,
    applications: Mutex<Generations<Key, Application<P>>>,
}

impl<P> Default for Cache<P> {
    fn default() -> Self {
        Cache {
            strategies: Mutex::new(Generations::new(STRATEGIES)),
            applications: Mutex::new(Generations::new(APPLICATIONS)),
        }
    }
}

/// The table behind `m`. A panic elsewhere cannot leave a table half-updated: each
/// update is one insert.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<P: Traversable> Cache<P> {
    /// The strategy `text` stands for, parsed by `parse` the first time.
    pub(super) fn strategy<E>(
        &self,
        text: &str,
        parse: impl FnOnce(&str) -> Result<Strategy<P>, E>,
    ) -> Result<Strategy<P>, E> {
        if let Some(s) = lock(&self.strategies).get(text) {
            return Ok(s.clone());
        }
        let strategy = parse(text)?;
        lock(&self.strategies).insert(text.into(), strategy.clone());
        Ok(strategy)
    }

    /// Applies the item `text` (parsed by `parse`) to `program` from `run`, with
    /// `budget` for the whole part; reuses what the same item gave on the same program
    /// from the same names before, when the budget left allows what it used.
    pub(super) fn apply<E: std::fmt::Display>(
        &self,
        program: &P,
        text: &str,
        run: Run,
        budget: Budget,
        parse: impl FnOnce(&str) -> Result<Strategy<P>, E>,
    ) -> Outcome<P> {
        let left = run.spent.left_of(budget);
        let key = program
            .node_id()
            .map(|id| (id, Arc::<str>::from(text), run.names));
        if let Some(key) = &key {
            if let Some(found) = lock(&self.applications).get(key) {
                if found.spent.fits(left) {
                    let spent = run.spent.plus(found.spent);
                    return match &found.result {
                        Ok((p, names)) => Ok((
                            p.clone(),
                            Run {
                                names: *names,
                                spent,
                            },
                        )),
                        Err(reason) => Err(ItemError::Failed {
                            reason: reason.clone(),
                            budget: false,
                        }),
                    };
                }
            }
        }
        let strategy = self
            .strategy(text, parse)
            .map_err(|e| ItemError::Parse(e.to_string()))?;
        let mut cx = Context::new(left)
            .with_failure_memo()
            .with_names(NameSupply::above(run.names));
        let result = strategy.apply(program, &mut cx);
        let stats = cx.stats();
        let spent = Spent {
            applications: stats.applications,
            steps: stats.steps,
            time: cx.elapsed(),
        };
        let names = cx.names().peek();
        let result = match result {
            Ok(p) => Ok((p, names)),
            // Out of budget depends on the budget left: not kept.
            Err(f) if f.is_budget() => {
                return Err(ItemError::Failed {
                    reason: f.to_string().into(),
                    budget: true,
                })
            }
            Err(f) => Err(Arc::<str>::from(f.to_string())),
        };
        if let Some(key) = key {
            lock(&self.applications).insert(
                key,
                Application {
                    _input: program.clone(),
                    spent,
                    result: result.clone(),
                },
            );
        }
        let spent = run.spent.plus(spent);
        match result {
            Ok((p, names)) => Ok((p, Run { names, spent })),
            Err(reason) => Err(ItemError::Failed {
                reason,
                budget: false,
            }),
        }
    }
}

/// A map that keeps its newest entries: two generations of at most `capacity` each.
pub(super) struct Generations<K, V> {
    young: FxHashMap<K, V>,
    old: FxHashMap<K, V>,
    capacity: usize,
}

impl<K: Hash + Eq, V> Generations<K, V> {
    pub(super) fn new(capacity: usize) -> Self {
        Generations {
            young: FxHashMap::default(),
            old: FxHashMap::default(),
            capacity,
        }
    }

    /// The entry for `key`, moved to the young generation if it was old.
    pub(super) fn get<Q>(&mut self, key: &Q) -> Option<&V>
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        if !self.young.contains_key(key) {
            let (k, v) = self.old.remove_entry(key)?;
            self.insert(k, v);
        }
        self.young.get(key)
    }

    pub(super) fn insert(&mut self, key: K, value: V) {
        if self.young.len() >= self.capacity {
            self.old = std::mem::take(&mut self.young);
        }
        self.young.insert(key, value);
    }
}

#[cfg(test)]
mod tests {
    use super::Generations;

    #[test]
    fn generations_keep_what_is_used_and_drop_the_oldest() {
        let mut g = Generations::new(2);
        g.insert(1, "one");
        g.insert(2, "two");
        // The young generation is full: it becomes the old one.
        g.insert(3, "three");
        assert_eq!(
            g.get(&1),
            Some(&"one"),
            "found in the old generation, moved up"
        );
        g.insert(4, "four");
        // 2 was never used again: dropped with its generation.
        assert_eq!(g.get(&2), None);
        assert_eq!(g.get(&1), Some(&"one"));
        assert_eq!(g.get(&4), Some(&"four"));
    }
}
