//! Evaluating nats at concrete sizes, with checked arithmetic throughout.

use elevate_core::stack::guard;

use super::ratio::WideSum;
use super::repr::Undefined;
use super::repr::{Atom, Nat, NatVar, Repr, Term};

/// Why a nat has no value at the given sizes. Each variant names the
/// offending (sub-)expression.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// The nat is undefined whatever the sizes are.
    #[error(transparent)]
    Undefined(#[from] Undefined),
    /// A variable has no value.
    #[error("the nat variable `{0}` has no value")]
    Unbound(NatVar),
    /// A division, remainder or power whose divisor is zero at these sizes.
    #[error("division by zero in {0}")]
    DivisionByZero(Nat),
    /// A value, or an intermediate value, does not fit in 64 bits.
    #[error("{0} overflows 64-bit integers")]
    Overflow(Nat),
    /// An exact division that does not divide, or a result that is a fraction.
    #[error("{0} is not a whole number")]
    NotWhole(Nat),
}

/// `x^e` for `e >= 0`, `None` on overflow.
fn pow_i64(x: i64, e: i64) -> Option<i64> {
    match x {
        0 | 1 => Some(if e == 0 { 1 } else { x }),
        -1 => Some(if e % 2 == 0 { 1 } else { -1 }),
        _ => x.checked_pow(u32::try_from(e).ok()?),
    }
}

impl Nat {
    /// Evaluates the nat with variable values from `env`, with checked
    /// arithmetic: an error names the sub-expression that has no value: an
    /// unbound variable, a division by zero, a value (or an intermediate
    /// product) beyond 64 bits, or an exact division that is not exact (the
    /// value of a division atom, an operand of a remainder or power, or the
    /// result is not an integer; the terms of a sum may be fractions, as in
    /// `n/2 + m/2`).
    ///
    /// ```
    /// use elevate_rise::nat::{EvalError, Nat};
    /// let n = Nat::named("n");
    /// let at = |v: i64| move |_: &_| Some(v);
    /// assert_eq!((&n * &n).try_eval(&at(1 << 20)), Ok(1 << 40));
    /// let e = (&(&n * &n) * &n).try_eval(&at(1 << 40)).unwrap_err();
    /// assert!(matches!(e, EvalError::Overflow(_)), "{e}");
    /// assert_eq!(e.to_string(), "n^3 overflows 64-bit integers");
    /// ```
    pub fn try_eval(&self, env: &dyn Fn(&NatVar) -> Option<i64>) -> Result<i64, EvalError> {
        let terms = match &self.0 {
            Repr::Const(c) => return c.to_integer().ok_or_else(|| self.not_whole()),
            Repr::Undefined(why) => return Err(EvalError::Undefined((**why).clone())),
            Repr::Poly(terms) => terms,
        };
        // In `i128`, so that `n^3/8` evaluates even where `n^3` does not fit
        // in an `i64`, and so do partial sums.
        let mut sum = WideSum::ZERO;
        for t in terms.iter() {
            let mut product: i128 = 1;
            for (atom, e) in &t.mono.0 {
                let value = i128::from(atom.eval(env)?);
                product = value
                    .checked_pow(*e)
                    .and_then(|power| product.checked_mul(power))
                    .ok_or_else(|| EvalError::Overflow(term_nat(t)))?;
            }
            sum = sum
                .add(t.coef, product)
                .ok_or_else(|| EvalError::Overflow(self.clone()))?;
        }
        if !sum.is_integer() {
            return Err(self.not_whole());
        }
        sum.to_integer()
            .ok_or_else(|| EvalError::Overflow(self.clone()))
    }

    /// [`Nat::try_eval`], without the reason.
    pub fn eval(&self, env: &dyn Fn(&NatVar) -> Option<i64>) -> Option<i64> {
        self.try_eval(env).ok()
    }

    fn not_whole(&self) -> EvalError {
        EvalError::NotWhole(self.clone())
    }
}

/// The nat of the single term `t`.
fn term_nat(t: &Term) -> Nat {
    Nat::from_sorted(vec![Term {
        mono: t.mono.clone(),
        coef: super::ratio::Ratio::ONE,
    }])
}

impl Atom {
    fn eval(&self, env: &dyn Fn(&NatVar) -> Option<i64>) -> Result<i64, EvalError> {
        let whole = || Nat::from_atom(self.clone());
        let operands = |a: &Nat, b: &Nat| -> Result<(i64, i64), EvalError> {
            guard(|| Ok((a.try_eval(env)?, b.try_eval(env)?)))
        };
        match self {
            Atom::Var(v) => env(v).ok_or_else(|| EvalError::Unbound(v.clone())),
            Atom::Div(a, b) => match operands(a, b)? {
                (_, 0) => Err(EvalError::DivisionByZero(whole())),
                (a, b) => match a.checked_rem(b) {
                    Some(0) => a.checked_div(b).ok_or_else(|| EvalError::Overflow(whole())),
                    Some(_) => Err(EvalError::NotWhole(whole())),
                    // `i64::MIN % -1` overflows, and so does `i64::MIN / -1`.
                    None => Err(EvalError::Overflow(whole())),
                },
            },
            Atom::Mod(a, b) => match operands(a, b)? {
                (_, 0) => Err(EvalError::DivisionByZero(whole())),
                // Every integer is a multiple of `±1` (and `i64::MIN % -1`
                // would overflow).
                (_, 1 | -1) => Ok(0),
                (a, b) => Ok(a.rem_euclid(b)),
            },
            Atom::Pow(a, b) => match operands(a, b)? {
                (0, b) if b < 0 => Err(EvalError::DivisionByZero(whole())),
                (-1, b) if b < 0 => Ok(if b % 2 == 0 { 1 } else { -1 }),
                (1, _) => Ok(1),
                (_, b) if b < 0 => Err(EvalError::NotWhole(whole())),
                (a, b) => pow_i64(a, b).ok_or_else(|| EvalError::Overflow(whole())),
            },
        }
    }
}
