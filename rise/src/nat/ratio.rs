//! Reduced fractions of `i64`s: the coefficients of nat polynomials.
//!
//! Every operation computes in `i128`, where the products of two `i64`s fit,
//! reduces the result, and reports an [`Overflow`] when the reduced numerator
//! or denominator does not fit in an `i64`.

use std::cmp::Ordering;
use std::fmt;

use super::{checked, Overflow, Res};

/// The rational number `num / den`, in lowest terms with `den > 0`.
///
/// Being in lowest terms makes the representation unique, so the derived
/// equality and hash are those of the numbers.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Ratio {
    num: i64,
    den: i64,
}

/// Greatest common divisor of two `i128`s (non-negative).
fn gcd_u128(a: i128, b: i128) -> u128 {
    let (mut x, mut y) = (a.unsigned_abs(), b.unsigned_abs());
    while y != 0 {
        (x, y) = (y, x % y);
    }
    x
}

/// Greatest common divisor of two `i128`s of at most 127 bits.
fn wide_gcd(a: i128, b: i128) -> Res<i128> {
    i128::try_from(gcd_u128(a, b)).map_err(|_| Overflow)
}

impl Ratio {
    /// The number `0`.
    pub(super) const ZERO: Ratio = Ratio::int(0);
    /// The number `1`.
    pub(super) const ONE: Ratio = Ratio::int(1);

    /// The integer `value`.
    pub(super) const fn int(value: i64) -> Ratio {
        Ratio { num: value, den: 1 }
    }

    /// `num / den` in lowest terms; `den` must not be zero.
    fn new(num: i128, den: i128) -> Res<Ratio> {
        debug_assert_ne!(den, 0, "zero denominator");
        let g = wide_gcd(num, den)?.max(1);
        let (num, den) = (num / g, den / g);
        let (num, den) = if den < 0 {
            (checked(num.checked_neg())?, checked(den.checked_neg())?)
        } else {
            (num, den)
        };
        Ok(Ratio {
            num: i64::try_from(num).map_err(|_| Overflow)?,
            den: i64::try_from(den).map_err(|_| Overflow)?,
        })
    }

    /// The numerator (its sign is the sign of the number).
    pub(super) fn numer(self) -> i64 {
        self.num
    }

    /// The denominator, always positive.
    pub(super) fn denom(self) -> i64 {
        self.den
    }

    /// The value if it is an integer.
    pub(super) fn to_integer(self) -> Option<i64> {
        (self.den == 1).then_some(self.num)
    }

    pub(super) fn is_integer(self) -> bool {
        self.den == 1
    }

    pub(super) fn is_zero(self) -> bool {
        self.num == 0
    }

    pub(super) fn is_negative(self) -> bool {
        self.num < 0
    }

    pub(super) fn add(self, other: Ratio) -> Res<Ratio> {
        let (a, b, c, d) = self.wide(other);
        Ratio::new(a * d + c * b, b * d)
    }

    pub(super) fn sub(self, other: Ratio) -> Res<Ratio> {
        let (a, b, c, d) = self.wide(other);
        Ratio::new(a * d - c * b, b * d)
    }

    pub(super) fn mul(self, other: Ratio) -> Res<Ratio> {
        let (a, b, c, d) = self.wide(other);
        Ratio::new(a * c, b * d)
    }

    /// `self / other`; `other` must not be zero.
    pub(super) fn div(self, other: Ratio) -> Res<Ratio> {
        let (a, b, c, d) = self.wide(other);
        Ratio::new(a * d, b * c)
    }

    /// `1 / self`; `self` must not be zero.
    pub(super) fn recip(self) -> Res<Ratio> {
        Ratio::ONE.div(self)
    }

    pub(super) fn neg(self) -> Res<Ratio> {
        Ok(Ratio {
            num: checked(self.num.checked_neg())?,
            den: self.den,
        })
    }

    /// `self ^ e`.
    pub(super) fn pow(self, e: u32) -> Res<Ratio> {
        Ok(Ratio {
            num: checked(self.num.checked_pow(e))?,
            den: checked(self.den.checked_pow(e))?,
        })
    }

