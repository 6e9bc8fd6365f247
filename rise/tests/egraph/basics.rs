use elevate_rise::egraph::{
    add_term, best_term, CostModel, Limits, RiseGraph, RuleSet, Saturation,
};
use elevate_rise::{infer, parse_term, print_term, Term};

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
        let back = best_term(&g, id);
        assert!(back.alpha_eq(&t) || print_term(&back) == print_term(&t), "{src}\n{}", print_term(&back));
        assert_eq!(back.ty(), t.ty());
        assert_eq!(infer(&back.erase_types()).unwrap().ty(), t.ty());
    }
}

fn saturated(src: &str, rules: &str, cost: CostModel) -> Term {
    let s = Saturation::new(RuleSet::parse(rules).unwrap(), Limits::default(), cost);
    s.run(&typed(src)).unwrap_or_else(|e| panic!("{e}")).program
}

#[test]
fn map_fusion_in_the_egraph() {
    let out = saturated(
        "fun(xs: 8.f32 => xs |> map(neg) |> map(abs))",
        "mapFusion,betaReduction,eta",
        CostModel::Lowered,
    );
    assert_eq!(
        print_term(&out),
        "fun(xs: 8.f32 => xs |> map(fun(x => abs(-x))))"
    );
}
