//! Programs 100,000 levels deep: no traversal, comparison, print or drop overflows.
//!
//! Test threads run on small stacks (2 MiB by default), which makes this a real test.

use elevate_core::arith::{self, Term};
use elevate_core::{Context, Path};
use elevate_strategies::*;

const DEPTH: usize = 100_000;

/// `-(-(...(x + 0)...))` with `DEPTH` negations.
fn deep_negations() -> Term {
    (0..DEPTH).fold(Term::sum(Term::var("x"), Term::num(0)), |t, _| {
        Term::negate(t)
    })
}

/// `((x + 0) * 1) * 1 ...`, nesting to the left `DEPTH` times.
fn deep_products() -> Term {
    (0..DEPTH).fold(Term::sum(Term::var("x"), Term::num(0)), |t, _| {
        Term::product(t, Term::num(1))
    })
}

#[test]
fn whole_program_traversals_reach_the_bottom() {
    let t = deep_negations();
    let r = top_down(arith::add_zero()).run(&t).unwrap();
    assert_eq!(r.size(), t.size() - 2);
    let r = bottom_up(arith::add_zero()).run(&t).unwrap();
    assert_eq!(r.size(), t.size() - 2);
    let r = try_all(arith::add_zero()).run(&t).unwrap();
    assert_eq!(r.size(), t.size() - 2);
    let r = all_top_down(try_(arith::add_zero())).run(&t).unwrap();
    assert_eq!(r.size(), t.size() - 2);
    let r = all_bottom_up(try_(arith::add_zero())).run(&t).unwrap();
    assert_eq!(r.size(), t.size() - 2);
    let r = downup(try_(arith::add_zero())).run(&t).unwrap();
    assert_eq!(r.size(), t.size() - 2);
    assert!(alltd(arith::add_zero()).run(&t).is_ok());
    assert!(sometd(arith::add_zero()).run(&t).is_ok());
    assert!(somebu(arith::add_zero()).run(&t).is_ok());
    assert!(top_down(arith::mul_one()).run(&t).is_err());
}

#[test]
fn normalize_removes_every_rewrite_in_deep_programs() {
    let r = normalize(arith::neg_neg() | arith::add_zero())
        .run(&deep_negations())
        .unwrap();
    assert_eq!(r.to_string(), "x");
    let mut cx = Context::default();
    let r = normalize(arith::mul_one() | arith::add_zero())
        .apply(&deep_products(), &mut cx)
        .unwrap();
    assert_eq!(r.to_string(), "x");
    assert_eq!(cx.stats().steps, DEPTH as u64 + 1);
}

#[test]
fn locations_reach_the_bottom() {
    let t = deep_negations();
    let bottom = Path::from(vec![0; DEPTH]);
    let r = at_path(bottom.clone(), arith::add_zero()).run(&t).unwrap();
    assert_eq!(r.size(), t.size() - 2);
    let r = position(DEPTH, arith::add_zero()).run(&t).unwrap();
    assert_eq!(r.size(), t.size() - 2);
    let r = skip(0, arith::add_zero()).run(&t).unwrap();
    assert_eq!(r.size(), t.size() - 2);
    let mut cursor = elevate_core::Cursor::new(t.clone());
    cursor.goto(&bottom).unwrap();
    cursor
        .apply(&arith::add_zero(), &mut Context::default())
        .unwrap();
    assert_eq!(cursor.into_root(), r);
    assert!(contains(Term::var("x")).run(&t).is_ok());
}

#[test]
fn deep_programs_compare_print_parse_and_drop() {
    let (a, b) = (deep_negations(), deep_negations());
    assert_eq!(a, b);
    let c = top_down(arith::add_zero()).run(&b).unwrap();
    assert_ne!(a, c);
    let text = deep_products().to_string();
    assert!(text.starts_with("(x + 0) * 1 * 1"));
    let parsed: Term = text.parse().unwrap();
    assert_eq!(parsed, deep_products());
    drop((a, b, c, parsed));
}

/// Strategy text of `n` nested `try`s around `id`.
fn nested_tries(n: usize) -> String {
    format!("{}id{}", "try(".repeat(n), ")".repeat(n))
}

#[test]
fn text_nested_100000_deep_parses_prints_applies_and_drops() {
    let text = nested_tries(DEPTH);
    let s = crate::text::registry()
        .parse(&text)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.to_string(), text);
    let t = deep_negations();
    assert_eq!(s.run(&t).unwrap(), t);
    drop(s);
}

#[test]
fn sequences_and_choices_30000_long_parse_print_apply_and_drop() {
    const LONG: usize = 30_000;
    let registry = crate::text::registry();
    let t: Term = "-(-(-(-x)))".parse().unwrap();

    let text = vec!["id"; LONG].join(" ; ");
    let s = registry.parse(&text).unwrap();
    assert_eq!(s.to_string(), text);
    let mut cx = Context::default();
    assert_eq!(s.apply(&t, &mut cx).unwrap(), t);
    assert_eq!(cx.stats().applications, LONG as u64 + 1);

    let text = format!("{} <+ id", vec!["fail"; LONG].join(" <+ "));
    let s = registry.parse(&text).unwrap();
    assert_eq!(s.to_string(), text);
    assert_eq!(s.run(&t).unwrap(), t);

    // `;;` and `@` in a long chain too.
    let text = ["negNeg @ topDown"; 2].join(" ;; ");
    assert_eq!(
        registry.parse(&text).unwrap().to_string(),
        "topDown(negNeg) ; DFNF ; topDown(negNeg)"
    );
}

#[test]
fn strategies_built_in_rust_100000_deep_apply_print_and_drop() {
    let t = deep_negations();
    let tries = (0..DEPTH).fold(id::<Term>(), |s, _| try_(s));
    assert_eq!(tries.run(&t).unwrap(), t);
    assert!(tries.to_string().starts_with("try(try("));
    // Binary sequences and choices nested to the left and to the right.
    let left = (0..DEPTH).fold(id::<Term>(), |s, _| s >> id());
    let right = (0..DEPTH).fold(id::<Term>(), |s, _| id() >> s);
    let choices = (0..DEPTH).fold(id::<Term>(), |s, _| fail() | s);
    for (s, word) in [(&left, "id"), (&right, "id"), (&choices, "fail")] {
        assert_eq!(s.run(&t).unwrap(), t);
        let words = if word == "id" { DEPTH + 1 } else { DEPTH };
        assert_eq!(s.to_string().matches(word).count(), words);
    }
    drop((tries, left, right, choices));
}

#[test]
fn a_chain_of_100000_definitions_is_one_reference_deep() {
    let mut text = String::from("def s0 = negNeg\n");
    for i in 1..DEPTH {
        text.push_str(&format!("def s{i} = s{}\n", i - 1));
    }
    text.push_str(&format!("s{}", DEPTH - 1));
    let s = crate::text::registry().parse(&text).unwrap();
    assert!(
        s.to_string() == text,
        "prints as written, definitions in front"
    );
    let t: Term = "-(-x)".parse().unwrap();
    let mut cx = Context::default();
    assert_eq!(s.apply(&t, &mut cx).unwrap().to_string(), "x");
    // Every reference on the way counts as an application, and so do the rule and
    // the file's main strategy (which prints the definitions).
    assert_eq!(cx.stats().applications, DEPTH as u64 + 2);
}
