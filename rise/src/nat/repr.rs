//! The representation of nats: a canonical polynomial over atoms, and the
//! queries that read it.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use elevate_core::stack::guard;

use super::ratio::Ratio;
use super::{checked, Res};

/// A variable occurring in a [`Nat`].
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum NatVar {
    /// A nat variable of the program, such as `n`; rigid during solving.
    Named(Arc<str>),
    /// An inference unknown, printed as `?k`; solvable by [`solve`](super::solve).
    Unknown(u32),
}

impl fmt::Display for NatVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NatVar::Named(name) => f.write_str(name),
            NatVar::Unknown(k) => write!(f, "?{k}"),
        }
    }
}

/// A symbolic natural-number expression in canonical normal form.
///
/// Nats are immutable and cheap to clone (constants are stored inline,
/// everything else is shared behind an [`Arc`]).
///
/// ```
/// use elevate_rise::nat::Nat;
///
/// let n = Nat::named("n");
/// let one = Nat::cst(1);
/// assert_eq!(&one + &(&n - &one), n);
/// assert_eq!(&(&n * &Nat::cst(32)) / &Nat::cst(32), n);
/// assert_eq!(&(&n / &Nat::cst(4)) * &Nat::cst(4), n);
/// assert_eq!((&n + &Nat::cst(2)).to_string(), "n + 2");
/// assert_eq!((&(&n * &Nat::cst(3)) / &Nat::cst(4)).to_string(), "3*n/4");
/// assert_eq!(Nat::cst(2).pow(&Nat::cst(3)).as_const(), Some(8));
/// // Undefined arithmetic gives an undefined nat, which says why.
/// let bad = &n / &Nat::ZERO;
/// assert_eq!(bad.undefined().unwrap().to_string(), "division by zero in n / 0");
/// ```
#[derive(Clone)]
pub struct Nat(pub(super) Repr);

// Atoms nest nats as deeply as the text does (`n / (m + n / (m + ...))`), so
// comparing, hashing and dropping recurse through `guard`, which continues on
// a fresh stack segment when the stack runs low. Constants need no guard.

impl PartialEq for Nat {
    fn eq(&self, other: &Nat) -> bool {
        match (&self.0, &other.0) {
            (Repr::Const(a), Repr::Const(b)) => a == b,
            (a, b) => guard(|| a == b),
        }
    }
}

impl Eq for Nat {}

impl Hash for Nat {
    fn hash<H: Hasher>(&self, state: &mut H) {
        guard(|| self.0.hash(state));
    }
}

impl PartialOrd for Nat {
    fn partial_cmp(&self, other: &Nat) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Nat {
    fn cmp(&self, other: &Nat) -> Ordering {
        match (&self.0, &other.0) {
            (Repr::Const(a), Repr::Const(b)) => a.cmp(b),
            (a, b) => guard(|| a.cmp(b)),
        }
    }
}

impl Drop for Nat {
    fn drop(&mut self) {
        if !matches!(self.0, Repr::Const(_)) {
            let repr = std::mem::replace(&mut self.0, Repr::Const(Ratio::ZERO));
            guard(move || drop(repr));
        }
    }
}

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Repr {
    /// A constant (possibly a fraction); the only representation of a
    /// constant value.
    Const(Ratio),
    /// A polynomial with at least one non-constant term. Terms are strictly
    /// sorted by monomial and have non-zero coefficients.
    Poly(Arc<[Term]>),
    /// The result of undefined arithmetic (division by zero, overflow);
    /// absorbs every operation.
    Undefined(Arc<Undefined>),
}

/// `coef * mono`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct Term {
    pub(super) mono: Mono,
    pub(super) coef: Ratio,
}

/// A product of atoms with positive exponents, strictly sorted by atom. The
/// empty product is the monomial `1`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub(super) struct Mono(pub(super) Vec<(Atom, u32)>);

/// An indivisible factor of a monomial. The operands of `Div`, `Mod` and
/// `Pow` are normalized, defined, and the operation could not be simplified.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Atom {
    Var(NatVar),
    Div(Nat, Nat),
    Mod(Nat, Nat),
    Pow(Nat, Nat),
}

impl Mono {
    pub(super) fn is_one(&self) -> bool {
        self.0.is_empty()
    }

    fn degree(&self) -> u64 {
        self.0.iter().map(|(_, e)| u64::from(*e)).sum()
    }

    pub(super) fn mul(&self, other: &Mono) -> Res<Mono> {
        if self.is_one() {
            return Ok(other.clone());
        }
        if other.is_one() {
            return Ok(self.clone());
        }
        let (a, b) = (&self.0, &other.0);
        let mut out = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        loop {
            match (a.get(i), b.get(j)) {
                (Some((x, e)), Some((y, d))) => match x.cmp(y) {
                    Ordering::Less => {
                        out.push((x.clone(), *e));
                        i += 1;
                    }
                    Ordering::Greater => {
                        out.push((y.clone(), *d));
                        j += 1;
                    }
                    Ordering::Equal => {
                        out.push((x.clone(), checked(e.checked_add(*d))?));
                        i += 1;
                        j += 1;
                    }
                },
                (Some(_), None) => {
                    out.extend(a.iter().skip(i).cloned());
                    break;
                }
                (None, Some(_)) => {
                    out.extend(b.iter().skip(j).cloned());
                    break;
                }
                (None, None) => break,
            }
        }
        Ok(Mono(out))
    }

