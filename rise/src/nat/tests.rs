//! Unit tests of normal forms, evaluation, printing and the solver.

use super::solve::can_be_integer;
use super::*;
use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};

fn c(v: i64) -> Nat {
    Nat::cst(v)
}

fn n() -> Nat {
    Nat::named("n")
}

fn m() -> Nat {
    Nat::named("m")
}

fn u(k: u32) -> Nat {
    Nat::unknown(k)
}

/// Parses with the RISE parser, so that printing is checked against it.
fn parse(s: &str) -> Option<Nat> {
    crate::parser::parse_nat(s).ok()
}

fn p(s: &str) -> Nat {
    parse(s).unwrap_or_else(|| panic!("cannot parse {s:?}"))
}

// -- Normal-form equalities. --

#[test]
fn required_equalities() {
    let (n, m) = (n(), m());
    assert_eq!(&c(1) + &(&n - &c(1)), n);
    assert_eq!(&(&n * &c(32)) / &c(32), n);
    assert_eq!(&n * &m, &m * &n);
    assert_eq!(&c(2) * &(&n + &c(1)), &(&c(2) * &n) + &c(2));
    let s = &n + &m;
    assert_eq!(&s * &s, p("n*n + 2*n*m + m*m"));
    assert_eq!(&(&c(4) * &n) / &c(2), &c(2) * &n);
    assert_eq!(&(&n * &m) / &m, n);
    assert_eq!(&(&c(8) * &n) % &c(4), c(0));
    assert_eq!(n.pow(&c(2)), &n * &n);
    assert_eq!(c(2).pow(&c(3)), c(8));
}

#[test]
fn division_is_exact() {
    let (n, m, k) = (n(), m(), Nat::named("k"));
    // Splitting into chunks of 4 and joining them gives the length back.
    assert_eq!(&(&n / &c(4)) * &c(4), n);
    assert_eq!(&c(4) * &(&n / &c(4)), n);
    assert_eq!(&(&(&n / &c(4)) / &c(8)) * &c(32), n);
    // Division by a constant distributes over sums.
    assert_eq!(&(&n + &m) / &c(3), &(&n / &c(3)) + &(&m / &c(3)));
    // Division by a variable does not: `n / k` need not be an integer
    // where `(n + m) / k` is.
    assert_ne!(&(&n + &m) / &k, &(&n / &k) + &(&m / &k));
    assert_eq!(&(&c(2) * &n) / &c(4), &n / &c(2));
    assert_eq!(p("(n*32)/32"), n);
    assert_eq!(p("(n*m)/m"), n);
    assert_eq!(p("(n*m + m)/m"), p("n + 1"));
    assert_eq!(p("(n*m) / (2*m)"), p("n/2"));
    assert_eq!(p("(n + 1) / (2*n + 2)"), p("1/2"));
    // A division atom has one normal form however it was written.
    assert_eq!(p("n / (2*m)"), p("(n / 2) / m"));
    assert_eq!(p("n / (2*m)"), p("(n / m) / 2"));
    assert_eq!(p("(0 - n) / (0 - m)"), p("n / m"));
    assert_ne!(p("n / m"), n);
    // Fractional constants are constants, but not integers.
    let half = p("7 / 2");
    assert!(half.is_const() && !half.is_integral());
    assert_eq!(half.as_const(), None);
    assert_eq!(&half * &c(2), c(7));
    assert_eq!(p("1/2 + 1/2"), c(1));
    assert!(!p("n/2").is_integral() && !p("n*n/2 + n/2").is_integral());
    assert!(p("2*n + n / m").is_integral());
}

