//! Environments of the translations: term variables (by identity) and their values,
//! shared by the closures that stand for functions.

use std::rc::Rc;

/// Variables and their values, the newest last.
pub(crate) type Env<T> = Rc<Vec<(u64, T)>>;

/// `env` with `id` bound to `v`.
pub(crate) fn bind<T: Clone>(env: &Env<T>, id: u64, v: T) -> Env<T> {
    let mut e = (**env).clone();
    e.push((id, v));
    Rc::new(e)
}

/// The value `id` is bound to (the innermost binding).
pub(crate) fn lookup<T: Clone>(env: &Env<T>, id: u64) -> Option<T> {
    env.iter()
        .rev()
        .find(|(x, _)| *x == id)
        .map(|(_, v)| v.clone())
}
