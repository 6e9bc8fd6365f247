//! The measured costs of search: candidates compiled in parallel, timed one at a time,
//! their values checked once against the interpreter; failures with their status.

use super::{example, measured, sizes};
use elevate::bridge::jit::OpenMp;
use elevate::bridge::{CandidateLimits, Measured, ModelMeasured, WorkerCommand, RACE_FACTOR};
use elevate::core::Context;
use elevate::rise::search::{Machine, ModelCost};
use elevate::rise::{registry, Program, Term};
use elevate::strategies::search::{Cost, Status};
use std::time::Duration;

/// The matmul at `n`-cubed sizes, typed.
fn matmul(n: i64) -> Term {
    let program = Program::load(&example("matmul.rise"), None).unwrap();
    program
        .instantiate(&sizes(&[("n", n), ("m", n), ("k", n)]))
        .unwrap()
}

fn rewritten(term: &Term, strategy: &str) -> Term {
    registry()
        .parse(strategy)
        .unwrap()
        .apply(term, &mut Context::default())
        .unwrap_or_else(|f| panic!("{strategy}: {f}"))
}

#[test]
fn candidates_compile_in_parallel_and_run_one_at_a_time_in_order() {
    let mm = matmul(32);
    let cost = measured(&mm).runs(3);
    let strategies = ["baseline", "blocking", "loopPerm", "par", "id"];
    let programs: Vec<Term> = strategies.iter().map(|s| rewritten(&mm, s)).collect();
    let refs: Vec<&Term> = programs.iter().collect();
    let results = cost.evaluate_all(&refs, 2);
    assert_eq!(results.len(), strategies.len());
    for (s, r) in strategies.iter().zip(&results) {
        let m = r.as_ref().unwrap_or_else(|e| panic!("{s}: {e}"));
        assert!(m.cost > 0.0 && m.ms == Some(m.cost), "{s}: {m:?}");
        assert!(m.compile_ms.is_some_and(|c| c > 0.0), "{s}: {m:?}");
    }
    // `par` and `id` are two programs; `baseline` and `id` may be one (both lower to
    // the naive loops): each distinct program was checked once.
    let distinct = programs
        .iter()
        .map(elevate::rise::search::fingerprint)
        .collect::<std::collections::HashSet<_>>()
        .len();
    assert_eq!(cost.checked_programs(), distinct);
    // Measuring again checks nothing more.
    let again = cost.evaluate(&programs[3]).unwrap();
    assert!(again.cost > 0.0);
    assert_eq!(cost.checked_programs(), distinct);
    assert_eq!(cost.name(), "measured");
}

#[test]
fn a_program_that_computes_something_else_has_wrong_values_with_the_first_difference() {
    let mm = matmul(16);
    let cost = measured(&mm).runs(1);
    // The same signature, sums instead of products.
    let source = example("matmul.rise").replace("fst(p) * snd(p)", "fst(p) + snd(p)");
    let other = Program::load(&source, None)
        .unwrap()
        .instantiate(&sizes(&[("n", 16), ("m", 16), ("k", 16)]))
        .unwrap();
    let rejected = cost.evaluate(&other).unwrap_err();
    assert_eq!(rejected.status, Status::WrongValues);
    assert!(
        rejected.reason.contains("at [0][0]: expected"),
        "{}",
        rejected.reason
    );
    assert_eq!(cost.checked_programs(), 0);
}

#[test]
fn a_program_the_bridge_cannot_compile_fails_with_the_bridge_s_message() {
    let mm = matmul(16);
    let cost = measured(&mm);
    // (Its rows scanned: `scanSeq` is no construct of the bridge's.)
    let scanned = Program::load(
        "def mm(a: n.k.f32, b: k.m.f32) : n.m.f32 =
          a |> map(fun(arow => transpose(b) |> map(fun(bcol =>
            zip(arow, bcol) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))
            |> scanSeq(fun(x, acc => acc + x), 0.0)))",
        None,
    )
    .unwrap()
    .instantiate(&sizes(&[("n", 16), ("m", 16), ("k", 16)]))
    .unwrap();
    let results = cost.evaluate_all(&[&scanned, &mm], 2);
    let rejected = results[0].as_ref().unwrap_err();
    assert_eq!(rejected.status, Status::CompileFailed, "{rejected}");
    assert!(rejected.reason.contains("scanSeq"), "{}", rejected.reason);
    // The other candidate of the round is measured all the same.
    assert!(results[1].is_ok(), "{:?}", results[1]);
}

#[test]
fn a_candidate_slower_than_the_timeout_is_a_timeout() {
    let mm = matmul(64);
    let cost = measured(&mm).timeout(Duration::from_nanos(1));
    let rejected = cost.evaluate(&rewritten(&mm, "baseline")).unwrap_err();
    assert_eq!(rejected.status, Status::Timeout, "{rejected}");
    assert!(
        rejected.reason.contains("the run limit"),
        "{}",
        rejected.reason
    );
}

