//! The reference interpreter's speed: matrix multiplication (`matmul.rise`) of two
//! random N x N f32 matrices, as one JSON line.
//!
//! `cargo run --release --example interp_bench [-- N]` (default 256).

#[path = "../benches/support/matmul.rs"]
mod matmul;

use std::time::Instant;

fn main() {
    let n: i64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(256);
    let (program, nats, inputs) = matmul::with_inputs(n);
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
