//! Index expressions: affine sums of loop variables, floor divisions and remainders
//! by constants, simplified with the variables' ranges (`(32*i + j) / 32 = i` when
//! `j < 32`).

use std::collections::{BTreeMap, BTreeSet};

/// A variable: a loop counter, a vector lane, or a position in a kernel's output.
pub(crate) type Var = u32;

/// The atoms of an index expression.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Atom {
    Var(Var),
    Div(Box<Aff>, i64),
    Mod(Box<Aff>, i64),
}

/// `c + Σ coefficient * atom`, with atoms in order and no zero coefficients.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) struct Aff {
    pub(crate) terms: BTreeMap<Atom, i64>,
    pub(crate) c: i64,
}

/// The extents of the variables: `v` ranges over `0..extent(v)`.
pub(crate) trait Extents {
    fn extent(&self, v: Var) -> i64;
}

impl Aff {
    pub(crate) fn cst(c: i64) -> Aff {
        Aff {
            terms: BTreeMap::new(),
            c,
        }
    }

    pub(crate) fn var(v: Var) -> Aff {
        Aff::atom(Atom::Var(v), 1)
    }

    fn atom(a: Atom, k: i64) -> Aff {
        let mut terms = BTreeMap::new();
        if k != 0 {
            terms.insert(a, k);
        }
        Aff { terms, c: 0 }
    }

    /// The variable, if this is exactly one.
    pub(crate) fn as_var(&self) -> Option<Var> {
        match (self.c, self.terms.len()) {
            (0, 1) => match self.terms.iter().next() {
                Some((Atom::Var(v), 1)) => Some(*v),
                _ => None,
            },
            _ => None,
        }
    }

    pub(crate) fn add(&self, other: &Aff) -> Aff {
        let mut out = self.clone();
        out.c += other.c;
        for (a, k) in &other.terms {
            let e = out.terms.entry(a.clone()).or_insert(0);
            *e += k;
            if *e == 0 {
                out.terms.remove(a);
            }
        }
        out
    }

    pub(crate) fn scale(&self, k: i64) -> Aff {
        if k == 0 {
            return Aff::cst(0);
        }
        Aff {
            terms: self.terms.iter().map(|(a, c)| (a.clone(), c * k)).collect(),
            c: self.c * k,
        }
    }

    pub(crate) fn plus(&self, k: i64) -> Aff {
        self.add(&Aff::cst(k))
    }

    /// The smallest and largest values.
    pub(crate) fn range(&self, x: &dyn Extents) -> (i64, i64) {
        let (mut lo, mut hi) = (self.c, self.c);
        for (a, k) in &self.terms {
            let (alo, ahi) = match a {
                Atom::Var(v) => (0, x.extent(*v) - 1),
                Atom::Div(e, d) => {
                    let (l, h) = e.range(x);
                    (l.div_euclid(*d), h.div_euclid(*d))
                }
                Atom::Mod(_, d) => (0, d - 1),
            };
            let (low, high) = if *k >= 0 { (alo, ahi) } else { (ahi, alo) };
            lo = lo.saturating_add(k.saturating_mul(low));
            hi = hi.saturating_add(k.saturating_mul(high));
        }
        (lo, hi)
    }

    /// Splits into the part whose coefficients `d` divides (divided by `d`) and the rest.
    fn split_by(&self, d: i64) -> (Aff, Aff) {
        let mut q = Aff::cst(self.c.div_euclid(d));
        let mut r = Aff::cst(self.c.rem_euclid(d));
        for (a, k) in &self.terms {
            if k % d == 0 {
                q.terms.insert(a.clone(), k / d);
            } else {
                r.terms.insert(a.clone(), *k);
            }
        }
        (q, r)
    }

    /// The atom, if this is exactly one (coefficient 1, no constant).
    fn as_atom(&self) -> Option<&Atom> {
        match (self.c, self.terms.len()) {
            (0, 1) => self
                .terms
                .iter()
                .next()
                .filter(|(_, k)| **k == 1)
                .map(|(a, _)| a),
            _ => None,
        }
    }

    /// `self / d` rounded down.
    pub(crate) fn div(&self, d: i64, x: &dyn Extents) -> Aff {
        if d == 1 {
            return self.clone();
        }
        // Digits of digits, as a tile inside a tile reads them (the indices are never
        // negative): `(e mod (d*b)) / d = (e / d) mod b` and `(e / a) / d = e / (a*d)`.
        match self.as_atom() {
            Some(Atom::Mod(e, m)) if m % d == 0 => return e.div(d, x).rem(m / d, x),
            Some(Atom::Div(e, a)) => {
                if let Some(ad) = a.checked_mul(d) {
                    return e.div(ad, x);
                }
            }
            _ => {}
        }
        let (q, r) = self.split_by(d);
        let (lo, hi) = r.range(x);
        if lo >= 0 && hi < d {
            return q;
        }
        if lo >= 0 && hi < 2 * d && r.terms.is_empty() {
            return q.plus(r.c / d);
        }
        // The rest is kept whole: `(q*d + r) / d = q + r / d`.
        q.add(&Aff::atom(Atom::Div(Box::new(r), d), 1))
    }

