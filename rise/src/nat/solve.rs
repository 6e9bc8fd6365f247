//! Solving equations between nats for their inference unknowns.

use std::collections::BTreeMap;
use std::fmt;

use super::arith::content;
use super::ratio::Ratio;
use super::repr::{Atom, Mono, Nat, NatVar, Term};
use super::{Overflow, Res};

/// An equation `lhs = rhs` between nats.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NatEquation {
    /// The left-hand side.
    pub lhs: Nat,
    /// The right-hand side.
    pub rhs: Nat,
}

impl NatEquation {
    /// The equation `lhs = rhs`.
    pub fn new(lhs: Nat, rhs: Nat) -> NatEquation {
        NatEquation { lhs, rhs }
    }
}

impl fmt::Display for NatEquation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {}", self.lhs, self.rhs)
    }
}

/// Values of solved unknowns, by unknown id. No value mentions a solved
/// unknown, but a value may mention unknowns without a value (see [`solve`]).
pub type Solution = BTreeMap<u32, Nat>;

/// Why [`solve`] failed. The sides reported are those of the equation after
/// substituting the unknowns solved so far.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SolveError {
    /// Equation `index` is false whatever the unknowns are, e.g. `5 = 6`, or
    /// `3 * ?1 = 1000` (no integer solution), or `?1 + 5 = 2` (no natural
    /// solution), or `n = m` for distinct named variables; or it is undefined
    /// once the unknowns solved so far are substituted (`n / ?1 = 2` where
    /// `?1 = 0`).
    #[error("{lhs} = {rhs} has no solution: {reason}")]
    False {
        /// Position of the equation in the input.
        index: usize,
        /// Its left-hand side.
        lhs: Nat,
        /// Its right-hand side.
        rhs: Nat,
        /// Why it has no solution.
        reason: String,
    },
    /// Equation `index` (and maybe others) could not be solved: the unknowns
    /// appear non-linearly, e.g. `?1 * ?2 = 1024`, or are underdetermined.
    #[error("cannot solve {lhs} = {rhs}: its unknowns occur non-linearly or are underdetermined")]
    Unsolvable {
        /// Position of the first unsolved equation in the input.
        index: usize,
        /// Its left-hand side.
        lhs: Nat,
        /// Its right-hand side.
        rhs: Nat,
    },
}

/// What examining one equation found.
enum Finding {
    /// The equation holds.
    Holds,
    /// The equation determines the unknown.
    Bind(u32, Nat),
    /// Nothing can be done with the equation for now.
    Stuck,
}

