//! Environments of the interpreter: where variables are at compile time ([`Scope`])
//! and their values at run time ([`Env`]).
//!
//! Programs bind 100,000 variables in a row (`let y0 = x in let y1 = x in ...`), and
//! a variable may be used far from its binding, so neither lookup walks the list:
//! the scope maps a variable to its binding depth, and the environment finds an
//! ancestor in logarithmic time through jump pointers.

use crate::value::{EvalError, Value};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// The variables bound around a term at compile time.
#[derive(Clone, Default)]
pub(super) struct Scope {
    depth: usize,
    /// Variable id -> the depths (from 1) at which it is bound, innermost last.
    bound: FxHashMap<u64, Vec<usize>>,
}

impl Scope {
    /// Binds `id` one level deeper.
    pub fn push(&mut self, id: u64) {
        self.depth += 1;
        self.bound.entry(id).or_default().push(self.depth);
    }

    /// Unbinds the innermost binding, of `id`.
    pub fn pop(&mut self, id: u64) {
        if let Some(depths) = self.bound.get_mut(&id) {
            depths.pop();
            if depths.is_empty() {
                self.bound.remove(&id);
            }
        }
        self.depth -= 1;
    }

    /// How many bindings lie between the innermost one and `id`'s: its index in the
    /// run-time environment.
    pub fn index(&self, id: u64) -> Option<usize> {
        let depth = *self.bound.get(&id)?.last()?;
        Some(self.depth - depth)
    }
}

/// A persistent environment: the innermost binding first.
#[derive(Clone, Default)]
pub(super) struct Env(Option<Arc<Frame>>);

struct Frame {
    value: Value,
    /// How many frames, this one included.
    depth: usize,
    next: Env,
    /// An ancestor further up, chosen so that any ancestor is reached in a
    /// logarithmic number of steps (Myers' skew-binary jump pointers).
    jump: Env,
    /// `jump`'s depth, kept here so that a lookup reads only the frames it visits.
    jump_depth: usize,
}

/// Lookups this close walk the list: most variables are used near their binding.
const NEAR: usize = 8;

impl Drop for Frame {
    /// Unlinks the rest of the list iteratively: environments of deep programs are
    /// long, and dropping them recursively would overflow the stack.
    fn drop(&mut self) {
        // The jump target is an ancestor that `next` also holds, so releasing it
        // never frees anything here.
        drop(self.jump.0.take());
        let mut next = self.next.0.take();
        while let Some(frame) = next {
            match Arc::try_unwrap(frame) {
                Ok(mut frame) => {
                    drop(frame.jump.0.take());
                    next = frame.next.0.take();
                }
                Err(_) => break,
            }
        }
    }
}

impl Env {
    /// The environment with `value` bound innermost.
    pub fn push(&self, value: Value) -> Env {
        let (depth, jump, jump_depth) = match self.0.as_deref() {
            None => (1, Env::default(), 0),
            Some(parent) => {
                // Jump twice as far as the parent where the parent's last two jumps
                // were equally long, otherwise to the parent.
                let grand = parent.jump.0.as_deref();
                let grand_jump_depth = grand.map_or(0, |g| g.jump_depth);
                if parent.depth - parent.jump_depth == parent.jump_depth - grand_jump_depth {
                    let jump = grand.map_or_else(Env::default, |g| g.jump.clone());
                    (parent.depth + 1, jump, grand_jump_depth)
                } else {
                    (parent.depth + 1, self.clone(), parent.depth)
                }
            }
        };
        Env(Some(Arc::new(Frame {
            value,
            depth,
            next: self.clone(),
            jump,
            jump_depth,
        })))
    }

    /// The value `index` bindings out from the innermost.
    pub fn get(&self, index: usize) -> Result<&Value, EvalError> {
        let unbound = || EvalError::from("unbound variable");
        let mut frame = self.0.as_deref().ok_or_else(unbound)?;
        if index < NEAR {
            for _ in 0..index {
                frame = frame.next.0.as_deref().ok_or_else(unbound)?;
            }
            return Ok(&frame.value);
        }
        let target = frame
            .depth
            .checked_sub(index)
            .filter(|d| *d > 0)
            .ok_or_else(unbound)?;
        while frame.depth > target {
            let step = if frame.jump_depth >= target {
                &frame.jump
            } else {
                &frame.next
            };
            frame = step.0.as_deref().ok_or_else(unbound)?;
        }
        Ok(&frame.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_binding_is_found_at_its_index() {
        let mut env = Env::default();
        for i in 0..1000 {
            env = env.push(Value::I64(i));
        }
        for index in 0..1000 {
            match env.get(index) {
                Ok(Value::I64(v)) => assert_eq!(*v, 999 - index as i64),
                _ => panic!("index {index}"),
            }
        }
        assert!(env.get(1000).is_err());
    }

    #[test]
    fn scopes_shadow_and_restore() {
        let mut scope = Scope::default();
        scope.push(1);
        scope.push(2);
        scope.push(1);
        assert_eq!((scope.index(1), scope.index(2)), (Some(0), Some(1)));
        scope.pop(1);
        assert_eq!((scope.index(1), scope.index(2)), (Some(1), Some(0)));
        scope.pop(2);
        scope.pop(1);
        assert_eq!(scope.index(1), None);
    }

    #[test]
    fn long_environments_drop_without_overflowing_the_stack() {
        let mut env = Env::default();
        for i in 0..1_000_000 {
            env = env.push(Value::I64(i));
        }
        let middle = {
            let mut e = env.clone();
            for _ in 0..500_000 {
                e = e.0.as_ref().unwrap().next.clone();
            }
            e
        };
        drop(env);
        assert!(matches!(middle.get(0), Ok(Value::I64(499_999))));
    }
}
