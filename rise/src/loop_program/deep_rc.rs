//! DeepRc closures nested as deep as the program, dropped without recursion.
//!
//! Both translations represent arrays as closures that capture the arrays they read
//! (a view of a view of ...), so 100,000 maps in a row are 100,000 closures, each
//! holding the next. Dropping the last reference to the outermost would drop them all
//! recursively and overflow the stack; a [`DeepRc`] value instead hands its last
//! reference to a queue that the outermost drop empties in a loop.

use std::any::Any;
use std::cell::RefCell;
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

thread_local! {
    /// What remains to drop while a drop is under way on this thread (`None` when no
    /// drop is).
    static PENDING: RefCell<Option<Vec<Box<dyn Any>>>> = const { RefCell::new(None) };
}

impl<T: ?Sized + 'static> Drop for DeepRc<T> {
    fn drop(&mut self) {
        // SAFETY: `self.0` is not used again: this is the drop.
        let rc = unsafe { ManuallyDrop::take(&mut self.0) };
        if Rc::strong_count(&rc) > 1 {
            return; // only a count goes down
        }
        let first = PENDING.with(|p| {
            let mut p = p.borrow_mut();
            match p.as_mut() {
                // Inside another drop: that one's loop drops it.
                Some(queue) => {
                    queue.push(Box::new(rc));
                    None
                }
                None => {
                    *p = Some(Vec::new());
                    Some(rc)
                }
            }
        });
        if let Some(rc) = first {
            drop(rc);
            while let Some(next) = PENDING.with(|p| p.borrow_mut().as_mut().and_then(Vec::pop)) {
                drop(next);
            }
            PENDING.with(|p| *p.borrow_mut() = None);
        }
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
