//! Search over random spaces on random programs: every candidate a search logs
//! replays (its strategy text gives a program with its fingerprint), and every program
//! it reaches computes what the start program computes.

use elevate_core::{Context, Traversable};
use elevate_rise::generate::Generator;
use elevate_rise::{evaluate, infer, io, registry, NatEnv, Term};
use elevate_strategies::search::{
    drivers, Cost, Fingerprint, Measure, Rejection, Search, SearchBudget, Space, Status,
};
use rand::{RngExt, SeedableRng};
use std::sync::Arc;

/// Fewer nodes are better: a cost that needs no compilation.
struct Nodes;

impl Cost<Term> for Nodes {
    fn name(&self) -> String {
        "nodes".into()
    }

    fn evaluate(&self, program: &Term) -> Result<Measure, Rejection> {
        Ok(Measure::cost(program.size() as f64))
    }
}

/// Rules that often apply to generated pipelines.
const RULES: [&str; 14] = [
    "mapFusion",
    "mapFission",
    "mapLastFission",
    "splitJoin(2)",
    "splitJoin(4)",
    "reduceMapFusion",
    "liftId",
    "removeId",
    "betaReduction",
    "etaReduction",
    "transposeMapMap",
    "mapMapTranspose",
    "mapSeq",
    "reduceSeq",
];

/// A random space over `RULES`: choices of traversals and rules, and `steps`.
fn random_space(seed: u64) -> String {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut pick = || RULES[rng.random_range(0..RULES.len())];
    let (a, b, c, d, e) = (pick(), pick(), pick(), pick(), pick());
    format!(
        "{{id, try(topDown({a}))}} ; try({{topDown, bottomUp}}({{{b}, {c}}})) ; steps(2, {{{d}, {e}}})"
    )
}

fn outputs(term: &Term, seed: u64) -> Result<serde_json::Value, String> {
    let signature = io::signature(term);
    let inputs =
        io::random_inputs(&signature, &NatEnv::default(), seed).map_err(|e| e.to_string())?;
    let value = evaluate(term, &NatEnv::default(), &inputs).map_err(|e| e.to_string())?;
    value.to_json().map_err(|e| e.to_string())
}

#[test]
fn every_logged_candidate_replays_and_computes_what_the_start_computes() {
    let registry = Arc::new(registry());
    let mut checked = 0;
    for seed in 0..12u64 {
        let program = infer(&Generator::new(seed).pipeline_program(4)).expect("well typed");
        let expected = outputs(&program, seed).expect("generated programs evaluate");
        let text = random_space(seed);
        let space = Space::parse(&text, registry.clone()).unwrap_or_else(|e| panic!("{text}: {e}"));
        let report = Search::new(space, drivers::random(), Nodes)
            .budget(SearchBudget::default().evaluations(24))
            .seed(seed)
            .run(&program);
        assert!(report.evaluations > 0, "{text}");
        for candidate in &report.log {
            let strategy = registry
                .parse(&candidate.strategy)
                .unwrap_or_else(|e| panic!("{}: {e}", candidate.strategy));
            let replayed = strategy.apply(&program, &mut Context::default());
            match candidate.status {
                Status::Ok => {
                    let replayed = replayed
                        .unwrap_or_else(|e| panic!("{} does not replay: {e}", candidate.strategy));
                    assert_eq!(
                        replayed.fingerprint(),
                        candidate.program_hash,
                        "{} replays to another program",
                        candidate.strategy
                    );
                    let found = outputs(&replayed, seed);
                    assert_eq!(found.as_ref(), Ok(&expected), "{}", candidate.strategy);
                    checked += 1;
                }
                Status::StrategyFailed => {
                    assert!(
                        replayed.is_err(),
                        "{} fails in the search only",
                        candidate.strategy
                    )
                }
                other => panic!("the node count never rejects, found {other}"),
            }
        }
    }
    assert!(checked >= 100, "only {checked} candidates checked");
}
