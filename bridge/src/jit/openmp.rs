//! The OpenMP runtime the JIT loads for parallel loops, for choosing how many threads
//! a call's parallel loops use.
//!
//! `OMP_NUM_THREADS` (what `elevate run --threads` sets) is read once, when the runtime
//! starts; `omp_set_num_threads` sets the count of the calling thread's later parallel
//! regions, so one process can run candidates on different counts, each from its own
//! thread. The library is opened by its resolved path, as the JIT opens it, so both
//! share one instance.

use super::compiled::OPENMP_RUNTIME;
use libloading::Library;
use std::sync::OnceLock;

/// LLVM's OpenMP runtime, loaded.
pub struct OpenMp {
    set_num_threads: unsafe extern "C" fn(i32),
    get_max_threads: unsafe extern "C" fn() -> i32,
    // Keeps the runtime loaded as long as the function pointer is kept.
    _library: Library,
}

impl OpenMp {
    /// The runtime, loaded once per process, or `None` where it is not installed.
    pub fn get() -> Option<&'static OpenMp> {
        static RUNTIME: OnceLock<Option<OpenMp>> = OnceLock::new();
        RUNTIME.get_or_init(OpenMp::load).as_ref()
    }

    fn load() -> Option<OpenMp> {
        let path = std::fs::canonicalize(OPENMP_RUNTIME).ok()?;
        // SAFETY: loading LLVM's OpenMP runtime and taking `omp_set_num_threads` with
        // its C signature; the library stays loaded as long as the pointer is kept.
        unsafe {
            let library = Library::new(path).ok()?;
            let set_num_threads = *library
                .get::<unsafe extern "C" fn(i32)>(b"omp_set_num_threads")
                .ok()?;
            let get_max_threads = *library
                .get::<unsafe extern "C" fn() -> i32>(b"omp_get_max_threads")
                .ok()?;
            Some(OpenMp {
                set_num_threads,
                get_max_threads,
                _library: library,
            })
        }
    }

    /// Runs the calling thread's next parallel loops on `threads` threads (at least 1,
    /// at most `i32::MAX`).
    pub fn set_threads(&self, threads: usize) {
        let threads = i32::try_from(threads.max(1)).unwrap_or(i32::MAX);
        // SAFETY: `omp_set_num_threads` takes any positive count.
        unsafe { (self.set_num_threads)(threads) }
    }

    /// How many threads the calling thread's next parallel loop would use.
    pub fn threads(&self) -> usize {
        // SAFETY: `omp_get_max_threads` takes nothing and reads the calling thread's
        // setting.
        let threads = unsafe { (self.get_max_threads)() };
        usize::try_from(threads).unwrap_or(1).max(1)
    }
}
