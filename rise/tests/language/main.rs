//! Tests of the RISE language: examples, primitives, bad input, properties, deep
//! programs.

mod deep;
mod deep_eval;
mod deep_inference;
mod engine;
mod errors;
mod examples;
mod fuzz;
mod integers;
mod json_io;
mod names;
mod nats;
mod ops;
mod primitives;
mod properties;
mod register_tiles;
mod rules;
mod search;
mod sizes;
mod strategies;
mod strategy_text;
mod terms;
mod vector_reduce;

use elevate_rise::Program;

/// Loads `source` or fails the test with the rendered error.
pub fn load(source: &str) -> Program {
    Program::load(source, None).unwrap_or_else(|e| panic!("{}", e.render("test.rise", source)))
}

/// Runs the entry point of `source` on JSON `inputs`; returns the output as JSON text.
pub fn run(source: &str, inputs: &str) -> String {
    let program = load(source);
    let inputs: Vec<serde_json::Value> = serde_json::from_str(inputs).expect("inputs are JSON");
    let value = program
        .eval_json(&inputs)
        .unwrap_or_else(|e| panic!("{}", e.render("test.rise", source)));
    value.to_json().expect("data").to_string()
}

/// The path of an example program.
pub fn example(name: &str) -> String {
    let path = format!("{}/../examples/rise/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}
