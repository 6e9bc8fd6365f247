//! Environments of the translations: term variables (by identity) and their values,
//! shared by the closures that stand for functions. A persistent list: binding is
//! O(1) however deep the program nests its lambdas, and dropping a long one is a loop.

use std::rc::Rc;

/// Variables and their values, the newest first.
pub struct Env<T>(Option<Rc<Binding<T>>>);

/// A variable's binding, and the bindings outside it.
pub struct Binding<T> {
    id: u64,
    value: T,
    outer: Env<T>,
}

impl<T> Default for Env<T> {
    fn default() -> Self {
        Env(None)
    }
}

impl<T> Clone for Env<T> {
    fn clone(&self) -> Self {
        Env(self.0.clone())
    }
}

impl<T> Drop for Env<T> {
    fn drop(&mut self) {
        // The bindings this was the last reference to, one after the other.
        let mut next = self.0.take();
        while let Some(rc) = next {
            next = match Rc::try_unwrap(rc) {
                Ok(mut binding) => binding.outer.0.take(),
                Err(_) => None,
            };
        }
    }
}

/// `env` with `id` bound to `v`.
pub fn bind<T>(env: &Env<T>, id: u64, v: T) -> Env<T> {
    Env(Some(Rc::new(Binding {
        id,
        value: v,
        outer: env.clone(),
    })))
}

/// The value `id` is bound to (the innermost binding).
pub fn lookup<T: Clone>(env: &Env<T>, id: u64) -> Option<T> {
    let mut at = env.0.as_ref();
    while let Some(b) = at {
        if b.id == id {
            return Some(b.value.clone());
        }
        at = b.outer.0.as_ref();
    }
    None
}
