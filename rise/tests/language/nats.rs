//! Exact type-level division: splitting and joining symbolic sizes, and
//! fractional sizes printed and parsed back.

use elevate_rise::{parse_nat, parse_type, print_definition, ErrorKind, Program};

use crate::{load, run};

/// The type of the entry point of `source`, as text.
fn type_of(source: &str) -> String {
    load(source).entry().ty.to_string()
}

#[test]
fn split_divides_and_join_multiplies_back() {
    assert_eq!(
        type_of("def f(x: n.f32) = split(4, x)"),
        "n.f32 -> (n/4).4.f32"
    );
    assert_eq!(
        type_of("def f(x: n.f32) = x |> split(4) |> map(split(2))"),
        "n.f32 -> (n/4).2.2.f32"
    );
    assert_eq!(
        type_of("def f(x: n.f32) = x |> split(4) |> join"),
        "n.f32 -> n.f32"
    );
    // `(n/4)*4` is `n`, so the joined array zips with the original one.
    assert_eq!(
        type_of("def f(x: n.f32) = zip(x |> split(4) |> join, x)"),
        "n.f32 -> n.(f32, f32)"
    );
    assert_eq!(
        type_of("def f(x: (3*n).f32) = x |> split(2) |> split(3)"),
        "(3*n).f32 -> (n/2).3.2.f32"
    );
}

#[test]
fn split_of_a_constant_length_needs_a_divisor() {
    assert_eq!(
        type_of("def f(x: 12.f32) = split(4, x)"),
        "12.f32 -> 3.4.f32"
    );
    let e = Program::load("def f(x: 10.f32) = split(4, x)", None).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Nat);
    assert!(
        e.message.contains("10 is not divisible by 4"),
        "{}",
        e.message
    );
}

#[test]
fn fractional_sizes_print_and_parse_back() {
    for text in [
        "n/4",
        "3*n/4",
        "n/2 + 1/2",
        "(n / m)/2",
        "0 - 7/2",
        "n/2 % m",
    ] {
        let nat = parse_nat(text).unwrap();
        assert_eq!(nat.to_string(), text);
        assert_eq!(parse_nat(&nat.to_string()).unwrap(), nat);
    }
    for text in ["(n/4).4.f32", "(3*n/4).f32 -> (n/4).3.f32", "vec[f32, n/2]"] {
        let ty = parse_type(text).unwrap();
        assert_eq!(ty.to_string(), text);
        assert_eq!(parse_type(&ty.to_string()).unwrap(), ty);
    }
    assert_eq!(
        parse_type("((n*4)/8).f32").unwrap(),
        parse_type("(n/2).f32").unwrap()
    );
}

#[test]
fn printed_programs_with_fractional_sizes_load_again() {
    let source = "def f(x: (2*n).f32) = x |> split(4) |> map(fun(c => c |> split(2)))";
    let program = load(source);
    let printed = print_definition("f", &program.entry().term);
    // The printed definition names its nat parameter: `def f<n>(...)`.
    assert_eq!(
        load(&printed).entry().ty.to_string(),
        "(n: nat) -> (2*n).f32 -> (n/2).2.2.f32",
        "{printed}"
    );
    let again = load(&print_definition("f", &load(&printed).entry().term));
    assert_eq!(again.entry().ty, load(&printed).entry().ty);
}

#[test]
fn split_and_join_evaluate_on_divisible_lengths() {
    let source = "def f(x: n.f32) = x |> split(4) |> map(reduce(add, 0.0))";
    assert_eq!(run(source, "[[1, 2, 3, 4, 5, 6, 7, 8]]"), "[10.0,26.0]");
    let program = load(source);
    let inputs = [serde_json::json!([1, 2, 3, 4, 5, 6])];
    let e = program.eval_json(&inputs).unwrap_err();
    assert!(
        e.message.contains("split(4) of 6 elements"),
        "{}",
        e.message
    );
}

