//! Every rule of the library, wherever it applies in random well-typed programs,
//! keeps the program's type and its values (the interpreter is the oracle).

use elevate_core::{Context, Program};
use elevate_rise::generate::Generator;
use elevate_rise::{evaluate, infer, io, print_term, rules, NatEnv, Term};
use elevate_strategies::position;
use serde_json::Value as Json;

fn outputs(term: &Term, seed: u64) -> Json {
    let signature = io::signature(term);
    let inputs = io::random_inputs(&signature, &NatEnv::default(), seed).unwrap();
    evaluate(term, &NatEnv::default(), &inputs)
        .unwrap_or_else(|e| panic!("{e}\n{}", print_term(term)))
        .to_json()
        .unwrap()
}

/// A node of `rewritten` whose type differs from the one inference gives it
/// (`inferred` is `rewritten` inferred afresh, so the two have the same shape).
fn stale_type(rewritten: &Term, inferred: &Term) -> Option<String> {
    if let (Some(kept), Some(fresh)) = (rewritten.ty(), inferred.ty()) {
        if kept != fresh {
            return Some(format!(
                "{} : {kept}, should be {fresh}",
                print_term(rewritten)
            ));
        }
    }
    if rewritten.arity() != inferred.arity() {
        return None;
    }
    (0..rewritten.arity()).find_map(|i| stale_type(rewritten.child(i), inferred.child(i)))
}

#[test]
fn every_rule_preserves_types_and_values_wherever_it_applies() {
    let mut report = Vec::new();
    let mut never = Vec::new();
    for info in rules::library() {
        let rule = (info.make)();
        let mut applied = 0;
        let example = (!info.example.is_empty())
            .then(|| infer(&elevate_rise::parse_term(info.example).unwrap()).unwrap());
        for seed in 0..61u64 {
            // The rule's example first, then random programs biased towards its LHS.
            let program = match (&example, seed) {
                (Some(e), 0) => e.clone(),
                (None, 0) => continue,
                _ => {
                    let mut generator = Generator::new(seed * 7919 + info.name.len() as u64);
                    generator.favourite = info.bias;
                    infer(&generator.program(12 + (seed % 20) as usize)).unwrap()
                }
            };
            let expected = outputs(&program, seed);
            for at in 0..program.size().min(200) {
                let Ok(rewritten) =
                    position(at, rule.clone()).apply(&program, &mut Context::default())
                else {
                    continue;
                };
                applied += 1;
                let retyped = infer(&rewritten).unwrap_or_else(|e| {
                    panic!(
                        "{} at {at} broke the types: {e}\n{}\n=> {}",
                        info.name,
                        print_term(&program),
                        print_term(&rewritten)
                    )
                });
                assert_eq!(retyped.ty(), program.ty(), "{} changed the type", info.name);
                if let Some(stale) = stale_type(&rewritten, &retyped) {
                    panic!(
                        "{} at {at} left a wrong type: {stale}\n{}\n=> {}",
                        info.name,
                        print_term(&program),
                        print_term(&rewritten)
                    );
                }
                let found = outputs(&retyped, seed);
                assert!(
                    io::approx_eq(&found, &expected),
                    "{} at {at} changed the values: {expected} vs {found}\n{}\n=> {}",
                    info.name,
                    print_term(&program),
                    print_term(&retyped)
                );
                if applied > 400 {
                    break;
                }
            }
        }
        report.push(format!("{}: {applied}", info.name));
        if applied == 0 {
            never.push(info.name);
        }
    }
    println!("rule applications checked: {}", report.join(", "));
    assert!(never.is_empty(), "rules that never fired: {never:?}");
}

#[test]
fn normal_forms_keep_types_and_values_and_are_idempotent() {
    let forms = [
        ("BENF", rules::benf()),
        ("DFNF", rules::dfnf()),
        ("RNF", rules::rnf()),
        ("CNF", rules::cnf()),
    ];
    for (name, form) in forms {
        for seed in 0..40u64 {
            let mut generator = Generator::new(seed + 1000);
            generator.favourite = Some(elevate_rise::prim::Prim::Map);
            let program = infer(&generator.program(10 + (seed % 25) as usize)).unwrap();
            let once = form
                .apply(&program, &mut Context::default())
                .unwrap_or_else(|e| panic!("{name} failed: {e}\n{}", print_term(&program)));
            let typed = infer(&once).unwrap_or_else(|e| {
                panic!(
                    "{name} broke the types: {e}\n{}\n=> {}",
                    print_term(&program),
                    print_term(&once)
                )
            });
            assert_eq!(typed.ty(), program.ty(), "{name}");
            let (expected, found) = (outputs(&program, seed), outputs(&typed, seed));
            assert!(
                io::approx_eq(&expected, &found),
                "{name} changed values\n{}\n=> {}",
                print_term(&program),
                print_term(&typed)
            );
            let twice = form.apply(&typed, &mut Context::default()).unwrap();
            assert!(
                twice.alpha_eq(&typed) || twice.erase_types().alpha_eq(&typed.erase_types()),
                "{name} is not idempotent\n{}\n=> {}",
                print_term(&typed),
                print_term(&twice)
            );
        }
    }
}

#[test]
fn dfnf_makes_every_map_an_applied_lambda() {
    let t = infer(
        &elevate_rise::parse_term("fun(x: 4.4.f32 => x |> map(map(neg)) |> map(reduce(add, 0.0)))")
            .unwrap(),
    )
    .unwrap();
    let r = rules::dfnf().apply(&t, &mut Context::default()).unwrap();
    assert_eq!(
        print_term(&r),
        "fun(x: 4.4.f32 => x |> map(fun(x2 => x2 |> map(fun(x3 => -x3)))) |> map(fun(x2 => x2 |> reduce(fun(x3, x4 => x3 + x4), 0.0))))"
    );
}
