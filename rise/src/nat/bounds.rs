//! What the normal form shows about the sign of a nat, for rejecting sizes
//! that are negative (or zero) whatever the values of their variables.
//!
//! Nat variables stand for natural numbers, so a variable is never negative,
//! and neither is a Euclidean remainder, a quotient of two such values, or a
//! power of one. A term is never positive when its coefficient is negative
//! and each of its factors with an odd exponent is never negative.

use elevate_core::stack::guard;

use super::ratio::Ratio;
use super::repr::{Atom, Mono, Nat, Repr};

impl Nat {
    /// Whether the nat is below `bound` for every value of its variables
    /// (natural numbers), as far as its normal form shows: its constant term
    /// is below `bound` and every other term is never positive. `false` for
    /// an undefined nat.
    ///
    /// ```
    /// use elevate_rise::nat::Nat;
    /// let n = Nat::named("n");
    /// assert!(Nat::cst(-1).is_always_below(0));
    /// assert!((&Nat::cst(-1) - &n).is_always_below(0));
    /// assert!((&Nat::ZERO - &n).is_always_below(1));
    /// assert!(!(&n - &Nat::cst(1)).is_always_below(0));
    /// assert!(!(&Nat::ZERO - &n).is_always_below(0));
    /// ```
    pub fn is_always_below(&self, bound: i64) -> bool {
        let terms = match &self.0 {
            Repr::Const(c) => return *c < Ratio::int(bound),
            Repr::Undefined(_) => return false,
            Repr::Poly(terms) => terms,
        };
        let mut constant = Ratio::ZERO;
        for t in terms.iter() {
            if t.mono.is_one() {
                constant = t.coef;
            } else if !(t.coef.is_negative() && never_negative(&t.mono)) {
                return false;
            }
        }
        constant < Ratio::int(bound)
    }

    /// Whether the nat is at least zero for every value of its variables, as
    /// far as its normal form shows.
    fn never_negative(&self) -> bool {
        match &self.0 {
            Repr::Const(c) => !c.is_negative(),
            Repr::Undefined(_) => false,
            Repr::Poly(terms) => terms
                .iter()
                .all(|t| !t.coef.is_negative() && never_negative(&t.mono)),
        }
    }
}

/// Whether the product `mono` is never negative: an even power is not, nor
/// is any power of a factor that is never negative.
fn never_negative(mono: &Mono) -> bool {
    mono.0
        .iter()
        .all(|(atom, e)| e % 2 == 0 || atom_never_negative(atom))
}

fn atom_never_negative(atom: &Atom) -> bool {
    match atom {
        Atom::Var(_) | Atom::Mod(..) => true,
        Atom::Div(a, b) => guard(|| a.never_negative() && b.never_negative()),
        Atom::Pow(a, _) => guard(|| a.never_negative()),
    }
}