#[test]
fn remainders() {
    let k = Nat::named("k");
    assert_eq!(&(&(&c(4) * &k) + &c(1)) % &c(4), c(1));
    assert_eq!(&(&c(4) * &k) % &c(4), c(0));
    assert_eq!(p("(4*k + 5) % 4"), c(1));
    assert_eq!(p("(4*k - 1) % 4"), c(3));
    assert_eq!(p("(8*k + 4*n + 6) % 4"), c(2));
    assert_eq!(p("(4*k + 1) % (0 - 4)"), c(1));
    assert_eq!(p("7 % 2"), c(1));
    assert_eq!(p("(0 - 7) % 2"), c(1));
    // Not every coefficient is a multiple: a remainder atom remains.
    assert_eq!(p("(n + 5) % 4"), p("(n + 1) % 4"));
    assert_eq!(p("(2*n + 2) % 4"), p("2 * ((n + 1) % 2)"));
    assert_eq!(p("(n/2 + 1/2) % 4"), p("((n + 1) % 8) / 2"));
    assert_ne!(p("(2*k + 1) % 4"), c(1));
    assert_ne!(p("(k/4) % 1"), c(0));
    // By polynomials: zero only for an integral quotient.
    assert_eq!(p("(n*m) % m"), c(0));
    assert_eq!(p("(n*m + 2*m) % m"), c(0));
    assert_ne!(p("n % (2*n)"), c(0));
    // Fractions have no remainder.
    assert_eq!(p("(7/2) % 2").eval(&|_| None), None);
}

#[test]
fn more_equalities() {
    assert_eq!(p("(n + 32) / 32"), p("n / 32 + 1"));
    assert_eq!(p("(n*n - 1) / (n - 1)"), p("n + 1"));
    assert_eq!(p("(2*n + 2) / (n + 1)"), c(2));
    assert_eq!(p("(2*n + 2) / 4"), p("(n + 1) / 2"));
    assert_eq!(p("n / 1"), n());
    assert_eq!(p("(4*n) / (0 - 2)"), p("0 - 2*n"));
    assert_eq!(p("(n + 1)^2"), p("n*n + 2*n + 1"));
    assert_eq!(p("(n / 2)^2"), p("n*n / 4"));
    assert_eq!(p("(1/2)^3"), p("1/8"));
    assert_eq!(p("1^n"), c(1));
    assert_eq!(p("n^m * 2"), p("2 * n^m"));
    assert!(p("n / 0").eval(&|_| Some(1)).is_none());
    assert_eq!(
        (&u(1) * &c(32)).substitute(&|_| Some(&n() * &c(2))),
        &c(64) * &n()
    );
    assert_eq!(
        (&u(1) / &m()).substitute(&|v| (*v == NatVar::Unknown(1)).then(|| &n() * &m())),
        n()
    );
    assert_eq!(
        p("n ^ m").substitute(&|v| (v.to_string() == "m").then(|| c(2))),
        &n() * &n()
    );
}

#[test]
fn vars_and_unknowns() {
    let x = p("n / (m + k) + 2 ^ j");
    let names: Vec<String> = x.vars().iter().map(ToString::to_string).collect();
    assert_eq!(names, ["j", "k", "m", "n"]);
    assert!(!x.contains_unknown());
    let y = &x % &(&u(3) + &c(1));
    assert!(y.contains_unknown());
    assert_eq!(y.unknowns(), [3]);
    assert_eq!(c(5).vars(), []);
}

#[test]
fn eval_works() {
    let env = |v: &NatVar| match v.to_string().as_str() {
        "n" => Some(12),
        "m" => Some(3),
        "k" => Some(10),
        _ => None,
    };
    assert_eq!(p("n*m + n / m - n % m + 2^m").eval(&env), Some(36 + 4 + 8));
    assert_eq!(p("j + 1").eval(&env), None);
    assert_eq!(p("n / (m - 3)").eval(&env), None);
    // Inexact divisions do not evaluate.
    assert_eq!(p("k / 4").eval(&env), None);
    assert_eq!(p("k / m").eval(&env), None);
    assert_eq!(p("2 * (k / m)").eval(&env), None);
    assert_eq!(p("(k / 4) % 2").eval(&env), None);
    assert_eq!(p("2 ^ (k / 4)").eval(&env), None);
    assert_eq!(p("5/2").eval(&env), None);
    // ... but fractional terms may add up to an integer.
    assert_eq!(p("(k + m + 1) / 2").eval(&env), Some(7));
    assert_eq!(p("(k / 4) * 4").eval(&env), Some(10));
    assert_eq!(p("n / (2*m)").eval(&env), Some(2));
    assert_eq!(p("k*k/2 + k/2").eval(&env), Some(55));
}

