//! Deep recursion without stack overflows.
//!
//! Programs 100,000 levels deep are normal, so every recursive walk over a program
//! (traversals, equality, printing, dropping) calls [`guard`] once per level: when the
//! current stack runs low, the closure continues on a fresh heap-allocated segment.

/// Space left on the stack below which a new segment is allocated. Generous, because
/// traversals check only every [`CHECK_EVERY_LEVELS`] levels: what runs between two
/// checks (a few traversal frames, plus the strategies applied at those nodes) must
/// fit in it.
const RED_ZONE: usize = 1024 * 1024;
/// Size of each new stack segment.
const SEGMENT: usize = 8 * 1024 * 1024;

/// How many levels a traversal descends, or strategies nest, between two stack checks
/// ([`Context::descend`](crate::Context::descend),
/// [`Context::nested`](crate::Context::nested)): checking costs about as much as
/// visiting a node, so they check every few levels.
pub const CHECK_EVERY_LEVELS: usize = 8;

/// Runs `f`, first moving to a new stack segment if little stack is left.
///
/// Cheap when there is room (a comparison against a thread-local limit).
///
/// ```
/// fn depth(n: u32) -> u32 {
///     if n == 0 { 0 } else { elevate_core::stack::guard(|| 1 + depth(n - 1)) }
/// }
/// assert_eq!(depth(200_000), 200_000);
/// ```
#[inline]
pub fn guard<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}
