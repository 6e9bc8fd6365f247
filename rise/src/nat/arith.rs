//! Arithmetic on normal forms: sums, products, exact division, Euclidean
//! remainder and powers of polynomials.
//!
//! Each operation is a *kernel* on defined operands that reports only an
//! [`Overflow`] of 64 bits, wrapped by [`Nat::checked`], which rejects the
//! undefined cases (division by zero, ...) first and turns an overflow into an
//! [`Undefined`] naming the operation.

use std::cmp::Ordering;
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

use super::ratio::Ratio;
use super::repr::{graded_cmp, Atom, Mono, Nat, Repr, Term};
use super::repr::{NatOp, Undefined};
use super::{checked, Overflow, Res};

/// Largest constant exponent to which a polynomial with several terms is
/// expanded; larger powers stay symbolic.
const MAX_POW_EXPANSION: i64 = 32;
/// Largest number of terms an expanded power may have before it is kept
/// symbolic instead.
const MAX_EXPANDED_TERMS: usize = 1024;
/// Bound on the steps of exact polynomial division (a safety net only: the
/// algorithm terminates on its own).
const MAX_DIVISION_STEPS: usize = 4096;

/// Greatest common divisor of the coefficients of `terms` (see
/// [`Ratio::gcd`]); zero for no terms.
pub(super) fn content(terms: &[Term]) -> Res<Ratio> {
    terms.iter().try_fold(Ratio::ZERO, |g, t| g.gcd(t.coef))
}

/// Exact division `a / b` of polynomials (given as term lists), if there is a
/// polynomial `q` (with rational coefficients) such that `a == q * b`.
///
/// This is the multivariate division algorithm with respect to
/// [`graded_cmp`]; for a single divisor it leaves remainder zero exactly when
/// the division is exact. Overflow counts as "not exact".
fn exact_div(a: &[Term], b: &[Term]) -> Option<Nat> {
    let lead = b.iter().max_by(|x, y| graded_cmp(&x.mono, &y.mono))?;
    let mut rest: BTreeMap<Mono, Ratio> = a.iter().map(|t| (t.mono.clone(), t.coef)).collect();
    let mut quotient = Vec::new();
    for _ in 0..MAX_DIVISION_STEPS {
        let Some((mono, coef)) = rest.iter().max_by(|x, y| graded_cmp(x.0, y.0)) else {
            return Nat::from_terms(quotient).ok();
        };
        let q_mono = mono.div(&lead.mono)?;
        let q_coef = coef.div(lead.coef).ok()?;
        for t in b {
            let m = q_mono.mul(&t.mono).ok()?;
            let c = q_coef.mul(t.coef).ok()?;
            match rest.entry(m) {
                Entry::Occupied(mut entry) => {
                    let left = entry.get().sub(c).ok()?;
                    if left.is_zero() {
                        entry.remove();
                    } else {
                        entry.insert(left);
                    }
                }
                Entry::Vacant(entry) => {
                    entry.insert(c.neg().ok()?);
                }
            }
        }
        quotient.push(Term {
            mono: q_mono,
            coef: q_coef,
        });
    }
    None
}

impl Nat {
    /// `self + other`.
    pub fn add(&self, other: &Nat) -> Nat {
        self.apply(NatOp::Add, other)
    }

    /// `self - other` (coefficients may become negative).
    pub fn sub(&self, other: &Nat) -> Nat {
        self.apply(NatOp::Sub, other)
    }

    /// `self * other`.
    pub fn mul(&self, other: &Nat) -> Nat {
        self.apply(NatOp::Mul, other)
    }

    /// `self / other`, an exact division: by a constant it divides the
    /// coefficients; by a polynomial that divides `self` it is the quotient;
    /// otherwise it is an irreducible division (see the module documentation
    /// for the semantics). Undefined for `other == 0`.
    pub fn div(&self, other: &Nat) -> Nat {
        self.apply(NatOp::Div, other)
    }

    /// `self % other` (Euclidean remainder), computed where the module
    /// documentation says, otherwise an irreducible remainder. Undefined for
    /// `other == 0`.
    pub fn rem(&self, other: &Nat) -> Nat {
        self.apply(NatOp::Rem, other)
    }

