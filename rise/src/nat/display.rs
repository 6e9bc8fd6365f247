//! Printing nats in the RISE nat grammar, so that the text parses back to the
//! same nat.

use std::fmt;

use elevate_core::stack::guard;

use super::ratio::Ratio;
use super::repr::{graded_cmp, Atom, Nat, Repr, Term};

/// Precedence levels of printed expressions: an expression printed at level
/// `l` can stand without parentheses wherever level `l` or lower is required.
pub(super) const SUM: u8 = 0;
pub(super) const PRODUCT: u8 = 1;
pub(super) const POWER: u8 = 2;
pub(super) const PRIMARY: u8 = 3;

impl Nat {
    fn level(&self) -> u8 {
        match &self.0 {
            Repr::Const(c) if c.is_negative() => SUM,
            // `7/2`
            Repr::Const(c) if !c.is_integer() => PRODUCT,
            Repr::Const(_) => PRIMARY,
            // Printed as the operation that has no value.
            Repr::Undefined(_) => SUM,
            Repr::Poly(terms) => match &terms[..] {
                [t] if t.coef == Ratio::ONE => match &t.mono.0[..] {
                    [(atom, 1)] => atom.level(),
                    [_] => POWER,
                    _ => PRODUCT,
                },
                [t] if !t.coef.is_negative() => PRODUCT,
                _ => SUM,
            },
        }
    }

    /// Writes the nat, in parentheses unless it can stand at `min_level`.
    pub(super) fn write_at(&self, f: &mut fmt::Formatter<'_>, min_level: u8) -> fmt::Result {
        if self.level() < min_level {
            write!(f, "({self})")
        } else {
            write!(f, "{self}")
        }
    }
}

impl Atom {
    fn level(&self) -> u8 {
        match self {
            Atom::Var(_) => PRIMARY,
            Atom::Div(..) | Atom::Mod(..) => PRODUCT,
            Atom::Pow(..) => POWER,
        }
    }

    fn write_at(&self, f: &mut fmt::Formatter<'_>, min_level: u8) -> fmt::Result {
        if self.level() < min_level {
            write!(f, "({self})")
        } else {
            write!(f, "{self}")
        }
    }
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Atoms nest as deeply as the text did.
        guard(|| self.write(f))
    }
}

impl Atom {
    fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (a, op, b) = match self {
            Atom::Var(v) => return write!(f, "{v}"),
            Atom::Div(a, b) => (a, " / ", b),
            Atom::Mod(a, b) => (a, " % ", b),
            Atom::Pow(a, b) => {
                a.write_at(f, PRIMARY)?;
                f.write_str("^")?;
                return b.write_at(f, POWER);
            }
        };
        a.write_at(f, PRODUCT)?;
        f.write_str(op)?;
        b.write_at(f, POWER)
    }
}

/// Writes `|t.coef| * t.mono` as `a*mono/b` for the coefficient `±a/b`,
/// leaving out `1*` and `/1`: `n`, `3*n`, `n/4`, `3*n*m/4`, `3/4`.
fn write_term_magnitude(t: &Term, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let (num, den) = (t.coef.numer().unsigned_abs(), t.coef.denom());
    if t.mono.is_one() {
        write!(f, "{num}")?;
    } else {
        // A lone atom may be a division or remainder: `n % m`, not `(n % m)`.
        let alone = num == 1 && den == 1 && t.mono.0.len() == 1;
        let mut first = true;
        if num != 1 {
            write!(f, "{num}")?;
            first = false;
        }
        for (atom, e) in &t.mono.0 {
            if !first {
                f.write_str("*")?;
            }
            first = false;
            if *e == 1 {
                atom.write_at(f, if alone { PRODUCT } else { POWER })?;
            } else {
                atom.write_at(f, PRIMARY)?;
                write!(f, "^{e}")?;
            }
        }
    }
    if den != 1 {
        write!(f, "/{den}")?;
    }
    Ok(())
}

impl fmt::Display for Nat {
    /// Prints the nat in the RISE nat grammar: positive terms first, then
    /// negative ones, each group by descending degree with the constant last.
    /// A fractional coefficient divides its term: `3*n/4 - 1/2`. An undefined
    /// nat prints as the operation that has no value, such as `n / 0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(why) = self.undefined() {
            return write!(f, "{}", why.operation());
        }
        if self.is_zero() {
            return f.write_str("0");
        }
        let terms = self.terms();
        let mut order: Vec<&Term> = terms.iter().collect();
        order.sort_by(|x, y| {
            (x.coef.is_negative())
                .cmp(&y.coef.is_negative())
                .then_with(|| graded_cmp(&y.mono, &x.mono))
        });
        for (i, t) in order.iter().enumerate() {
            match (i, t.coef.is_negative()) {
                (0, false) => {}
                (0, true) => f.write_str("0 - ")?,
                (_, false) => f.write_str(" + ")?,
                (_, true) => f.write_str(" - ")?,
            }
            write_term_magnitude(t, f)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Nat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
