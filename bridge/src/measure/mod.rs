//! The measured costs of search (feature `mlir`): candidates compiled through MLIR and
//! timed on the machine, their values checked against the interpreter. (The
//! analytical model, `elevate_rise::search::ModelCost`, reads the loop program the
//! bridge compiles and needs no bridge.)
//!
//! [`Measured`] never compiles or runs a candidate in the search's process: its
//! workers do, processes that it starts ([`WorkerCommand`]: `elevate` itself, or any
//! program whose `main` calls [`serve_if_asked`]), asks by the [`protocol`], watches
//! and kills. A round's candidates compile on up to `jobs` workers at once; then each
//! runs alone, on the worker that compiled it, with nothing else compiling or running:
//! a warm-up run, whose values are checked against the interpreter's the first time a
//! program is seen (a worker computes them once, on the program the search started
//! from, with the same inputs), then up to `runs` timed runs (fewer once they took a
//! second together), whose median is the cost and whose fastest and slowest its
//! spread; a candidate whose first timed run already takes [`RACE_FACTOR`] times the
//! best median so far costs that run's time, and one whose warm-up alone takes ten
//! times that costs its warm-up's time.
//!
//! Every candidate has [`CandidateLimits`]: a worker that compiles past the compile
//! limit, runs past the run limit, holds more memory than its limit (its address
//! space, set by the worker on itself, and its resident memory, watched), or dies (a
//! signal, an abort, a stack overflow in compiled code) is killed and replaced, and its
//! candidate is `compile timeout`, `timeout`, `out of memory` or `crashed`, with the
//! limit or the signal in its reason. What runs at a deadline
//! ([`Cost::evaluate_until`]) or once told to stop ([`Measured::stop_on`]) is killed
//! too, its candidates `stopped`. A worker keeps what it compiled (a program met again
//! costs nothing) and is replaced after a few hundred candidates or once it holds half
//! its memory limit, so that what it keeps never grows without bound.
//!
//! [`ModelMeasured`] ranks a round by the analytical model and measures only the best
//! few; the others get the model's estimate scaled by how measured times compared with
//! the model's estimates so far (their [`Measure::ms`] stays `None`: not measured).
//!
//! [`Cost::evaluate_until`]: elevate_strategies::search::Cost::evaluate_until
//! [`Measure::ms`]: elevate_strategies::search::Measure::ms

mod limits;
#[cfg(feature = "mlir")]
mod measured;
#[cfg(feature = "mlir")]
mod model_measured;
#[cfg(feature = "mlir")]
mod pool;
pub mod protocol;
#[cfg(feature = "mlir")]
mod worker;

pub use limits::{machine_memory, CandidateLimits, LimitsError, DEFAULT_STACK, MIN_WORKER_MEMORY};
#[cfg(feature = "mlir")]
pub use measured::{CompileRate, InFlight, MeasureError, Measured, REFERENCE_TIME};
#[cfg(feature = "mlir")]
pub use model_measured::ModelMeasured;
#[cfg(feature = "mlir")]
pub use pool::{WorkerCommand, WORKER_ENV, WORKER_PROGRAM_ENV};
pub use protocol::RunSpec;
#[cfg(feature = "mlir")]
pub use worker::{serve, serve_if_asked, serve_stdio, Engine, Runs, RACE_FACTOR};