    /// `self ^ other`. Constant powers are computed exactly (`2 ^ (0 - 2)` is
    /// `1/4`; `0` to a negative power is undefined). Polynomials with a
    /// non-negative constant exponent are expanded unless the result would
    /// be huge; other powers stay symbolic.
    pub fn pow(&self, other: &Nat) -> Nat {
        self.apply(NatOp::Pow, other)
    }

    /// `0 - self`.
    pub fn neg(&self) -> Nat {
        Nat::ZERO.apply(NatOp::Sub, self)
    }

    /// `self op other`: its normal form, or an undefined nat saying why it
    /// has none (an undefined operand makes the result undefined, too).
    pub fn apply(&self, op: NatOp, other: &Nat) -> Nat {
        self.checked(op, other)
            .unwrap_or_else(Nat::undefined_because)
    }

    /// `self op other`, or why it is undefined.
    pub(super) fn checked(&self, op: NatOp, other: &Nat) -> Result<Nat, Undefined> {
        self.both_defined(other)?;
        let result = match op {
            NatOp::Add => self.combine(other, false),
            NatOp::Sub => self.combine(other, true),
            NatOp::Mul => self.mul_kernel(other),
            NatOp::Div if other.is_zero() => return Err(Undefined::DivisionByZero(self.clone())),
            NatOp::Div => self.div_kernel(other),
            NatOp::Rem if other.is_zero() => return Err(Undefined::RemainderByZero(self.clone())),
            NatOp::Rem => self.rem_kernel(other),
            NatOp::Pow if self.is_zero() && other.is_negative_const() => {
                return Err(Undefined::ZeroToNegativePower(other.clone()))
            }
            NatOp::Pow => self.pow_kernel(other),
        };
        result.map_err(|Overflow| Undefined::Overflow {
            lhs: self.clone(),
            op,
            rhs: other.clone(),
        })
    }

    fn is_negative_const(&self) -> bool {
        matches!(&self.0, Repr::Const(c) if c.is_negative())
    }

    /// `self + other` or `self - other`.
    fn combine(&self, other: &Nat, negate: bool) -> Res<Nat> {
        let sign = |c: Ratio| if negate { c.neg() } else { Ok(c) };
        // `a - b` directly rather than `a + (-b)`: `-b` may overflow where
        // `a - b` does not (`b == i64::MIN`).
        let combine = |a: Ratio, b: Ratio| if negate { a.sub(b) } else { a.add(b) };
        match (&self.0, &other.0) {
            // The callers pass defined operands only.
            (Repr::Undefined(_), _) | (_, Repr::Undefined(_)) => Err(Overflow),
            (Repr::Const(a), Repr::Const(b)) => combine(*a, *b).map(Nat::from_ratio),
            (_, Repr::Const(b)) if b.is_zero() => Ok(self.clone()),
            (Repr::Const(a), _) if a.is_zero() && !negate => Ok(other.clone()),
            _ => {
                let (a, b) = (self.terms(), other.terms());
                let mut out = Vec::with_capacity(a.len() + b.len());
                let (mut i, mut j) = (0, 0);
                loop {
                    match (a.get(i), b.get(j)) {
                        (Some(x), Some(y)) => match x.mono.cmp(&y.mono) {
                            Ordering::Less => {
                                out.push(x.clone());
                                i += 1;
                            }
                            Ordering::Greater => {
                                out.push(Term {
                                    mono: y.mono.clone(),
                                    coef: sign(y.coef)?,
                                });
                                j += 1;
                            }
                            Ordering::Equal => {
                                let coef = combine(x.coef, y.coef)?;
                                if !coef.is_zero() {
                                    out.push(Term {
                                        mono: x.mono.clone(),
                                        coef,
                                    });
                                }
                                i += 1;
                                j += 1;
                            }
                        },
                        (Some(x), None) => {
                            out.push(x.clone());
                            i += 1;
                        }
                        (None, Some(y)) => {
                            out.push(Term {
                                mono: y.mono.clone(),
                                coef: sign(y.coef)?,
                            });
                            j += 1;
                        }
                        (None, None) => break,
                    }
                }
                Ok(Nat::from_sorted(out))
            }
        }
    }

