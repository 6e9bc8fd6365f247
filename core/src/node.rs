//! Shared immutable nodes: cheap clone, cached structural hash, pointer-equality fast path.

use crate::stack::guard;
use crate::traversable::NodeId;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::Arc;

/// An immutable, reference-counted node holding `T`, with its structural hash computed
/// once at construction.
///
/// The building block for program types: a term is a `Node` of an enum whose children
/// are again `Node`s. Then
/// - cloning is a reference-count bump, and keeping old versions costs nothing;
/// - hashing is `O(1)` (children contribute their cached hash), so memo tables,
///   e-graphs and search can key on whole terms;
/// - equality is `O(1)` for the same node or different hashes, structural otherwise;
/// - equality, `Debug` and dropping do not overflow the stack on very deep terms.
///
/// ```
/// use elevate_core::Node;
/// #[derive(PartialEq, Eq, Hash, Debug)]
/// enum List { Nil, Cons(i64, Node<List>) }
///
/// let nil = Node::new(List::Nil);
/// let a = Node::new(List::Cons(1, nil.clone()));
/// let b = Node::new(List::Cons(1, nil.clone()));
/// assert_eq!(a, b);                 // structurally equal
/// assert!(!Node::ptr_eq(&a, &b));   // but different nodes
/// assert_eq!(a.structural_hash(), b.structural_hash());
/// if let List::Cons(_, tail) = &*a { assert!(Node::ptr_eq(tail, &nil)); }
/// ```
pub struct Node<T>(ManuallyDrop<Arc<Inner<T>>>);

struct Inner<T> {
    hash: u64,
    data: T,
}

impl<T: Hash> Node<T> {
    /// Builds a node, computing its structural hash from `data` (children contribute
    /// their cached hash, so this is `O(size of data)`, not of the subtree).
    pub fn new(data: T) -> Self {
        let mut hasher = rustc_hash::FxHasher::default();
        data.hash(&mut hasher);
        Node(ManuallyDrop::new(Arc::new(Inner {
            hash: hasher.finish(),
            data,
        })))
    }
}

impl<T> Node<T> {
    /// Whether `a` and `b` are the very same node.
    #[inline]
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// The node's identity, for tables keyed on shared nodes.
    #[inline]
    pub fn id(&self) -> NodeId {
        NodeId(Arc::as_ptr(&self.0) as *const u8 as usize)
    }

    /// The structural hash computed at construction.
    #[inline]
    pub fn structural_hash(&self) -> u64 {
        self.0.hash
    }

    /// The node's contents.
    #[inline]
    pub fn data(&self) -> &T {
        &self.0.data
    }

    /// Asks the CPU to start loading this node's data into the cache (a no-op on
    /// targets without a stable prefetch instruction).
    #[inline]
    pub fn prefetch(&self) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: prefetching has no observable effect beyond the cache, and the
        // pointer is valid (it points at this live node).
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(Arc::as_ptr(&self.0) as *const i8);
        }
    }

    /// How many handles share this node.
    pub fn share_count(&self) -> usize {
        Arc::strong_count(&self.0)
    }
}

impl<T> Clone for Node<T> {
    #[inline]
    fn clone(&self) -> Self {
        Node(ManuallyDrop::new(Arc::clone(&self.0)))
    }
}

impl<T> Drop for Node<T> {
    fn drop(&mut self) {
        // SAFETY: `self.0` is never used again after this point.
        let arc = unsafe { ManuallyDrop::take(&mut self.0) };
        if Arc::strong_count(&arc) == 1 {
            // Dropping the last handle drops the children recursively: keep the
            // recursion on a stack that cannot overflow.
            guard(move || drop(arc));
        }
    }
}

impl<T> Deref for Node<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0.data
    }
}

impl<T> Hash for Node<T> {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash)
    }
}

impl<T: PartialEq> PartialEq for Node<T> {
    fn eq(&self, other: &Self) -> bool {
        Node::ptr_eq(self, other)
            || (self.0.hash == other.0.hash && guard(|| self.0.data == other.0.data))
    }
}

impl<T: Eq> Eq for Node<T> {}

impl<T: fmt::Debug> fmt::Debug for Node<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        guard(|| self.0.data.fmt(f))
    }
}
