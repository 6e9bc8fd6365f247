//! Programs 100,000 levels deep through the e-graph: conversion both ways, the
//! analysis, extraction (by cost and by sketch), saturation and its strategy, without
//! overflowing the stack or taking quadratic time.

use elevate_core::{Context, Strategy};
use elevate_rise::egraph::sketch::{extract, satisfied, Sketch};
use elevate_rise::egraph::{
    add_term, best_term, saturate, CostModel, Limits, RiseGraph, RuleSet, Saturation,
};
use elevate_rise::{evaluate, io, Expr, Ident, Program, Term};
use std::time::Duration;

const DEPTH: usize = 100_000;

fn load(source: &str) -> Term {
    Program::load(source, None)
        .unwrap_or_else(|e| panic!("{e}"))
        .entry()
        .term
        .clone()
}

/// `fun(x: i32 => x + x + ... + x)`: a left-nested chain of 100,000 additions, typed
/// (built from the typed nodes of a small one: this file tests the e-graph, not the
/// parser and the type checker).
fn chain() -> Term {
    let small = load("def f(x: i32) = x + x");
    let Expr::Lambda(x, annotation, body) = small.expr() else {
        panic!("a lambda")
    };
    let Expr::App(add_x, x_use) = body.expr() else {
        panic!("x + x")
    };
    let Expr::App(add, _) = add_x.expr() else {
        panic!("add(x)")
    };
    let mut acc = x_use.clone();
    for _ in 0..DEPTH {
        let partial = Term::with(Expr::App(add.clone(), acc), add_x.ty().cloned(), None);
        acc = Term::with(Expr::App(partial, x_use.clone()), body.ty().cloned(), None);
    }
    let lambda = Expr::Lambda(x.clone(), annotation.clone(), acc);
    Term::with(lambda, small.ty().cloned(), None)
}

/// `fun(x: i32 => let y1 = x + 1 in ... let y100000 = x + 1 in x)`: 100,000 nested
/// lets (each a lambda in the e-graph), the innermost body using the outermost binder.
fn lets() -> Term {
    let small = load("def f(x: i32) = let y = x + 1 in x");
    let Expr::Lambda(x, annotation, body) = small.expr() else {
        panic!("a lambda")
    };
    let Expr::App(let_v, lambda) = body.expr() else {
        panic!("let(v)(fun(y => x))")
    };
    let Expr::Lambda(_, _, x_use) = lambda.expr() else {
        panic!("fun(y => x)")
    };
    let mut inner = x_use.clone();
    for _ in 0..DEPTH {
        let y = Ident::fresh("y");
        let lambda = Term::with(Expr::Lambda(y, None, inner), lambda.ty().cloned(), None);
        inner = Term::with(Expr::App(let_v.clone(), lambda), body.ty().cloned(), None);
    }
    let program = Expr::Lambda(x.clone(), annotation.clone(), inner);
    Term::with(program, small.ty().cloned(), None)
}

/// The value of `program` on the JSON inputs `inputs` (`[1]`).
fn value(program: &Term, inputs: &str) -> String {
    let inputs: Vec<serde_json::Value> = serde_json::from_str(inputs).unwrap();
    let (nats, values) = io::bind_inputs(&io::signature(program), &inputs).unwrap();
    let v = evaluate(program, &nats, &values).unwrap_or_else(|e| panic!("{e}"));
    v.to_json().unwrap().to_string()
}

fn limits(ms: u64) -> Limits {
    Limits {
        time: Duration::from_millis(ms),
        ..Limits::default()
    }
}

#[test]
fn deep_programs_round_trip_through_the_egraph() {
    for program in [chain(), lets()] {
        let mut egraph = RiseGraph::default();
        let id = add_term(&mut egraph, &program).unwrap();
        // Every level is a class of its own; the analysis knows each one's size.
        assert!(egraph.number_of_classes() > DEPTH);
        assert!(egraph[id].data.size > DEPTH);
        let back = best_term(&egraph, id);
        assert_eq!(back.ty(), program.ty());
        assert_same(&program, &back);
    }
}

/// `a` and `b` are the same program up to names: in an e-graph (De Bruijn indices,
/// hash-consed), they are one class.
fn assert_same(a: &Term, b: &Term) {
    let mut egraph = RiseGraph::default();
    let a = add_term(&mut egraph, a).unwrap();
    let b = add_term(&mut egraph, b).unwrap();
    assert_eq!(a, b);
}

#[test]
fn a_deep_chain_saturates_and_extracts() {
    let program = chain();
    let rules = RuleSet::parse("default").unwrap();
    let out = Saturation::new(rules, limits(2_000), CostModel::Lowered)
        .run(&program)
        .unwrap();
    println!("{}", out.report.to_json());
    assert_eq!(out.program.ty(), program.ty());
    assert_eq!(value(&out.program, "[1]"), (DEPTH + 1).to_string());
    // The strategy, too (its types inferred afresh).
    let s = saturate(
        RuleSet::parse("default").unwrap(),
        limits(2_000),
        CostModel::AstSize,
    );
    let again = s.apply(&program, &mut Context::default()).unwrap();
    assert_eq!(again.ty(), program.ty());
}

#[test]
fn deep_lets_saturate_and_extract() {
    let program = lets();
    let rules = RuleSet::parse("default").unwrap();
    let out = Saturation::new(rules, limits(2_000), CostModel::AstSize)
        .run(&program)
        .unwrap();
    println!("{}", out.report.to_json());
    assert_eq!(out.program.ty(), program.ty());
    // No rule makes the lets smaller: the smallest program is the input.
    assert_same(&out.program, &program);
}

#[test]
fn sketches_extract_from_deep_programs() {
    for program in [chain(), lets()] {
        let grown = Saturation::new(
            RuleSet::parse("betaReduction").unwrap(),
            Limits {
                iterations: 1,
                ..limits(5_000)
            },
            CostModel::Lowered,
        )
        .grow(&program)
        .unwrap();
        for text in ["?", "contains(add)", "or(contains(let), ?)"] {
            let sketch = Sketch::parse(text).unwrap();
            assert!(satisfied(&grown.egraph, grown.root, &sketch), "{text}");
            let (_, body) = extract(&grown.egraph, grown.root, &sketch, CostModel::Lowered)
                .unwrap_or_else(|| panic!("{text}"));
            assert_same(&grown.program(&body), &program);
        }
        let absent = Sketch::parse("contains(transpose)").unwrap();
        assert!(extract(&grown.egraph, grown.root, &absent, CostModel::Lowered).is_none());
    }
}

#[test]
fn explaining_a_deep_program_is_an_error_not_a_crash() {
    let program = chain();
    let rules = RuleSet::parse("mapFusion").unwrap();
    let out = Saturation::new(rules, limits(2_000), CostModel::AstSize)
        .with_explanations()
        .run(&program);
    let e = out.expect_err("too deep to explain");
    assert!(e.0.contains("levels deep"), "{e}");
}

/// A strategy that is written as text reaches the e-graph the same way.
#[test]
fn the_saturate_strategy_takes_deep_programs() {
    let s: Strategy<Term> = elevate_rise::registry()
        .parse("saturate(\"algorithmic\", \"ms=1000\", \"size\")")
        .unwrap();
    let program = lets();
    let out = s.apply(&program, &mut Context::default()).unwrap();
    assert_same(&out, &program);
}