    /// `self / divisor` if `divisor` divides `self`.
    pub(super) fn div(&self, divisor: &Mono) -> Option<Mono> {
        let mut out = Vec::with_capacity(self.0.len());
        let mut j = 0;
        for (atom, e) in &self.0 {
            match divisor.0.get(j) {
                Some((d, de)) if d == atom => {
                    if de > e {
                        return None;
                    }
                    if e > de {
                        out.push((atom.clone(), e - de));
                    }
                    j += 1;
                }
                // The divisor has an atom that `self` lacks.
                Some((d, _)) if d < atom => return None,
                _ => out.push((atom.clone(), *e)),
            }
        }
        (j == divisor.0.len()).then_some(Mono(out))
    }

    pub(super) fn pow(&self, e: u32) -> Res<Mono> {
        self.0
            .iter()
            .map(|(atom, x)| Ok((atom.clone(), checked(x.checked_mul(e))?)))
            .collect::<Res<Vec<_>>>()
            .map(Mono)
    }
}

/// Graded lexicographic monomial order (total degree first, then the exponent
/// of the smallest atom, ...). It is compatible with multiplication, which
/// exact polynomial division relies on, and gives a readable display order.
pub(super) fn graded_cmp(a: &Mono, b: &Mono) -> Ordering {
    a.degree().cmp(&b.degree()).then_with(|| {
        let (mut i, mut j) = (0, 0);
        loop {
            match (a.0.get(i), b.0.get(j)) {
                (Some((x, e)), Some((y, d))) => match x.cmp(y) {
                    Ordering::Equal if e == d => {
                        i += 1;
                        j += 1;
                    }
                    Ordering::Equal => return e.cmp(d),
                    Ordering::Less => return Ordering::Greater,
                    Ordering::Greater => return Ordering::Less,
                },
                (Some(_), None) => return Ordering::Greater,
                (None, Some(_)) => return Ordering::Less,
                (None, None) => return Ordering::Equal,
            }
        }
    })
}

impl Nat {
    /// The constant `0`.
    pub const ZERO: Nat = Nat(Repr::Const(Ratio::ZERO));
    /// The constant `1`.
    pub const ONE: Nat = Nat(Repr::Const(Ratio::ONE));

    /// The constant `value`.
    pub fn cst(value: i64) -> Nat {
        Nat(Repr::Const(Ratio::int(value)))
    }

    pub(super) fn from_ratio(value: Ratio) -> Nat {
        Nat(Repr::Const(value))
    }

    /// The variable `v`.
    pub fn var(v: NatVar) -> Nat {
        Nat::from_atom(Atom::Var(v))
    }

    /// The named (rigid) variable `name`.
    pub fn named(name: &str) -> Nat {
        Nat::var(NatVar::Named(name.into()))
    }

    /// The inference unknown `?k`.
    pub fn unknown(k: u32) -> Nat {
        Nat::var(NatVar::Unknown(k))
    }

    pub(super) fn from_atom(atom: Atom) -> Nat {
        let term = Term {
            mono: Mono(vec![(atom, 1)]),
            coef: Ratio::ONE,
        };
        Nat(Repr::Poly(Arc::from(vec![term])))
    }

    /// Builds a nat from terms that are strictly sorted by monomial and have
    /// non-zero coefficients.
    pub(super) fn from_sorted(terms: Vec<Term>) -> Nat {
        match terms.as_slice() {
            [] => Nat::ZERO,
            [t] if t.mono.is_one() => Nat::from_ratio(t.coef),
            _ => Nat(Repr::Poly(terms.into())),
        }
    }

    /// Builds a nat from arbitrary terms, combining like terms.
    pub(super) fn from_terms(mut terms: Vec<Term>) -> Res<Nat> {
        terms.sort_by(|a, b| a.mono.cmp(&b.mono));
        let mut out: Vec<Term> = Vec::with_capacity(terms.len());
        for t in terms {
            match out.last_mut() {
                Some(last) if last.mono == t.mono => last.coef = last.coef.add(t.coef)?,
                _ => out.push(t),
            }
        }
        out.retain(|t| !t.coef.is_zero());
        Ok(Nat::from_sorted(out))
    }

