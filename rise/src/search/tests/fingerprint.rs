//! The fingerprint: equal exactly for alpha-equivalent terms, whatever path made them.

use crate::generate::Generator;
use crate::search::fingerprint;
use crate::term::{Expr, Ident, Literal, Term};
use crate::{infer, parse_term, print_term, registry, Program};
use elevate_core::{Context, Traversable};
use quickcheck::{QuickCheck, TestResult};

fn typed(seed: u64, size: u8) -> Term {
    let program = Generator::new(seed).program(size as usize % 40 + 1);
    infer(&program).unwrap_or_else(|e| panic!("{e}: {}", print_term(&program)))
}

/// `t` with every bound variable renamed to a fresh one (a new name and identity).
fn rename_binders(t: &Term, renamed: &mut Vec<(u64, Ident)>) -> Term {
    match t.expr() {
        Expr::Var(x) => match renamed.iter().rev().find(|(id, _)| *id == x.id) {
            Some((_, y)) => Term::with(Expr::Var(y.clone()), t.ty().cloned(), None),
            None => t.clone(),
        },
        Expr::Lambda(x, ty, body) => {
            // A new name and an identity no term of these tests uses.
            let y = Ident::new(format!("{}_renamed", x.name), x.id + (1 << 40));
            renamed.push((x.id, y.clone()));
            let body = rename_binders(body, renamed);
            renamed.pop();
            Term::with(Expr::Lambda(y, ty.clone(), body), t.ty().cloned(), None)
        }
        _ => {
            let children = (0..t.arity())
                .map(|i| rename_binders(t.child(i), renamed))
                .collect::<Vec<_>>();
            if children.is_empty() {
                t.clone()
            } else {
                t.with_children(children)
            }
        }
    }
}

/// `t` with its first float or integer literal (in pre-order) changed, if it has one.
fn change_a_literal(t: &Term) -> Option<Term> {
    let changed = match t.expr() {
        Expr::Literal(Literal::F32(v)) => Some(Literal::F32(v + 1.0)),
        Expr::Literal(Literal::I32(v)) => Some(Literal::I32(v.wrapping_add(1))),
        _ => None,
    };
    if let Some(l) = changed {
        return Some(Term::literal(l));
    }
    (0..t.arity()).find_map(|i| change_a_literal(t.child(i)).map(|c| t.with_child(i, c)))
}

#[test]
fn fingerprints_are_equal_exactly_for_alpha_equivalent_programs() {
    fn property(a: u64, b: u64, size: u8) -> TestResult {
        let (x, y) = (typed(a, size), typed(b, size));
        TestResult::from_bool((fingerprint(&x) == fingerprint(&y)) == x.alpha_eq(&y))
    }
    // Two programs whose only difference is the types of unused parameters.
    assert!(!property(15685250273825489034, u64::MAX, 0).is_failure());
    QuickCheck::new()
        .tests(300)
        .quickcheck(property as fn(u64, u64, u8) -> TestResult);
    // Random pairs are almost never equal: the same seed twice is (with fresh names).
    for seed in 0..50 {
        let (x, y) = (typed(seed, 30), typed(seed, 30));
        assert!(x.alpha_eq(&y));
        assert_eq!(fingerprint(&x), fingerprint(&y), "{}", print_term(&x));
    }
}

#[test]
fn renaming_bound_variables_keeps_the_fingerprint_and_changing_a_literal_does_not() {
    fn property(seed: u64, size: u8) -> TestResult {
        let x = typed(seed, size);
        let renamed = rename_binders(&x, &mut Vec::new());
        if !renamed.alpha_eq(&x) || fingerprint(&renamed) != fingerprint(&x) {
            return TestResult::failed();
        }
        match change_a_literal(&x) {
            Some(changed) if !changed.alpha_eq(&x) => {
                TestResult::from_bool(fingerprint(&changed) != fingerprint(&x))
            }
            _ => TestResult::discard(),
        }
    }
    QuickCheck::new()
        .tests(300)
        .quickcheck(property as fn(u64, u8) -> TestResult);
}

#[test]
fn printing_and_parsing_back_keeps_the_fingerprint() {
    for seed in 0..100 {
        let x = typed(seed, 35);
        let back = parse_term(&print_term(&x)).unwrap();
        assert!(back.alpha_eq(&x.erase_types()));
        assert_eq!(fingerprint(&back), fingerprint(&x), "{}", print_term(&x));
    }
}

