//! Every rule of the library, wherever it applies in random well-typed programs,
//! keeps the program's type and its values (the interpreter is the oracle).

use elevate_core::{Context, Traversable};
use elevate_rise::generate::Generator;
use elevate_rise::prim::Prim;
use elevate_rise::{evaluate, infer, io, print_term, rules, Expr, NatEnv, Term};
use elevate_strategies::position;
use serde_json::Value as Json;

fn outputs(term: &Term, seed: u64) -> Result<Json, String> {
    let signature = io::signature(term);
    let inputs = io::random_inputs(&signature, &NatEnv::default(), seed).unwrap();
    let value = evaluate(term, &NatEnv::default(), &inputs).map_err(|e| e.to_string())?;
    Ok(value.to_json().unwrap())
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

/// Random programs per rule, biased towards the rule's left-hand side.
const RANDOM_PROGRAMS: u64 = 200;

/// The most positions a rule is tried at in one program.
const POSITIONS: usize = 200;

/// The most applications checked in one program (rules such as `mapSeq` apply almost
/// everywhere).
const APPLICATIONS: usize = 10;

/// Rules whose left-hand side random programs cannot be expected to contain; each is
/// checked on its example only. Every other rule must fire on random programs.
const ONLY_ON_THEIR_EXAMPLE: &[&str] = &[
    // A function applied to an argument of more than 32 nodes that it uses twice:
    // random programs apply functions to small ones.
    "shareArgument",
    // The weights must be, syntactically, the outer product of two vectors, joined
    // and zipped with a joined neighbourhood, multiplied pairwise and summed with
    // `add` from 0: a five-stage convolution idiom that only a generator written for
    // it would produce.
    "separateDotHV",
    "separateDotVH",
    // Three maps nested directly in each other's lambdas, the middle one walking the
    // outer's array of rows and the inner one its lambda's row, around a reduction:
    // a convolution's channels around its pixels, which random programs do not nest.
    "joinPixels",
    // Needs a function generic in a size, `depFun(n => ...)(k)`. Random programs keep
    // sizes concrete: under a `depFun`, rules that split an array (`splitJoin`,
    // `splitJoin2`, `blockedReduce`) assume that the symbolic length divides, which
    // the instantiated length may not (see `rules_in_size_generic_functions`).
    "betaNatReduction",
];

/// Rules whose left-hand side is what another rule produces: random programs for
/// them are first rewritten by the strategy given (where it applies).
const PREPARED_BY: &[(&str, &str)] = &[
    // The inverse of liftReduce.
    ("reduceMap", "topDown(liftReduce)"),
    // A sequential reduction with an array accumulator: liftReduce makes one.
    ("toMemInit", "topDown(liftReduce) ; try(topDown(reduceSeq))"),
];

/// The primitives in `term`.
fn primitives(term: &Term, out: &mut Vec<Prim>) {
    if let Expr::Prim(p) = term.expr() {
        if !out.contains(p) {
            out.push(*p);
        }
    }
    for i in 0..term.arity() {
        primitives(term.child(i), out);
    }
}

/// Checks `rule` at every position of `program`: each result type-checks to the
/// same type with no stale node types and computes the same values. Returns how many
/// positions it applied at, or what went wrong first.
fn check_everywhere(info: &rules::RuleInfo, program: &Term, seed: u64) -> Result<usize, String> {
    let rule = (info.make)();
    let expected =
        outputs(program, seed).unwrap_or_else(|e| panic!("{e}\n{}", print_term(program)));
    let mut applied = 0;
    for at in 0..program.size().min(POSITIONS) {
        let Ok(rewritten) = position(at, rule.clone()).apply(program, &mut Context::default())
        else {
            continue;
        };
        applied += 1;
        let failure = |what: String, result: &Term| {
            format!(
                "{} at {at} {what}\n{}\n=> {}",
                info.name,
                print_term(program),
                print_term(result)
            )
        };
        let retyped =
            infer(&rewritten).map_err(|e| failure(format!("broke the types: {e}"), &rewritten))?;
        if retyped.ty() != program.ty() {
            return Err(failure("changed the type".into(), &retyped));
        }
        if let Some(stale) = stale_type(&rewritten, &retyped) {
            return Err(failure(format!("left a wrong type: {stale}"), &rewritten));
        }
        match outputs(&retyped, seed) {
            Ok(found) if io::approx_eq(&found, &expected) => {}
            Ok(found) => {
                let what = format!("changed the values: {expected} vs {found}");
                return Err(failure(what, &retyped));
            }
            Err(e) => return Err(failure(format!("made evaluation fail: {e}"), &retyped)),
        }
        if applied == APPLICATIONS {
            break;
        }
    }
    Ok(applied)
}

/// What checking every rule of the library found.
#[derive(Default)]
struct Summary {
    /// `rule: applications on random programs + on its example`, for each rule.
    counts: Vec<String>,
    /// The rules that never applied to a random program.
    never: Vec<&'static str>,
    /// The first program each failing rule broke, and how.
    failures: Vec<String>,
}

/// Checks every rule of the library on its example and on random programs that
/// favour its bias and the primitives of its example (so that the stages of its
/// left-hand side meet), with functions generic in a size if `symbolic_sizes`.
fn check_library(symbolic_sizes: bool) -> Summary {
    let mut summary = Summary::default();
    for info in rules::library() {
        let example = (!info.example.is_empty())
            .then(|| infer(&elevate_rise::parse_term(info.example).unwrap()).unwrap());
        let mut favourites = Vec::new();
        if let Some(example) = &example {
            primitives(example, &mut favourites);
        }
        let on_example = example
            .map_or(Ok(0), |example| check_everywhere(&info, &example, 0))
            .unwrap_or_else(|e| {
                summary.failures.push(e);
                0
            });
        let prepare = PREPARED_BY
            .iter()
            .find(|(name, _)| *name == info.name)
            .map(|(_, text)| elevate_rise::registry().parse(text).unwrap());
        let mut on_random = 0;
        for seed in 1..=RANDOM_PROGRAMS {
            let mut generator = Generator::new(seed * 7919 + info.name.len() as u64);
            generator.favourite = info.bias;
            generator.favourites = favourites.clone();
            generator.symbolic_sizes = symbolic_sizes;
            let program = generator.program(12 + (seed % 20) as usize);
            let program = infer(&program).unwrap_or_else(|e| {
                panic!(
                    "a generated program does not type-check: {e}\n{}",
                    print_term(&program)
                )
            });
            let program = match prepare
                .as_ref()
                .map(|s| s.apply(&program, &mut Context::default()))
            {
                Some(Ok(prepared)) => infer(&prepared).unwrap(),
                _ => program,
            };
            match check_everywhere(&info, &program, seed) {
                Ok(applied) => on_random += applied,
                Err(e) => {
                    summary.failures.push(e);
                    break;
                }
            }
        }
        summary
            .counts
            .push(format!("{}: {on_random} + {on_example}", info.name));
        if on_random == 0 {
            summary.never.push(info.name);
        }
        assert!(on_random + on_example > 0, "{} never fired", info.name);
    }
    println!(
        "rule applications checked (random programs + example): {}",
        summary.counts.join(", ")
    );
    summary
}

#[test]
fn every_rule_preserves_types_and_values_wherever_it_applies() {
    let summary = check_library(false);
    assert!(
        summary.failures.is_empty(),
        "rules that broke a program:\n\n{}",
        summary.failures.join("\n\n")
    );
    let unexpected: Vec<_> = summary
        .never
        .iter()
        .filter(|name| !ONLY_ON_THEIR_EXAMPLE.contains(name))
        .collect();
    assert!(
        unexpected.is_empty(),
        "rules that never fired on random programs: {unexpected:?}"
    );
    let listed_but_fired: Vec<_> = ONLY_ON_THEIR_EXAMPLE
        .iter()
        .filter(|name| !summary.never.contains(name))
        .collect();
    assert!(
        listed_but_fired.is_empty(),
        "rules in ONLY_ON_THEIR_EXAMPLE that fire on random programs now (take them off the list): {listed_but_fired:?}"
    );
}

/// Functions generic in a size (`depFun(n => fun(x: n.t => ...))(k)`) have symbolic
/// lengths in their bodies. `splitJoin(2)` and `splitJoin2(2)` rewrite there as RISE
/// does, assuming that 2 divides the symbolic length (`(n/2).2`); instantiated at an
/// odd length, the rewritten program fails (`split(2) of 3 elements`) where the
/// original computed a value. That is RISE's semantics (a split records that the
/// size divides); what is missing is the language side: a function's type does not
/// carry the divisibility its body assumes, so the call is not rejected when the
/// program is checked (a size that shows in the type is: `halves(y)` at 3 is a nat
/// error). Kept as a record until types carry such constraints.
#[test]
#[ignore = "splitJoin(2) and splitJoin2(2) assume that a symbolic length divides"]
fn rules_in_size_generic_functions() {
    let summary = check_library(true);
    assert!(
        summary.failures.is_empty(),
        "rules that broke a program:\n\n{}",
        summary.failures.join("\n\n")
    );
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
            let (expected, found) = (
                outputs(&program, seed).unwrap(),
                outputs(&typed, seed).unwrap(),
            );
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
