//! Index expressions: affine sums of loop variables, floor divisions and remainders
//! by constants, simplified with the variables' ranges (`(32*i + j) / 32 = i` when
//! `j < 32`).

use smallvec::SmallVec;
use std::collections::BTreeSet;
use std::rc::Rc;

/// A variable: a loop counter, a vector lane, or a position in a kernel's output.
pub type Var = u32;

/// The atoms of an index expression.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Atom {
    /// A loop variable.
    Var(Var),
    /// `⌊a / k⌋`
    Div(Rc<Aff>, i64),
    /// `a mod k`
    Mod(Rc<Aff>, i64),
}

/// `c + Σ coefficient * atom`, with atoms in order and no zero coefficients.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Aff {
    /// Each atom's coefficient.
    pub terms: Terms,
    /// The constant.
    pub c: i64,
}

/// An index's atoms and their coefficients, in the atoms' order, each atom once.
///
/// A sorted vector, not a map: an index has a few atoms, and the evaluator makes,
/// copies and drops indices by the thousand per program, where a map's nodes cost an
/// allocation each. Compares as the map of atoms to coefficients would.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Terms(SmallVec<[(Atom, i64); 2]>);

impl Terms {
    fn find(&self, a: &Atom) -> Result<usize, usize> {
        self.0.binary_search_by(|(b, _)| b.cmp(a))
    }

    /// The coefficient of `a`.
    pub fn get(&self, a: &Atom) -> Option<&i64> {
        self.find(a).ok().map(|i| &self.0[i].1)
    }

    /// Sets the coefficient of `a` (its old one, if any).
    pub fn insert(&mut self, a: Atom, k: i64) -> Option<i64> {
        match self.find(&a) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, k)),
            Err(i) => {
                self.0.insert(i, (a, k));
                None
            }
        }
    }

    /// Removes `a` (its coefficient, if it had one).
    pub fn remove(&mut self, a: &Atom) -> Option<i64> {
        self.find(a).ok().map(|i| self.0.remove(i).1)
    }

    /// The atoms and their coefficients, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&Atom, &i64)> {
        self.0.iter().map(|(a, k)| (a, k))
    }

    /// The atoms, in order.
    pub fn keys(&self) -> impl Iterator<Item = &Atom> {
        self.0.iter().map(|(a, _)| a)
    }

    /// The coefficients, in the atoms' order.
    pub fn values(&self) -> impl Iterator<Item = &i64> {
        self.0.iter().map(|(_, k)| k)
    }

    /// How many atoms.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<(Atom, i64)> for Terms {
    /// The sum of the pairs: atoms in order, each once, none with a zero coefficient.
    fn from_iter<I: IntoIterator<Item = (Atom, i64)>>(pairs: I) -> Terms {
        let mut pairs: SmallVec<[(Atom, i64); 2]> = pairs.into_iter().collect();
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut terms: SmallVec<[(Atom, i64); 2]> = SmallVec::with_capacity(pairs.len());
        for (a, k) in pairs {
            match terms.last_mut() {
                Some((last, sum)) if *last == a => *sum += k,
                _ => terms.push((a, k)),
            }
        }
        terms.retain(|(_, k)| *k != 0);
        Terms(terms)
    }
}

impl<const N: usize> From<[(Atom, i64); N]> for Terms {
    fn from(pairs: [(Atom, i64); N]) -> Terms {
        pairs.into_iter().collect()
    }
}

impl<'a> IntoIterator for &'a Terms {
    type Item = (&'a Atom, &'a i64);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (Atom, i64)>,
        fn(&'a (Atom, i64)) -> (&'a Atom, &'a i64),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(a, k)| (a, k))
    }
}

/// The extents of the variables: `v` ranges over `0..extent(v)`.
pub trait Extents {
    /// The extent of `v`.
    fn extent(&self, v: Var) -> i64;
}

impl Aff {
    /// The constant `c`.
    pub fn cst(c: i64) -> Aff {
        Aff {
            terms: Terms::default(),
            c,
        }
    }

    /// The variable `v`.
    pub fn var(v: Var) -> Aff {
        Aff::atom(Atom::Var(v), 1)
    }

    fn atom(a: Atom, k: i64) -> Aff {
        let mut terms = Terms::default();
        if k != 0 {
            terms.0.push((a, k));
        }
        Aff { terms, c: 0 }
    }

    /// The variable, if this is exactly one.
    pub fn as_var(&self) -> Option<Var> {
        match (self.c, self.terms.len()) {
            (0, 1) => match self.terms.iter().next() {
                Some((Atom::Var(v), 1)) => Some(*v),
                _ => None,
            },
            _ => None,
        }
    }

