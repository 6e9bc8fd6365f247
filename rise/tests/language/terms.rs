//! Binders: capture-avoiding substitution, alpha-equivalence, readable fresh names.

use elevate_core::NameSupply;
use elevate_rise::{parse_pattern, parse_term, print_term, Expr, Ident, Term};

#[test]
fn substitution_renames_binders_that_would_capture() {
    let mut names = NameSupply::new();
    // (fun(y => x + y))[x := y]  must not become  fun(y => y + y).
    let x = Ident::supplied(&mut names, "x");
    let y = Ident::supplied(&mut names, "y");
    let outer_y = Ident::supplied(&mut names, "y");
    let body = Term::apps(
        Term::prim(elevate_rise::prim::Prim::Add),
        [Term::var(&x), Term::var(&y)],
    );
    let lambda = Term::lambda(y.clone(), body);
    let result = lambda.substitute(&x, &Term::var(&outer_y), &mut names);
    let Expr::Lambda(binder, _, _) = result.expr() else {
        panic!("a lambda")
    };
    assert_ne!(binder.id, outer_y.id);
    assert!(result.free_vars().contains(&outer_y.id));
    assert!(!result.free_vars().contains(&x.id));
    // Printed, the two `y`s get distinct names.
    let text = print_term(&Term::lambda(outer_y, result));
    assert_eq!(text, "fun(y, y2 => y + y2)");
}

#[test]
fn substitution_stops_at_a_binder_of_the_same_variable() {
    let mut names = NameSupply::new();
    let x = Ident::supplied(&mut names, "x");
    let inner = Term::lambda(x.clone(), Term::var(&x));
    let same = inner.substitute(&x, &Term::prim(elevate_rise::prim::Prim::Id), &mut names);
    assert!(same.alpha_eq(&inner));
}

#[test]
fn alpha_equivalence_ignores_bound_names_only() {
    let a = parse_term("fun(x => fun(y => x + y))").unwrap();
    let b = parse_term("fun(p => fun(q => p + q))").unwrap();
    let c = parse_term("fun(p => fun(q => q + p))").unwrap();
    assert!(a.alpha_eq(&b));
    assert!(!a.alpha_eq(&c));
    assert!(!a.alpha_eq(&parse_term("fun(x => x)").unwrap()));
}

#[test]
fn shadowed_names_print_apart_and_parse_back() {
    let t = parse_term("fun(x => fun(x => x) (x))").unwrap();
    let text = print_term(&t);
    assert_eq!(text, "fun(x => fun(x2 => x2)(x))");
    assert!(parse_term(&text).unwrap().alpha_eq(&t));
}

#[test]
fn nat_arguments_must_be_in_scope() {
    let e = elevate_rise::Program::load("def f(x: n.f32) = split(q, x)", None).unwrap_err();
    assert!(
        e.message.contains("unknown nat variable `q`"),
        "{}",
        e.message
    );
    assert!(elevate_rise::Program::load("def f<q>(x: (q*4).f32) = split(q, x)", None).is_ok());
}

#[test]
fn alpha_equivalence_follows_shadowing() {
    let eq = |a: &str, b: &str| parse_term(a).unwrap().alpha_eq(&parse_term(b).unwrap());
    // The inner binder hides the outer one of the same name.
    assert!(eq("fun(x => fun(x => x))", "fun(a => fun(b => b))"));
    assert!(!eq("fun(x => fun(x => x))", "fun(a => fun(b => a))"));
    assert!(eq("fun(x => fun(y => x))", "fun(a => fun(a2 => a))"));
    // A variable bound on one side only is never equal to one bound on the other.
    assert!(!eq("fun(x => neg(x))", "fun(x => neg(0))"));
    // Free variables are compared by identity.
    let free = parse_pattern("fun(x => add(x)(y))").unwrap();
    assert!(free.alpha_eq(&free.erase_types()));
    assert_eq!(free.free_vars().len(), 1);
}

/// Every identity below a term's name floor, on every subterm of random programs
/// (where shadowing and nested binders are common): `has_free` says what `free_vars`
/// holds.
#[test]
fn has_free_agrees_with_free_vars_on_every_subterm() {
    use elevate_core::Traversable;
    let mut checked = 0;
    for seed in 0..60u64 {
        let program =
            elevate_rise::generate::Generator::new(seed).program(12 + (seed % 20) as usize);
        let mut pending = vec![program];
        while let Some(t) = pending.pop() {
            let free = t.free_vars();
            for id in 0..=t.name_floor() {
                assert_eq!(
                    t.has_free(id),
                    free.contains(&id),
                    "{id} in {}",
                    print_term(&t)
                );
                checked += usize::from(free.contains(&id));
            }
            pending.extend((0..t.arity()).map(|i| t.child(i).clone()));
        }
    }
    assert!(checked > 100, "only {checked} free occurrences met");
}
