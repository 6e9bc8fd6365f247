//! The structured fragment's answer when a program is outside it: [`NotStructured`],
//! with the reason.

use crate::limits::SizeError;
use crate::nat::Nat;

/// Why a program has no loop program: the reason, and where it is that a buffer of
/// its own would be over the limits, that error (which the bridge reports as one).
#[derive(Debug, Clone)]
pub struct NotStructured {
    /// The reason.
    pub why: String,
    /// The buffer over the limits, if that is the reason.
    pub too_large: Option<SizeError>,
}

impl NotStructured {
    /// Not structured, for `why`.
    pub fn new(why: impl Into<String>) -> NotStructured {
        NotStructured {
            why: why.into(),
            too_large: None,
        }
    }
}

/// A value of the structured fragment, or why there is none.
pub type Structuring<T> = Result<T, NotStructured>;

/// Why not, as a [`Structuring`] result.
pub fn not_structured<T>(why: impl Into<String>) -> Structuring<T> {
    Err(NotStructured::new(why))
}

/// A constant size.
pub fn size(n: &Nat) -> Structuring<i64> {
    n.as_const()
        .ok_or_else(|| NotStructured::new(format!("the size {n} is not known")))
}
