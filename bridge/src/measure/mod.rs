//! The costs of search that know the bridge: the analytical model told which of the
//! bridge's translations each program gets ([`model_cost`]), and (feature `mlir`)
//! candidates compiled through MLIR and timed on the machine, their values checked
//! against the interpreter.
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

use elevate_rise::limits::Limits;
use elevate_rise::search::loop_trace::Translation;
use elevate_rise::search::{Machine, ModelCost};
use elevate_rise::Term;

/// The translation the bridge gives the low-level program `term`: the structured one
/// (`linalg` and a Transform script) where every kernel of the program is a
/// structured loop nest, explicit loops otherwise (where one kernel is loops, the
/// model traces the program as loops: it has no cost per kernel), and for what it
/// cannot translate at all.
pub fn translation(term: &Term) -> Translation {
    match crate::payload::all_structured(term, &Limits::default()) {
        true => Translation::Structured,
        false => Translation::Loops,
    }
}

/// The analytical model for `machine`, tracing each program as the bridge translates
/// it: a program the bridge gives explicit loops copies its arrays and accumulators as
/// those loops do.
pub fn model_cost(machine: Machine) -> ModelCost {
    ModelCost {
        translation: Some(translation),
        ..ModelCost::new(machine)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elevate_core::Context;
    use elevate_rise::{registry, Program};
    use elevate_strategies::search::Cost;

    fn lowered(source: &str, strategy: &str) -> Term {
        let program = Program::load(source, None).unwrap();
        registry()
            .parse(&format!("{strategy} ; defaultLowering"))
            .unwrap()
            .apply(&program.entry().term, &mut Context::default())
            .unwrap()
    }

    const MATMUL: &str = "def mm(a: 256.256.f32, b: 256.256.f32) : 256.256.f32 = a |> map(fun(arow => transpose(b) |> map(fun(bcol => zip(arow, bcol) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))";

    #[test]
    fn the_model_traces_each_program_as_the_bridge_translates_it() {
        // Structured: the tiled matmul with its 32x32 accumulator block.
        let blocking = lowered(MATMUL, "blocking");
        assert_eq!(translation(&blocking), Translation::Structured);
        // Explicit loops: the same, reading each row's elements at an index computed
        // from data (not structured).
        let clamped_source = MATMUL.replace(
            "zip(arow,",
            "zip(arow |> map(fun(x => [x] |> idx(natAsIndex(1, cast(x * 0.0) : i64)))),",
        );
        let clamped = lowered(&clamped_source, "blocking");
        assert_eq!(translation(&clamped), Translation::Loops);
        // The quick answer is the payload's, for the library's schedules of both (whose
        // stages are structured, or not, in every mixture).
        let seven = elevate_rise::rules::matmul_strategies();
        let mut answers = std::collections::BTreeSet::new();
        for source in [MATMUL, &clamped_source] {
            for strategy in std::iter::once("id").chain(seven.iter().map(|(name, _)| *name)) {
                let t = lowered(source, strategy);
                let payload = crate::payload::payload("f", &t, &Limits::default()).unwrap();
                let quick = crate::payload::all_structured(&t, &Limits::default());
                assert_eq!(
                    quick,
                    payload.all_structured(),
                    "{strategy}: {:?}",
                    payload.kernels
                );
                answers.insert((quick, payload.kernels.len() > 1));
            }
        }
        assert!(
            answers.contains(&(true, false)) && answers.contains(&(false, true)),
            "{answers:?}"
        );
        let bridge = model_cost(Machine::default());
        let plain = ModelCost::default();
        // Where the bridge's translation is structured, both agree; where it is
        // explicit loops, they copy the accumulator block at each step (more than
        // half the plain cost again, beside the elements' gathers both count).
        let (b, p) = (
            bridge.evaluate(&blocking).unwrap(),
            plain.evaluate(&blocking).unwrap(),
        );
        assert_eq!(b.cost, p.cost);
        let (b, p) = (
            bridge.evaluate(&clamped).unwrap(),
            plain.evaluate(&clamped).unwrap(),
        );
        assert!(b.cost > 1.5 * p.cost, "{} {}", b.cost, p.cost);
    }
}
