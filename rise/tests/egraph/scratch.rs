use elevate_rise::egraph::goals::*;
use elevate_rise::print_term;

#[test]
#[ignore]
fn scratch() {
    let n: i64 = std::env::var("N")
        .map(|v| v.parse().unwrap())
        .unwrap_or(1024);
    let only = std::env::var("GOAL").ok();
    let m = matmul(n);
    for goal in matmul_goals(n) {
        if only.as_deref().is_some_and(|g| g != goal.name) {
            continue;
        }
        let r = reach(&goal, &m);
        match &r.outcome {
            Ok(o) => {
                for s in &o.steps {
                    println!("  {}", s.report.to_json());
                }
                println!(
                    "{} found in {:?}: {}",
                    goal.name,
                    r.time,
                    print_term(&o.program)
                        .chars()
                        .take(3000)
                        .collect::<String>()
                );
            }
            Err(e) => println!("{} NOT found in {:?}: {e}", goal.name, r.time),
        }
    }
}

#[test]
#[ignore]
fn scratch_pack() {
    let m = matmul(1024);
    let goals = matmul_goals(1024);
    let r = reach(&goals[3], &m);
    let p = r.outcome.unwrap().program;
    let (params, body) = elevate_rise::egraph::convert::parameters(&p);
    let s = elevate_rise::rules::pack_b_here();
    let out = s.run(&body);
    println!(
        "{:?}",
        out.as_ref()
            .map(|t| print_term(t).chars().take(600).collect::<String>())
            .map_err(|e| e.to_string())
    );
    let _ = params;
}

#[test]
#[ignore]
fn scratch_pack2() {
    let t = elevate_rise::infer(
        &elevate_rise::parse_term("fun(b: 1024.1024.f32 => transpose(b))").unwrap(),
    )
    .unwrap();
    let elevate_rise::Expr::Lambda(_, _, body) = t.expr() else {
        panic!()
    };
    for (name, s) in [
        ("permuteB", elevate_rise::rules::permute_b()),
        ("packBHere", elevate_rise::rules::pack_b_here()),
    ] {
        println!(
            "{name}: {:?}",
            s.run(body)
                .map(|t| print_term(&t).chars().take(300).collect::<String>())
                .map_err(|e| e.to_string())
        );
    }
}

#[test]
#[ignore]
fn scratch_pack3() {
    let m = matmul(1024);
    let goals = matmul_goals(1024);
    let r = reach(&goals[3], &m);
    let p = r.outcome.unwrap().program;
    let (_, body) = elevate_rise::egraph::convert::parameters(&p);
    println!(
        "{:?}",
        elevate_rise::infer::retype_as(&body, body.ty().unwrap())
            .map(|_| ())
            .map_err(|e| e.message)
    );
    let erased = p.erase_types();
    println!(
        "full: {:?}",
        elevate_rise::infer(&erased)
            .map(|_| ())
            .map_err(|e| e.message)
    );
}