    /// `self mod d` (non-negative).
    pub(crate) fn rem(&self, d: i64, x: &dyn Extents) -> Aff {
        if d == 1 {
            return Aff::cst(0);
        }
        // `(e mod (d*b)) mod d = e mod d`.
        if let Some(Atom::Mod(e, m)) = self.as_atom() {
            if m % d == 0 {
                return e.rem(d, x);
            }
        }
        let (_, r) = self.split_by(d);
        let (lo, hi) = r.range(x);
        if lo >= 0 && hi < d {
            return r;
        }
        Aff::atom(Atom::Mod(Box::new(r), d), 1)
    }

    /// `self` with `v` replaced by `e`, simplified again.
    pub(crate) fn subst(&self, v: Var, e: &Aff, x: &dyn Extents) -> Aff {
        if !self.mentions(v) {
            return self.clone();
        }
        let mut out = Aff::cst(self.c);
        for (a, k) in &self.terms {
            let term = match a {
                Atom::Var(w) if *w == v => e.clone(),
                Atom::Var(w) => Aff::var(*w),
                Atom::Div(inner, d) => inner.subst(v, e, x).div(*d, x),
                Atom::Mod(inner, d) => inner.subst(v, e, x).rem(*d, x),
            };
            out = out.add(&term.scale(*k));
        }
        out
    }

    /// The variables it reads, through its divisions.
    pub(crate) fn vars(&self) -> BTreeSet<Var> {
        let mut out = BTreeSet::new();
        let mut pending = vec![self];
        while let Some(a) = pending.pop() {
            for atom in a.terms.keys() {
                match atom {
                    Atom::Var(v) => {
                        out.insert(*v);
                    }
                    Atom::Div(inner, _) | Atom::Mod(inner, _) => pending.push(inner),
                }
            }
        }
        out
    }

    pub(crate) fn mentions(&self, v: Var) -> bool {
        self.terms.keys().any(|a| match a {
            Atom::Var(w) => *w == v,
            Atom::Div(e, _) | Atom::Mod(e, _) => e.mentions(v),
        })
    }

    /// The coefficients of its variables, if it is affine in them (no divisions).
    pub(crate) fn linear(&self) -> Option<Vec<(Var, i64)>> {
        self.terms
            .iter()
            .map(|(a, k)| match a {
                Atom::Var(v) => Some((*v, *k)),
                _ => None,
            })
            .collect()
    }

    /// As a digit of a variable: `(v / a) mod b` gives `(v, a, Some(b))`, `v / a` gives
    /// `(v, a, None)`, `v` gives `(v, 1, None)`.
    pub(crate) fn as_digit(&self) -> Option<(Var, i64, Option<i64>)> {
        if self.c != 0 || self.terms.len() != 1 {
            return None;
        }
        let (a, k) = self.terms.iter().next()?;
        if *k != 1 {
            return None;
        }
        match a {
            Atom::Var(v) => Some((*v, 1, None)),
            Atom::Div(e, d) => match e.as_digit()? {
                (v, 1, None) => Some((v, *d, None)),
                _ => None,
            },
            Atom::Mod(e, m) => match e.as_digit()? {
                (v, d, None) => Some((v, d, Some(*m))),
                _ => None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Variables `0..` with the extents given.
    struct Ranges(Vec<i64>);

    impl Extents for Ranges {
        fn extent(&self, v: Var) -> i64 {
            self.0[v as usize]
        }
    }

    /// The value of `e` where each variable `v` is `values[v]`.
    fn value(e: &Aff, values: &[i64]) -> i64 {
        e.terms.iter().fold(e.c, |sum, (a, k)| {
            let atom = match a {
                Atom::Var(v) => values[*v as usize],
                Atom::Div(inner, d) => value(inner, values).div_euclid(*d),
                Atom::Mod(inner, d) => value(inner, values).rem_euclid(*d),
            };
            sum + k * atom
        })
    }

    /// The digits of a tile inside a tile, `(p mod 24) / 8` and `(p mod 24) mod 8` of a
    /// position `p < 96`, are digits of `p` itself, `(p / 8) mod 3` and `p mod 8`, and
    /// `(p / 4) / 2` is `p / 8`: what `as_digit` reads as loops of the nest.
    #[test]
    fn digits_of_digits_are_digits() {
        let x = Ranges(vec![96, 5]);
        let p = Aff::var(0);
        let middle = p.rem(24, &x).div(8, &x);
        assert_eq!(middle.as_digit(), Some((0, 8, Some(3))));
        let inner = p.rem(24, &x).rem(8, &x);
        assert_eq!(inner.as_digit(), Some((0, 1, Some(8))));
        let outer = p.div(4, &x).div(2, &x);
        assert_eq!(outer.as_digit(), Some((0, 8, None)));
        // The simplified forms have the values of the expressions, for every p (and an
        // offset by another variable, which keeps the general forms).
        let shifted = p.add(&Aff::var(1).scale(7));
        for (a, b) in (0..96).flat_map(|a| (0..5).map(move |b| (a, b))) {
            let v = [a, b];
            let q = a + 7 * b;
            assert_eq!(value(&middle, &v), (a % 24) / 8);
            assert_eq!(value(&inner, &v), a % 8);
            assert_eq!(value(&outer, &v), a / 8);
            let e = shifted.rem(24, &x);
            assert_eq!(value(&e.div(8, &x), &v), (q % 24) / 8, "{e:?}");
            assert_eq!(value(&e.rem(6, &x), &v), q % 6);
            assert_eq!(value(&e.rem(5, &x).div(2, &x), &v), (q % 24 % 5) / 2);
            assert_eq!(value(&shifted.div(3, &x).div(2, &x), &v), q / 6);
        }
    }
}
