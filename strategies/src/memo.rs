//! Remembering where a traversal failed, keyed on shared nodes.

use elevate_core::{Context, NodeId, Stats, Strategy, Traversable};
use rustc_hash::FxHashMap;

/// A failure of a traversal on one shared subterm.
struct Failed<P> {
    /// The subterm, kept so that its identity is not reused while the entry exists.
    _node: P,
    /// What the failed traversal counted (see [`Context::charge`]).
    work: Stats,
    /// The failed traversal made no name: from a supply at or above this, it leaves
    /// the supply as it was, so skipping it changes no name.
    names: u64,
}

/// The shared subterms on which a traversal of one strategy is known to fail.
///
/// Holds a clone of every recorded node (so no id is reused while its entry exists) and
/// of the strategy (so the key stays unique while the table lives in a context). A
/// table kept across applications ([`Context::with_failure_memo`]) charges the budget
/// what each skipped failure counted when it ran, so that a run spends the same with
/// or without the table, whatever ran in its context before.
pub(crate) struct FailedSet<P> {
    nodes: FxHashMap<NodeId, Failed<P>>,
    _strategy: Option<Strategy<P>>,
    charge: bool,
}

impl<P> Default for FailedSet<P> {
    fn default() -> Self {
        FailedSet {
            nodes: FxHashMap::default(),
            _strategy: None,
            charge: false,
        }
    }
}

/// Where a run stood before an attempt: what it had counted and its next name.
#[derive(Clone, Copy)]
pub(crate) struct Mark {
    stats: Stats,
    names: u64,
}

impl Mark {
    /// Where `cx` stands now.
    #[inline]
    pub(crate) fn of(cx: &Context) -> Mark {
        Mark {
            stats: cx.stats(),
            names: cx.names().peek(),
        }
    }
}

impl<P: Traversable> FailedSet<P> {
    /// Whether the traversal is known to fail on `program` and may skip it here: the
    /// name supply is where the failure leaves it alone, and the budget allows what
    /// the failure counted (charged to `cx` when the table is kept across
    /// applications).
    #[inline]
    pub(crate) fn skips(&self, program: &P, cx: &mut Context) -> bool {
        // Leaves are cheaper to retry than to look up.
        if program.arity() == 0 {
            return false;
        }
        let Some(failed) = program.node_id().and_then(|id| self.nodes.get(&id)) else {
            return false;
        };
        cx.names().peek() >= failed.names && (!self.charge || cx.charge(failed.work))
    }

    /// Records that the traversal, started at `mark`, failed on `program`; a failure
    /// that made or reserved names is not recorded (skipping it would change them).
    #[inline]
    pub(crate) fn insert(&mut self, program: &P, mark: Mark, cx: &Context) {
        if program.arity() == 0 || cx.names().peek() != mark.names {
            return;
        }
        let Some(id) = program.node_id() else {
            return;
        };
        let now = cx.stats();
        let work = Stats {
            applications: now.applications - mark.stats.applications,
            steps: now.steps - mark.stats.steps,
            successes: now.successes - mark.stats.successes,
        };
        let names = self
            .nodes
            .get(&id)
            .map_or(mark.names, |known| known.names.min(mark.names));
        self.nodes.insert(
            id,
            Failed {
                _node: program.clone(),
                work,
                names,
            },
        );
    }
}

/// Runs `f` with the memo table of traversal `kind` over `strategy`: the context's
/// table if it keeps memos across applications, else one that lives for this call
/// only (when `always` is set) or none.
pub(crate) fn with_failed_set<P: Traversable, R>(
    cx: &mut Context,
    strategy: &Strategy<P>,
    kind: &'static str,
    always: bool,
    f: impl FnOnce(&mut Context, Option<&mut FailedSet<P>>) -> R,
) -> R {
    if cx.failure_memo_enabled() {
        let key = (strategy.key(), kind);
        let mut table: Box<FailedSet<P>> = cx.take_memo(key);
        table._strategy.get_or_insert_with(|| strategy.clone());
        table.charge = true;
        let result = f(cx, Some(&mut table));
        cx.put_memo(key, table);
        result
    } else if always {
        f(cx, Some(&mut FailedSet::default()))
    } else {
        f(cx, None)
    }
}
