//! The engine's benchmarks as a quick summary: one JSON object per line.
//!
//! `cargo run --release --example engine_bench` (add `-- --quick` for a smaller run).
//!
//! 1. `normalize`: `normalize(negNeg)` over a 100,000-node term needing 10,000
//!    rewrites, against the naive `repeat(topDown(negNeg))` that restarts from the
//!    root after every rewrite.
//! 2. `backtrack`: the same 1,000 local rewrites, each found by a top-down traversal,
//!    on a 100,000-node program (a) immutable and shared, keeping every version,
//!    (b) mutable, deep-cloned before every attempt, (c) mutable, rewritten in place.

#[path = "../benches/support/workloads.rs"]
mod workloads;

use elevate::core::Traversable as _;
use serde_json::json;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::time::Instant;
use workloads::*;

/// Counts live heap bytes and their peak, to measure what keeping versions costs.
/// Counting is switched on only around memory measurements, so that it does not
/// slow down the timed runs (allocation-heavy baselines would suffer most).
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Relaxed) {
            let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(live, Relaxed);
        }
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if COUNTING.load(Relaxed) {
            LIVE.fetch_sub(layout.size(), Relaxed);
        }
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The peak of live heap bytes allocated while `f` runs (what `f` keeps plus its
/// temporaries), not counting what was live before. Frees of older memory are not
/// counted either, so the figure never goes below what `f` itself allocated.
fn peak_bytes_of<R>(f: impl FnOnce() -> R) -> (R, usize) {
    LIVE.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    COUNTING.store(true, Relaxed);
    let result = f();
    COUNTING.store(false, Relaxed);
    (result, PEAK.load(Relaxed))
}

/// Best wall time of `runs` runs, in milliseconds, and the last result.
fn best_ms<R>(runs: usize, mut f: impl FnMut() -> R) -> (R, f64) {
    let mut best = f64::INFINITY;
    let mut result = None;
    for _ in 0..runs {
        let start = Instant::now();
        let r = f();
        best = best.min(start.elapsed().as_secs_f64() * 1e3);
        result = Some(r);
    }
    (result.unwrap(), best)
}

fn round(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let scale = if quick { 10 } else { 1 };
    match args
        .iter()
        .position(|a| a == "--only")
        .map(|i| args[i + 1].as_str())
    {
        Some("normalize") => normalize_bench(scale),
        Some("backtrack") => backtrack_bench(scale),
        Some(other) => panic!("unknown benchmark {other}"),
        // Each benchmark in a fresh process: heap layout decides much of a pointer
        // chasing workload's speed, and one benchmark's garbage must not slow the next.
        None => {
            for bench in ["normalize", "backtrack"] {
                let mut command = std::process::Command::new(&args[0]);
                command.args(["--only", bench]);
                if quick {
                    command.arg("--quick");
                }
                let status = command.status().expect("run the benchmark");
                assert!(status.success(), "benchmark {bench} failed");
            }
        }
    }
}

fn normalize_bench(scale: usize) {
    let (nodes, rewrites) = (100_000 / scale, 10_000 / scale);
    let t = workload(nodes, rewrites);
    let (fast, ms) = best_ms(5, || normalize_memoized(&t));
    let (slow, naive_ms) = best_ms(1, || normalize_naive(&t));
    assert_eq!(fast, slow, "memoized and naive normalize disagree");
    assert_eq!(fast.size(), t.size() - 2 * rewrites);
    println!(
        "{}",
        json!({"bench": "normalize", "nodes": t.size(), "rewrites": rewrites,
               "ms": round(ms), "naive_ms": round(naive_ms),
               "speedup": round(naive_ms / ms)})
    );
}

fn backtrack_bench(scale: usize) {
    let (nodes, rewrites) = (100_000 / scale, 1_000 / scale);
    let (t, one_copy_bytes) = peak_bytes_of(|| workload(nodes, rewrites));
    // Every version kept, plus the failure memo: the memory of the persistent run.
    let (versions, kept_bytes) = peak_bytes_of(|| persistent(&t, rewrites, true));
    let persistent_peak_bytes = one_copy_bytes + kept_bytes;
    let (_, persistent_ms) = best_ms(5, || persistent(&t, rewrites, true));
    let (plain_versions, persistent_nomemo_ms) = best_ms(3, || persistent(&t, rewrites, false));
    let mutable = Mutable::from_term(&t);
    let (by_clone, clone_ms) = best_ms(1, || clone_per_attempt(mutable.clone(), rewrites));
    let mut destructive_ms = f64::INFINITY;
    let mut in_place = None;
    for _ in 0..5 {
        let copy = mutable.clone();
        let start = Instant::now();
        let r = destructive(copy, rewrites);
        destructive_ms = destructive_ms.min(start.elapsed().as_secs_f64() * 1e3);
        in_place = Some(r);
    }
    let last = versions.last().unwrap();
    assert_eq!(versions.len(), rewrites + 1);
    assert_eq!(*last, *plain_versions.last().unwrap());
    assert_eq!(*last, by_clone.to_term());
    assert_eq!(*last, in_place.unwrap().to_term());
    println!(
        "{}",
        json!({"bench": "backtrack", "nodes": t.size(), "rewrites": rewrites,
               "persistent_ms": round(persistent_ms),
               "persistent_nomemo_ms": round(persistent_nomemo_ms),
               "clone_ms": round(clone_ms), "destructive_ms": round(destructive_ms),
               "persistent_peak_bytes": persistent_peak_bytes,
               "one_copy_bytes": one_copy_bytes,
               "time_vs_destructive": round(persistent_ms / destructive_ms),
               "nomemo_time_vs_destructive": round(persistent_nomemo_ms / destructive_ms),
               "clone_vs_persistent": round(clone_ms / persistent_ms),
               "memory_vs_one_copy": round(persistent_peak_bytes as f64 / one_copy_bytes as f64)})
    );
}
