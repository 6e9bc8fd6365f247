//! The compiled matrix multiplication and what it is compared with, shared by the
//! bridge's criterion benchmark and `examples/bridge_bench.rs`: a matmul strategy's
//! program compiled through MLIR, OpenBLAS's `cblas_sgemm` (single thread), and the
//! thread count of the OpenMP runtime that runs the compiled parallel loops.
//!
//! The programs are compiled by the bridge's driver (`elevate::bridge::compile`).

#![allow(dead_code)]

use elevate::bridge::jit::Compiled;
use elevate::bridge::Options;
use elevate::core::Strategy;
use elevate::rise::nat::NatVar;
use elevate::rise::{io, rules, NatEnv, Program, Term, Value};
use libloading::Library;
use std::time::Instant;

/// The named strategy of the seven ELEVATE matmul strategies
/// (`rules::matmul_strategies()`).
pub fn strategy(name: &str) -> Strategy<Term> {
    rules::matmul_strategies()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| s)
        .unwrap_or_else(|| panic!("no matmul strategy `{name}`"))
}

/// A matmul program compiled to machine code, with random inputs for it.
/// The median of `runs` timed calls of `f`, after one untimed call, in milliseconds.
pub fn median_ms(mut f: impl FnMut(), runs: usize) -> f64 {
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

pub struct Matmul {
    /// The compiled function.
    pub compiled: Compiled,
    /// Its inputs, as `Compiled::prepare` takes them.
    pub inputs: Vec<Value>,
    /// From the RISE text to a callable function: parse and type-check, fix the sizes,
    /// rewrite with the strategy and `defaultLowering`, generate the payload, compile.
    pub compile_ms: f64,
}

/// Compiles `source` (a RISE program whose entry point is the matmul over sizes
/// `n`, `k`, `m`) at `n = k = m = size`, rewritten by `strategy` then
/// `defaultLowering`, with inputs from seed 1.
pub fn compile(source: &str, strategy: Strategy<Term>, size: i64) -> Matmul {
    let started = Instant::now();
    let program = Program::load(source, None).expect("the program type-checks");
    let mut nats = NatEnv::default();
    for v in ["n", "k", "m"] {
        nats.insert(NatVar::Named(v.into()), size);
    }
    let compiled = elevate::bridge::compile(&program, &nats, Some(&strategy), &Options::default())
        .unwrap_or_else(|e| panic!("the matmul compiles: {e}"));
    let compile_ms = started.elapsed().as_secs_f64() * 1e3;
    let inputs = io::random_inputs(&program.signature(), &nats, 1).expect("inputs");
    Matmul {
        compiled,
        inputs,
        compile_ms,
    }
}

/// Compiles a typed matmul with concrete sizes (a strategy's or an e-graph's choice)
/// after `defaultLowering`, with inputs from seed 1.
pub fn compile_term(term: &Term) -> Matmul {
    let started = Instant::now();
    let compiled = elevate::bridge::compile_term("mm", term, None, &Options::default())
        .unwrap_or_else(|e| panic!("the matmul compiles: {e}"));
    let compile_ms = started.elapsed().as_secs_f64() * 1e3;
    let inputs = io::random_inputs(&io::signature(term), &NatEnv::default(), 1).expect("inputs");
    Matmul {
        compiled,
        inputs,
        compile_ms,
    }
}

/// `cblas_sgemm`'s C signature.
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

/// The distribution's OpenBLAS, single-threaded.
pub struct OpenBlas {
    sgemm: Sgemm,
    // Keeps `sgemm` loaded.
    _library: Library,
}

impl OpenBlas {
    /// The library name looked up.
    pub const LIBRARY: &'static str = "libopenblas.so.0";

    /// Loads OpenBLAS with one thread, or `None` if the library is not there.
    pub fn load() -> Option<OpenBlas> {
        Self::load_with_threads(1)
    }

    /// Loads OpenBLAS with `threads` threads (the first load of the process decides).
    pub fn load_with_threads(threads: usize) -> Option<OpenBlas> {
        // Read when the library initializes.
        std::env::set_var("OPENBLAS_NUM_THREADS", threads.max(1).to_string());
        // SAFETY: loading the distribution's OpenBLAS and taking `cblas_sgemm` with its
        // C signature; the library stays loaded as long as the pointer is kept.
        unsafe {
            let library = Library::new(Self::LIBRARY).ok()?;
            let sgemm = *library.get::<Sgemm>(b"cblas_sgemm").ok()?;
            Some(OpenBlas {
                sgemm,
                _library: library,
            })
        }
    }

    /// `c = a b` for row-major `n` x `n` matrices.
    pub fn sgemm(&self, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
        self.sgemm_mnk(n, n, n, a, b, c)
    }

    /// `c = a b` for row-major matrices: `a` is `m` x `k`, `b` is `k` x `n`, `c` is
    /// `m` x `n`.
    pub fn sgemm_mnk(&self, m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
        assert!(a.len() == m * k && b.len() == k * n && c.len() == m * n);
        let dim = |x: usize| i32::try_from(x).expect("a dimension fits in an i32");
        let (m, n, k) = (dim(m), dim(n), dim(k));
        // SAFETY: the buffers hold the floats told above. Row-major (101), no
        // transposes (111); the leading dimensions are the rows' lengths.
        unsafe {
            (self.sgemm)(
                101,
                111,
                111,
                m,
                n,
                k,
                1.0,
                a.as_ptr(),
                k,
                b.as_ptr(),
                n,
                0.0,
                c.as_mut_ptr(),
                n,
            )
        }
    }
}