/// Solves `equations` for their unknowns.
///
/// Repeatedly substitutes the known solutions, checks equations without
/// unknowns, and solves equations in which exactly one unknown `x` occurs
/// linearly (`a*x + b = 0`, `x` not inside a division, remainder or power).
/// When that makes no more progress, an equation in which some unknown has
/// coefficient `1` or `-1` binds the highest-numbered such unknown to the
/// rest of the equation (so `?1 = ?2` gives `?2 := ?1`, leaving `?1` free);
/// then solving resumes. Values may thus mention unknowns without a value.
/// Unknowns that occur in no equation are absent from the solution.
///
/// Linear equations are solved exactly over the rationals. A symbolic
/// solution with fractions such as `?1 := n/32` (from `?1 * 32 = n`) is
/// accepted, assuming divisibility as RISE does, unless it can never be an
/// integer (`2 * ?1 = 2*n + 1` gives `n + 1/2`). That, a constant solution
/// that is not an integer (`3 * ?1 = 1000`), a solution that is negative
/// whatever the variables are (`?1 + n + 1 = 0`), and an equation or
/// solution that substituting makes undefined (a division by zero, an
/// overflow) are [`SolveError::False`].
///
/// ```
/// use elevate_rise::nat::{solve, NatEquation, Nat};
///
/// let x = Nat::unknown(1);
/// let n = Nat::named("n");
/// let eqs = [NatEquation::new(&(&Nat::cst(1) * &x) + &Nat::cst(3), &n + &Nat::cst(2))];
/// let solution = solve(&eqs).unwrap();
/// assert_eq!(solution[&1], &n - &Nat::cst(1));
///
/// let quarter = [NatEquation::new(&x * &Nat::cst(4), n.clone())];
/// assert_eq!(solve(&quarter).unwrap()[&1].to_string(), "n/4");
///
/// let bad = [NatEquation::new(&Nat::cst(3) * &x, Nat::cst(1000))];
/// assert!(solve(&bad).is_err());
/// ```
pub fn solve(equations: &[NatEquation]) -> Result<Solution, SolveError> {
    let mut solution = Solution::new();
    let mut pending: Vec<(usize, Nat, Nat)> = equations
        .iter()
        .enumerate()
        .map(|(i, eq)| (i, eq.lhs.clone(), eq.rhs.clone()))
        .collect();
    loop {
        // Determinate phase: solve what is forced.
        let mut progress = true;
        while progress {
            progress = false;
            let mut stuck = Vec::with_capacity(pending.len());
            for (index, lhs, rhs) in pending {
                let lhs = apply(&solution, &lhs);
                let rhs = apply(&solution, &rhs);
                let false_eq = |reason: String| SolveError::False {
                    index,
                    lhs: lhs.clone(),
                    rhs: rhs.clone(),
                    reason,
                };
                match examine(&lhs, &rhs).map_err(false_eq)? {
                    Finding::Holds => {}
                    Finding::Bind(x, value) => {
                        bind(&mut solution, x, value).map_err(false_eq)?;
                        progress = true;
                    }
                    Finding::Stuck => stuck.push((index, lhs, rhs)),
                }
            }
            pending = stuck;
        }
        // Fallback phase: bind one unknown with a unit coefficient.
        let Some((index, lhs, rhs)) = pending.first().cloned() else {
            return Ok(solution);
        };
        let found = pending
            .iter()
            .enumerate()
            .find_map(|(pos, (index, lhs, rhs))| {
                let (x, value) = unit_binding(&lhs.sub(rhs))?;
                Some((pos, *index, x, value))
            });
        let Some((pos, found_index, x, value)) = found else {
            return Err(SolveError::Unsolvable { index, lhs, rhs });
        };
        let (_, found_lhs, found_rhs) = pending.remove(pos);
        let false_eq = |reason: String| SolveError::False {
            index: found_index,
            lhs: found_lhs.clone(),
            rhs: found_rhs.clone(),
            reason,
        };
        if value.is_always_below(0) {
            return Err(false_eq(negative_solution(x, &value)));
        }
        bind(&mut solution, x, value).map_err(false_eq)?;
    }
}

/// Substitutes the solved unknowns into `nat`.
fn apply(solution: &Solution, nat: &Nat) -> Nat {
    if solution.is_empty() {
        return nat.clone();
    }
    nat.substitute(&|v| match v {
        NatVar::Unknown(k) => solution.get(k).cloned(),
        NatVar::Named(_) => None,
    })
}

/// Records `?x := value`, substituting it into the other values; `Err` says
/// why a value became undefined.
fn bind(solution: &mut Solution, x: u32, value: Nat) -> Result<(), String> {
    let var = NatVar::Unknown(x);
    for v in solution.values_mut() {
        *v = v.substitute(&|u| (*u == var).then(|| value.clone()));
        v.check_defined().map_err(|why| why.to_string())?;
    }
    solution.insert(x, value);
    Ok(())
}

/// Examines `lhs = rhs` (already substituted); `Err(reason)` if it is false.
fn examine(lhs: &Nat, rhs: &Nat) -> Result<Finding, String> {
    let diff = lhs.sub(rhs);
    diff.check_defined().map_err(|why| why.to_string())?;
    let unknowns = diff.unknowns();
    match unknowns[..] {
        [] if diff.is_zero() => Ok(Finding::Holds),
        [] => Err(match (lhs.as_const(), rhs.as_const()) {
            (Some(_), Some(_)) => format!("{lhs} is not equal to {rhs}"),
            _ => format!("the sides differ by {diff}"),
        }),
        [x] => match diff.linear_parts(x) {
            Some((a, b)) => solve_linear(x, &a, &b).map(|value| Finding::Bind(x, value)),
            None => Ok(Finding::Stuck),
        },
        _ => Ok(Finding::Stuck),
    }
}

