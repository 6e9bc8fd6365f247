//! How the RISE front end scales: one JSON object per line for each program shape and
//! size, then one line with the growth of the time per doubling of the size for each
//! shape (2 is linear, 4 quadratic).
//!
//! `cargo run --release --example frontend_bench` (sizes 1k to 64k; add `-- --quick`
//! for sizes 256 to 4k, or `-- SHAPE SIZE...` for one shape at the sizes given).
//!
//! The shapes (`benches/support/frontend_shapes.rs`): chains of applications
//! `id(id)(id)...(x)`, chains of definitions each calling the one before, parameter
//! types in nested parentheses or with many dimensions, nested lambdas, nested array
//! literals. For each: parsing, type inference, printing the entry point, and parsing
//! the printed text again, in milliseconds (the best of three runs); `ms` is parsing
//! plus inference, what loading a program costs.

#[path = "../benches/support/frontend_shapes.rs"]
mod frontend_shapes;

use elevate::rise::{infer_program, parse_program, print_definition};
use frontend_shapes::SHAPES;
use serde_json::json;
use std::time::Instant;

/// Milliseconds `f` takes, the best of `runs`, and its last result.
fn best_ms<R>(runs: usize, mut f: impl FnMut() -> R) -> (f64, R) {
    let mut best = f64::INFINITY;
    let mut result = None;
    for _ in 0..runs {
        let start = Instant::now();
        let r = f();
        best = best.min(start.elapsed().as_secs_f64() * 1e3);
        result = Some(r);
    }
    (best, result.expect("at least one run"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let only = args.iter().find(|a| !a.starts_with("--"));
    let given: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let sizes: Vec<usize> = if !given.is_empty() {
        given
    } else if quick {
        vec![256, 512, 1024, 2048, 4096]
    } else {
        vec![1024, 2048, 4096, 8192, 16384, 32768, 65536]
    };
    let mut growth = serde_json::Map::new();
    for (shape, source_of) in SHAPES {
        if only.is_some_and(|s| s.parse::<usize>().is_err() && s != shape) {
            continue;
        }
        let mut times = Vec::new();
        for &n in &sizes {
            let source = source_of(n);
            let (parse_ms, defs) = best_ms(3, || parse_program(&source).expect("parses"));
            let (infer_ms, typed) = best_ms(3, || infer_program(&defs).expect("type-checks"));
            let entry = typed.last().expect("a definition");
            let (print_ms, printed) = best_ms(3, || print_definition(&entry.name, &entry.term));
            let (reparse_ms, _) = best_ms(3, || parse_program(&printed).expect("parses back"));
            let ms = parse_ms + infer_ms;
            times.push(ms);
            println!(
                "{}",
                json!({
                    "shape": shape,
                    "size": n,
                    "ms": round(ms),
                    "parse_ms": round(parse_ms),
                    "infer_ms": round(infer_ms),
                    "print_ms": round(print_ms),
                    "reparse_ms": round(reparse_ms),
                })
            );
        }
        // The geometric mean of t(2n)/t(n) over the last three doublings, where the
        // times are large enough to be measured well.
        let ratios: Vec<f64> = times.windows(2).map(|w| w[1] / w[0].max(1e-3)).collect();
        let last = &ratios[ratios.len().saturating_sub(3)..];
        if last.is_empty() {
            continue;
        }
        let mean = last.iter().map(|r| r.ln()).sum::<f64>() / last.len() as f64;
        growth.insert(shape.to_string(), json!(round(mean.exp())));
    }
    println!("{}", json!({ "growth_per_doubling": growth }));
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
