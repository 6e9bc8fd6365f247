//! Remembering where a traversal failed, keyed on shared nodes.

use elevate_core::{Context, NodeId, Strategy, Traversable};
use rustc_hash::FxHashMap;

/// The shared subterms on which a traversal of one strategy is known to fail.
///
/// Holds a clone of every recorded node (so no id is reused while its entry exists) and
/// of the strategy (so the key stays unique while the table lives in a context).
pub(crate) struct FailedSet<P> {
    nodes: FxHashMap<NodeId, P>,
    _strategy: Option<Strategy<P>>,
}

impl<P> Default for FailedSet<P> {
    fn default() -> Self {
        FailedSet {
            // A pass over a program records most of its nodes: start at a size that
            // small programs do not outgrow, rather than rehashing on the way.
            nodes: FxHashMap::with_capacity_and_hasher(128, Default::default()),
            _strategy: None,
        }
    }
}

impl<P: Traversable> FailedSet<P> {
    /// Whether the traversal is known to fail on `program`.
    #[inline]
    pub(crate) fn contains(&self, program: &P) -> bool {
        // Leaves are cheaper to retry than to look up.
        program.arity() > 0
            && program
                .node_id()
                .is_some_and(|id| self.nodes.contains_key(&id))
    }

    /// Records that the traversal fails on `program`.
    #[inline]
    pub(crate) fn insert(&mut self, program: &P) {
        if program.arity() > 0 {
            if let Some(id) = program.node_id() {
                self.nodes.insert(id, program.clone());
            }
        }
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
        let result = f(cx, Some(&mut table));
        cx.put_memo(key, table);
        result
    } else if always {
        f(cx, Some(&mut FailedSet::default()))
    } else {
        f(cx, None)
    }
}