#[test]
fn a_generic_function_used_at_a_size_its_types_cannot_take_is_a_nat_error() {
    let source = "def halves(x: n.f32) = x |> split(2)\ndef f(y: 3.f32) = halves(y)";
    let e = elevate_rise::Program::load(source, None).unwrap_err();
    assert_eq!(e.kind, elevate_rise::ErrorKind::Nat);
    assert!(e.message.contains("the size 3/2"), "{}", e.message);
    // Known limit: a division that does not show in the function's type (`split(2)`
    // then `join`) is not checked at the call, only when the program runs.
    let hidden = "def same(x: n.f32) = x |> split(2) |> join\ndef f(y: 3.f32) = same(y)";
    assert!(elevate_rise::Program::load(hidden, None).is_ok());
}

/// The error that loading `source` gives, with its `(line, column)`.
fn load_error(source: &str) -> (elevate_rise::Error, (usize, usize)) {
    let e = match Program::load(source, None) {
        Ok(p) => panic!("{source:?} loaded, with type {}", p.entry().ty),
        Err(e) => e,
    };
    let at = e.line_col(source).expect("the error is located");
    (e, at)
}

#[test]
fn undefined_sizes_in_annotations_are_located_type_errors() {
    // (source, what the message says, column of the annotation)
    let cases = [
        ("def f(x: (n/0).f32) = x", "division by zero in n / 0", 10),
        ("def f(x: (n%0).f32) = x", "remainder by zero in n % 0", 10),
        (
            "def f(x: ((n+1)/(m-m)).f32) = x",
            "division by zero in (n + 1) / 0",
            10,
        ),
        (
            "def f(x: (1-2).f32) = x",
            "the array length 0 - 1 in (0 - 1).f32 is negative",
            10,
        ),
        (
            "def f(x: (0-n-1).f32) = x",
            "the array length 0 - n - 1 in (0 - n - 1).f32 is negative",
            10,
        ),
        (
            "def f(x: (4294967296*4294967296*4294967296).f32) = x",
            "4294967296 * 4294967296 overflows 64-bit integers",
            10,
        ),
        (
            "def f(x: (2^64).f32) = x",
            "2^64 overflows 64-bit integers",
            10,
        ),
        (
            "def f(x: (0^(0-1)).f32) = x",
            "zero to a negative power in 0^(0 - 1)",
            10,
        ),
        (
            "def f(x: (3/2).f32) = x",
            "the array length 3/2 in (3/2).f32 is not a whole number",
            10,
        ),
        (
            "def f(x: vec[f32, 0]) = x",
            "the vector width 0 in vec[f32, 0] is not positive: a vector needs at least one lane",
            10,
        ),
        (
            "def f(x: idx[0]) = x",
            "the index bound 0 in idx[0] is not positive: an index type needs at least one value",
            10,
        ),
        ("def f(x: idx[n - n]) = x", "idx[0]", 10),
        // A result annotation, a lambda's parameter and an annotated expression.
        (
            "def f(x: n.f32) : (n/0).f32 = x",
            "division by zero in n / 0",
            19,
        ),
        (
            "def f(x: n.f32) = x |> map(fun(v: vec[f32, 0] => v))",
            "vector width 0",
            35,
        ),
        (
            "def f(x: n.f32) = x : (n % 0).f32",
            "remainder by zero in n % 0",
            23,
        ),
        // Deep inside a type.
        (
            "def f(x: 4.(f32, 2.(n/0).f32)) = x",
            "division by zero in n / 0",
            10,
        ),
    ];
    for (source, message, column) in cases {
        let (e, at) = load_error(source);
        assert_eq!(e.kind, ErrorKind::Type, "{source}: {}", e.message);
        assert!(e.message.contains(message), "{source}: {}", e.message);
        assert_eq!(at, (1, column), "{source}: {}", e.message);
    }
    // `parse_type` checks, too.
    let e = parse_type("vec[f32, 2 - 2]").unwrap_err();
    assert!(e.message.contains("vector width 0"), "{}", e.message);
    // Sizes that are fine for some values of their variables are fine.
    for ty in [
        "(n - 1).f32",
        "idx[n]",
        "vec[f32, n - m]",
        "(n / m).f32",
        "(2^62).f32",
    ] {
        assert!(parse_type(ty).is_ok(), "{ty}");
    }
}

