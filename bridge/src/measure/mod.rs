//! The costs of search that know the bridge: the analytical model told which of the
//! bridge's translations each program gets ([`model_cost`]), and (feature `mlir`)
//! candidates compiled through MLIR and timed on the machine, their values checked
//! against the interpreter.
//!
//! [`Measured`] compiles a round's candidates in parallel, each on a thread of its own
//! with a context of its own ([`crate::jit::compile`]; at most `jobs` compile at once,
//! and the first compilation of the process runs alone, since it registers MLIR's
//! passes and LLVM's targets in global tables). Then it runs them one at a time, so
//! that each has the machine to itself: a warm-up run, whose values are checked
//! against the interpreter's the first time a program is seen (the interpreter runs
//! once, on the program the search started from, with the same inputs), then the
//! median of `runs` runs; a candidate whose first run after the warm-up already takes
//! [`RACE_FACTOR`] times the best median so far costs that run's time, without more
//! runs, and one whose warm-up alone takes ten times that (more than a first touch of
//! its buffers explains) costs its warm-up's time. A candidate whose warm-up run takes
//! longer than the timeout,
//! or that has not finished its runs when the time for all of them is up (the timeout
//! for each, and two seconds to set up the call and compare its values), is a
//! [`Status::Timeout`]: compiled code cannot be interrupted, so a candidate that runs
//! on is left to finish on its thread, and the round goes on without it.
//!
//! [`ModelMeasured`] ranks a round by the analytical model and measures only the best
//! few; the others get the model's estimate scaled by how measured times compared with
//! the model's estimates so far (their [`Measure::ms`] stays `None`: not measured).

#[cfg(feature = "mlir")]
mod measured;
#[cfg(feature = "mlir")]
mod model_measured;

#[cfg(feature = "mlir")]
pub use measured::{CompileRate, MeasureError, Measured, RACE_FACTOR};
#[cfg(feature = "mlir")]
pub use model_measured::ModelMeasured;

use elevate_rise::limits::Limits;
use elevate_rise::search::trace::Translation;
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
        let clamped = lowered(
            &MATMUL.replace(
                "zip(arow,",
                "zip(arow |> map(fun(x => [x] |> idx(natAsIndex(1, cast(x * 0.0) : i64)))),",
            ),
            "blocking",
        );
        assert_eq!(translation(&clamped), Translation::Loops);
        // The quick answer is the payload's.
        for t in [&blocking, &clamped] {
            let payload = crate::payload::payload("f", t, &Limits::default()).unwrap();
            assert_eq!(
                crate::payload::all_structured(t, &Limits::default()),
                payload.all_structured()
            );
        }
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
