//! Undefined nat arithmetic: division or remainder by zero, zero to a negative
//! power, and results that do not fit in 64 bits.
//!
//! An operation with no value gives an *undefined* nat that records the
//! offending operation and absorbs every further operation (`(n / 0) * 0` stays
//! undefined), so that the fault is reported where the nat is used, naming the
//! operation that caused it.

use std::fmt;
use std::sync::Arc;

use super::display::{POWER, PRIMARY, PRODUCT, SUM};
use super::repr::{Nat, NatOp, Repr, Undefined};

/// The zero operand of the undefined operations, borrowed for printing.
static ZERO: Nat = Nat::ZERO;

impl fmt::Display for Undefined {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Undefined::DivisionByZero(a) => {
                write!(f, "division by zero in {}", Operation(a, NatOp::Div, &ZERO))
            }
            Undefined::RemainderByZero(a) => {
                write!(
                    f,
                    "remainder by zero in {}",
                    Operation(a, NatOp::Rem, &ZERO)
                )
            }
            Undefined::ZeroToNegativePower(e) => write!(
                f,
                "zero to a negative power in {}",
                Operation(&ZERO, NatOp::Pow, e)
            ),
            Undefined::Overflow { lhs, op, rhs } => {
                write!(f, "{} overflows 64-bit integers", Operation(lhs, *op, rhs))
            }
        }
    }
}

impl std::error::Error for Undefined {}

impl Undefined {
    /// The offending operation, as RISE nat text.
    pub fn operation(&self) -> impl fmt::Display + '_ {
        match self {
            Undefined::DivisionByZero(a) => Operation(a, NatOp::Div, &ZERO),
            Undefined::RemainderByZero(a) => Operation(a, NatOp::Rem, &ZERO),
            Undefined::ZeroToNegativePower(e) => Operation(&ZERO, NatOp::Pow, e),
            Undefined::Overflow { lhs, op, rhs } => Operation(lhs, *op, rhs),
        }
    }
}

/// `lhs op rhs`, printed with the parentheses the RISE nat grammar needs.
struct Operation<'a>(&'a Nat, NatOp, &'a Nat);

impl fmt::Display for Operation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Operation(lhs, op, rhs) = *self;
        // Operators associate to the left, except `^`: the other operand is
        // printed one level tighter, so that the text parses back to the same
        // operation on the same operands.
        let (left, text, right) = match op {
            NatOp::Add => (SUM, " + ", PRODUCT),
            NatOp::Sub => (SUM, " - ", PRODUCT),
            NatOp::Mul => (PRODUCT, " * ", POWER),
            NatOp::Div => (PRODUCT, " / ", POWER),
            NatOp::Rem => (PRODUCT, " % ", POWER),
            NatOp::Pow => (PRIMARY, "^", POWER),
        };
        lhs.write_at(f, left)?;
        f.write_str(text)?;
        rhs.write_at(f, right)
    }
}

impl Nat {
    /// The undefined nat for `why`.
    pub(super) fn undefined_because(why: Undefined) -> Nat {
        Nat(Repr::Undefined(Arc::new(why)))
    }

    /// Why the nat has no value, if it is undefined: it is the result of a
    /// division or remainder by zero, or of arithmetic that overflows 64 bits.
    pub fn undefined(&self) -> Option<&Undefined> {
        match &self.0 {
            Repr::Undefined(why) => Some(why),
            _ => None,
        }
    }

    /// `Ok` if the nat is defined, otherwise why it is not.
    ///
    /// ```
    /// use elevate_rise::nat::{Nat, Undefined};
    /// let n = Nat::named("n");
    /// assert!((&n % &Nat::cst(4)).check_defined().is_ok());
    /// let e = (&n % &Nat::ZERO).check_defined().unwrap_err();
    /// assert!(matches!(e, Undefined::RemainderByZero(_)));
    /// assert_eq!(e.to_string(), "remainder by zero in n % 0");
    /// ```
    pub fn check_defined(&self) -> Result<(), Undefined> {
        match self.undefined() {
            Some(why) => Err(why.clone()),
            None => Ok(()),
        }
    }

    /// Whether the nat is undefined because some arithmetic producing it
    /// overflowed 64 bits (see [`Nat::undefined`]).
    pub fn is_overflow(&self) -> bool {
        matches!(self.undefined(), Some(Undefined::Overflow { .. }))
    }

    /// `Err` with the first undefined operand of an operation, if any.
    pub(super) fn both_defined(&self, other: &Nat) -> Result<(), Undefined> {
        self.check_defined()?;
        other.check_defined()
    }
}