    /// `c * self`.
    pub(super) fn scale(&self, c: Ratio) -> Res<Nat> {
        match &self.0 {
            _ if c.is_zero() => Ok(Nat::ZERO),
            _ if c == Ratio::ONE => Ok(self.clone()),
            _ => self.map_coefs(|x| x.mul(c)),
        }
    }

    /// Applies `f` to every coefficient, where `f` maps no non-zero
    /// coefficient to zero.
    fn map_coefs(&self, f: impl Fn(Ratio) -> Res<Ratio>) -> Res<Nat> {
        match &self.0 {
            Repr::Undefined(_) => Err(Overflow),
            Repr::Const(a) => f(*a).map(Nat::from_ratio),
            Repr::Poly(terms) => {
                let mapped = terms
                    .iter()
                    .map(|t| {
                        Ok(Term {
                            mono: t.mono.clone(),
                            coef: f(t.coef)?,
                        })
                    })
                    .collect::<Res<Vec<_>>>()?;
                Ok(Nat(Repr::Poly(mapped.into())))
            }
        }
    }

    fn mul_kernel(&self, other: &Nat) -> Res<Nat> {
        match (&self.0, &other.0) {
            (Repr::Undefined(_), _) | (_, Repr::Undefined(_)) => Err(Overflow),
            (Repr::Const(c), _) => other.scale(*c),
            (_, Repr::Const(c)) => self.scale(*c),
            (Repr::Poly(a), Repr::Poly(b)) => {
                let mut out = Vec::with_capacity(a.len() * b.len());
                for x in a.iter() {
                    for y in b.iter() {
                        out.push(Term {
                            mono: x.mono.mul(&y.mono)?,
                            coef: x.coef.mul(y.coef)?,
                        });
                    }
                }
                Nat::from_terms(out)
            }
        }
    }

    /// `self / other` for a non-zero `other`.
    fn div_kernel(&self, other: &Nat) -> Res<Nat> {
        match &other.0 {
            Repr::Const(c) if c.is_zero() => Err(Overflow),
            // Each coefficient divided, not multiplied by `1 / c`, which
            // overflows for `c == i64::MIN`.
            Repr::Const(c) => self.map_coefs(|x| x.div(*c)),
            _ => match exact_div(&self.terms(), &other.terms()) {
                Some(q) => Ok(q),
                None => self.div_atom(other),
            },
        }
    }

    /// The irreducible division `self / other` for a non-constant `other`, in
    /// canonical form `Div(a, b) / l`: the divisor `b` has coprime integer
    /// coefficients and a positive leading one, and the dividend `a` integer
    /// coefficients. So `n / (2*m)` and `(n / 2) / m` are both `(n / m)/2`.
    ///
    /// Dividing both operands by the same number leaves the quotient as it
    /// is, and multiplying it by the integer `l` keeps it an integer, so the
    /// atom is an integer wherever `self / other` is.
    fn div_atom(&self, other: &Nat) -> Res<Nat> {
        let g = content(other.poly_terms())?;
        let g = if other.leading_coef().is_negative() {
            g.neg()?
        } else {
            g
        };
        let (dividend, divisor) = (self.scale(g.recip()?)?, other.scale(g.recip()?)?);
        // The gcd of rational coefficients has the lcm of their denominators
        // as its denominator.
        let l = Ratio::int(content(&dividend.terms())?.denom());
        let atom = Nat::from_atom(Atom::Div(dividend.scale(l)?, divisor));
        atom.scale(l.recip()?)
    }