    /// The terms of a defined nat (none for an undefined one).
    pub(super) fn terms(&self) -> Cow<'_, [Term]> {
        match &self.0 {
            Repr::Const(c) if c.is_zero() => Cow::Borrowed(&[]),
            Repr::Undefined(_) => Cow::Borrowed(&[]),
            Repr::Const(c) => Cow::Owned(vec![Term {
                mono: Mono::default(),
                coef: *c,
            }]),
            Repr::Poly(ts) => Cow::Borrowed(ts),
        }
    }

    /// The terms of a polynomial; empty for constants.
    pub(super) fn poly_terms(&self) -> &[Term] {
        match &self.0 {
            Repr::Poly(ts) => ts,
            _ => &[],
        }
    }

    /// Every atom occurring at the top level of the polynomial.
    fn atoms(&self) -> impl Iterator<Item = &Atom> + '_ {
        self.poly_terms()
            .iter()
            .flat_map(|t| t.mono.0.iter().map(|(a, _)| a))
    }

    /// The value of a constant nat that is an integer; `None` for a fraction
    /// such as `7/2`, for non-constants and for undefined nats.
    pub fn as_const(&self) -> Option<i64> {
        match self.0 {
            Repr::Const(c) => c.to_integer(),
            _ => None,
        }
    }

    /// Whether the nat is a constant, an integer or a fraction such as `7/2`.
    pub fn is_const(&self) -> bool {
        matches!(self.0, Repr::Const(_))
    }

    /// Whether the nat is the constant `0`.
    pub fn is_zero(&self) -> bool {
        matches!(&self.0, Repr::Const(c) if c.is_zero())
    }

    /// Whether every coefficient of the normal form is an integer. Such a nat
    /// is an integer wherever it is defined; the converse fails for
    /// `n*n/2 + n/2`, which is always an integer, too. `false` for an
    /// undefined nat.
    pub fn is_integral(&self) -> bool {
        match &self.0 {
            Repr::Const(c) => c.is_integer(),
            Repr::Poly(terms) => terms.iter().all(|t| t.coef.is_integer()),
            Repr::Undefined(_) => false,
        }
    }

    /// Every variable occurring in the nat (including inside divisions,
    /// remainders and powers), sorted and deduplicated.
    pub fn vars(&self) -> Vec<NatVar> {
        let mut set = BTreeSet::new();
        self.collect_vars(&mut set);
        set.into_iter().collect()
    }

    fn collect_vars(&self, out: &mut BTreeSet<NatVar>) {
        for atom in self.atoms() {
            match atom {
                Atom::Var(v) => {
                    out.insert(v.clone());
                }
                Atom::Div(a, b) | Atom::Mod(a, b) | Atom::Pow(a, b) => guard(|| {
                    a.collect_vars(out);
                    b.collect_vars(out);
                }),
            }
        }
    }

    /// The ids of all unknowns occurring in the nat, sorted and deduplicated.
    pub fn unknowns(&self) -> Vec<u32> {
        self.vars()
            .into_iter()
            .filter_map(|v| match v {
                NatVar::Unknown(k) => Some(k),
                NatVar::Named(_) => None,
            })
            .collect()
    }

    /// Whether an inference unknown occurs anywhere in the nat.
    pub fn contains_unknown(&self) -> bool {
        self.atoms().any(Atom::contains_unknown)
    }

    /// Whether the variable `v` occurs anywhere in the nat.
    pub fn mentions(&self, v: &NatVar) -> bool {
        self.atoms().any(|a| a.mentions(v))
    }

    /// The coefficient of the greatest term in display order.
    pub(super) fn leading_coef(&self) -> Ratio {
        match &self.0 {
            Repr::Const(c) => *c,
            Repr::Undefined(_) => Ratio::ZERO,
            Repr::Poly(terms) => terms
                .iter()
                .max_by(|x, y| graded_cmp(&x.mono, &y.mono))
                .map_or(Ratio::ZERO, |t| t.coef),
        }
    }
}

impl Atom {
    fn contains_unknown(&self) -> bool {
        match self {
            Atom::Var(v) => matches!(v, NatVar::Unknown(_)),
            Atom::Div(a, b) | Atom::Mod(a, b) | Atom::Pow(a, b) => {
                guard(|| a.contains_unknown() || b.contains_unknown())
            }
        }
    }

    pub(super) fn mentions(&self, var: &NatVar) -> bool {
        match self {
            Atom::Var(v) => v == var,
            Atom::Div(a, b) | Atom::Mod(a, b) | Atom::Pow(a, b) => {
                guard(|| a.mentions(var) || b.mentions(var))
            }
        }
    }
}

/// A binary operation on nats, as written in RISE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NatOp {
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `a * b`
    Mul,
    /// `a / b` (exact division)
    Div,
    /// `a % b` (Euclidean remainder)
    Rem,
    /// `a ^ b`
    Pow,
}

/// Why a nat has no value (printed in `undefined.rs`). Every variant names the
/// offending operation, and its text parses back to the same undefined nat.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Undefined {
    /// `a / 0`, with the dividend `a`.
    DivisionByZero(Nat),
    /// `a % 0`, with the dividend `a`.
    RemainderByZero(Nat),
    /// `0 ^ e` for a negative constant `e` (a division by zero).
    ZeroToNegativePower(Nat),
    /// `lhs op rhs` has a coefficient or constant that does not fit in 64 bits.
    Overflow {
        /// The left operand.
        lhs: Nat,
        /// The operation.
        op: NatOp,
        /// The right operand.
        rhs: Nat,
    },
}
