//! Fresh names without a global counter: a run's names (their identities included)
//! depend only on the program and the strategy, never on what ran before or beside
//! it, and the binders a run makes are new to the whole program.

use crate::load;
use elevate_core::{Context, Strategy, Traversable};
use elevate_rise::generate::Generator;
use elevate_rise::{parse_program, parse_term, print_term, registry, Expr, Term};

/// Every variable and binder of `t` as `(name, identity)`, in pre-order.
fn idents(t: &Term) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut pending = vec![t];
    while let Some(t) = pending.pop() {
        match t.expr() {
            Expr::Var(x) | Expr::Lambda(x, _, _) => out.push((x.name.to_string(), x.id)),
            _ => {}
        }
        pending.extend((0..t.arity()).rev().map(|i| t.child(i)));
    }
    out
}

/// The identities of the binders of `t`, in pre-order.
fn binders(t: &Term) -> Vec<u64> {
    let mut out = Vec::new();
    let mut pending = vec![t];
    while let Some(t) = pending.pop() {
        if let Expr::Lambda(x, _, _) = t.expr() {
            out.push(x.id);
        }
        pending.extend((0..t.arity()).rev().map(|i| t.child(i)));
    }
    out
}

fn strategy(text: &str) -> Strategy<Term> {
    registry()
        .parse(text)
        .unwrap_or_else(|e| panic!("{}", e.render("strategy", text)))
}

/// `text` applied to `program` in a context of its own.
fn rewrite(program: &Term, text: &str) -> Term {
    strategy(text)
        .apply(program, &mut Context::default())
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// A pipeline of `stages` maps of primitives: DFNF eta-expands each function, making
/// one binder per stage, and map fusion one more per fusion.
fn pipeline(stages: usize) -> Term {
    let mut source = String::from("def f(xs: 16.4.f32) = xs");
    for i in 0..stages {
        let f = ["neg", "abs"][i % 2];
        source.push_str(&format!(" |> map(fun(r => r |> map({f})))"));
    }
    load(&source).entry().term.clone()
}

/// Splits every map (inner ones too) and eta-expands every function of a map: new
/// binders all over the program.
const LIFTING: &str = "DFNF ; tryAll(splitJoin(2)) ; DFNF";

#[test]
fn the_same_run_gives_the_same_names_whatever_ran_before() {
    let program = pipeline(6);
    let first = rewrite(&program, LIFTING);
    // Other work in between: other rewrites, parses and generated programs, all of
    // which make names.
    let other = pipeline(9);
    rewrite(&other, LIFTING);
    rewrite(&other, "normalize(mapFusion) ; DFNF");
    parse_program("def g(x: 4.f32) = x |> map(fun(y => y + 1.0))").unwrap();
    Generator::new(7).program(40);
    let second = rewrite(&program, LIFTING);
    assert_eq!(print_term(&first), print_term(&second));
    assert_eq!(idents(&first), idents(&second));
    // The run did make names: the test compares more than the input's.
    assert!(
        binders(&first).len() > binders(&program).len() + 6,
        "{}\n{}",
        print_term(&program),
        print_term(&first)
    );
}

#[test]
fn parsing_and_generating_give_the_same_names_every_time() {
    let text = "def f(xs: 8.f32) = xs |> map(fun(x => x * 2.0)) |> reduce(fun(a, b => a + b), 0.0)";
    let once = parse_program(text).unwrap().pop().unwrap().term;
    let again = parse_program(text).unwrap().pop().unwrap().term;
    assert_eq!(idents(&once), idents(&again));
    assert!(idents(&once).iter().all(|(_, id)| *id >= 1));
    let a = Generator::new(11).program(60);
    let b = Generator::new(11).program(60);
    assert_eq!(print_term(&a), print_term(&b));
    assert_eq!(idents(&a), idents(&b));
    assert!(!binders(&a).is_empty());
}

#[test]
fn the_binders_a_run_makes_are_distinct_and_above_the_input() {
    let program = pipeline(12);
    let floor = program.name_floor();
    let before = binders(&program);
    assert!(before.iter().all(|&id| id < floor));
    let result = rewrite(&program, LIFTING);
    let made: Vec<u64> = binders(&result)
        .into_iter()
        .filter(|id| !before.contains(id))
        .collect();
    assert!(made.len() > 12, "{}", print_term(&result));
    assert!(
        made.iter().all(|&id| id >= floor),
        "a made binder below the input's floor {floor}: {made:?}"
    );
    let mut distinct = made.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), made.len(), "a binder made twice: {made:?}");
}

#[test]
fn binders_made_inside_a_part_are_new_to_the_rest_of_the_program() {
    // The rewrite happens in the first component, whose own names are the lowest of
    // the program: its new binders must still differ from the second component's.
    let program = parse_term(
        "fun(xs: 4.f32 => fun(ys: 4.f32 => \
         (xs |> map(neg), ys |> map(fun(a => a)) |> map(fun(b => b)) |> map(fun(c => c)))))",
    )
    .unwrap();
    let program = elevate_rise::infer(&program).unwrap();
    let result = rewrite(&program, "body(body(function(argument(DFNF))))");
    let all = binders(&result);
    let mut distinct = all.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        all.len(),
        "{all:?}: {}",
        print_term(&result)
    );
    assert!(all.len() > binders(&program).len());
}

#[test]
fn runs_on_two_threads_at_once_give_the_same_names() {
    let program = pipeline(10);
    // Each thread rewrites a few times, so that the runs overlap.
    let results: Vec<Vec<Term>> = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..2)
            .map(|_| scope.spawn(|| (0..3).map(|_| rewrite(&program, LIFTING)).collect()))
            .collect();
        runs.into_iter().map(|run| run.join().unwrap()).collect()
    });
    let expected = rewrite(&program, LIFTING);
    for result in results.iter().flatten() {
        assert_eq!(print_term(result), print_term(&expected));
        assert_eq!(idents(result), idents(&expected));
    }
    assert!(binders(&expected).len() > binders(&program).len());
}
