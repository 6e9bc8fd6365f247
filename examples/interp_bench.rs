//! The reference interpreter's speed: matrix multiplication (`matmul.rise`) of two
//! random N x N f32 matrices, as one JSON line.
//!
//! `cargo run --release --example interp_bench [-- N]` (default 256).

use elevate::rise::nat::NatVar;
use elevate::rise::{io, NatEnv, Program};
use std::time::Instant;

fn main() {
    let n: i64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(256);
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/examples/matmul.rise"
    );
    let source = std::fs::read_to_string(path).expect("the matmul example");
    let program = Program::load(&source, None).expect("matmul type-checks");
    let mut nats = NatEnv::default();
    for name in ["n", "k", "m"] {
        nats.insert(NatVar::Named(name.into()), n);
    }
    let inputs = io::random_inputs(&program.signature(), &nats, 1).expect("inputs");
    let start = Instant::now();
    let result = elevate::rise::evaluate(&program.entry().term, &nats, &inputs).expect("runs");
    let seconds = start.elapsed().as_secs_f64();
    let first = result.to_json().expect("data")[0][0].clone();
    println!(
        "{}",
        serde_json::json!({"bench": "interp_matmul", "n": n, "seconds": (seconds * 1000.0).round() / 1000.0,
                           "mflops": ((2 * n * n * n) as f64 / seconds / 1e6).round(), "c00": first})
    );
}
