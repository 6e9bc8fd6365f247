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

use serde_json::json;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;
use workloads::*;

/// Counts live heap bytes and their peak, to measure what keeping versions costs.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
        PEAK.fetch_max(live, Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Live bytes above the current level at the peak while `f` runs.
fn peak_bytes_of<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let result = f();
    (result, PEAK.load(Relaxed) - base)
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
    let quick = std::env::args().any(|a| a == "--quick");
    let scale = if quick { 10 } else { 1 };

    // 1. normalize
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

    // 2. backtrack
    let (nodes, rewrites) = (100_000 / scale, 1_000 / scale);
    let ((t, mutable), one_copy_bytes) = peak_bytes_of(|| {
        let t = workload(nodes, rewrites);
        let m = Mutable::from_term(&t);
        (t, m)
    });
    // `one_copy_bytes` covered both representations; measure the shared one alone.
    drop(mutable);
    let (t, one_copy_bytes_shared) = {
        let text_free_copy = Mutable::from_term(&t);
        drop(t);
        peak_bytes_of(|| text_free_copy.to_term())
    };
    let _ = one_copy_bytes;
    let mutable = Mutable::from_term(&t);

    let ((versions, persistent_ms), persistent_peak_bytes) =
        peak_bytes_of(|| best_ms(1, || persistent(&t, rewrites, true)));
    let (_, persistent_repeat_ms) = best_ms(3, || persistent(&t, rewrites, true));
    let persistent_ms = persistent_ms.min(persistent_repeat_ms);
    let (plain_versions, persistent_nomemo_ms) = best_ms(1, || persistent(&t, rewrites, false));
    let (by_clone, clone_ms) = best_ms(1, || clone_per_attempt(mutable.clone(), rewrites));
    let mut destructive_ms = f64::INFINITY;
    let mut in_place = None;
    for _ in 0..3 {
        let copy = mutable.clone();
        let (r, ms) = best_ms(1, || destructive(copy.clone(), rewrites));
        destructive_ms = destructive_ms.min(ms);
        in_place = Some(r);
    }
    let last = versions.last().unwrap();
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
               "one_copy_bytes": one_copy_bytes_shared,
               "time_vs_destructive": round(persistent_ms / destructive_ms),
               "clone_vs_persistent": round(clone_ms / persistent_ms),
               "memory_vs_one_copy": round(persistent_peak_bytes as f64 / one_copy_bytes_shared as f64)})
    );
}
