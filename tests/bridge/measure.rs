//! The measured costs of search: candidates compiled in parallel, timed one at a time,
//! their values checked once against the interpreter; failures with their status.

use super::{example, sizes};
use elevate::bridge::jit::OpenMp;
use elevate::bridge::{model_cost, Measured, ModelMeasured, RACE_FACTOR};
use elevate::core::Context;
use elevate::rise::search::Machine;
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
    let cost = Measured::new(&mm).unwrap().runs(3);
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
    let cost = Measured::new(&mm).unwrap().runs(1);
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
    let cost = Measured::new(&mm).unwrap();
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
    assert_eq!(rejected.status, Status::CompileFailed);
    assert!(rejected.reason.contains("scanSeq"), "{}", rejected.reason);
    // The other candidate of the round is measured all the same.
    assert!(results[1].is_ok(), "{:?}", results[1]);
}

#[test]
fn a_candidate_slower_than_the_timeout_is_a_timeout() {
    let mm = matmul(64);
    let cost = Measured::new(&mm).unwrap().timeout(Duration::from_nanos(1));
    let rejected = cost.evaluate(&rewritten(&mm, "baseline")).unwrap_err();
    assert_eq!(rejected.status, Status::Timeout, "{rejected}");
    assert!(rejected.reason.contains("timeout"), "{}", rejected.reason);
}

#[test]
fn model_and_measured_measures_the_model_s_best_and_scales_the_others() {
    let mm = matmul(32);
    let model = model_cost(Machine::default());
    let cost = ModelMeasured::new(model, Measured::new(&mm).unwrap().runs(3), 1);
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
    let right = Measured::new(&mm).unwrap();
    let inputs = right.inputs().to_vec();
    let values = elevate::rise::evaluate(&mm, &Default::default(), &inputs)
        .unwrap()
        .to_json()
        .unwrap();
    // Given before or after other settings, they are kept.
    let cost = Measured::new(&mm)
        .unwrap()
        .with_reference(values.clone())
        .runs(2)
        .timeout(Duration::from_secs(5));
    assert!(cost.evaluate(&mm).is_ok());
    let mut wrong = values;
    wrong[3][5] = serde_json::json!(1e6);
    let cost = Measured::new(&mm).unwrap().with_reference(wrong).runs(1);
    let rejected = cost.evaluate(&mm).unwrap_err();
    assert_eq!(rejected.status, Status::WrongValues);
    assert!(rejected.reason.contains("at [3][5]"), "{}", rejected.reason);
}

#[test]
fn a_candidate_far_slower_than_the_best_costs_at_most_one_run_after_its_warm_up() {
    let mm = matmul(128);
    // On one thread: parallel loops on a machine busy with other tests can be slowed
    // down by any factor, one thread only by the share of the core it gets.
    let cost = Measured::new(&mm).unwrap().runs(3).threads(1);
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
    let cost = Measured::new(&mm)
        .unwrap()
        .runs(1)
        .threads(1)
        .with_model(model_cost(Machine::default()));
    assert_eq!(cost.compile_rate().candidates, 0);
    let programs: Vec<Term> = ["par", "blocking", "id"]
        .iter()
        .map(|s| rewritten(&mm, s))
        .collect();
    let refs: Vec<&Term> = programs.iter().collect();
    for (r, p) in cost.evaluate_all(&refs, 2).into_iter().zip(&programs) {
        let m = r.unwrap();
        let estimate = model_cost(Machine::default()).evaluate(p).unwrap().cost;
        assert_eq!(m.model, Some(estimate));
        assert!(m.ms == Some(m.cost));
    }
    let rate = cost.compile_rate();
    assert_eq!(rate.candidates, 3);
    assert!(rate.seconds > 0.0 && rate.per_second() > 0.0, "{rate:?}");
}
