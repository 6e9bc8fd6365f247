//! The structured fragment's answer when a program is outside it: [`NotStructured`],
//! with the reason.

use crate::nat::Nat;

/// Why a program is not a nest of structured operations (the bridge then emits loops).
#[derive(Debug, Clone)]
pub struct NotStructured(pub String);

/// A value of the structured fragment, or why there is none.
pub type Structuring<T> = Result<T, NotStructured>;

/// Why not, as a [`Structuring`] result.
pub fn not_structured<T>(why: impl Into<String>) -> Structuring<T> {
    Err(NotStructured(why.into()))
}

/// A constant size.
pub fn size(n: &Nat) -> Structuring<i64> {
    n.as_const()
        .ok_or_else(|| NotStructured(format!("the size {n} is not known")))
}