#[test]
fn overflow_is_undefined_and_names_the_operation() {
    let big = c(i64::MAX);
    let sum = &big + &c(1);
    assert!(sum.is_overflow());
    assert_eq!(
        sum.undefined().unwrap().to_string(),
        "9223372036854775807 + 1 overflows 64-bit integers"
    );
    // Undefined nats absorb every operation, keeping the first reason.
    assert_eq!(&(&sum * &n()) * &c(0), sum);
    assert_eq!(&sum - &sum, sum);
    assert_eq!(sum.eval(&|_| Some(1)), None);
    assert_eq!(
        sum.try_eval(&|_| Some(1)),
        Err(EvalError::Undefined(sum.undefined().unwrap().clone()))
    );
    // It prints as the operation, which parses back to the same nat.
    assert_eq!(sum.to_string(), "9223372036854775807 + 1");
    assert_eq!(parse(&sum.to_string()), Some(sum.clone()));
    assert!((&c(i64::MIN) - &c(1)).is_overflow());
    let product = &(&big * &n()) * &c(2);
    assert_eq!(product.to_string(), "9223372036854775807*n * 2");
    assert_eq!(parse(&product.to_string()), Some(product.clone()));
    // Denominators overflow, too.
    let tiny = &c(1) / &big;
    assert!(tiny.undefined().is_none());
    assert!((&tiny / &c(2)).is_overflow());
    assert!((&(&n() / &big) + &(&n() / &c(i64::MAX - 1))).is_overflow());
    // Constant powers are exact or overflow; so are the coefficients of
    // expanded powers.
    assert!(c(2).pow(&c(100)).is_overflow());
    assert_eq!(c(2).pow(&c(62)).as_const(), Some(1 << 62));
    assert_eq!(c(-1).pow(&c(i64::MAX)), c(-1));
    assert!(tiny.pow(&c(2)).is_overflow());
    assert!((&(&c(4_294_967_296) * &n()) + &c(1))
        .pow(&c(2))
        .is_overflow());
    assert!((&(&c(2) * &n()) + &c(1)).pow(&c(32)).undefined().is_none());
    assert!((&c(4_294_967_296) * &n()).pow(&c(2)).is_overflow());
    // Powers too large to expand stay symbolic, which is no overflow.
    assert!(p("(n + 1)^100").undefined().is_none());
    assert!(n().pow(&c(i64::MAX)).undefined().is_none());
    // Division corner cases.
    assert!((&c(i64::MIN) / &c(-1)).is_overflow());
    assert_eq!(&c(i64::MIN) % &c(-1), c(0));
    let _ = &(&c(i64::MIN) * &n()) / &c(i64::MIN);
    let _ = &(&c(i64::MIN) * &n()) / &(&c(-1) * &m());
    let _ = &(&c(i64::MIN) * &n()) % &(&c(-1) * &m());
    let _ = &(&c(i64::MIN) * &n()) % &c(i64::MIN);
    let _ = c(i64::MIN).to_string();
    let _ = (&c(i64::MIN) / &c(3)).to_string();
    let eq = [NatEquation::new(&u(1) * &c(2), sum)];
    let err = solve(&eq).unwrap_err();
    assert!(matches!(err, SolveError::False { .. }), "{err}");
    assert!(
        err.to_string().contains("overflows 64-bit integers"),
        "{err}"
    );
}