    /// `self ^ e` for any integer `e` (a negative one takes the reciprocal);
    /// `self` must not be zero if `e` is negative.
    pub(super) fn powi(self, e: i64) -> Res<Ratio> {
        let parity = |x: i64| if e % 2 == 0 { x.abs() } else { x };
        match (self.num, self.den) {
            (0, _) if e < 0 => Err(Overflow),
            _ if e == 0 => Ok(Ratio::ONE),
            (0, _) => Ok(Ratio::ZERO),
            // `±1` to any power, where `e` may not fit in a `u32`.
            (1 | -1, 1) => Ok(Ratio::int(parity(self.num))),
            _ => {
                let base = if e < 0 { self.recip()? } else { self };
                // Any other base is at least 2 or at most 1/2 in magnitude, so
                // an exponent beyond `u32` overflows.
                base.pow(checked(u32::try_from(e.unsigned_abs()).ok())?)
            }
        }
    }

    /// `self - c * floor(self / c)` for an integer `c > 0`: the representative
    /// of `self` modulo `c` in `[0, c)`.
    pub(super) fn rem_euclid(self, c: i64) -> Res<Ratio> {
        let modulus = i128::from(self.den) * i128::from(c);
        Ratio::new(i128::from(self.num).rem_euclid(modulus), self.den.into())
    }

    /// The greatest common divisor: the largest `g > 0` such that `self / g`
    /// and `other / g` are both integers (`0` if both are zero).
    pub(super) fn gcd(self, other: Ratio) -> Res<Ratio> {
        let (a, b, c, d) = self.wide(other);
        let lcm = b / wide_gcd(b, d)? * d;
        Ratio::new(wide_gcd(a, c)?, lcm)
    }

    /// Both numbers widened to `i128`: `(self.num, self.den, other.num, other.den)`.
    fn wide(self, other: Ratio) -> (i128, i128, i128, i128) {
        (
            self.num.into(),
            self.den.into(),
            other.num.into(),
            other.den.into(),
        )
    }
}

/// A sum of terms `coef * factor` in `i128` over a common denominator, for
/// evaluating a polynomial whose partial sums need not fit in an `i64`.
#[derive(Clone, Copy, Debug)]
pub(super) struct WideSum {
    num: i128,
    den: i128,
}

impl WideSum {
    /// The empty sum.
    pub(super) const ZERO: WideSum = WideSum { num: 0, den: 1 };

    /// `self + coef * factor`, `None` on overflow.
    pub(super) fn add(self, coef: Ratio, factor: i128) -> Option<WideSum> {
        let term = i128::from(coef.num).checked_mul(factor)?;
        let g = wide_gcd(self.den, coef.den.into()).ok()?;
        let den = (self.den / g).checked_mul(coef.den.into())?;
        let num = self
            .num
            .checked_mul(den / self.den)?
            .checked_add(term.checked_mul(den / i128::from(coef.den))?)?;
        Some(WideSum { num, den })
    }

    /// Whether the sum is an integer.
    pub(super) fn is_integer(self) -> bool {
        self.num % self.den == 0
    }

    /// The sum if it is an integer that fits in an `i64`.
    pub(super) fn to_integer(self) -> Option<i64> {
        self.is_integer()
            .then(|| i64::try_from(self.num / self.den).ok())
            .flatten()
    }
}

impl Ord for Ratio {
    /// Numeric order.
    fn cmp(&self, other: &Ratio) -> Ordering {
        let (a, b, c, d) = self.wide(*other);
        (a * d).cmp(&(c * b))
    }
}

impl PartialOrd for Ratio {
    fn partial_cmp(&self, other: &Ratio) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.den {
            1 => write!(f, "{}", self.num),
            den => write!(f, "{}/{den}", self.num),
        }
    }
}

