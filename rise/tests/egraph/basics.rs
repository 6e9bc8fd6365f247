//! The e-graph's basics: conversion, rule sets, limits, and e-graphs that share
//! nothing.

use elevate_core::{Budget, BudgetLimit, Context, FailureKind};
use elevate_rise::egraph::{
    add_term, best_term, saturate, sketch_guided, CostModel, GuideStep, RiseGraph, RuleSet,
    Saturation, SaturationLimits,
};
use elevate_rise::{infer, parse_term, print_term, Term};
use std::time::Duration;

fn typed(src: &str) -> Term {
    infer(&parse_term(src).unwrap_or_else(|e| panic!("{e}"))).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_term_round_trips_through_the_egraph() {
    for src in [
        "fun(xs: 4.f32 => xs |> map(fun(x => x * 2.0)) |> reduce(add, 0.0))",
        "fun(a: 4.3.f32 => a |> transpose |> map(fun(r => r |> map(fun(x => x + fst((x, 1.0)))))))",
        "fun(a: 8.f32 => a |> split(4) |> map(fun(r => r |> reduceSeq(fun(acc, y => acc + y), 0.0))))",
    ] {
        let t = typed(src);
        let mut g = RiseGraph::default();
        let id = add_term(&mut g, &t).unwrap();
        let back = best_term(&mut g, id);
        assert!(back.alpha_eq(&t) || print_term(&back) == print_term(&t), "{src}\n{}", print_term(&back));
        assert_eq!(back.ty(), t.ty());
        assert_eq!(infer(&back.erase_types()).unwrap().ty(), t.ty());
    }
}

fn saturated(src: &str, rules: &str, cost: CostModel) -> Term {
    let s = Saturation::new(
        RuleSet::parse(rules).unwrap(),
        SaturationLimits::default(),
        cost,
    );
    s.run(&typed(src)).unwrap_or_else(|e| panic!("{e}")).program
}

#[test]
fn map_fusion_in_the_egraph() {
    let out = saturated(
        "fun(xs: 8.f32 => xs |> map(neg) |> map(abs))",
        "mapFusion,betaReduction,etaReduction",
        CostModel::Lowered,
    );
    assert_eq!(
        print_term(&out),
        "fun(xs: 8.f32 => xs |> map(fun(x => abs(-x))))"
    );
}

fn matmul() -> Term {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/rise/matmul.rise");
    let source = std::fs::read_to_string(path).unwrap();
    elevate_rise::Program::load(&source, None)
        .unwrap()
        .entry()
        .term
        .clone()
}

/// The matmul grows without end under the default rules: only time stops it, checked
/// inside each phase (the report's `ms` shows how close to its limit it stopped).
#[test]
fn saturation_stops_when_its_time_is_up() {
    let limits: SaturationLimits = "ms=400,nodes=100000000,iterations=1000000".parse().unwrap();
    let s = Saturation::new(
        RuleSet::parse("default").unwrap(),
        limits,
        CostModel::Lowered,
    );
    let out = s.run(&matmul()).unwrap();
    println!("{}", out.report.to_json());
    assert_eq!(out.report.stop_reason, "time");
    assert!(out.report.iterations > 0);
    assert_eq!(out.program.ty(), matmul().ty());
}

/// The strategy stops within the context's time budget too, and says that the budget
/// ran out.
#[test]
fn the_strategy_keeps_to_the_context_budget() {
    let limits: SaturationLimits = "s=600,nodes=100000000,iterations=1000000".parse().unwrap();
    let s = saturate(
        RuleSet::parse("default").unwrap(),
        limits,
        CostModel::Lowered,
    );
    let mut cx = Context::new(Budget::unlimited().time(Duration::from_millis(400)));
    let failure = s.apply(&matmul(), &mut cx).unwrap_err();
    assert!(failure.is_budget(), "{failure}");
    assert_eq!(failure.kind(), FailureKind::Budget(BudgetLimit::Time(400)));
    // Without a budget, the saturation's own limits hold.
    let small = saturate(
        RuleSet::parse("mapFusion").unwrap(),
        SaturationLimits::default(),
        CostModel::Lowered,
    );
    let t = typed("fun(xs: 8.f32 => xs |> map(neg) |> map(abs))");
    let mut cx = Context::new(Budget::unlimited().time(Duration::from_secs(60)));
    assert!(small.apply(&t, &mut cx).is_ok());
    // A sketch-guided search too: a sketch it never reaches, a step limit far away.
    let never = GuideStep::new(
        "contains(scanSeq)".parse().unwrap(),
        RuleSet::parse("default").unwrap(),
        limits,
    );
    let search = sketch_guided(vec![never], CostModel::Lowered);
    let mut cx = Context::new(Budget::unlimited().time(Duration::from_millis(400)));
    let failure = search.apply(&matmul(), &mut cx).unwrap_err();
    assert_eq!(failure.kind(), FailureKind::Budget(BudgetLimit::Time(400)));
}

/// Each e-graph owns its types: what one interns, another does not see, and
/// saturations in parallel threads give what they give alone.
#[test]
fn egraphs_share_no_tables() {
    let (a, b) = (
        typed("fun(x: 4.f32 => x |> map(neg))"),
        typed("fun(x: 4.i32 => x |> map(neg))"),
    );
    let mut g = RiseGraph::default();
    add_term(&mut g, &a).unwrap();
    let mut h = RiseGraph::default();
    add_term(&mut h, &b).unwrap();
    let (f32s, i32s) = (a.ty().unwrap(), b.ty().unwrap());
    assert!(g.analysis.types.find(f32s).is_some() && g.analysis.types.find(i32s).is_none());
    assert!(h.analysis.types.find(i32s).is_some() && h.analysis.types.find(f32s).is_none());
    let rules = RuleSet::parse("default").unwrap();
    let alone = Saturation::new(
        rules.clone(),
        SaturationLimits::default(),
        CostModel::Lowered,
    )
    .run(&matmul())
    .unwrap();
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let rules = rules.clone();
            std::thread::spawn(move || {
                Saturation::new(rules, SaturationLimits::default(), CostModel::Lowered)
                    .run(&matmul())
                    .unwrap()
            })
        })
        .collect();
    for run in runs {
        let out = run.join().unwrap();
        assert_eq!(print_term(&out.program), print_term(&alone.program));
    }
}

