//! A definition of a RISE file, as the parser produces it.
//!
//! A leaf module: the parser builds definitions, and inference, the printer and the
//! program loader read them, without those modules importing one another.

use crate::error::Span;
use crate::nat::NatVar;
use crate::term::Term;

/// A definition of a RISE file.
#[derive(Debug, Clone)]
pub struct Definition {
    /// Its name.
    pub name: String,
    /// Its nat parameters: explicit (`def f<n, m>`) or the free nat variables of its
    /// parameter and result types, in order of appearance. The term binds them with
    /// leading `depFun`s.
    pub nat_params: Vec<NatVar>,
    /// Whether the nat parameters were written explicitly (then callers may pass them).
    pub explicit_nats: bool,
    /// The definition as a closed term. A use of an earlier definition is a node with
    /// the same expression as that definition's term (its children are shared, not
    /// copied), so inference recognizes it and types it once.
    pub term: Term,
    /// Where the name is.
    pub span: Span,
}