#[test]
fn division_by_zero_is_undefined() {
    let by_zero = &n() / &c(0);
    assert_eq!(by_zero.undefined(), Some(&Undefined::DivisionByZero(n())));
    assert_eq!(by_zero.to_string(), "n / 0");
    // Nothing makes it defined again.
    assert_eq!(&by_zero * &c(0), by_zero);
    assert_eq!(&by_zero - &by_zero, by_zero);
    assert_eq!(p("n / 0 * 0 + 1"), by_zero);
    let rem = p("(n + 1) % 0");
    assert_eq!(
        rem.undefined(),
        Some(&Undefined::RemainderByZero(p("n + 1")))
    );
    assert_eq!(
        rem.check_defined().unwrap_err().to_string(),
        "remainder by zero in (n + 1) % 0"
    );
    let power = p("0 ^ (0 - 2)");
    assert_eq!(power.to_string(), "0^(0 - 2)");
    assert_eq!(parse(&power.to_string()), Some(power.clone()));
    assert!(matches!(
        power.undefined(),
        Some(Undefined::ZeroToNegativePower(_))
    ));
    // Other negative powers of constants are exact fractions.
    assert_eq!(p("2 ^ (0 - 2)"), p("1/4"));
    // A substitution that makes a divisor zero makes the nat undefined.
    let zero_m = |v: &NatVar| (v.to_string() == "m").then(|| c(0));
    for text in ["n / m", "n % m", "m ^ (0 - 1)", "n / (m + m*k)"] {
        let x = p(text).substitute(&zero_m);
        assert!(x.undefined().is_some(), "{text} gave {x}");
    }
    assert_eq!(p("n / (m + 1)").substitute(&zero_m), n());
    // ... and so does a substitution that overflows.
    let huge = |_: &NatVar| Some(c(1 << 40));
    let x = p("n * m * k").substitute(&huge);
    assert!(x.is_overflow(), "{x}");
}

#[test]
fn eval_errors_name_the_sub_expression() {
    let env = |v: &NatVar| match v.to_string().as_str() {
        "n" => Some(1 << 40),
        "m" => Some(0),
        "k" => Some(10),
        _ => None,
    };
    let error = |text: &str| p(text).try_eval(&env).unwrap_err().to_string();
    assert_eq!(error("j + 1"), "the nat variable `j` has no value");
    assert_eq!(error("k / m"), "division by zero in k / m");
    assert_eq!(error("k % m"), "division by zero in k % m");
    assert_eq!(error("m ^ (0 - 1) + k"), "division by zero in m^(0 - 1)");
    assert_eq!(error("n * n"), "n^2 overflows 64-bit integers");
    assert_eq!(error("2 ^ n"), "2^n overflows 64-bit integers");
    assert_eq!(error("k / 4"), "k/4 is not a whole number");
    assert_eq!(error("k / (k - 3)"), "k / (k - 3) is not a whole number");
    assert_eq!(error("n / 0"), "division by zero in n / 0");
    assert_eq!(p("n * n / n").try_eval(&env), Ok(1 << 40));
    assert_eq!(p("n^3 / n^2").try_eval(&env), Ok(1 << 40));
    // Partial sums and products run in 128 bits: `n^2 / 2^20` fits.
    let x = &(&n() * &n()) / &c(1 << 20);
    assert_eq!(x.try_eval(&env), Ok(1 << 60));
}

#[test]
fn sign_bounds() {
    assert!(p("0 - 1").is_always_below(0));
    assert!(p("0 - n - 1").is_always_below(0));
    assert!(p("0 - n*m - 2*(n % 3) - 1").is_always_below(0));
    assert!(p("0 - n^2 - 1").is_always_below(0));
    assert!(p("0 - n / m").is_always_below(1));
    assert!(!p("0 - n / m").is_always_below(0));
    assert!(!p("n - 1").is_always_below(0));
    assert!(!p("0 - (n - 5) / m - 1").is_always_below(0));
    assert!(!p("0 - n").is_always_below(0));
    assert!(p("0 - n").is_always_below(1));
    assert!(p("1/2").is_always_below(1));
    assert!(!p("n / 0").is_always_below(0));
}

// -- Display. --

