//! Names read back from the e-graph: the e-graph's own supply names extracted binders
//! above every term added, and a saturation inside a strategy run names them above
//! the run's, so they are new to the whole program.

use elevate_core::{Context, Strategy, Traversable};
use elevate_rise::egraph::sketch::{sketch_guided, GuideStep};
use elevate_rise::egraph::{
    add_term, best_term, saturate, CostModel, RiseGraph, RuleSet, SaturationLimits,
};
use elevate_rise::rules::{argument, body, function};
use elevate_rise::{infer, parse_term, print_term, Expr, Term};

fn typed(src: &str) -> Term {
    infer(&parse_term(src).unwrap_or_else(|e| panic!("{e}"))).unwrap_or_else(|e| panic!("{e}"))
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

fn assert_distinct(ids: &[u64], t: &Term) {
    let mut distinct = ids.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), ids.len(), "{ids:?}: {}", print_term(t));
}

#[test]
fn extracted_binders_are_new_to_the_input_and_to_each_other() {
    let t = typed("fun(xs: 8.f32 => xs |> map(fun(x => x * 2.0)) |> map(fun(y => y + 1.0)))");
    let mut g = RiseGraph::default();
    let id = add_term(&mut g, &t).unwrap();
    let a = best_term(&mut g, id);
    let b = best_term(&mut g, id);
    assert!(a.alpha_eq(&b));
    let (ids_a, ids_b) = (binders(&a), binders(&b));
    assert_eq!(ids_a.len(), 3);
    assert!(ids_a.iter().chain(&ids_b).all(|&id| id >= t.name_floor()));
    let both: Vec<u64> = ids_a.iter().chain(&ids_b).copied().collect();
    assert_distinct(&both, &a);
}

/// `(... |> map(fun(p => -p)) |> map(abs), ys |> ...)`: the first component is
/// closed (the e-graph takes closed terms) and holds lower names than the second,
/// which binds higher ones.
const TWO_PARTS: &str = "fun(ys: 4.f32 => \
    ([1.0, 2.0, 3.0, 4.0] |> map(fun(p => -p)) |> map(abs), \
     ys |> map(fun(a => a + 1.0)) |> map(fun(b => b * 2.0))))";

/// `s` on the first component of [`TWO_PARTS`].
fn on_first_part(s: Strategy<Term>) -> Strategy<Term> {
    body(function(argument(s)))
}

#[test]
fn a_saturation_inside_a_run_names_binders_new_to_the_whole_program() {
    let program = typed(TWO_PARTS);
    let rules = RuleSet::parse("mapFusion,betaReduction").unwrap();
    let s = on_first_part(saturate(
        rules,
        SaturationLimits::default(),
        CostModel::Lowered,
    ));
    let result = s.apply(&program, &mut Context::default()).unwrap();
    // The maps of the first component are fused, with a binder of its own.
    assert!(print_term(&result).contains("map(fun(x => abs(-x)))"));
    let ids = binders(&result);
    // `p` is gone, a new binder in its place.
    let old = binders(&program);
    assert_eq!(ids.len(), old.len(), "{}", print_term(&result));
    assert!(
        ids.iter().any(|id| !old.contains(id)),
        "{}",
        print_term(&result)
    );
    assert_distinct(&ids, &result);
    // And the run is reproducible, identities included.
    let again = s.apply(&program, &mut Context::default()).unwrap();
    assert_eq!(binders(&again), ids);
}

#[test]
fn a_sketch_guided_search_inside_a_run_names_binders_new_to_the_whole_program() {
    let program = typed(TWO_PARTS);
    let rules = RuleSet::parse("mapFusion,betaReduction").unwrap();
    let fuse = GuideStep::new(
        "map(fun(?), ?)".parse().unwrap(),
        rules,
        SaturationLimits::default(),
    );
    let s = on_first_part(sketch_guided(vec![fuse], CostModel::Lowered));
    let result = s.apply(&program, &mut Context::default()).unwrap();
    let ids = binders(&result);
    // The maps are fused, with new binders.
    let old = binders(&program);
    assert!(
        print_term(&result).contains("map(fun(x => abs("),
        "{}",
        print_term(&result)
    );
    assert!(
        ids.iter().any(|id| !old.contains(id)),
        "{}",
        print_term(&result)
    );
    assert_distinct(&ids, &result);
}