#[test]
fn two_rewrite_paths_to_one_program_have_one_fingerprint() {
    let source = "def f(x: 8.f32) = x |> map(fun(a => a + 1.0)) |> map(fun(b => b * 2.0)) |> map(fun(c => c - 3.0))";
    let program = Program::load(source, None).unwrap();
    let apply = |text: &str| {
        let s = registry().parse(text).unwrap();
        s.apply(&program.entry().term, &mut Context::default())
            .unwrap()
    };
    // Fusing the first two maps first, or the last two: different terms on the way
    // (the fused functions nest the other way round), then the same program with
    // other names for its variables.
    let left = apply("normalize(mapFusion)");
    let right = apply("repeat(bottomUp(mapFusion))");
    assert!(!left.alpha_eq(&right));
    assert_ne!(fingerprint(&left), fingerprint(&right));
    let left = apply("normalize(mapFusion) ; normalize(betaReduction)");
    let right = apply("repeat(bottomUp(mapFusion)) ; normalize(betaReduction)");
    assert!(left.alpha_eq(&right));
    assert_eq!(fingerprint(&left), fingerprint(&right));
    // The same program with other identities for its bound variables.
    let renamed = rename_binders(&right, &mut Vec::new());
    assert_ne!(left, renamed, "the variables have other identities");
    assert!(left.alpha_eq(&renamed));
    assert_eq!(fingerprint(&left), fingerprint(&renamed));
}

#[test]
fn binders_count_by_position_free_variables_by_identity() {
    let fp = |text: &str| fingerprint(&parse_term(text).unwrap());
    // Shadowing: the inner `x` is the inner binder's.
    assert_eq!(fp("fun(x => fun(x => x))"), fp("fun(a => fun(b => b))"));
    assert_ne!(fp("fun(x => fun(x => x))"), fp("fun(a => fun(b => a))"));
    // Free variables: by identity and name, not by position.
    let add = |x: &Ident, y: &Ident| {
        Term::apps(
            Term::prim(crate::prim::Prim::Add),
            [Term::var(x), Term::var(y)],
        )
    };
    let (z, z2) = (Ident::new("z", 1), Ident::new("z", 2));
    assert_eq!(fingerprint(&add(&z, &z)), fingerprint(&add(&z, &z)));
    assert_ne!(fingerprint(&add(&z, &z)), fingerprint(&add(&z2, &z2)));
    assert_ne!(fingerprint(&add(&z, &z2)), fingerprint(&add(&z2, &z)));
    // Nat arguments, literals, annotations.
    assert_ne!(fp("split(4)"), fp("split(8)"));
    assert_ne!(fp("0.0"), fp("-0.0"));
    assert_ne!(fp("1"), fp("1.0"));
    assert_ne!(
        fp("generate(fun(i => 0.0)) : 4.f32"),
        fp("generate(fun(i => 0.0)) : 8.f32")
    );
    assert_ne!(fp("[1, 2]"), fp("[2, 1]"));
    // A parameter's annotation counts where nothing else fixes its type: where the body
    // does not use it.
    assert_ne!(
        fp("fun(x1: 1.2.f32, x2: 1.f32 => 3.0)"),
        fp("fun(x1: 2.3.f32, x2: (f32, i32) => 3.0)")
    );
    assert_ne!(fp("fun(x: f32 => 3.0)"), fp("fun(x: i32 => 3.0)"));
    assert_eq!(fp("fun(x: f32 => x)"), fp("fun(y => y)"));
    assert_eq!(
        fp("fun(x: f32 => fun(x: i32 => x))"),
        fp("fun(a: f32 => fun(b: i32 => b))")
    );
    assert_ne!(
        fp("fun(f => fun(g => f(g)))"),
        fp("fun(f => fun(g => g(f)))")
    );
}

#[test]
fn a_program_100000_levels_deep_has_a_fingerprint() {
    const DEPTH: usize = 100_000;
    // Different names and identities for the two towers.
    let build = |prefix: &str, first_id: u64| {
        let names: Vec<Ident> = (0..DEPTH)
            .map(|i| Ident::new(format!("{prefix}{i}"), first_id + i as u64))
            .collect();
        // fun(x0 => fun(x1 => ... add(x0)(x(DEPTH-1)) ...))
        let mut body = Term::apps(
            Term::prim(crate::prim::Prim::Add),
            [Term::var(&names[0]), Term::var(&names[DEPTH - 1])],
        );
        for x in names.iter().rev() {
            body = Term::lambda(x.clone(), body);
        }
        body
    };
    let (a, b) = (build("x", 1), build("y", 1 + DEPTH as u64));
    assert_eq!(fingerprint(&a), fingerprint(&b));
    let mut c = Term::literal(Literal::I32(0));
    for _ in 0..DEPTH {
        c = Term::app(Term::prim(crate::prim::Prim::Neg), c);
    }
    assert_ne!(fingerprint(&a), fingerprint(&c));
}