#[test]
fn display_text() {
    let cases = [
        ("n + 1", "n + 1"),
        ("1 + n", "n + 1"),
        ("2*n - 1", "2*n - 1"),
        ("n - 1", "n - 1"),
        ("1 - n", "1 - n"),
        ("0 - 3", "0 - 3"),
        ("0 - n", "0 - n"),
        ("0 - n - 3", "0 - n - 3"),
        ("(n + m) * (n + m)", "m^2 + 2*m*n + n^2"),
        ("n / 32", "n/32"),
        ("2 * (n / 32)", "n/16"),
        ("3 * n / 4", "3*n/4"),
        ("(3 * n) / 4", "3*n/4"),
        ("n * m / 32", "m*n/32"),
        ("(2*n + 2) / 4", "n/2 + 1/2"),
        ("n / 2 - 3 / 4", "n/2 - 3/4"),
        ("7 / 2", "7/2"),
        ("0 - 7 / 2", "0 - 7/2"),
        ("(n / 2) * (n / 2)", "n^2/4"),
        ("n / m", "n / m"),
        ("2 * (n / m)", "2*(n / m)"),
        ("n / (2*m)", "(n / m)/2"),
        ("2 * (n / m) / 3", "2*(n / m)/3"),
        ("n / (m*k + 1)", "n / (k*m + 1)"),
        ("(n + 1) % m", "(n + 1) % m"),
        ("(n / 2) % m", "n/2 % m"),
        ("n ^ m ^ k", "n^m^k"),
        ("(n ^ m) ^ k", "(n^m)^k"),
        ("(n / 2) ^ m", "(n/2)^m"),
        ("n ^ (1 / 2)", "n^(1/2)"),
    ];
    for (input, expected) in cases {
        assert_eq!(p(input).to_string(), expected, "for {input}");
    }
    assert_eq!(format!("{:?}", p("n + 1")), "n + 1");
    assert_eq!(u(3).to_string(), "?3");
}

#[test]
fn display_round_trips() {
    let cases = [
        "n + 1",
        "2*n*m - 7",
        "0 - n - m",
        "n / 32 * m - n % 5",
        "(n + 1) / (m - 1) / 3",
        "n ^ (m - 1) ^ 2 + (n ^ 2) ^ m",
        "n ^ (0 - 1)",
        "(0 - n) / m",
        "(n % 3) ^ 3",
        "5 / 0 + n % 0",
        "(n*n - m) / (n + m) * (n / 2)",
        "3*n/4 - 5/7",
        "0 - 1/2",
        "(n / 3) / m + (n/2) % m - 2 / (3*m)",
        "(n/2)^m + m^(1/3) + (1/2)^m",
        "(n / m) % (k / 2)",
    ];
    for s in cases {
        let x = p(s);
        assert_eq!(parse(&x.to_string()), Some(x.clone()), "{s} printed as {x}");
    }
}

// -- Solver. --

fn eq(lhs: Nat, rhs: Nat) -> NatEquation {
    NatEquation::new(lhs, rhs)
}

fn solved(eqs: &[NatEquation]) -> Vec<(u32, String)> {
    let solution = solve(eqs).unwrap_or_else(|e| panic!("{e}"));
    solution
        .into_iter()
        .map(|(k, v)| (k, v.to_string()))
        .collect()
}

#[test]
fn solver_examples() {
    assert_eq!(solved(&[eq(&c(32) * &u(1), c(1024))]), [(1, "32".into())]);
    let s = solve(&[eq(&u(1) * &c(32), n())]).unwrap();
    assert_eq!(s[&1], &n() / &c(32));
    assert_eq!(s[&1].to_string(), "n/32");
    assert_eq!(
        solved(&[eq(&(&c(1) * &u(1)) + &c(3), &n() + &c(2))]),
        [(1, "n - 1".into())]
    );
    let chain = [eq(u(1), &u(2) + &c(1)), eq(u(2), c(5))];
    assert_eq!(solved(&chain), [(1, "6".into()), (2, "5".into())]);
    let rev: Vec<NatEquation> = chain.iter().rev().cloned().collect();
    assert_eq!(solved(&rev), [(1, "6".into()), (2, "5".into())]);
    let sum = [eq(&u(1) + &u(2), c(10)), eq(u(1), c(4))];
    assert_eq!(solved(&sum), [(1, "4".into()), (2, "6".into())]);
    assert_eq!(solved(&[eq(n() + c(1), c(1) + n())]), []);
    assert_eq!(solved(&[eq(u(1), u(1))]), []);
    assert_eq!(solved(&[eq(u(1), u(2))]), [(2, "?1".into())]);
    assert_eq!(
        solved(&[eq(&c(2) * &u(1), &c(2) * &n())]),
        [(1, "n".into())]
    );
    assert_eq!(solved(&[eq(&n() * &u(1), &n() * &m())]), [(1, "m".into())]);
}

