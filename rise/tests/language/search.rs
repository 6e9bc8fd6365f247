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
const RULES: [&str; 13] = [
    "mapFusion",
    "mapFission",
    "splitJoin(2)",
    "splitJoin(4)",
    "reduceMapFusion",
    "liftId",
    "removeId",
    "betaReduction",
    "etaReduction",
    "mapMapFBeforeTranspose",
    "transposeBeforeMapMapF",
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

/// The environment on a 64x64x64 matmul with `auto` and the model cost: a random agent
/// and an epsilon-greedy one (which takes, in a state it has seen, the action after
/// which it earned the most so far) each play 100 episodes; undo gives back the very
/// program of the step before.
#[test]
fn agents_play_the_environment_and_undo_restores_the_program() {
    use elevate_rise::search::{Auto, ModelCost};
    use elevate_strategies::search::{Action, Environment, Transition};
    use std::collections::HashMap;

    let source = std::fs::read_to_string(format!(
        "{}/../examples/rise/mm64.rise",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let program = crate::load(&source).entry().term.clone();
    let space = Space::parse_with_auto("auto", Arc::new(registry()), Auto::default()).unwrap();
    let mut env = Environment::new(space, ModelCost::default());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    // The best reward earned after each (decisions so far, action).
    let mut earned: HashMap<(Vec<usize>, Action), f64> = HashMap::new();
    let mut rewards = [Vec::new(), Vec::new()];
    for (agent, rewards) in rewards.iter_mut().enumerate() {
        for _ in 0..100 {
            env.reset(&program);
            assert!(env.baseline().is_some());
            let mut last: Option<Transition> = None;
            let mut path = Vec::new();
            while !env.state().is_final() {
                let legal = env.legal_actions();
                let mask = env.mask();
                assert_eq!(mask.iter().filter(|m| **m).count(), legal.len());
                let prefix: Vec<usize> = env.state().decisions().collect();
                let known = legal
                    .iter()
                    .filter_map(|a| Some((*earned.get(&(prefix.clone(), *a))?, *a)))
                    .max_by(|x, y| x.0.total_cmp(&y.0));
                let action = match known {
                    Some((_, a)) if agent == 1 && rng.random_range(0..10) < 8 => a,
                    _ => legal[rng.random_range(0..legal.len())],
                };
                let before = env.state().program().clone();
                last = Some(env.step(action).unwrap());
                if !env.state().is_final() {
                    // Undo and redo: the program before the step is the very same.
                    assert!(env.undo());
                    assert!(env.state().program().node_id() == before.node_id());
                    env.step(action).unwrap();
                }
                path.push((prefix, action));
            }
            let reward = last.expect("an auto episode takes decisions").reward;
            for key in path {
                let best = earned.entry(key).or_insert(reward);
                *best = best.max(reward);
            }
            rewards.push(reward);
        }
    }
    let mean = |r: &[f64]| r.iter().sum::<f64>() / r.len() as f64;
    let (random, greedy) = (mean(&rewards[0]), mean(&rewards[1]));
    assert!(
        random > 0.0,
        "auto's points beat defaultLowering on average: {random}"
    );
    assert!(greedy > random, "greedy {greedy} against random {random}");
}