#[test]
fn undefined_nat_arguments_are_located_type_errors() {
    let cases = [
        (
            "def f(x: n.f32) = split(n/0, x)",
            "division by zero in n / 0",
            25,
        ),
        (
            "def f(x: n.f32) = x |> split(4294967296*4294967296)",
            "4294967296 * 4294967296 overflows 64-bit integers",
            30,
        ),
        (
            "def f(x: n.f32) = x |> drop(n % (1 - 1))",
            "remainder by zero in n % 0",
            29,
        ),
    ];
    for (source, message, column) in cases {
        let (e, at) = load_error(source);
        assert_eq!(e.kind, ErrorKind::Type, "{source}: {}", e.message);
        assert!(e.message.contains(message), "{source}: {}", e.message);
        assert_eq!(at, (1, column), "{source}: {}", e.message);
    }
}

#[test]
fn inferred_types_with_undefined_or_impossible_sizes_are_errors() {
    // Instantiating a generic definition divides by zero: in an equation...
    let source = "def f<n, m>(x: (n/m).f32) = x\ndef g(y: 4.f32) = f(4, 0, y)";
    let (e, at) = load_error(source);
    assert_eq!(e.kind, ErrorKind::Nat);
    assert!(
        e.message.contains("division by zero in 4 / 0"),
        "{}",
        e.message
    );
    assert_eq!(at.0, 2);
    // ... or in the type of the result.
    let source = "def f<n, m>(x: n.f32) = split(m, x)\ndef g(y: 4.f32) = f(4, 0, y)";
    let (e, at) = load_error(source);
    assert_eq!(e.kind, ErrorKind::Type);
    assert!(
        e.message
            .contains("the array length in (4 / 0).0.f32 is undefined: division by zero in 4 / 0"),
        "{}",
        e.message
    );
    assert_eq!(at.0, 2);
    // A size that instantiation makes negative.
    let source = "def g(x: n.f32) = drop(5, x)\ndef f(y: 3.f32) = g(y)";
    let (e, at) = load_error(source);
    assert_eq!(e.kind, ErrorKind::Type);
    assert!(
        e.message
            .contains("the array length 0 - 2 in (0 - 2).f32 is negative"),
        "{}",
        e.message
    );
    assert_eq!(at.0, 2);
    // A solution that is negative.
    let (e, _) = load_error("def f(x: 4.f32) = drop(6, x)");
    assert_eq!(e.kind, ErrorKind::Nat);
    assert!(
        e.message.contains("the solution -2 is negative"),
        "{}",
        e.message
    );
    // Instantiation that overflows.
    let source = "def f<n>(x: (n*n*n).f32) = x\ndef g(y: 8.f32) = f(2097152, y)";
    let (e, _) = load_error(source);
    assert!(
        e.message.contains("2097152^3 overflows 64-bit integers"),
        "{}",
        e.message
    );
    // A vector without lanes from a primitive's type.
    let (e, _) = load_error("def f(x: 8.f32) = x |> asVector(0) |> asScalar");
    assert!(e.message.contains("0"), "{}", e.message);
}

#[test]
fn sizes_that_overflow_when_the_program_runs_are_errors() {
    let program = load("def f(x: (n*n*n).f32) = x |> map(fun(v => v + 1.0))");
    let n = elevate_rise::nat::NatVar::Named("n".into());
    let nats = [(n, 1_i64 << 40)].into_iter().collect();
    let e = program.eval_random(&nats, 0).unwrap_err();
    assert!(
        e.message.contains("n^3 overflows 64-bit integers"),
        "{}",
        e.message
    );
}

