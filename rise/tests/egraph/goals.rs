//! The seven ELEVATE matmul goals, reached from the high-level matmul by sketch
//! guidance (`elevate_rise::egraph::goals`).

use crate::sketches::{assert_equivalent, matches};
use elevate_rise::egraph::goals::{matmul, matmul_goals, reach};
use elevate_rise::egraph::{best_expr, CostModel, RuleSet, Saturation, SaturationLimits};
use elevate_rise::{print_term, NatEnv};

/// At 64x64 (two 32x32 blocks a side, 16 reduction blocks of 4), so that the
/// interpreter can check every result.
const N: i64 = 64;

#[test]
fn every_goal_is_reached_in_at_most_three_sketches_and_computes_the_matmul() {
    let input = matmul(N);
    let goals = matmul_goals(N);
    let names: Vec<&str> = goals.iter().map(|g| g.name).collect();
    assert_eq!(
        names,
        [
            "baseline",
            "blocking",
            "vectorization",
            "loopPerm",
            "arrayPacking",
            "cacheBlocks",
            "par"
        ]
    );
    for goal in &goals {
        assert!(goal.steps.len() <= 3, "{}", goal.name);
        let reached = reach(goal, &input);
        let outcome = reached
            .outcome
            .unwrap_or_else(|e| panic!("{} not reached: {e}", goal.name));
        assert_eq!(outcome.steps.len(), goal.steps.len());
        // The program has the goal's loop nest: re-read into a fresh e-graph, its own
        // term satisfies the last sketch by the tests' independent matcher.
        let last = &goal.steps.last().unwrap().sketch;
        let rules = RuleSet::parse("betaReduction").unwrap();
        let limits = SaturationLimits {
            iterations: 0,
            ..SaturationLimits::default()
        };
        let fresh = Saturation::new(rules, limits, CostModel::AstSize)
            .grow(&outcome.program)
            .unwrap();
        let body = best_expr(&fresh.egraph, fresh.root);
        let root = egg::Id::from(body.as_ref().len() - 1);
        assert!(
            matches(&fresh.egraph.analysis.types, &body, root, last),
            "{}: {}\ndoes not satisfy {last}",
            goal.name,
            print_term(&outcome.program)
        );
        assert_equivalent(&input, &outcome.program, &NatEnv::default());
    }
}

#[test]
fn the_goals_differ_where_their_schedules_do() {
    let input = matmul(N);
    let programs: Vec<(String, String)> = matmul_goals(N)
        .iter()
        .map(|g| {
            let out = reach(g, &input).outcome.unwrap();
            (g.name.to_string(), print_term(&out.program))
        })
        .collect();
    let text = |name: &str| &programs.iter().find(|(n, _)| n == name).unwrap().1;
    assert!(!text("blocking").contains("asVector"));
    assert!(text("vectorization").contains("asVector(32)"));
    assert!(text("arrayPacking").contains("toMem"));
    assert!(!text("arrayPacking").contains("reduceSeqUnroll"));
    assert!(text("cacheBlocks").contains("reduceSeqUnroll"));
    assert!(text("par").starts_with("fun(a: 64.64.f32, b: 64.64.f32 => let"));
    assert!(text("par").contains("mapPar"));
}
