//! The MLIR bridge end to end (the one test binary linked with MLIR): RISE programs
//! compiled through MLIR for the CPU compute what the reference interpreter computes.

mod auto_programs;
mod builders;
mod conv_kernels;
mod examples;
mod gpu;
mod gpu_run;
mod gpu_shared;
mod guards;
mod hardening;
mod lowering;
mod measure;
mod networks;
mod ops;
mod random;
mod register_tiles;
mod scheduled;
mod stages;
mod strategies;
mod transform;

use elevate::bridge::{jit, Options, Payload};
use elevate::rise::limits::Limits;
use elevate::rise::nat::NatVar;
use elevate::rise::{io, NatEnv, Program, Term};
use serde_json::Value as Json;

/// The measured cost of candidates of `start`, its workers the `elevate` binary.
pub fn measured(start: &Term) -> elevate::bridge::Measured {
    elevate::bridge::Measured::new(start)
        .unwrap()
        .worker(elevate::bridge::WorkerCommand::new(
            env!("CARGO_BIN_EXE_elevate"),
            &[],
        ))
}

/// The path of a shared example.
pub fn example(name: &str) -> String {
    let path = format!("{}/examples/rise/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `expr` followed by 1,001 additions of `zero`: the same value, as a kernel body
/// of a thousand operations.
pub fn long_body(expr: &str, zero: &str) -> String {
    format!("{expr}{}", format!(" + {zero}").repeat(1001))
}

/// Sizes from `name=value` pairs.
pub fn sizes(pairs: &[(&str, i64)]) -> NatEnv {
    let mut nats = NatEnv::default();
    for (name, value) in pairs {
        nats.insert(NatVar::Named((*name).into()), *value);
    }
    nats
}

/// The limits of these tests' buffers (the machine's).
pub fn limits() -> Limits {
    Limits::default()
}

/// The payload of `term` as the function `name`, or a panic with the error; its
/// module and script as MLIR prints them (each operation in its custom form), which
/// the tests read, and which the JIT then parses (`builders` checks that the modules
/// built from its operations are those).
pub fn payload(name: &str, term: &Term) -> Payload {
    let p = built_payload(name, term);
    let (mlir, transform) = jit::printed(&p).unwrap_or_else(|e| panic!("{e}"));
    p.with_mlir(mlir).with_transform(transform)
}

/// The payload of `term` as the function `name`, as the bridge makes it (its text the
/// generic form of its operations).
pub fn built_payload(name: &str, term: &Term) -> Payload {
    elevate::bridge::payload(name, term, &limits()).unwrap_or_else(|e| panic!("{e}"))
}

/// `term` (typed, closed, concrete sizes) compiled through MLIR and run on random
/// inputs from `seed`: the compiled result and the interpreter's.
pub fn compiled_and_interpreted(term: &Term, seed: u64) -> (Json, Json) {
    let payload = built_payload("f", term);
    let compiled = jit::compile_payload(&payload, &limits())
        .unwrap_or_else(|e| panic!("{e}\n{}", payload.mlir()));
    let signature = io::signature(term);
    let inputs = io::random_inputs(&signature, &NatEnv::default(), seed).unwrap();
    let found = compiled
        .run(&inputs)
        .unwrap_or_else(|e| panic!("{e}"))
        .to_json()
        .unwrap();
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
    let strategy = elevate::rise::registry().parse(strategy).unwrap();
    elevate::bridge::choose(&program, nats, Some(&strategy), &Options::default())
        .unwrap_or_else(|e| panic!("{e}"))
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
