//! DeepRc closures nested as deep as the program, dropped without recursion.
//!
//! Both translations represent arrays as closures that capture the arrays they read
//! (a view of a view of ...), so 100,000 maps in a row are 100,000 closures, each
//! holding the next. Dropping the last reference to the outermost would drop them all
//! recursively and overflow the stack; a [`DeepRc`] value dropped deep inside other
//! drops instead hands its last reference to a queue that the outermost drop empties
//! in a loop.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::rc::Rc;

/// An `Rc<T>` whose last drop is deferred to a loop rather than a recursion.
pub struct DeepRc<T: ?Sized + 'static>(ManuallyDrop<Rc<T>>);

impl<T: ?Sized + 'static> DeepRc<T> {
    /// `rc`, dropped without recursion.
    pub fn new(rc: Rc<T>) -> DeepRc<T> {
        DeepRc(ManuallyDrop::new(rc))
    }
}

impl<T: ?Sized + 'static> Clone for DeepRc<T> {
    fn clone(&self) -> Self {
        DeepRc::new(Rc::clone(&self.0))
    }
}

impl<T: ?Sized + 'static> Deref for DeepRc<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// How deep drops recurse before they queue: deep enough that an ordinary program's
/// closures drop as plain `Rc`s do (no queue, no allocation), shallow enough for any
/// stack.
const RECURSION: u32 = 64;

thread_local! {
    /// How many [`DeepRc`] drops are under way on this thread, one inside the other.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// What remains to drop, queued by drops [`RECURSION`] deep.
    static PENDING: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
}

impl<T: ?Sized + 'static> Drop for DeepRc<T> {
    fn drop(&mut self) {
        // SAFETY: `self.0` is not used again: this is the drop.
        let rc = unsafe { ManuallyDrop::take(&mut self.0) };
        if Rc::strong_count(&rc) > 1 {
            return; // only a count goes down
        }
        let depth = DEPTH.get();
        if depth >= RECURSION {
            // The outermost drop's loop drops it.
            PENDING.with(|p| p.borrow_mut().push(Box::new(rc)));
            return;
        }
        DEPTH.set(depth + 1);
        drop(rc);
        if depth == 0 {
            while let Some(next) = PENDING.with(|p| p.borrow_mut().pop()) {
                drop(next);
            }
        }
        DEPTH.set(depth);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Chain(Option<DeepRc<Chain>>);

    #[test]
    fn a_chain_of_a_million_drops_in_a_loop() {
        let mut head = Chain(None);
        for _ in 0..1_000_000 {
            head = Chain(Some(DeepRc::new(Rc::new(head))));
        }
        assert!(head.0.is_some());
        drop(head);
    }
}
