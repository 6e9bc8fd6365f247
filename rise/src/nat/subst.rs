//! Substituting nats for variables, and renormalizing.

use elevate_core::stack::guard;

use super::ratio::Ratio;
use super::repr::{Atom, Mono, Nat, NatVar, Repr, Term};
use super::repr::{NatOp, Undefined};

/// What a substitution replaces a variable by, if anything.
type Replace<'a> = &'a dyn Fn(&NatVar) -> Option<Nat>;

impl Nat {
    /// Replaces every variable `v` for which `f(v)` is `Some(value)` by
    /// `value`, and renormalizes. Parts without replaced variables are shared.
    /// The result is undefined if renormalizing is (a division by a value
    /// that becomes zero, an overflow, or an undefined value).
    ///
    /// ```
    /// use elevate_rise::nat::{Nat, NatVar};
    /// let (n, m) = (Nat::named("n"), Nat::named("m"));
    /// let at = |value: i64| move |v: &NatVar| (v.to_string() == "m").then(|| Nat::cst(value));
    /// assert_eq!((&n / &m).substitute(&at(2)).to_string(), "n/2");
    /// assert!((&n / &m).substitute(&at(0)).undefined().is_some());
    /// ```
    pub fn substitute(&self, f: Replace<'_>) -> Nat {
        match self.subst_inner(f) {
            Ok(Some(n)) => n,
            Ok(None) => self.clone(),
            Err(why) => Nat::undefined_because(why),
        }
    }

    /// `Ok(None)` if nothing was replaced.
    fn subst_inner(&self, f: Replace<'_>) -> Result<Option<Nat>, Undefined> {
        // An undefined nat stays undefined, for the reason it already has.
        let Repr::Poly(terms) = &self.0 else {
            return Ok(None);
        };
        let mut kept = Vec::new();
        let mut rebuilt = Nat::ZERO;
        let mut changed = false;
        for t in terms.iter() {
            let mut replaced = Vec::new();
            for (i, (atom, _)) in t.mono.0.iter().enumerate() {
                if let Some(n) = guard(|| atom.subst(f))? {
                    replaced.push((i, n));
                }
            }
            if replaced.is_empty() {
                kept.push(t.clone());
                continue;
            }
            changed = true;
            let mut value = Nat::from_ratio(t.coef);
            let mut untouched = Vec::new();
            let mut replaced = replaced.into_iter().peekable();
            for (i, (atom, e)) in t.mono.0.iter().enumerate() {
                match replaced.next_if(|(j, _)| *j == i) {
                    Some((_, n)) => {
                        let power = n.checked(NatOp::Pow, &Nat::cst(i64::from(*e)))?;
                        value = value.checked(NatOp::Mul, &power)?;
                    }
                    None => untouched.push((atom.clone(), *e)),
                }
            }
            let untouched = Nat::from_sorted(vec![Term {
                mono: Mono(untouched),
                coef: Ratio::ONE,
            }]);
            let term = value.checked(NatOp::Mul, &untouched)?;
            rebuilt = rebuilt.checked(NatOp::Add, &term)?;
        }
        if !changed {
            return Ok(None);
        }
        Nat::from_sorted(kept)
            .checked(NatOp::Add, &rebuilt)
            .map(Some)
    }
}

impl Atom {
    /// `Ok(None)` if nothing was replaced.
    fn subst(&self, f: Replace<'_>) -> Result<Option<Nat>, Undefined> {
        let (a, b, op) = match self {
            Atom::Var(v) => return f(v).map(|n| n.check_defined().map(|()| n)).transpose(),
            Atom::Div(a, b) => (a, b, NatOp::Div),
            Atom::Mod(a, b) => (a, b, NatOp::Rem),
            Atom::Pow(a, b) => (a, b, NatOp::Pow),
        };
        match (a.subst_inner(f)?, b.subst_inner(f)?) {
            (None, None) => Ok(None),
            (na, nb) => {
                let (a, b) = (na.as_ref().unwrap_or(a), nb.as_ref().unwrap_or(b));
                a.checked(op, b).map(Some)
            }
        }
    }
}