impl fmt::Debug for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(num: i64, den: i64) -> Ratio {
        Ratio::new(num.into(), den.into()).unwrap()
    }

    #[test]
    fn arithmetic_is_reduced() {
        assert_eq!(r(2, 4), r(1, 2));
        assert_eq!(r(3, -6), r(-1, 2));
        assert_eq!(r(1, 2).add(r(1, 3)).unwrap(), r(5, 6));
        assert_eq!(r(1, 2).add(r(1, 2)).unwrap(), Ratio::ONE);
        assert_eq!(r(1, 2).sub(r(1, 2)).unwrap(), Ratio::ZERO);
        assert_eq!(r(2, 3).mul(r(3, 4)).unwrap(), r(1, 2));
        assert_eq!(r(2, 3).div(r(-4, 3)).unwrap(), r(-1, 2));
        assert_eq!(r(2, 3).pow(3).unwrap(), r(8, 27));
        assert_eq!(r(2, 3).powi(-3).unwrap(), r(27, 8));
        assert_eq!(r(-2, 1).powi(-1).unwrap(), r(-1, 2));
        assert_eq!(Ratio::int(-1).powi(i64::MAX).unwrap(), Ratio::int(-1));
        assert_eq!(Ratio::int(-1).powi(i64::MIN).unwrap(), Ratio::ONE);
        assert_eq!(Ratio::ZERO.powi(0).unwrap(), Ratio::ONE);
        assert!(Ratio::ZERO.powi(-1).is_err());
        assert!(Ratio::int(2).powi(63).is_err());
        assert!(r(1, 2).powi(i64::MIN).is_err());
        assert_eq!(r(-1, 2).to_string(), "-1/2");
        assert_eq!(Ratio::int(7).to_integer(), Some(7));
        assert_eq!(r(7, 2).to_integer(), None);
    }

    #[test]
    fn rem_and_gcd() {
        assert_eq!(Ratio::int(7).rem_euclid(4).unwrap(), Ratio::int(3));
        assert_eq!(Ratio::int(-1).rem_euclid(4).unwrap(), Ratio::int(3));
        assert_eq!(r(9, 2).rem_euclid(4).unwrap(), r(1, 2));
        assert_eq!(r(-1, 2).rem_euclid(4).unwrap(), r(7, 2));
        assert_eq!(Ratio::int(4).gcd(Ratio::int(6)).unwrap(), Ratio::int(2));
        assert_eq!(r(1, 2).gcd(r(3, 4)).unwrap(), r(1, 4));
        assert_eq!(r(3, 2).gcd(Ratio::int(3)).unwrap(), r(3, 2));
        assert_eq!(Ratio::ZERO.gcd(r(-2, 3)).unwrap(), r(2, 3));
        assert_eq!(Ratio::ZERO.gcd(Ratio::ZERO).unwrap(), Ratio::ZERO);
    }

    #[test]
    fn wide_sums() {
        let sum = WideSum::ZERO
            .add(r(1, 2), 3)
            .and_then(|s| s.add(r(-1, 6), 3))
            .unwrap();
        assert_eq!(sum.to_integer(), Some(1));
        let sum = sum.add(r(1, 4), 1).unwrap();
        assert_eq!(sum.to_integer(), None);
        let big = i128::from(i64::MAX) * 4;
        let sum = WideSum::ZERO
            .add(r(1, 2), big)
            .and_then(|s| s.add(r(-1, 4), big));
        assert_eq!(sum.unwrap().to_integer(), Some(i64::MAX));
        assert!(WideSum::ZERO.add(Ratio::int(4), i128::MAX).is_none());
    }

    #[test]
    fn overflow_is_reported() {
        let max = Ratio::int(i64::MAX);
        assert!(max.add(Ratio::ONE).is_err());
        assert!(Ratio::int(i64::MIN).neg().is_err());
        assert!(max.mul(Ratio::int(2)).is_err());
        assert_eq!(max.mul(r(1, 2)).unwrap(), r(i64::MAX, 2));
        assert!(r(1, i64::MAX).mul(r(1, 2)).is_err());
        assert!(Ratio::int(i64::MIN).div(Ratio::int(-1)).is_err());
        assert_eq!(
            Ratio::int(i64::MIN).rem_euclid(i64::MAX).unwrap(),
            r(i64::MAX - 1, 1)
        );
        assert!(r(3, 5) < r(2, 3) && r(-1, 2) < Ratio::ZERO);
    }
}