/// Why `?x := value` is no solution, for a `value` that is always negative.
fn negative_solution(x: u32, value: &Nat) -> String {
    match value.as_const() {
        Some(v) => format!("the solution {v} is negative"),
        None => format!("the solution ?{x} = {value} is negative for every value of its variables"),
    }
}

/// Solves `a * ?x + b = 0` for `?x`, where `a != 0` and `b` contain no
/// unknowns.
fn solve_linear(x: u32, a: &Nat, b: &Nat) -> Result<Nat, String> {
    // x = (-b) / a, with the sign normalized so that `a` leads positively.
    let (a, dividend) = if a.leading_coef().is_negative() {
        (a.neg(), b.clone())
    } else {
        (a.clone(), b.neg())
    };
    let value = dividend.div(&a);
    value.check_defined().map_err(|why| why.to_string())?;
    let overflow = |Overflow| format!("{value} overflows 64-bit integers");
    if !can_be_integer(&value).map_err(overflow)? {
        return Err(if value.is_const() {
            format!("{dividend} is not divisible by {a}")
        } else {
            format!("{dividend} is never divisible by {a}")
        });
    }
    if value.is_always_below(0) {
        return Err(negative_solution(x, &value));
    }
    Ok(value)
}

/// Whether `value` is an integer for some integer values of its atoms. It is
/// not when its constant term `k` is a fraction whose denominator does not
/// divide that of the gcd `g` of the other coefficients: the other terms add
/// up to a multiple of `g`, so `k` plus them is never an integer. For
/// example, `n + 1/2` never is, while `n/2 + 1/2` is for odd `n`.
pub(super) fn can_be_integer(value: &Nat) -> Res<bool> {
    let terms = value.terms();
    // The constant term comes first: the monomial `1` is the smallest.
    let (constant, others) = match terms.split_first() {
        Some((t, others)) if t.mono.is_one() => (t.coef, others),
        _ => (Ratio::ZERO, &terms[..]),
    };
    Ok(content(others)?.denom() % constant.denom() == 0)
}

/// For `diff = 0`: binds the highest-numbered unknown that occurs linearly
/// with coefficient `1` or `-1` to the rest of the equation.
fn unit_binding(diff: &Nat) -> Option<(u32, Nat)> {
    diff.unknowns().into_iter().rev().find_map(|x| {
        let (a, b) = diff.linear_parts(x)?;
        match a.as_const()? {
            1 => Some((x, b.neg())),
            -1 => Some((x, b)),
            _ => None,
        }
        .filter(|(_, value)| value.undefined().is_none())
    })
}

impl Nat {
    /// Splits the nat, linear in the unknown `x`, as `a * x + b` where `x`
    /// occurs in neither `a` nor `b`. `None` if `x` occurs with an exponent
    /// above one or inside a division, remainder or power.
    fn linear_parts(&self, x: u32) -> Option<(Nat, Nat)> {
        let var = NatVar::Unknown(x);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for t in self.terms().iter() {
            let mut has_x = false;
            let mut others = Vec::with_capacity(t.mono.0.len());
            for (atom, e) in &t.mono.0 {
                match atom {
                    Atom::Var(v) if *v == var => {
                        if *e != 1 {
                            return None;
                        }
                        has_x = true;
                    }
                    _ if atom.mentions(&var) => return None,
                    _ => others.push((atom.clone(), *e)),
                }
            }
            if has_x {
                a.push(Term {
                    mono: Mono(others),
                    coef: t.coef,
                });
            } else {
                b.push(t.clone());
            }
        }
        // Removing `x` keeps the monomials distinct and sorted.
        Some((Nat::from_sorted(a), Nat::from_sorted(b)))
    }
}
