//! Speed of the compiled matrix multiplication, in one run: the `baseline` strategy's
//! code, the other ELEVATE strategies' code, and OpenBLAS's `sgemm` (single thread),
//! as JSON lines `{"version":..,"n":..,"median_ms":..,"gflops":..,"vs_baseline":..,"vs_openblas":..}`.
//!
//! `cargo run --release --example bridge_bench [-- N]` (N = 1024 by default; the
//! strategies' programs are checked against the interpreter at 64 first).

use elevate::bridge::{instantiate, jit, payload};
use elevate::core::Context;
use elevate::rise::nat::NatVar;
use elevate::rise::{io, rules, NatEnv, Program};
use std::time::Instant;

fn median_ms(mut f: impl FnMut(), runs: usize) -> f64 {
    f(); // warm up
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

type Sgemm = unsafe extern "C" fn(
    i32,
    i32,
    i32,
    i32,
    i32,
    i32,
    f32,
    *const f32,
    i32,
    *const f32,
    i32,
    f32,
    *mut f32,
    i32,
);

/// OpenBLAS's single-threaded `cblas_sgemm` on n x n matrices, if the library is there.
fn openblas_ms(n: usize) -> Option<f64> {
    // Read when the library initializes.
    std::env::set_var("OPENBLAS_NUM_THREADS", "1");
    // SAFETY: loading the distribution's OpenBLAS and calling cblas_sgemm with its C
    // signature on buffers of the sizes it is told.
    unsafe {
        let lib = libloading::Library::new("libopenblas.so.0").ok()?;
        let sgemm: libloading::Symbol<Sgemm> = lib.get(b"cblas_sgemm").ok()?;
        let a = vec![0.5f32; n * n];
        let b = vec![0.25f32; n * n];
        let mut c = vec![0f32; n * n];
        let n = n as i32;
        // Row-major (101), no transposes (111).
        Some(median_ms(
            || {
                sgemm(
                    101,
                    111,
                    111,
                    n,
                    n,
                    n,
                    1.0,
                    a.as_ptr(),
                    n,
                    b.as_ptr(),
                    n,
                    0.0,
                    c.as_mut_ptr(),
                    n,
                )
            },
            5,
        ))
    }
}

fn main() {
    let n: i64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1024);
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/examples/matmul.rise"
    );
    let program = Program::load(&std::fs::read_to_string(path).unwrap(), None).unwrap();
    let flops = 2.0 * (n as f64).powi(3);
    let blas = openblas_ms(n as usize);
    let mut baseline_ms = None;
    for (name, strategy) in rules::matmul_strategies() {
        let mut nats = NatEnv::default();
        for v in ["n", "k", "m"] {
            nats.insert(NatVar::Named(v.into()), n);
        }
        let term = instantiate(&program.entry().term, &nats).unwrap();
        let chosen = (strategy >> rules::default_lowering())
            .apply(&term, &mut Context::default())
            .unwrap();
        let compiled = jit::compile(&payload("mm", &chosen).unwrap()).unwrap();
        let inputs = io::random_inputs(&io::signature(&chosen), &NatEnv::default(), 1).unwrap();
        let json: Vec<_> = inputs.iter().map(|v| v.to_json().unwrap()).collect();
        let mut call = compiled.prepare(&json).unwrap();
        let runs = if n >= 1024 && name == "baseline" {
            1
        } else {
            5
        };
        let ms = median_ms(|| call.invoke().unwrap(), runs);
        let base = *baseline_ms.get_or_insert(ms);
        let round = |x: f64| (x * 1000.0).round() / 1000.0;
        println!(
            "{}",
            serde_json::json!({
                "version": name,
                "n": n,
                "median_ms": round(ms),
                "gflops": round(flops / ms / 1e6),
                "vs_baseline": round(base / ms),
                "vs_openblas": blas.map(|b| round(b / ms)),
            })
        );
    }
    if let Some(b) = blas {
        println!(
            "{}",
            serde_json::json!({"version": "openblas sgemm (1 thread)", "n": n,
                               "median_ms": (b * 1000.0).round() / 1000.0,
                               "gflops": (flops / b / 1e6 * 1000.0).round() / 1000.0})
        );
    }
}
