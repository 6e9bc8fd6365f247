//! Symbolic natural-number expressions ("nats") for RISE types, and a solver
//! for equations between them.
//!
//! A [`Nat`] is kept in a canonical normal form: a polynomial with rational
//! coefficients over *atoms*, where an atom is a variable or an irreducible
//! division, remainder or power. Structural equality (`==`, `Hash`) of normal
//! forms therefore decides the equalities that type checking needs, such as
//! `1 + (n - 1) == n` or `(n / 4) * 4 == n`.
//!
//! # Semantics
//!
//! Nats denote integers, and division is *exact*, as in RISE: `n / 4` stands
//! for the integer `q` with `4 * q == n`, and means something only when there
//! is one. (`split(4)` on an array of length `n` gives type `(n/4).4.t`, and
//! `join` of that must have length `n` again.) So the normal form has rational
//! coefficients:
//!
//! - dividing by a non-zero constant divides every coefficient:
//!   `(n / 4) * 4 == n`, `(2*n + 2) / 4 == n/2 + 1/2`, `7 / 2` is `7/2`;
//! - dividing by a polynomial that divides the dividend gives the quotient:
//!   `(n*m + m) / m == n + 1`; other divisions stay irreducible atoms.
//!
//! A remainder is Euclidean (`rem_euclid`). It is computed for integer
//! constants, and `p % c` for an integer constant `c` drops the terms of `p`
//! whose coefficients are integer multiples of `c`: `(4*k + 5) % 4 == 1`.
//! Other remainders stay atoms.
//!
//! The simplifications assume that every divisor is non-zero and every
//! division exact; under that assumption they agree with integer arithmetic.
//! [`Nat::try_eval`] checks it: it fails when a division in the normal form has a
//! value that is not an integer, when an operand of a remainder or power is
//! not an integer, or when the result is not one. Only the terms of a sum may
//! be fractions: `n/2 + m/2` evaluates to `1` at `n = m = 1`.
//!
//! # Undefined arithmetic
//!
//! Division or remainder by zero, zero to a negative power, and a coefficient
//! or constant that does not fit in 64 bits (arithmetic is checked
//! everywhere: normalizing, powers, substitution, evaluation) have no value.
//! Such an operation gives an *undefined* nat ([`Nat::undefined`] says why,
//! naming the operation: [`Undefined`]) that absorbs every further
//! operation, so it cannot vanish (`(n / 0) * 0` stays undefined) and is
//! reported where the nat is used: [`Type::check_well_formed`] rejects types
//! with undefined sizes, and with sizes that are negative whatever their
//! variables are ([`Nat::is_always_below`]). Powers too large to expand or
//! with exponents beyond 32 bits stay symbolic (`n ^ 2^40` is a size).
//!
//! # Modules
//!
//! The representation (`repr`), arithmetic on normal forms (`arith`),
//! substitution (`subst`), evaluation (`eval`), sign bounds (`bounds`),
//! undefined results (`undefined`), printing (`display`), operators (`ops`),
//! the solver (`solve`) and rational coefficients (`ratio`).
//!
//! [`Type::check_well_formed`]: crate::types::Type::check_well_formed

#![warn(missing_docs)]

mod arith;
mod bounds;
mod display;
mod eval;
mod ops;
mod ratio;
mod repr;
mod solve;
mod subst;
mod undefined;

#[cfg(test)]
mod tests;

pub use eval::EvalError;
pub use repr::{Nat, NatVar};
pub use repr::{NatOp, Undefined};
pub use solve::{solve, NatEquation, Solution, SolveError};

/// Internal marker for a 64-bit overflow in coefficient arithmetic; the
/// operation that meets it reports an [`Undefined::Overflow`] naming itself.
#[derive(Debug, Clone, Copy)]
struct Overflow;

type Res<T> = Result<T, Overflow>;

/// Turns the result of a checked operation into a [`Res`].
fn checked<T>(value: Option<T>) -> Res<T> {
    value.ok_or(Overflow)
}
