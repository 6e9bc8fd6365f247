//! Programs 100,000 levels deep through the e-graph: conversion both ways, the
//! analysis, extraction (by cost and by sketch), saturation and its strategy, without
//! overflowing the stack or taking quadratic time.

use elevate_core::{Context, NameSupply, Strategy};
use elevate_rise::egraph::sketch::{extract, satisfied, Sketch};
use elevate_rise::egraph::{
    add_term, best_term, CostModel, RiseGraph, RuleSet, Saturation, SaturationLimits,
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
    let mut names = NameSupply::above(small.name_floor());
    for _ in 0..DEPTH {
        let y = Ident::supplied(&mut names, "y");
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

fn limits(ms: u64) -> SaturationLimits {
    SaturationLimits {
        time: Duration::from_millis(ms),
        ..SaturationLimits::default()
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
        let back = best_term(&mut egraph, id);
        assert_eq!(back.ty(), program.ty());
        // The same term up to names: the same class (De Bruijn indices, hash-consed).
        assert_eq!(add_term(&mut egraph, &back).unwrap(), id);
    }
}

/// `a` and `b` are the same program up to names: in an e-graph, one class.
fn assert_same(a: &Term, b: &Term) {
    let mut egraph = RiseGraph::default();
    let a = add_term(&mut egraph, a).unwrap();
    let b = add_term(&mut egraph, b).unwrap();
    assert_eq!(a, b);
}

#[test]
fn a_deep_chain_saturates_and_keeps_its_value() {
    let program = chain();
    let limits: SaturationLimits = "ms=2000,nodes=2000000".parse().unwrap();
    let out = Saturation::new(
        RuleSet::parse("default").unwrap(),
        limits,
        CostModel::Lowered,
    )
    .run(&program)
    .unwrap();
    println!("{}", out.report.to_json());
    assert_eq!(out.program.ty(), program.ty());
    assert_eq!(value(&out.program, "[1]"), (DEPTH + 1).to_string());
}

#[test]
fn deep_lets_saturate_and_extract() {
    let program = lets();
    let limits: SaturationLimits = "ms=2000,nodes=2000000".parse().unwrap();
    let out = Saturation::new(
        RuleSet::parse("default").unwrap(),
        limits,
        CostModel::AstSize,
    )
    .run(&program)
    .unwrap();
    println!("{}", out.report.to_json());
    assert_eq!(out.program.ty(), program.ty());
    // No rule makes the lets smaller: the smallest program is the input.
    assert_same(&out.program, &program);
}

#[test]
fn sketches_extract_from_deep_programs() {
    for (program, wanted) in [(chain(), "contains(add)"), (lets(), "or(contains(let), ?)")] {
        let limits: SaturationLimits = "iterations=1,nodes=2000000,ms=60000".parse().unwrap();
        let mut grown = Saturation::new(
            RuleSet::parse("etaReduction").unwrap(),
            limits,
            CostModel::Lowered,
        )
        .grow(&program)
        .unwrap();
        let wanted = Sketch::parse(wanted).unwrap();
        assert!(satisfied(&grown.egraph, grown.root, &wanted));
        let (_, body) = extract(&grown.egraph, grown.root, &wanted, CostModel::Lowered).unwrap();
        assert_same(&grown.program(&body), &program);
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

/// The strategy, written as text, takes deep programs too (its types inferred afresh).
#[test]
fn the_saturate_strategy_takes_deep_programs() {
    let s: Strategy<Term> = elevate_rise::registry()
        .parse("saturate(\"algorithmic\", \"ms=1000,nodes=2000000\", \"size\")")
        .unwrap();
    let program = chain();
    let out = s.apply(&program, &mut Context::default()).unwrap();
    assert_eq!(out.ty(), program.ty());
    assert_eq!(value(&out, "[2]"), (2 * (DEPTH + 1)).to_string());
}