    /// `self + other`
    pub fn add(&self, other: &Aff) -> Aff {
        // A merge of the two sorted runs, dropping the atoms that cancel.
        let (a, b) = (&self.terms.0, &other.terms.0);
        let mut terms = SmallVec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].0.cmp(&b[j].0) {
                std::cmp::Ordering::Less => {
                    terms.push(a[i].clone());
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    terms.push(b[j].clone());
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    let k = a[i].1 + b[j].1;
                    if k != 0 {
                        terms.push((a[i].0.clone(), k));
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        terms.extend(a[i..].iter().cloned());
        terms.extend(b[j..].iter().cloned());
        Aff {
            terms: Terms(terms),
            c: self.c + other.c,
        }
    }

    /// `k * self`
    pub fn scale(&self, k: i64) -> Aff {
        if k == 0 {
            return Aff::cst(0);
        }
        Aff {
            terms: Terms(self.terms.iter().map(|(a, c)| (a.clone(), c * k)).collect()),
            c: self.c * k,
        }
    }

    /// `self + k`
    pub fn plus(&self, k: i64) -> Aff {
        Aff {
            terms: self.terms.clone(),
            c: self.c + k,
        }
    }

    /// The smallest and largest values.
    pub fn range(&self, x: &dyn Extents) -> (i64, i64) {
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
            // In order, as the atoms come.
            if k % d == 0 {
                q.terms.0.push((a.clone(), k / d));
            } else {
                r.terms.0.push((a.clone(), *k));
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
    pub fn div(&self, d: i64, x: &dyn Extents) -> Aff {
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
        q.add(&Aff::atom(Atom::Div(Rc::new(r), d), 1))
    }

    /// `self mod d` (non-negative).
    pub fn rem(&self, d: i64, x: &dyn Extents) -> Aff {
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
        Aff::atom(Atom::Mod(Rc::new(r), d), 1)
    }

    /// `self` with `v` replaced by `e`, simplified again.
    pub fn subst(&self, v: Var, e: &Aff, x: &dyn Extents) -> Aff {
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

    /// It with digits merged back into the number they are digits of:
    /// `k*(e mod a) + k*a*((e / a) mod b)` is `k*(e mod a*b)`, and
    /// `k*(e mod a) + k*a*(e / a)` is `k*e` (a position read as vectors of `a` lanes
    /// is the position).
    pub fn merged_digits(&self) -> Aff {
        let mut out = self.clone();
        'merge: loop {
            for (low, k) in &out.terms {
                let Atom::Mod(e, a) = low else { continue };
                let Some(ka) = k.checked_mul(*a) else {
                    continue;
                };
                let quotient = e.div_atom(*a);
                for (high, kh) in &out.terms {
                    if *kh != ka {
                        continue;
                    }
                    let merged = match high {
                        Atom::Mod(q, b) if **q == quotient => match a.checked_mul(*b) {
                            Some(ab) => Aff::atom(Atom::Mod(e.clone(), ab), *k),
                            None => continue,
                        },
                        Atom::Div(q, d) if **q == **e && d == a => e.scale(*k),
                        _ => continue,
                    };
                    let (low, high) = (low.clone(), high.clone());
                    out.terms.remove(&low);
                    out.terms.remove(&high);
                    out = out.add(&merged);
                    continue 'merge;
                }
            }
            return out;
        }
    }

    /// `e / a` as one atom (as [`Aff::div`] writes a quotient it cannot simplify).
    fn div_atom(&self, a: i64) -> Aff {
        Aff::atom(Atom::Div(Rc::new(self.clone()), a), 1)
    }

    /// The variables it reads, through its divisions.
    pub fn vars(&self) -> BTreeSet<Var> {
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

    /// Whether `v` occurs in it.
    pub fn mentions(&self, v: Var) -> bool {
        self.terms.keys().any(|a| match a {
            Atom::Var(w) => *w == v,
            Atom::Div(e, _) | Atom::Mod(e, _) => e.mentions(v),
        })
    }

    /// The coefficients of its variables, if it is affine in them (no divisions).
    pub fn linear(&self) -> Option<Vec<(Var, i64)>> {
        self.terms
            .iter()
            .map(|(a, k)| match a {
                Atom::Var(v) => Some((*v, *k)),
                _ => None,
            })
            .collect()
    }

    /// The index with each `c * a * (l / a) + c * (l mod a)` put back together as
    /// `c * l` (an array `split` then `join`ed, read at one position).
    pub fn recombined(&self) -> Aff {
        let mut out = self.clone();
        loop {
            let pair = out.terms.iter().find_map(|(atom, k)| match atom {
                Atom::Mod(l, a) => {
                    let div = Atom::Div(l.clone(), *a);
                    let whole = k.checked_mul(*a)?;
                    (out.terms.get(&div) == Some(&whole))
                        .then(|| (atom.clone(), div, (**l).clone(), *k))
                }
                _ => None,
            });
            let Some((rem, div, l, k)) = pair else {
                return out;
            };
            out.terms.remove(&rem);
            out.terms.remove(&div);
            out = out.add(&l.scale(k));
        }
    }

    /// As a digit of an affine index `l`: `(l / a) mod b` gives `(l, a, Some(b))`,
    /// `l / a` gives `(l, a, None)`, `l mod b` gives `(l, 1, Some(b))`.
    fn as_digit_of_linear(&self) -> Option<(Aff, i64, Option<i64>)> {
        if self.c != 0 || self.terms.len() != 1 {
            return None;
        }
        let (atom, 1) = self.terms.iter().next()? else {
            return None;
        };
        match atom {
            Atom::Div(l, d) if l.linear().is_some() => Some(((**l).clone(), *d, None)),
            Atom::Mod(l, m) if l.linear().is_some() => Some(((**l).clone(), 1, Some(*m))),
            Atom::Mod(inner, m) => match inner.as_digit_of_linear()? {
                (l, d, None) => Some((l, d, Some(*m))),
                _ => None,
            },
            Atom::Var(_) | Atom::Div(..) => None,
        }
    }

    /// As a digit of a variable: `(v / a) mod b` gives `(v, a, Some(b))`, `v / a` gives
    /// `(v, a, None)`, `v` gives `(v, 1, None)`.
    pub fn as_digit(&self) -> Option<(Var, i64, Option<i64>)> {
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

/// `idx` into a buffer of `dims`, each run of indices that are the digits of one
/// affine index `l` over those dimensions (`l / 2`, `l mod 2` over dimensions of 4
/// and 2: a `join`ed buffer read at a sum of loops, as a window over it reads) read
/// instead as zeros then `l`: the same element in the buffer's row-major order, and
/// affine, as a strided view reads it. Only where `l`'s coefficients are positive
/// (as a strided view's strides are) and it stays within the run's elements; `None`
/// where no index changes.
pub fn flattened_digits(idx: &[Aff], dims: &[i64], x: &dyn Extents) -> Option<Vec<Aff>> {
    let mut out = idx.to_vec();
    let mut changed = false;
    let mut k = 0;
    while k < idx.len() {
        let run = idx[k].as_digit_of_linear().and_then(|(l, a, b)| {
            // The run's last index, where the elements of those after `k` make `a`.
            let (mut last, mut below) = (k, 1i64);
            while below < a && last + 1 < idx.len() {
                last += 1;
                below = below.saturating_mul(dims[last]);
            }
            let total = below.saturating_mul(dims[k]);
            let (lo, hi) = l.range(x);
            // (The zeros make the operand a strided view, which needs them.)
            let positive = l.terms.values().all(|c| *c > 0);
            let first = b.is_none_or(|b| b == dims[k]);
            let digits = (k + 1..=last).all(|j| {
                let a_j = dims[j + 1..=last].iter().product::<i64>();
                idx[j].as_digit_of_linear() == Some((l.clone(), a_j, Some(dims[j])))
            });
            (below == a && last > k && first && digits && positive && lo >= 0 && hi < total)
                .then_some((l, last))
        });
        match run {
            Some((l, last)) => {
                for z in &mut out[k..last] {
                    *z = Aff::cst(0);
                }
                out[last] = l;
                changed = true;
                k = last + 1;
            }
            None => k += 1,
        }
    }
    changed.then_some(out)
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

    /// `3 * (p / 3) + p mod 3` is `p` again (a `split` then `join` read at `p`), and
    /// scaled pairs too; a pair of different divisors stays.
    #[test]
    fn digits_put_back_together_are_the_index() {
        let x = Ranges(vec![12, 4]);
        let p = Aff::var(0);
        let split_joined = p.div(3, &x).scale(3).add(&p.rem(3, &x));
        assert_eq!(split_joined.recombined(), p);
        let scaled = split_joined.scale(2).add(&Aff::var(1)).plus(5);
        assert_eq!(scaled.recombined(), p.scale(2).add(&Aff::var(1)).plus(5));
        let other = p.div(3, &x).scale(3).add(&p.rem(4, &x));
        assert_eq!(other.recombined(), other);
    }

    /// A window over a `join`ed buffer of 4 x 2 rows reads row `(i + j) / 2`, half
    /// `(i + j) mod 2`: as zeros then `i + j` it reads the same element, affinely.
    /// Indices that are no such digits, or could leave the buffer, stay.
    #[test]
    fn digits_of_a_sum_over_whole_dimensions_read_flat() {
        let x = Ranges(vec![7, 2, 4]);
        let (i, j, k) = (Aff::var(0), Aff::var(1), Aff::var(2));
        let l = i.add(&j);
        let idx = [l.div(2, &x), l.rem(2, &x), k.clone()];
        let flat = flattened_digits(&idx, &[4, 2, 4], &x).unwrap();
        assert_eq!(flat, [Aff::cst(0), l.clone(), k.clone()]);
        for (iv, jv, kv) in [(0, 0, 0), (3, 1, 2), (6, 1, 3), (5, 0, 1)] {
            let at = |e: &Aff| value(e, &[iv, jv, kv]);
            let row_major = |ix: &[Aff]| (at(&ix[0]) * 2 + at(&ix[1])) * 4 + at(&ix[2]);
            assert_eq!(row_major(&idx), row_major(&flat));
        }
        assert_eq!(
            flattened_digits(&[i.clone(), j.clone(), k.clone()], &[7, 2, 4], &x),
            None
        );
        // 8 rows of 2 would be read past 4 x 2.
        let x = Ranges(vec![8, 2, 4]);
        let idx = [l.div(2, &x), l.rem(2, &x), k];
        assert_eq!(flattened_digits(&idx, &[4, 2, 4], &x), None);
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
