use elevate_rise::egraph::*;
use elevate_rise::{infer, parse_term, print_term};

#[test]
#[ignore]
fn scratch() {
    let src = std::fs::read_to_string("/tmp/exp/prog.rise").unwrap();
    let rules = std::fs::read_to_string("/tmp/exp/rules").unwrap();
    let limits: Limits = std::fs::read_to_string("/tmp/exp/limits")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let t = infer(&parse_term(src.trim()).unwrap()).unwrap();
    let s = Saturation::new(
        RuleSet::parse(rules.trim()).unwrap(),
        limits,
        CostModel::Lowered,
    )
    .with_progress(|p| eprintln!("{p:?}"));
    let out = s.run(&t).unwrap();
    println!("{}", print_term(&out.program));
    println!("{}", out.report.to_json());
}
