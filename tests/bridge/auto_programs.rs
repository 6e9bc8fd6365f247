//! `auto` on every example program and on gemv, a 1-D stencil and an element-wise
//! chain: with the model cost (deterministic: small sizes, a budget of evaluations, a
//! fixed seed), the search finds a program the model ranks faster than
//! `defaultLowering` alone (the chain: no slower, its maps one kernel already), and
//! every distinct program it accepted is compiled through the bridge and computes
//! what the interpreter computes on random inputs.

use super::{example, measured, sizes};
use elevate::core::Context;
use elevate::rise::search::{fingerprint, Auto, Machine, ModelCost};
use elevate::rise::{registry, Program, Term};
use elevate::strategies::search::{
    drivers, Cost, Driver, Report, Search, SearchBudget, Space, Status,
};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The program of `file` at `nats`.
fn instance(file: &str, nats: &[(&str, i64)]) -> Term {
    Program::load(&example(file), None)
        .unwrap_or_else(|e| panic!("{file}: {e}"))
        .instantiate(&sizes(nats))
        .unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// The search of `auto` on `term` with the model cost.
fn search(term: &Term, driver: Box<dyn Driver<Term>>, evaluations: usize) -> Report {
    let space = Space::parse_with_auto("auto", Arc::new(registry()), Auto::default()).unwrap();
    Search::new(space, driver, ModelCost::new(Machine::default()))
        .budget(SearchBudget::default().evaluations(evaluations))
        .seed(1)
        .jobs(2)
        .baseline(term.clone())
        .run(term)
}

/// Checks the search of `file` at `nats`: better than `defaultLowering` by the model,
/// and every distinct accepted program right when compiled. Returns the best strategy
/// and the accepted programs by hash.
fn check(
    file: &str,
    nats: &[(&str, i64)],
    driver: Box<dyn Driver<Term>>,
    evaluations: usize,
) -> (String, BTreeMap<u64, (String, Term)>) {
    check_within(file, nats, driver, evaluations, 0.9)
}

/// [`check`], the best at most `factor` times `defaultLowering`'s cost.
fn check_within(
    file: &str,
    nats: &[(&str, i64)],
    driver: Box<dyn Driver<Term>>,
    evaluations: usize,
    factor: f64,
) -> (String, BTreeMap<u64, (String, Term)>) {
    let term = instance(file, nats);
    let report = search(&term, driver, evaluations);
    let baseline = report
        .baseline
        .as_ref()
        .unwrap()
        .as_ref()
        .unwrap_or_else(|r| panic!("{file}: defaultLowering: {r}"))
        .cost;
    let best = report
        .best()
        .unwrap_or_else(|| panic!("{file}: nothing found"));
    let best_cost = best.cost().unwrap();
    assert!(
        best_cost <= factor * baseline,
        "{file}: best {best_cost} ({}) against defaultLowering {baseline}",
        best.strategy
    );
    // Every candidate failed cleanly or was accepted; the accepted ones replay to the
    // program they were ranked as.
    let mut programs: BTreeMap<u64, (String, Term)> = BTreeMap::new();
    for c in &report.log {
        match c.status {
            Status::Ok => {}
            Status::StrategyFailed => {
                assert!(c.reason.contains("failed"), "{file}: {}", c.reason);
                continue;
            }
            _ => panic!("{file}: {} {:?}: {}", c.strategy, c.status, c.reason),
        }
        if programs.contains_key(&c.program_hash) {
            continue;
        }
        let program = registry()
            .parse(&c.strategy)
            .unwrap()
            .apply(&term, &mut Context::default())
            .unwrap_or_else(|f| panic!("{file}: {} does not replay: {f}", c.strategy));
        assert_eq!(fingerprint(&program), c.program_hash, "{}", c.strategy);
        programs.insert(c.program_hash, (c.strategy.clone(), program));
    }
    assert!(programs.len() > 1, "{file}: {} programs", programs.len());
    // Each compiled, run once, its values checked against the interpreter's.
    let measured = measured(&term).runs(1);
    let all: Vec<&Term> = programs.values().map(|(_, p)| p).collect();
    let results = measured.evaluate_all(&all, 2);
    for ((strategy, _), r) in programs.values().zip(&results) {
        if let Err(r) = r {
            panic!("{file}: {strategy}: {:?}: {}", r.status, r.reason);
        }
    }
    assert_eq!(measured.checked_programs(), programs.len(), "{file}");
    (best.strategy.clone(), programs)
}

/// Whether any of `programs` was made by a strategy containing `what`.
fn made_by(programs: &BTreeMap<u64, (String, Term)>, what: &str) -> bool {
    programs.values().any(|(s, _)| s.contains(what))
}

#[test]
fn auto_finds_faster_dot_products_and_matrix_vector_products_on_vectors() {
    // Small spaces: every point.
    let (best, programs) = check("dot.rise", &[("n", 4096)], drivers::exhaustive(), 100);
    assert!(made_by(&programs, "vectorizeReduce(16)"), "{best}");
    assert!(best.contains("vectorizeReduce"), "{best}");
    let (best, programs) = check(
        "gemv.rise",
        &[("n", 64), ("m", 256)],
        drivers::evolve(16),
        48,
    );
    assert!(made_by(&programs, "vectorizeReduce"), "{best}");
}

#[test]
fn auto_finds_faster_element_wise_programs_and_stencils() {
    // Large enough for two cores to pay for starting (the model's machine has two).
    check("scal.rise", &[("n", 1 << 18)], drivers::exhaustive(), 100);
    // The chain's three maps are one kernel already without `mapFusion` (the loop
    // program computes each element where it is read): `defaultLowering` alone is
    // about as fast as it gets, and no point is slower.
    check_within("chain.rise", &[("n", 1 << 16)], drivers::random(), 32, 1.0);
    let chain = instance("chain.rise", &[("n", 1 << 16)]);
    let lowered = elevate::rise::rules::default_lowering()
        .apply(&chain, &mut Context::default())
        .unwrap();
    let payload = super::built_payload("f", &lowered);
    assert_eq!(payload.kernels, 1, "{:?}", payload.kernels);
    check("stencil1d.rise", &[("n", 1 << 18)], drivers::random(), 32);
}

#[test]
fn auto_finds_faster_convolutions() {
    // Structured, `defaultLowering` alone is fast enough that a smaller image leaves
    // the two cores too little to share. (The separable filter's vectors read the
    // weights' products of neighbouring pixels, gathers by the model: its best points
    // are among fewer, which `evolve` finds where a few random ones may not.)
    for file in ["conv2d.rise", "separable.rise"] {
        check(file, &[("n", 256), ("m", 256)], drivers::evolve(8), 48);
    }
}

#[test]
fn auto_finds_faster_matrix_products() {
    check(
        "matmul.rise",
        &[("n", 32), ("k", 32), ("m", 64)],
        drivers::random(),
        24,
    );
    check("mm64.rise", &[], drivers::random(), 24);
    check(
        "tiled.rise",
        &[("n", 8), ("k", 32), ("m", 64)],
        drivers::random(),
        24,
    );
}

/// The one example that does not type-check has no space, and says why.
#[test]
fn the_ill_typed_example_is_refused_before_any_search() {
    let error = Program::load(&example("split.rise"), None).unwrap_err();
    assert!(error.message.contains("not divisible"), "{}", error.message);
    // Every other example has a space.
    let examples = std::fs::read_dir(format!("{}/examples/rise", env!("CARGO_MANIFEST_DIR")))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|f| f.ends_with(".rise") && f != "split.rise")
        .count();
    assert_eq!(examples, 10, "a new example: add it to these tests");
}