#[test]
fn model_and_measured_measures_the_model_s_best_and_scales_the_others() {
    let mm = matmul(32);
    let model = ModelCost::new(Machine::default());
    let cost = ModelMeasured::new(model, measured(&mm).runs(3), 1);
    let programs: Vec<Term> = ["baseline", "blocking", "par"]
        .iter()
        .map(|s| rewritten(&mm, s))
        .collect();
    let refs: Vec<&Term> = programs.iter().collect();
    let results = cost.evaluate_all(&refs, 2);
    let measures: Vec<_> = results.iter().map(|r| r.as_ref().unwrap()).collect();
    let estimates: Vec<f64> = programs
        .iter()
        .map(|p| model.evaluate(p).unwrap().cost)
        .collect();
    let best = (0..3)
        .min_by(|&a, &b| estimates[a].total_cmp(&estimates[b]))
        .unwrap();
    for (i, m) in measures.iter().enumerate() {
        assert_eq!(m.model, Some(estimates[i]));
        if i == best {
            assert!(m.ms.is_some() && m.cost == m.ms.unwrap(), "{m:?}");
        } else {
            assert_eq!(m.ms, None, "{m:?}");
            let scaled = estimates[i] * cost.scale();
            assert!((m.cost - scaled).abs() <= 1e-9 * scaled, "{m:?}");
        }
    }
    let scale = measures[best].ms.unwrap() / estimates[best];
    assert!((cost.scale() / scale - 1.0).abs() < 1e-9);
    assert_eq!(cost.name(), "model+measured");
}

#[test]
fn given_values_replace_the_interpreter_s() {
    let mm = matmul(16);
    let right = measured(&mm);
    let inputs = right.inputs().to_vec();
    let values = elevate::rise::evaluate(&mm, &Default::default(), &inputs)
        .unwrap()
        .to_json()
        .unwrap();
    // Given before or after other settings, they are kept.
    let cost = measured(&mm)
        .with_reference(values.clone())
        .runs(2)
        .timeout(Duration::from_secs(5));
    assert!(cost.evaluate(&mm).is_ok());
    let mut wrong = values;
    wrong[3][5] = serde_json::json!(1e6);
    let cost = measured(&mm).with_reference(wrong).runs(1);
    let rejected = cost.evaluate(&mm).unwrap_err();
    assert_eq!(rejected.status, Status::WrongValues);
    assert!(rejected.reason.contains("at [3][5]"), "{}", rejected.reason);
}

#[test]
fn a_candidate_far_slower_than_the_best_costs_at_most_one_run_after_its_warm_up() {
    let mm = matmul(128);
    // On one thread: parallel loops on a machine busy with other tests can be slowed
    // down by any factor, one thread only by the share of the core it gets.
    let cost = measured(&mm).runs(3).threads(1);
    let fast = cost.evaluate(&rewritten(&mm, "par")).unwrap();
    assert_eq!(cost.raced(), 0, "the first candidate is timed in full");
    // The naive loops: a hundred times slower than `par` at this size.
    let slow = cost.evaluate(&rewritten(&mm, "baseline")).unwrap();
    assert_eq!(cost.raced(), 1);
    assert!(slow.ms == Some(slow.cost), "{slow:?}");
    assert!(
        slow.cost > RACE_FACTOR * fast.cost,
        "{slow:?} against {fast:?}"
    );
}

#[test]
fn each_thread_sets_its_own_count_of_parallel_threads() {
    let openmp = OpenMp::get().expect("the OpenMP runtime is installed with LLVM");
    let before = openmp.threads();
    let other = std::thread::spawn(|| {
        let openmp = OpenMp::get().unwrap();
        openmp.set_threads(3);
        openmp.threads()
    });
    assert_eq!(other.join().unwrap(), 3);
    // Another thread's setting leaves this one's alone.
    assert_eq!(openmp.threads(), before);
}

#[test]
fn a_measured_search_on_one_thread_with_the_model_s_estimates_and_its_compile_rate() {
    let mm = matmul(64);
    let cost = measured(&mm)
        .runs(1)
        .threads(1)
        .with_model(ModelCost::new(Machine::default()));
    assert_eq!(cost.compile_rate().candidates, 0);
    let programs: Vec<Term> = ["par", "blocking", "id"]
        .iter()
        .map(|s| rewritten(&mm, s))
        .collect();
    let refs: Vec<&Term> = programs.iter().collect();
    for (r, p) in cost.evaluate_all(&refs, 2).into_iter().zip(&programs) {
        let m = r.unwrap();
        let estimate = ModelCost::new(Machine::default()).evaluate(p).unwrap().cost;
        assert_eq!(m.model, Some(estimate));
        assert!(m.ms == Some(m.cost));
    }
    let rate = cost.compile_rate();
    assert_eq!(rate.candidates, 3);
    assert!(rate.seconds > 0.0 && rate.per_second() > 0.0, "{rate:?}");
}