#[test]
fn rule_sets_say_what_is_wrong_with_a_rule() {
    for (text, message) in [
        (
            "splitJoin(0)",
            "`splitJoin(0)`: the size n must be positive, found 0",
        ),
        ("splitJoin", "`splitJoin`: expects 1 argument(s), found 0"),
        (
            "blockedSum(-4)",
            "`blockedSum(-4)`: the size n must be positive, found -4",
        ),
        (
            "vectorize(1)",
            "`vectorize(1)`: the vector width n must be at least 2, found 1",
        ),
        (
            "mapFusion(2)",
            "`mapFusion(2)`: expects 0 argument(s), found 1",
        ),
        (
            "splitJoin(x)",
            "`splitJoin(x)`: the arguments are whole numbers",
        ),
        ("splitJoin(4", "`splitJoin(4`: a missing `)`"),
        ("", "the rule set is empty"),
    ] {
        let e = RuleSet::parse(text)
            .err()
            .unwrap_or_else(|| panic!("{text}"));
        assert_eq!(e.to_string(), message);
    }
    // A rule of the library that the e-graph does not apply.
    let e = RuleSet::parse("mapFullFission").err().unwrap().to_string();
    assert!(
        e.starts_with("`mapFullFission` is not a rule the e-graph knows (known: "),
        "{e}"
    );
    assert!(
        e.contains("splitJoin(n)") && e.contains("betaReduction"),
        "{e}"
    );
}

/// SaturationLimits as large as the text allows are no limits, not overflows.
#[test]
fn the_largest_limits_are_no_limits() {
    let limits: SaturationLimits = format!("s={},nodes=100000", u64::MAX).parse().unwrap();
    let t = typed("fun(xs: 8.f32 => xs |> map(neg) |> map(abs))");
    let rules = RuleSet::parse("mapFusion,betaReduction").unwrap();
    let out = Saturation::new(rules.clone(), limits, CostModel::Lowered)
        .run(&t)
        .unwrap();
    assert_eq!(out.report.stop_reason, "saturated");
    let s = saturate(rules, limits, CostModel::Lowered);
    let mut cx = Context::new(Budget::unlimited().time(Duration::from_millis(u64::MAX)));
    assert!(s.apply(&t, &mut cx).is_ok());
}

#[test]
fn a_saturation_that_fails_below_the_root_is_located_once() {
    // Saturating an open body fails (its parameter is free there); the failure is
    // located at the body, as the failure of any rule there would be.
    let program = typed("fun(xs: 4.f32 => fun(ys: 4.f32 => xs |> map(fun(x => x * 2.0))))");
    let strategy = elevate_rise::registry()
        .parse(r#"body(body(saturate("mapFusion", "", "size")))"#)
        .unwrap();
    let failure = strategy
        .apply(&program, &mut Context::default())
        .unwrap_err();
    assert_eq!(failure.strategy().as_str(), "saturate");
    assert_eq!(failure.path().as_slice(), &[0, 0]);
}