#[test]
fn sizes_nested_twenty_thousand_deep_do_not_overflow_the_stack() {
    use elevate_rise::nat::NatVar;
    use std::collections::HashSet;
    const DEPTH: usize = 20_000;
    // `n / (m + n / (m + ... n))`: each division is an atom holding the next.
    let text = format!("{}n{}", "(n / (m + ".repeat(DEPTH), "))".repeat(DEPTH));
    let nat = parse_nat(&text).unwrap();
    let printed = nat.to_string();
    assert!(
        printed.starts_with("n / (m + n / (m + "),
        "{}",
        &printed[..40]
    );
    let again = parse_nat(&printed).unwrap();
    assert_eq!(again, nat);
    assert_eq!(HashSet::from([nat.clone(), again.clone()]).len(), 1);
    assert_eq!(nat.vars().len(), 2);
    let m_is_one = |v: &NatVar| (v.to_string() == "m").then_some(elevate_rise::nat::Nat::ONE);
    let substituted = nat.substitute(&m_is_one);
    assert!(substituted.undefined().is_none());
    // At n = 1 the innermost division is 1 / 2.
    assert!(nat.try_eval(&|_| Some(1)).is_err());
    let ty = parse_type(&format!("({text}).f32")).unwrap();
    assert!(ty.check_well_formed().is_ok());
    assert!(ty.to_string().ends_with(")).f32"));
    // Dropping all of it is the last check.
}

#[test]
fn types_nested_a_hundred_thousand_deep_do_not_overflow_the_stack() {
    use elevate_rise::nat::{Nat, NatVar};
    use elevate_rise::types::Type;
    use std::collections::HashSet;
    const DEPTH: usize = 100_000;
    let build = || {
        (0..DEPTH).fold(parse_type("f32").unwrap(), |t, _| {
            Type::array(Nat::named("n"), t)
        })
    };
    let (a, b) = (build(), build());
    assert_eq!(a, b);
    assert_eq!(HashSet::from([a.clone(), b.clone()]).len(), 1);
    assert_eq!(a.to_string().len(), 2 * DEPTH + 3);
    assert!(!a.has_unknowns());
    assert_eq!(a.nat_vars(), [NatVar::Named("n".into())]);
    assert!(a.check_well_formed().is_ok());
    let zero = a.map_nats(&|_| Some(Nat::ZERO));
    assert!(zero.to_string().starts_with("0.0.0."));
    let f32 = parse_type("f32").unwrap();
    let functions = (0..DEPTH).fold(b.clone(), |t, _| Type::fun(f32.clone(), t));
    assert!(functions.check_well_formed().is_ok());
    let bad = Type::fun(functions, Type::vector(f32, Nat::ZERO));
    assert!(bad
        .check_well_formed()
        .unwrap_err()
        .to_string()
        .contains("vec[f32, 0]"));
}

// -- Property: checked arithmetic on huge operands. --