/// A point of `auto`'s space for the 256-cubed matmul whose compilation takes minutes
/// (LLVM's loop passes on a 4 x 16 tile, its reduction split by 2 and unrolled,
/// vectors of 8 and the rows unrolled around them).
pub const SLOW_TO_COMPILE: &str = "DFNF ; try(fuseReduceMap @ topDown) ; tileNDList([4, 16]) @ outermost(mapNest(2)) ;; try(reduceMapFission @ outermost(isApplied(isApplied(isApplied(isReduceSeq))))) ;; splitStrategy(2) @ innermost(isFullyAppliedReduce) ;; unroll @ innermost(isReduceSeq) ;; vectorize(8) @ innermost(isFullyAppliedMap) ;; function(mapSeqUnroll) @ innermost(isApplied(isMap) ; argument(isLambda) ; contains(\"asVector(8)\"))";

fn limits(compile_s: f64, memory: u64) -> CandidateLimits {
    CandidateLimits {
        compile: Duration::from_secs_f64(compile_s),
        memory,
        ..CandidateLimits::defaults(1, None)
    }
}

#[test]
fn a_compilation_past_its_limit_is_killed_and_the_round_goes_on() {
    let mm = matmul(256);
    let cost = measured(&mm).runs(1).limits(limits(2.0, 4 << 30));
    let slow = rewritten(&mm, SLOW_TO_COMPILE);
    let fast = rewritten(&mm, "blocking");
    let started = std::time::Instant::now();
    let results = cost.evaluate_all(&[&slow, &fast], 1);
    let rejected = results[0].as_ref().unwrap_err();
    assert_eq!(rejected.status, Status::CompileTimeout, "{rejected}");
    assert!(
        rejected.reason.contains("the compile limit of 2.0 s"),
        "{}",
        rejected.reason
    );
    assert!(results[1].is_ok(), "{:?}", results[1]);
    // Not the many minutes the compilation takes: its limit, then the other
    // candidate (compiled and checked by a debug build, beside other tests).
    assert!(started.elapsed() < Duration::from_secs(150));
    // The killed worker was replaced: two started, one runs now.
    assert_eq!(cost.workers_started(), 2);
    assert_eq!(cost.worker_memory().len(), 1);
}

#[test]
fn what_runs_at_the_deadline_is_stopped() {
    let mm = matmul(256);
    let cost = measured(&mm).runs(1);
    let slow = rewritten(&mm, SLOW_TO_COMPILE);
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    let results = cost.evaluate_until(&[&slow, &mm], 1, Some(deadline));
    for r in &results {
        let rejected = r.as_ref().unwrap_err();
        assert_eq!(rejected.status, Status::Stopped, "{rejected}");
        assert!(rejected.reason.contains("budget"), "{}", rejected.reason);
    }
    assert!(std::time::Instant::now() < deadline + Duration::from_secs(10));
    assert!(
        cost.worker_memory().is_empty(),
        "the busy worker was killed"
    );
}

#[test]
fn a_candidate_past_its_worker_s_memory_is_out_of_memory() {
    // A result of 2 GiB from inputs of 64 KiB, for a worker of 1 GiB; the reference
    // is given, so that only the candidate's own buffers need the memory.
    let source = example("matmul.rise");
    let big = Program::load(&source, None)
        .unwrap()
        .instantiate(&sizes(&[("n", 1 << 14), ("m", 1 << 15), ("k", 1)]))
        .unwrap();
    let cost = measured(&big)
        .runs(1)
        .limits(limits(60.0, 1 << 30))
        .with_reference(serde_json::json!([]));
    let rejected = cost.evaluate(&big).unwrap_err();
    assert_eq!(rejected.status, Status::OutOfMemory, "{rejected}");
    assert!(rejected.reason.contains("memory"), "{}", rejected.reason);
    // The worker said so itself, and lives on.
    let small = matmul(16);
    let other = measured(&small).runs(1).limits(limits(60.0, 1 << 30));
    assert!(other.evaluate(&small).is_ok());
}

#[test]
fn a_worker_that_cannot_start_is_an_error_before_any_candidate() {
    let mm = matmul(16);
    let cost = Measured::new(&mm)
        .unwrap()
        .worker(WorkerCommand::new("/nonexistent/elevate", &[]));
    let e = cost.start_worker().unwrap_err().to_string();
    assert!(
        e.contains("cannot start the worker `/nonexistent/elevate`"),
        "{e}"
    );
    // A program that is no worker (it answers nothing the protocol knows).
    let cost = Measured::new(&mm)
        .unwrap()
        .worker(WorkerCommand::new("/bin/echo", &["hello"]));
    let e = cost.start_worker().unwrap_err().to_string();
    assert!(e.contains("could not be set up"), "{e}");
}

#[test]
fn the_best_and_the_baseline_are_compared_in_turns_with_their_spread() {
    let mm = matmul(64);
    let cost = measured(&mm).threads(1);
    let best = rewritten(&mm, "par");
    let compared = cost.compare(&[&mm, &best], 3, None);
    for m in &compared {
        let m = m.as_ref().expect("both run");
        let (lo, hi) = m.spread_ms.expect("a spread");
        assert!(lo <= m.cost && m.cost <= hi, "{m:?}");
        assert_eq!(m.ms, Some(m.cost));
    }
}
