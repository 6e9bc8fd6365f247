//! Saturation keeps programs' types and values: random well-typed programs and the
//! shared examples, saturated with the default rules under small limits, then
//! extracted with every cost model, type-check to the input's type and compute the
//! input's values on random inputs (the interpreter is the oracle).

use elevate_rise::egraph::{CostModel, RuleSet, Saturation, SaturationLimits};
use elevate_rise::generate::Generator;
use elevate_rise::nat::NatVar;
use elevate_rise::prim::Prim;
use elevate_rise::{evaluate, infer, io, print_term, NatEnv, Program, Term};
use quickcheck::{QuickCheck, TestResult};
use std::sync::atomic::{AtomicUsize, Ordering};

const COST_MODELS: [CostModel; 2] = [CostModel::AstSize, CostModel::Lowered];

/// Small limits, or `SATURATION_LIMITS` (e.g. `iterations=8,nodes=20000`, for a
/// longer hunt).
fn saturation() -> Saturation {
    let limits = std::env::var("SATURATION_LIMITS")
        .unwrap_or_else(|_| "iterations=4,nodes=5000,ms=2000".into());
    let limits: SaturationLimits = limits.parse().unwrap();
    Saturation::new(
        RuleSet::parse("default").unwrap(),
        limits,
        CostModel::Lowered,
    )
}

/// The output of `term` on the random inputs of `seed`, as JSON.
fn outputs(term: &Term, nats: &NatEnv, seed: u64) -> Result<serde_json::Value, String> {
    let inputs = io::random_inputs(&io::signature(term), nats, seed).map_err(|e| e.to_string())?;
    Ok(evaluate(term, nats, &inputs)
        .map_err(|e| e.to_string())?
        .to_json()?)
}

/// What one program's check found.
struct Checked {
    /// Some rule applied.
    applied: bool,
    /// An extracted program differs from the input.
    changed: bool,
}

/// Saturates `program`, extracts with every cost model, and compares each extracted
/// program's type and values with the input's.
fn check(program: &Term, nats: &NatEnv, seeds: &[u64]) -> Result<Checked, String> {
    let mut grown = saturation().grow(program).map_err(|e| e.to_string())?;
    let applied = !grown.report.applied.is_empty();
    let rules: Vec<String> = grown
        .report
        .applied
        .iter()
        .map(|(r, _)| r.clone())
        .collect();
    let context = |cost: CostModel, extracted: &Term| {
        format!(
            "{}\n=> ({}, rules applied: {})\n{}",
            print_term(program),
            cost.name(),
            rules.join(", "),
            print_term(extracted)
        )
    };
    let mut changed = false;
    for cost in COST_MODELS {
        let best = grown.extract(cost);
        let extracted = grown.program(&best);
        let typed = infer(&extracted.erase_types())
            .map_err(|e| format!("ill-typed: {e}\n{}", context(cost, &extracted)))?;
        if typed.ty() != program.ty() {
            return Err(format!(
                "the type changed to {}\n{}",
                typed.ty().map(ToString::to_string).unwrap_or_default(),
                context(cost, &extracted)
            ));
        }
        changed |= !typed.erase_types().alpha_eq(&program.erase_types());
        for &seed in seeds {
            let expected = outputs(program, nats, seed)?;
            let found = outputs(&typed, nats, seed)
                .map_err(|e| format!("fails: {e}\n{}", context(cost, &extracted)))?;
            if !io::approx_eq(&expected, &found) {
                return Err(format!(
                    "other values: {expected} vs {found}\n{}",
                    context(cost, &extracted)
                ));
            }
        }
    }
    Ok(Checked { applied, changed })
}

static CASES: AtomicUsize = AtomicUsize::new(0);
static APPLIED: AtomicUsize = AtomicUsize::new(0);
static CHANGED: AtomicUsize = AtomicUsize::new(0);

fn random_program_keeps_type_and_values(seed: u64, size: u8) -> TestResult {
    let mut generator = Generator::new(seed);
    if seed.is_multiple_of(2) {
        // Half the programs lean towards what the rules rewrite.
        generator.favourites = vec![Prim::Map, Prim::Reduce, Prim::Split, Prim::Transpose];
    }
    let program = generator.program(size as usize % 24 + 4);
    let program = infer(&program).expect("generated programs are well typed");
    if outputs(&program, &NatEnv::default(), seed).is_err() {
        return TestResult::discard();
    }
    match check(&program, &NatEnv::default(), &[seed, seed ^ 0x5eed]) {
        Ok(checked) => {
            CASES.fetch_add(1, Ordering::Relaxed);
            APPLIED.fetch_add(checked.applied as usize, Ordering::Relaxed);
            CHANGED.fetch_add(checked.changed as usize, Ordering::Relaxed);
            TestResult::passed()
        }
        Err(e) => TestResult::error(e),
    }
}

/// 150 programs, or `SATURATION_TESTS` (for a longer hunt).
fn tests() -> u64 {
    std::env::var("SATURATION_TESTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(150)
}

#[test]
fn saturation_keeps_types_and_values_of_random_programs() {
    QuickCheck::new()
        .tests(tests())
        .max_tests(tests() * 10)
        .quickcheck(random_program_keeps_type_and_values as fn(u64, u8) -> TestResult);
    let (cases, applied, changed) = (
        CASES.load(Ordering::Relaxed),
        APPLIED.load(Ordering::Relaxed),
        CHANGED.load(Ordering::Relaxed),
    );
    println!("{cases} programs: rules applied in {applied}, extraction changed {changed}");
    // Not vacuous: most programs have something to rewrite (lowering, at least).
    assert!(
        applied * 2 > cases,
        "rules applied in only {applied} of {cases}"
    );
    assert!(
        changed * 3 > cases,
        "extraction changed only {changed} of {cases}"
    );
}

#[test]
fn saturation_keeps_types_and_values_of_the_examples() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/rise");
    for name in ["dot", "scal", "matmul", "conv2d"] {
        let path = format!("{dir}/{name}.rise");
        let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let program = Program::load(&source, None).unwrap_or_else(|e| panic!("{path}: {e}"));
        let term = &program.entry().term;
        // Sizes that the rules' splits (4 and 32) divide.
        let mut nats = NatEnv::default();
        for v in io::signature(term).nats {
            if let NatVar::Named(_) = v {
                nats.insert(v, 32);
            }
        }
        let checked = check(term, &nats, &[1]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            checked.applied && checked.changed,
            "{name}: nothing happened"
        );
    }
}
