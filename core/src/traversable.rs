//! The one-level traversal contract that a program type implements.

/// The identity of a shared node: equal ids mean the very same immutable node.
///
/// Only meaningful while the node is alive; whoever keys a table on it must keep the
/// node alive for as long as the entry exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub usize);

/// A program that strategies can traverse: its immediate children, and a rebuild of a
/// node with one or all children replaced.
///
/// This is all the engine needs to know about an IR. Rebuilds must share every child
/// that is not replaced (clone the handle, never the subtree), which makes a rewrite at
/// depth `d` cost `O(d)` new nodes and makes keeping old versions free.
///
/// Implementations for shared nodes usually wrap a [`Node`](crate::Node); see
/// [`arith`](crate::arith) for a complete one in forty lines.
pub trait Traversable: Clone + Send + Sync + 'static {
    /// Number of immediate children.
    fn arity(&self) -> usize;

    /// The child at `index`; `index < self.arity()`.
    fn child(&self, index: usize) -> &Self;

    /// A copy of this node whose child `index` is `child`, sharing all other children.
    fn with_child(&self, index: usize, child: Self) -> Self;

    /// A copy of this node with all children replaced, in order.
    /// `children.len() == self.arity()`.
    ///
    /// The default rebuilds one child at a time; override it to build the node once.
    fn with_children(&self, children: Vec<Self>) -> Self {
        let mut node = self.clone();
        for (index, child) in children.into_iter().enumerate() {
            node = node.with_child(index, child);
        }
        node
    }

    /// The identity of this node, if it is a shared immutable node.
    ///
    /// Returning `Some` enables the engine's fast paths: pointer equality to detect
    /// unchanged subterms, and memoizing that a strategy failed on a shared subterm.
    /// Two programs with the same id must be the same program.
    fn node_id(&self) -> Option<NodeId> {
        None
    }

    /// A bound on the identities of the names in this program: every identity of a
    /// name used anywhere in it (bound or free) is below it. Traversals
    /// [`reserve_above`](crate::NameSupply::reserve_above) it before they descend into
    /// a child, and rules before they rewrite, so that the names a rule makes are new
    /// to the whole program. Called at every node a traversal visits: implementations
    /// cache it in the node (computed at construction from the children's).
    ///
    /// The default, 0, is right for a program type without named identities.
    #[inline]
    fn name_floor(&self) -> u64 {
        0
    }

    /// Number of nodes (shared subterms counted at each occurrence), counted without
    /// recursion so that deep programs are fine.
    fn size(&self) -> usize {
        let mut count = 0;
        let mut pending = vec![self];
        while let Some(node) = pending.pop() {
            count += 1;
            pending.extend((0..node.arity()).map(|i| node.child(i)));
        }
        count
    }

    /// A hint that this node's data will be read soon (a cache prefetch). Traversals
    /// call it on the children of the node they are about to try a strategy on, so
    /// the memory latency of the next visit overlaps the work of this one. Optional:
    /// shared-node programs forward it to [`Node::prefetch`](crate::Node::prefetch).
    #[inline]
    fn prefetch(&self) {}

    /// Whether `self` and `other` are the very same node (not merely equal).
    #[inline]
    fn same_node(&self, other: &Self) -> bool {
        match (self.node_id(), other.node_id()) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        }
    }
}
