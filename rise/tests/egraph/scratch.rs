use elevate_rise::egraph::sketch::{guided, GuideStep};
use elevate_rise::egraph::*;
use elevate_rise::{infer, parse_term, print_term};

#[test]
#[ignore]
fn scratch() {
    let src = std::fs::read_to_string("/tmp/exp/prog.rise").unwrap();
    let t = infer(&parse_term(src.trim()).unwrap()).unwrap();
    let steps: Vec<GuideStep> = std::fs::read_to_string("/tmp/exp/steps")
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let parts: Vec<&str> = l.split(";;").map(str::trim).collect();
            GuideStep::new(
                parts[0].parse().unwrap_or_else(|e| panic!("{e}")),
                RuleSet::parse(parts[1]).unwrap(),
                parts[2].parse().unwrap(),
            )
        })
        .collect();
    match guided(&t, &steps, CostModel::Lowered) {
        Ok(out) => {
            for s in &out.steps {
                println!("{} {}", s.sketch, s.report.to_json());
            }
            println!("{}", print_term(&out.program));
        }
        Err(e) => println!("ERR {e}"),
    }
}

#[test]
#[ignore]
fn scratch2() {
    let t = infer(&parse_term("fun(xs: 8.f32 => xs |> reduce(add, 0.0))").unwrap()).unwrap();
    let eq = elevate_rise::rules::equation("blockedReduce", &[4]).unwrap();
    let s = elevate_rise::rules::body(eq.strategy());
    println!("{:?}", s.run(&t).map(|t| print_term(&t)));
    println!("{:?}", eq.lhs());
}

#[test]
#[ignore]
fn scratch3() {
    let t = infer(&parse_term("fun(xs: 8.f32 => xs |> reduce(add, 0.0))").unwrap()).unwrap();
    let eq = elevate_rise::rules::equation("blockedReduce", &[4]).unwrap();
    let r = rewrite(&eq).unwrap();
    println!("{:?}", r.searcher.get_pattern_ast());
    let grown = Saturation::new(
        RuleSet::parse("blockedReduce(4)").unwrap(),
        Limits::default(),
        CostModel::AstSize,
    )
    .grow(&t)
    .unwrap();
    for c in grown.egraph.classes() {
        println!("{} {:?}", c.id, c.nodes);
    }
    println!("{:?}", r.searcher.search(&grown.egraph).len());
}

#[test]
#[ignore]
fn scratch4() {
    let t = infer(
        &parse_term(
            "fun(m: 4.8.f32 => m |> map(fun(r => r |> reduceSeq(fun(a, x => a + x), 0.0))))",
        )
        .unwrap(),
    )
    .unwrap();
    let eq = elevate_rise::rules::equation("liftReduceSeq", &[]).unwrap();
    let s = elevate_rise::rules::body(eq.strategy());
    println!("term: {:?}", s.run(&t).map(|t| print_term(&t)));
    let out = Saturation::new(
        RuleSet::parse("liftReduceSeq").unwrap(),
        Limits::default(),
        CostModel::AstSize,
    )
    .run(&t)
    .unwrap();
    println!("{}", out.report.to_json());
}
