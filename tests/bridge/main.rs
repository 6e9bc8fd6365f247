//! The MLIR bridge end to end (the one test binary linked with MLIR): RISE programs
//! compiled through MLIR for the CPU compute what the reference interpreter computes.

mod examples;
mod payload;
mod random;
mod schedule;
mod strategies;
mod transform;

use elevate::bridge::{instantiate, jit, payload as translate};
use elevate::core::Context;
use elevate::rise::nat::NatVar;
use elevate::rise::{io, rules, NatEnv, Program, Term};
use serde_json::Value as Json;

/// The path of a shared example.
pub fn example(name: &str) -> String {
    let path = format!("{}/examples/rise/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Sizes from `name=value` pairs.
pub fn sizes(pairs: &[(&str, i64)]) -> NatEnv {
    let mut nats = NatEnv::default();
    for (name, value) in pairs {
        nats.insert(NatVar::Named((*name).into()), *value);
    }
    nats
}

/// `term` (typed, closed, concrete sizes) compiled through MLIR and run on random
/// inputs from `seed`: the compiled result and the interpreter's.
pub fn compiled_and_interpreted(term: &Term, seed: u64) -> (Json, Json) {
    let payload = translate("f", term).unwrap_or_else(|e| panic!("{e}"));
    let compiled = jit::compile(&payload).unwrap_or_else(|e| panic!("{e}\n{}", payload.mlir));
    let signature = io::signature(term);
    let inputs = io::random_inputs(&signature, &NatEnv::default(), seed).unwrap();
    let json: Vec<Json> = inputs.iter().map(|v| v.to_json().unwrap()).collect();
    let found = compiled.run(&json).unwrap_or_else(|e| panic!("{e}"));
    let expected = elevate::rise::evaluate(term, &NatEnv::default(), &inputs)
        .unwrap()
        .to_json()
        .unwrap();
    (found, expected)
}

/// The entry point of `source` at `nats`, rewritten by `strategy` then
/// `defaultLowering`.
pub fn lowered(source: &str, nats: &NatEnv, strategy: &str) -> Term {
    let program = Program::load(source, None).unwrap();
    let term = instantiate(&program.entry().term, nats).unwrap();
    let strategy = elevate::rise::registry().parse(strategy).unwrap();
    let term = strategy.apply(&term, &mut Context::default()).unwrap();
    rules::default_lowering()
        .apply(&term, &mut Context::default())
        .unwrap()
}

/// Asserts that `term` compiled computes what the interpreter computes.
pub fn assert_same(term: &Term, what: &str) {
    for seed in 0..2 {
        let (found, expected) = compiled_and_interpreted(term, seed);
        assert!(
            io::approx_eq(&found, &expected),
            "{what}: compiled {found} vs interpreted {expected}"
        );
    }
}
