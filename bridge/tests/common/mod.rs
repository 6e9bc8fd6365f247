//! Helpers of the bridge's translation tests (which need no LLVM).

#![allow(dead_code)]

use elevate_bridge::{Options, Payload};
use elevate_rise::limits::Limits;
use elevate_rise::nat::NatVar;
use elevate_rise::{NatEnv, Program, Term};

/// The text of an example program of the repository (`examples/rise/`).
pub fn example(name: &str) -> String {
    let path = format!("{}/../examples/rise/{name}", env!("CARGO_MANIFEST_DIR"));
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

/// The entry point of `source` at `nats`, rewritten by `strategy` then
/// `defaultLowering`.
pub fn lowered(source: &str, nats: &NatEnv, strategy: &str) -> Term {
    let program = Program::load(source, None).unwrap_or_else(|e| panic!("{e}"));
    let strategy = elevate_rise::registry().parse(strategy).unwrap();
    elevate_bridge::choose(&program, nats, Some(&strategy), &Options::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The payload of `term`, named `name`, within the machine's limits (its text the
/// generic form of its operations).
pub fn payload(name: &str, term: &Term) -> Payload {
    elevate_bridge::payload(name, term, &Limits::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// [`payload`], its module and script as MLIR prints them (each operation in its
/// custom form), which the tests read.
#[cfg(feature = "mlir")]
pub fn printed_payload(name: &str, term: &Term) -> Payload {
    let p = payload(name, term);
    let (mlir, transform) = elevate_bridge::jit::printed(&p).unwrap_or_else(|e| panic!("{e}"));
    p.with_mlir(mlir).with_transform(transform)
}