    /// `self % other` for a non-zero `other`.
    fn rem_kernel(&self, other: &Nat) -> Res<Nat> {
        let atom = || Ok(Nat::from_atom(Atom::Mod(self.clone(), other.clone())));
        match (&self.0, &other.0) {
            // In 128 bits, where `|i64::MIN|` fits.
            (Repr::Const(a), Repr::Const(c)) if a.is_integer() && c.is_integer() => {
                let (a, c) = (i128::from(a.numer()), i128::from(c.numer()));
                Ok(Nat::cst(checked(i64::try_from(a.rem_euclid(c)).ok())?))
            }
            // a % (-c) == a % c for Euclidean remainders.
            (_, Repr::Const(c)) => match c.to_integer().and_then(i64::checked_abs) {
                Some(c) if c > 0 => self.rem_by_positive(c),
                _ => atom(),
            },
            // `self` is a multiple of `other` if the quotient has integer
            // coefficients (and so is an integer).
            (_, _) => match exact_div(&self.terms(), &other.terms()) {
                Some(q) if q.is_integral() => Ok(Nat::ZERO),
                _ => atom(),
            },
        }
    }

    /// `self % c` for an integer `c > 0`. Reduces every coefficient to
    /// `0 <= coef < c`, which subtracts integer multiples of `c` (the atoms
    /// are integers); then pulls out the common factor `g` of the rest and
    /// `c`, using `(g*x) % (g*d) == g * (x % d)`, which leaves `x` with
    /// integer coefficients and `d` an integer.
    fn rem_by_positive(&self, c: i64) -> Res<Nat> {
        let terms = match &self.0 {
            Repr::Undefined(_) => return Err(Overflow),
            Repr::Const(a) => {
                return Ok(match a.to_integer() {
                    Some(a) => Nat::cst(a.rem_euclid(c)),
                    // A fraction has no remainder.
                    None => Nat::from_atom(Atom::Mod(self.clone(), Nat::cst(c))),
                });
            }
            Repr::Poly(terms) => terms,
        };
        let mut rest = Vec::with_capacity(terms.len());
        for t in terms.iter() {
            let coef = t.coef.rem_euclid(c)?;
            if !coef.is_zero() {
                rest.push(Term {
                    mono: t.mono.clone(),
                    coef,
                });
            }
        }
        match rest.as_slice() {
            [] => return Ok(Nat::ZERO),
            [t] if t.mono.is_one() => return Nat::from_ratio(t.coef).rem_by_positive(c),
            _ => {}
        }
        let c = Ratio::int(c);
        let g = content(&rest)?.gcd(c)?;
        let rest = Nat::from_sorted(rest).scale(g.recip()?)?;
        Nat::from_atom(Atom::Mod(rest, Nat::from_ratio(c.div(g)?))).scale(g)
    }

    /// `self ^ other`, where `self` is not `0` if `other` is negative.
    fn pow_kernel(&self, other: &Nat) -> Res<Nat> {
        let atom = || Nat::from_atom(Atom::Pow(self.clone(), other.clone()));
        let Some(e) = other.as_const() else {
            return Ok(if *self == Nat::ONE { Nat::ONE } else { atom() });
        };
        match &self.0 {
            Repr::Undefined(_) => Err(Overflow),
            Repr::Const(x) => x.powi(e).map(Nat::from_ratio),
            Repr::Poly(_) if e < 0 => Ok(atom()),
            Repr::Poly(_) => Ok(self.pow_expanded(e)?.unwrap_or_else(atom)),
        }
    }

    /// `self ^ e` for a polynomial `self` and `e >= 0`, expanded if that is
    /// small enough; `None` if it is not.
    fn pow_expanded(&self, e: i64) -> Res<Option<Nat>> {
        match (self.poly_terms(), e) {
            (_, 0) => Ok(Some(Nat::ONE)),
            (_, 1) => Ok(Some(self.clone())),
            ([t], _) => {
                // Exponents of atoms are `u32`s: beyond that the power stays
                // symbolic (`n ^ 2^40` is a fine size).
                let Some(mono) = u32::try_from(e).ok().and_then(|e| t.mono.pow(e).ok()) else {
                    return Ok(None);
                };
                let coef = t.coef.powi(e)?;
                Ok(Some(Nat::from_sorted(vec![Term { mono, coef }])))
            }
            _ if e <= MAX_POW_EXPANSION => {
                let mut acc = self.clone();
                for _ in 1..e {
                    acc = acc.mul_kernel(self)?;
                    if acc.poly_terms().len() > MAX_EXPANDED_TERMS {
                        return Ok(None);
                    }
                }
                Ok(Some(acc))
            }
            _ => Ok(None),
        }
    }
}
