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

impl<T: ?Sized + 'static> DeepRc<T> {
    /// Where its value lies: the same for every clone, and no other value's while one
    /// of them lives.
    pub fn as_ptr(this: &Self) -> *const T {
        Rc::as_ptr(&this.0)
    }
}

impl<T: Clone + 'static> DeepRc<T> {
    /// Its value: moved out where this is its last reference, else a copy.
    pub fn unwrap_or_clone(mut this: Self) -> T {
        // SAFETY: `this.0` is taken once, and `this` forgotten, so its drop (which
        // would take it again) does not run.
        let rc = unsafe { ManuallyDrop::take(&mut this.0) };
        std::mem::forget(this);
        Rc::unwrap_or_clone(rc)
    }
}

impl<T: 'static> From<T> for DeepRc<T> {
    fn from(value: T) -> Self {
        DeepRc::new(Rc::new(value))
    }
}

impl<T: ?Sized + std::fmt::Debug + 'static> std::fmt::Debug for DeepRc<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // (As deep as the value nests: on a stack that grows.)
        elevate_core::stack::guard(|| (**self).fmt(f))
    }
}

/// Equal where they are one value (a shared subexpression is not compared again), or
/// where their values are equal (compared on a stack that grows, as deep as they
/// nest).
impl<T: ?Sized + PartialEq + 'static> PartialEq for DeepRc<T> {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0) || elevate_core::stack::guard(|| **self == **other)
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