mod huge {
    use elevate_rise::nat::{EvalError, Nat, NatOp, NatVar, Undefined};
    use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};

    /// An `i64`, mostly huge: near the limits, powers of two, or anything.
    #[derive(Clone, Copy, Debug)]
    struct Huge(i64);

    impl Arbitrary for Huge {
        fn arbitrary(g: &mut Gen) -> Huge {
            let shift = u32::from(u8::arbitrary(g) % 63);
            let sign = if bool::arbitrary(g) { 1 } else { -1 };
            Huge(match u8::arbitrary(g) % 6 {
                0 => i64::from(i8::arbitrary(g) % 8),
                1 => sign * (1_i64 << shift),
                2 => i64::MAX - i64::from(u8::arbitrary(g) % 4),
                3 => i64::MIN + i64::from(u8::arbitrary(g) % 4),
                4 => sign * ((1_i64 << shift) - 1),
                _ => i64::arbitrary(g),
            })
        }
    }

    const OPS: [NatOp; 6] = [
        NatOp::Add,
        NatOp::Sub,
        NatOp::Mul,
        NatOp::Div,
        NatOp::Rem,
        NatOp::Pow,
    ];

    /// `x` as an `i64`, if it fits.
    fn fit(x: i128) -> Option<i64> {
        i64::try_from(x).ok()
    }

    /// The exact value of `a op b` where it is an integer that fits, `Err`
    /// with the expected kind of failure otherwise.
    #[derive(Debug, PartialEq)]
    enum Expected {
        Value(i64),
        /// A fraction `num / den` (both fit in 64 bits).
        Fraction(i64, i64),
        Overflow,
        ByZero,
    }

    fn reference(a: i64, op: NatOp, b: i64) -> Expected {
        let (x, y) = (i128::from(a), i128::from(b));
        let value = |v: Option<i128>| match v.and_then(fit) {
            Some(v) => Expected::Value(v),
            None => Expected::Overflow,
        };
        match op {
            NatOp::Add => value(Some(x + y)),
            NatOp::Sub => value(Some(x - y)),
            NatOp::Mul => value(Some(x * y)),
            NatOp::Div | NatOp::Rem if b == 0 => Expected::ByZero,
            NatOp::Div if x % y == 0 => value(Some(x / y)),
            NatOp::Div => Expected::Fraction(a, b),
            NatOp::Rem => value(Some(x.rem_euclid(y))),
            NatOp::Pow => match (a, b) {
                (0, e) if e < 0 => Expected::ByZero,
                (_, 0) => Expected::Value(1),
                (0 | 1, _) => Expected::Value(a),
                (-1, e) => Expected::Value(if e % 2 == 0 { 1 } else { -1 }),
                (_, e) => {
                    // |a| >= 2: beyond 63 bits of exponent, it overflows.
                    let power = u32::try_from(e.unsigned_abs())
                        .ok()
                        .and_then(|e| x.checked_pow(e))
                        .and_then(fit);
                    match (power, e < 0) {
                        (Some(p), false) => Expected::Value(p),
                        (Some(p), true) => Expected::Fraction(1, p),
                        (None, _) => Expected::Overflow,
                    }
                }
            },
        }
    }

    #[test]
    fn constant_arithmetic_is_exact_or_an_error() {
        fn prop(a: Huge, op: u8, b: Huge) -> bool {
            let op = OPS[usize::from(op) % OPS.len()];
            let (a, b) = (a.0, b.0);
            let result = Nat::cst(a).apply(op, &Nat::cst(b));
            let expected = reference(a, op, b);
            let ok = match &expected {
                Expected::Value(v) => result.as_const() == Some(*v),
                Expected::Fraction(num, den) => {
                    // `num / den` in lowest terms need not fit: then it overflows.
                    result.is_const() && &result * &Nat::cst(*den) == Nat::cst(*num)
                        || result.is_overflow()
                }
                Expected::Overflow => result.is_overflow(),
                Expected::ByZero => matches!(
                    result.undefined(),
                    Some(
                        Undefined::DivisionByZero(_)
                            | Undefined::RemainderByZero(_)
                            | Undefined::ZeroToNegativePower(_)
                    )
                ),
            };
            if !ok {
                eprintln!("{a} {op:?} {b}: expected {expected:?}, found {result}");
            }
            ok
        }
        QuickCheck::new()
            .tests(5000)
            .min_tests_passed(5000)
            .quickcheck(prop as fn(Huge, u8, Huge) -> bool);
    }

    /// A polynomial expression over `n` and `m` with huge constants.
    #[derive(Clone, Debug)]
    enum Expr {
        Lit(i64),
        Var(bool),
        Add(Box<Expr>, Box<Expr>),
        Sub(Box<Expr>, Box<Expr>),
        Mul(Box<Expr>, Box<Expr>),
        Rem(Box<Expr>, i64),
        Pow(Box<Expr>, u32),
    }

    fn gen_expr(g: &mut Gen, depth: u32) -> Expr {
        let sub = |g: &mut Gen| Box::new(gen_expr(g, depth - 1));
        match u8::arbitrary(g) % if depth == 0 { 2 } else { 9 } {
            0 => Expr::Lit(Huge::arbitrary(g).0),
            1 => Expr::Var(bool::arbitrary(g)),
            2 | 3 => Expr::Add(sub(g), sub(g)),
            4 => Expr::Sub(sub(g), sub(g)),
            5 | 6 => Expr::Mul(sub(g), sub(g)),
            7 => Expr::Rem(sub(g), Huge::arbitrary(g).0.max(1)),
            _ => Expr::Pow(sub(g), u32::from(u8::arbitrary(g) % 4)),
        }
    }

    impl Arbitrary for Expr {
        fn arbitrary(g: &mut Gen) -> Expr {
            gen_expr(g, 3)
        }
    }

    impl Expr {
        fn to_nat(&self) -> Nat {
            match self {
                Expr::Lit(v) => Nat::cst(*v),
                Expr::Var(first) => Nat::named(if *first { "n" } else { "m" }),
                Expr::Add(a, b) => &a.to_nat() + &b.to_nat(),
                Expr::Sub(a, b) => &a.to_nat() - &b.to_nat(),
                Expr::Mul(a, b) => &a.to_nat() * &b.to_nat(),
                Expr::Rem(a, k) => &a.to_nat() % &Nat::cst(*k),
                Expr::Pow(a, e) => a.to_nat().pow(&Nat::cst(i64::from(*e))),
            }
        }

        /// The exact value in 128 bits; `None` if that overflows.
        fn value(&self, n: i64, m: i64) -> Option<i128> {
            Some(match self {
                Expr::Lit(v) => i128::from(*v),
                Expr::Var(first) => i128::from(if *first { n } else { m }),
                Expr::Add(a, b) => a.value(n, m)?.checked_add(b.value(n, m)?)?,
                Expr::Sub(a, b) => a.value(n, m)?.checked_sub(b.value(n, m)?)?,
                Expr::Mul(a, b) => a.value(n, m)?.checked_mul(b.value(n, m)?)?,
                Expr::Rem(a, k) => a.value(n, m)?.rem_euclid(i128::from(*k)),
                Expr::Pow(a, e) => a.value(n, m)?.checked_pow(*e)?,
            })
        }
    }

    fn is_overflow(e: &EvalError) -> bool {
        matches!(
            e,
            EvalError::Overflow(_) | EvalError::Undefined(Undefined::Overflow { .. })
        )
    }

    #[test]
    fn evaluating_and_substituting_huge_sizes_is_exact_or_an_overflow() {
        fn prop(e: Expr, n: Huge, m: Huge) -> TestResult {
            // Sizes are natural numbers.
            let (n, m) = (n.0.saturating_abs(), m.0.saturating_abs());
            let nat = e.to_nat();
            let env = |v: &NatVar| Some(if v.to_string() == "n" { n } else { m });
            let evaluated = nat.try_eval(&env);
            let substituted = nat.substitute(&|v| env(v).map(Nat::cst));
            // The same check by substitution: a constant or an overflow.
            let by_substitution = match substituted.undefined() {
                Some(why) => Err(EvalError::Undefined(why.clone())),
                None => substituted.try_eval(&|_| None),
            };
            let Some(exact) = e.value(n, m) else {
                // Beyond 128 bits along the way: no reference, but no panic either.
                return TestResult::discard();
            };
            let agrees = |found: &Result<i64, EvalError>| match (fit(exact), found) {
                (Some(v), Ok(w)) => v == *w,
                (_, Err(e)) => is_overflow(e),
                (None, Ok(_)) => false,
            };
            if !agrees(&evaluated) || !agrees(&by_substitution) {
                eprintln!("{e:?} at n = {n}, m = {m}: {nat} = {exact}, found {evaluated:?} and {by_substitution:?}");
                return TestResult::failed();
            }
            TestResult::passed()
        }
        // Most cases have a 128-bit reference; the rest only must not panic.
        QuickCheck::new()
            .tests(3000)
            .max_tests(30_000)
            .min_tests_passed(3000)
            .quickcheck(prop as fn(Expr, Huge, Huge) -> TestResult);
    }
}