#[test]
fn solver_divides_exactly() {
    // split(4) on an array of length n, 12 and 10.
    assert_eq!(solved(&[eq(&u(1) * &c(4), n())]), [(1, "n/4".into())]);
    assert_eq!(solved(&[eq(&u(1) * &c(4), c(12))]), [(1, "3".into())]);
    let err = solve(&[eq(&u(1) * &c(4), c(10))]).unwrap_err();
    assert!(matches!(err, SolveError::False { index: 0, .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "4*?1 = 10 has no solution: 10 is not divisible by 4"
    );
    // Fractions are fine where the solution can be an integer.
    assert_eq!(
        solved(&[eq(&u(1) * &c(4), &n() + &c(2))]),
        [(1, "n/4 + 1/2".into())]
    );
    assert_eq!(solved(&[eq(&u(1) / &c(2), n())]), [(1, "2*n".into())]);
    assert_eq!(
        solved(&[eq(&(&c(3) * &u(1)) / &c(4), &n() / &c(2))]),
        [(1, "2*n/3".into())]
    );
    assert_eq!(solved(&[eq(&m() * &u(1), n())]), [(1, "n / m".into())]);
    // ... and an error where it cannot.
    let err = solve(&[eq(&c(2) * &u(1), &(&c(2) * &n()) + &c(1))]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "2*?1 = 2*n + 1 has no solution: 2*n + 1 is never divisible by 2"
    );
    assert!(matches!(
        solve(&[eq(&u(1) + &c(1), c(1) / c(2))]),
        Err(SolveError::False { .. })
    ));
}

#[test]
fn solver_failures() {
    let err = solve(&[eq(&c(3) * &u(1), c(1000))]).unwrap_err();
    assert!(matches!(err, SolveError::False { index: 0, .. }));
    assert_eq!(
        err.to_string(),
        "3*?1 = 1000 has no solution: 1000 is not divisible by 3"
    );
    let err = solve(&[eq(c(1), c(1)), eq(n(), m())]).unwrap_err();
    assert!(matches!(err, SolveError::False { index: 1, .. }), "{err}");
    assert!(matches!(
        solve(&[eq(c(5), c(6))]),
        Err(SolveError::False { .. })
    ));
    assert!(matches!(
        solve(&[eq(u(1), &u(1) + &c(1))]),
        Err(SolveError::False { .. })
    ));
    assert!(matches!(
        solve(&[eq(&u(1) + &c(5), c(2))]),
        Err(SolveError::False { .. })
    ));
    let err = solve(&[eq(&u(1) * &u(2), c(1024))]).unwrap_err();
    assert!(matches!(err, SolveError::Unsolvable { index: 0, .. }));
    assert!(err.to_string().starts_with("cannot solve ?1*?2 = 1024"));
    assert!(matches!(
        solve(&[eq(c(1), c(1)), eq(&u(1) / &m(), n())]),
        Err(SolveError::Unsolvable { index: 1, .. })
    ));
    assert!(matches!(
        solve(&[eq(&u(1) % &c(2), n())]),
        Err(SolveError::Unsolvable { index: 0, .. })
    ));
}

#[test]
fn solver_substitutes_into_earlier_values() {
    let eqs = [
        eq(u(2), &u(1) + &n()),
        eq(&c(3) * &u(1), c(21)),
        eq(u(4), u(2)),
    ];
    assert_eq!(
        solved(&eqs),
        [(1, "7".into()), (2, "n + 7".into()), (4, "n + 7".into())]
    );
}

// -- Property tests. --

/// A random expression tree over variables `a`, `b`, `c`.
#[derive(Clone, Debug)]
enum Expr {
    Lit(i64),
    Var(usize),
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    Div(Box<Expr>, Box<Expr>),
    Rem(Box<Expr>, Box<Expr>),
    Pow(Box<Expr>, Box<Expr>),
}

const NAMES: [&str; 3] = ["a", "b", "c"];

fn gen_expr(g: &mut Gen, depth: u32) -> Expr {
    let small = |g: &mut Gen, k: u8| i64::from(u8::arbitrary(g) % k);
    let sub = |g: &mut Gen| Box::new(gen_expr(g, depth - 1));
    let choice = if depth == 0 {
        u8::arbitrary(g) % 2
    } else {
        u8::arbitrary(g) % 15
    };
    match choice {
        0 => Expr::Lit(small(g, 10)),
        1 => Expr::Var(usize::from(u8::arbitrary(g) % 3)),
        2 | 3 => Expr::Add(sub(g), sub(g)),
        4 | 5 => Expr::Sub(sub(g), sub(g)),
        6..=8 => Expr::Mul(sub(g), sub(g)),
        9 | 10 => Expr::Div(sub(g), Box::new(Expr::Lit(1 + small(g, 6)))),
        11 => Expr::Rem(sub(g), Box::new(Expr::Lit(1 + small(g, 6)))),
        12 => Expr::Div(sub(g), sub(g)),
        13 => Expr::Rem(sub(g), sub(g)),
        _ => Expr::Pow(sub(g), Box::new(Expr::Lit(small(g, 4)))),
    }
}

impl Arbitrary for Expr {
    fn arbitrary(g: &mut Gen) -> Expr {
        gen_expr(g, 4)
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Expr>> {
        match self {
            Expr::Lit(_) | Expr::Var(_) => Box::new(std::iter::empty()),
            Expr::Add(a, b)
            | Expr::Sub(a, b)
            | Expr::Mul(a, b)
            | Expr::Div(a, b)
            | Expr::Rem(a, b)
            | Expr::Pow(a, b) => Box::new([(**a).clone(), (**b).clone()].into_iter()),
        }
    }
}

/// Positive values for `a`, `b`, `c`, often with many divisors.
#[derive(Clone, Debug)]
struct Env([i64; 3]);

impl Arbitrary for Env {
    fn arbitrary(g: &mut Gen) -> Env {
        const SMOOTH: [i64; 8] = [2, 4, 6, 8, 12, 16, 24, 48];
        Env([(); 3].map(|()| {
            let x = u8::arbitrary(g);
            if x % 2 == 0 {
                SMOOTH[usize::from(x / 2) % SMOOTH.len()]
            } else {
                1 + i64::from(x % 20)
            }
        }))
    }
}

impl Env {
    fn lookup(&self, v: &NatVar) -> Option<i64> {
        let NatVar::Named(name) = v else { return None };
        let i = NAMES.iter().position(|n| **n == **name)?;
        self.0.get(i).copied()
    }
}

impl Expr {
    fn to_nat(&self) -> Nat {
        match self {
            Expr::Lit(v) => c(*v),
            Expr::Var(i) => Nat::named(NAMES[*i]),
            Expr::Add(a, b) => &a.to_nat() + &b.to_nat(),
            Expr::Sub(a, b) => &a.to_nat() - &b.to_nat(),
            Expr::Mul(a, b) => &a.to_nat() * &b.to_nat(),
            Expr::Div(a, b) => &a.to_nat() / &b.to_nat(),
            Expr::Rem(a, b) => &a.to_nat() % &b.to_nat(),
            Expr::Pow(a, b) => a.to_nat().pow(&b.to_nat()),
        }
    }

    /// The reference semantics on integers: exact division (`None` when
    /// a division leaves a remainder or divides by zero), Euclidean
    /// remainder, and `None` on overflow.
    fn eval(&self, env: &Env) -> Option<i64> {
        let both = |a: &Expr, b: &Expr| Some((a.eval(env)?, b.eval(env)?));
        match self {
            Expr::Lit(v) => Some(*v),
            Expr::Var(i) => env.0.get(*i).copied(),
            Expr::Add(a, b) => both(a, b).and_then(|(x, y)| x.checked_add(y)),
            Expr::Sub(a, b) => both(a, b).and_then(|(x, y)| x.checked_sub(y)),
            Expr::Mul(a, b) => both(a, b).and_then(|(x, y)| x.checked_mul(y)),
            Expr::Div(a, b) => both(a, b)
                .filter(|&(x, y)| x.checked_rem(y) == Some(0))
                .and_then(|(x, y)| x.checked_div(y)),
            Expr::Rem(a, b) => both(a, b).and_then(|(x, y)| x.checked_rem_euclid(y)),
            Expr::Pow(a, b) => both(a, b).and_then(|(x, y)| x.checked_pow(u32::try_from(y).ok()?)),
        }
    }
}

fn quickcheck() -> QuickCheck {
    QuickCheck::new().tests(2000).max_tests(50_000)
}

#[test]
fn prop_normal_form_agrees_with_exact_evaluation() {
    fn prop(e: Expr, env: Env) -> TestResult {
        let Some(expected) = e.eval(&env) else {
            return TestResult::discard();
        };
        let nat = e.to_nat();
        TestResult::from_bool(nat.eval(&|v| env.lookup(v)) == Some(expected))
    }
    quickcheck().quickcheck(prop as fn(Expr, Env) -> TestResult);
}

#[test]
fn prop_dividing_then_multiplying_is_identity() {
    fn prop(e: Expr, k: u8) -> TestResult {
        let value = e.to_nat();
        let k = c(1 + i64::from(k % 12));
        let back = &(&value / &k) * &k;
        let scaled = &value * &k;
        // A product past i64 is undefined (an overflow), not a number to divide back.
        if back.undefined().is_some() || scaled.undefined().is_some() {
            return TestResult::discard();
        }
        TestResult::from_bool(back == value && &scaled / &k == value)
    }
    quickcheck().quickcheck(prop as fn(Expr, u8) -> TestResult);
}

#[test]
fn prop_normalizing_twice_is_identity() {
    fn prop(e: Expr) -> bool {
        let nat = e.to_nat();
        nat.substitute(&|v| Some(Nat::var(v.clone()))) == nat
    }
    quickcheck().quickcheck(prop as fn(Expr) -> bool);
}

#[test]
fn prop_ring_laws() {
    fn prop(a: Expr, b: Expr, d: Expr) -> TestResult {
        let (a, b, d) = (a.to_nat(), b.to_nat(), d.to_nat());
        if [&a, &b, &d].iter().any(|x| x.undefined().is_some()) {
            return TestResult::discard();
        }
        TestResult::from_bool(
            &a + &b == &b + &a
                && &a * &b == &b * &a
                && &a * &(&b + &d) == &(&a * &b) + &(&a * &d)
                && &(&a + &b) - &b == a
                && &(&a + &b) + &d == &a + &(&b + &d),
        )
    }
    quickcheck().quickcheck(prop as fn(Expr, Expr, Expr) -> TestResult);
}

#[test]
fn prop_display_parses_back() {
    fn prop(e: Expr) -> TestResult {
        let nat = e.to_nat();
        if nat.undefined().is_some() {
            return TestResult::discard();
        }
        TestResult::from_bool(parse(&nat.to_string()) == Some(nat))
    }
    quickcheck().quickcheck(prop as fn(Expr) -> TestResult);
}

#[test]
fn prop_solver_inverts_scaling() {
    fn prop(e: Expr, k: u8) -> TestResult {
        let value = e.to_nat();
        let solvable = value.undefined().is_none()
            && can_be_integer(&value).unwrap_or(false)
            && !value.is_always_below(0);
        if !solvable {
            return TestResult::discard();
        }
        let k = c(1 + i64::from(k % 9));
        let eqs = [NatEquation::new(&k * &u(1), &k * &value)];
        TestResult::from_bool(solve(&eqs).ok().and_then(|s| s.get(&1).cloned()) == Some(value))
    }
    quickcheck().quickcheck(prop as fn(Expr, u8) -> TestResult);
}

#[test]
fn prop_solver_divides_exactly() {
    fn prop(e: Expr, k: u8) -> TestResult {
        let value = e.to_nat();
        if value.undefined().is_some() || value.contains_unknown() {
            return TestResult::discard();
        }
        // `k * ?1 = value`: solved by `value / k`, if that can be a nat.
        let k = c(1 + i64::from(k % 9));
        let quotient = &value / &k;
        let expected = can_be_integer(&quotient).unwrap_or(false) && !quotient.is_always_below(0);
        let found = solve(&[NatEquation::new(&k * &u(1), value.clone())]).ok();
        TestResult::from_bool(match found {
            Some(s) => expected && s.get(&1) == Some(&quotient),
            None => !expected,
        })
    }
    quickcheck().quickcheck(prop as fn(Expr, u8) -> TestResult);
}
