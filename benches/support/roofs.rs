//! The machine's roofs and the BLAS peer, shared by the benchmarks that compare with
//! them (`examples/search_bench.rs`, `examples/ops_bench.rs`): the FMA peak of one
//! core (a tight loop of independent FMAs), one core's copy and triad bandwidth, and
//! OpenBLAS's `sgemm` at its fastest core type, each core type tried in a process of
//! its own (OpenBLAS reads `OPENBLAS_CORETYPE` when it loads): the benchmark runs
//! itself with `--blas M N K THREADS`, which [`answered_blas_child`] answers.

#![allow(dead_code)]

use super::bridge::{median_ms, OpenBlas};
use std::process::Command;

/// OpenBLAS core types worth trying on x86 (the empty one: OpenBLAS's own choice).
pub const CORE_TYPES: [&str; 6] = [
    "",
    "HASWELL",
    "ZEN",
    "SKYLAKEX",
    "COOPERLAKE",
    "SAPPHIRERAPIDS",
];

/// In a child process: OpenBLAS's `sgemm` (`m` x `n` x `k`) on `threads` threads,
/// milliseconds.
pub fn blas_child(m: usize, n: usize, k: usize, threads: usize) {
    let Some(blas) = OpenBlas::load_with_threads(threads) else {
        return;
    };
    let (a, b, mut c) = (vec![0.5f32; m * k], vec![0.25f32; k * n], vec![0f32; m * n]);
    println!(
        "{}",
        median_ms(|| blas.sgemm_mnk(m, n, k, &a, &b, &mut c), 5)
    );
}

/// Whether this process is a child [`blas_best`] started (`--blas M N K THREADS`):
/// then it has printed its time.
pub fn answered_blas_child(args: &[String]) -> bool {
    if args.first().map(String::as_str) != Some("--blas") {
        return false;
    }
    let numbers: Vec<usize> = args[1..].iter().filter_map(|a| a.parse().ok()).collect();
    if let [m, n, k, threads] = numbers[..] {
        blas_child(m, n, k, threads);
    }
    true
}

/// OpenBLAS's best time (`m` x `n` x `k`) on `threads` threads over the core types,
/// and that core type.
pub fn blas_best(m: i64, n: i64, k: i64, threads: usize) -> Option<(f64, String)> {
    let exe = std::env::current_exe().ok()?;
    CORE_TYPES
        .iter()
        .filter_map(|core| {
            let mut command = Command::new(&exe);
            command.arg("--blas");
            command.args([m, n, k, threads as i64].map(|x| x.to_string()));
            if !core.is_empty() {
                command.env("OPENBLAS_CORETYPE", core);
            }
            let out = command.output().ok()?;
            let ms: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
            let name = if core.is_empty() { "default" } else { core };
            Some((ms, name.to_string()))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

/// The copy bandwidth of one core in GB/s (bytes read plus bytes written), copying
/// 64 MiB, far larger than the caches.
pub fn copy_gb_per_s() -> f64 {
    let from = vec![1.0f32; 16 << 20];
    let mut to = vec![0.0f32; 16 << 20];
    let ms = median_ms(
        || {
            to.copy_from_slice(std::hint::black_box(&from));
            std::hint::black_box(&mut to);
        },
        5,
    );
    2.0 * (from.len() * 4) as f64 / ms / 1e6
}

/// The triad bandwidth of one core in GB/s (`a = b + s * c` over 64 MiB arrays: two
/// reads and one write per element).
pub fn triad_gb_per_s() -> f64 {
    let n = 16 << 20;
    let (b, c) = (vec![1.0f32; n], vec![2.0f32; n]);
    let mut a = vec![0.0f32; n];
    let ms = median_ms(
        || {
            let s = std::hint::black_box(3.0f32);
            for ((a, b), c) in a.iter_mut().zip(&b).zip(&c) {
                *a = b + s * c;
            }
            std::hint::black_box(&mut a);
        },
        5,
    );
    3.0 * (n * 4) as f64 / ms / 1e6
}

/// The FMA peak of one core in GFLOPS: independent FMAs on the widest vectors there are.
pub fn fma_peak_gflops() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, checked above.
            return Some(unsafe { peak::avx512() });
        }
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has FMA (and so AVX), checked above.
            return Some(unsafe { peak::avx2() });
        }
    }
    None
}

#[cfg(target_arch = "x86_64")]
mod peak {
    use std::arch::x86_64::*;
    use std::time::Instant;

    /// Independent accumulators: more than the FMA latency times the FMAs per cycle,
    /// and with the two operands no more than the registers there are (AVX-512 has 32,
    /// AVX2 16: with 16 accumulators there, the loop spills and runs at half speed).
    const ACCUMULATORS: usize = 16;
    const ACCUMULATORS_AVX2: usize = 12;
    const ITERATIONS: u64 = 40_000_000;

    #[target_feature(enable = "avx512f")]
    pub unsafe fn avx512() -> f64 {
        let (a, b) = (_mm512_set1_ps(0.999_999), _mm512_set1_ps(1e-7));
        let mut acc = [_mm512_set1_ps(1.0); ACCUMULATORS];
        let t = Instant::now();
        for _ in 0..ITERATIONS {
            for x in acc.iter_mut() {
                *x = _mm512_fmadd_ps(*x, a, b);
            }
        }
        let seconds = t.elapsed().as_secs_f64();
        let mut sum = _mm512_setzero_ps();
        for x in acc {
            sum = _mm512_add_ps(sum, x);
        }
        std::hint::black_box(sum);
        (ITERATIONS * ACCUMULATORS as u64 * 16 * 2) as f64 / seconds / 1e9
    }

    #[target_feature(enable = "avx,fma")]
    pub unsafe fn avx2() -> f64 {
        let (a, b) = (_mm256_set1_ps(0.999_999), _mm256_set1_ps(1e-7));
        let mut acc = [_mm256_set1_ps(1.0); ACCUMULATORS_AVX2];
        let t = Instant::now();
        for _ in 0..ITERATIONS {
            for x in acc.iter_mut() {
                *x = _mm256_fmadd_ps(*x, a, b);
            }
        }
        let seconds = t.elapsed().as_secs_f64();
        let mut sum = _mm256_setzero_ps();
        for x in acc {
            sum = _mm256_add_ps(sum, x);
        }
        std::hint::black_box(sum);
        (ITERATIONS * ACCUMULATORS_AVX2 as u64 * 8 * 2) as f64 / seconds / 1e9
    }
}
