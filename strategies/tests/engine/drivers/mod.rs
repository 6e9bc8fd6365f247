//! The search drivers, on a space of loop-nest schedules with a known landscape
//! (`nest`), and on edge cases: no budget, a time budget, spaces of one point, of
//! failing points only, and of `steps`.

mod nest;
mod starts;

use crate::gen::{AnyTerm, Desc};
use elevate_core::arith::Term;
use elevate_core::{Budget, Traversable};
use elevate_strategies::search::{
    drivers, Cost, Fingerprint, Measure, Rejection, Report, Search, SearchBudget, Space, Status,
};
use elevate_strategies::text::Registry;
use nest::{registry, Model, Nest, SPACE};
use quickcheck::{Arbitrary, Gen, QuickCheck};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The drivers that must find the optimum with a quarter of exhaustive's budget.
const DRIVERS: [&str; 5] = ["random", "beam(8)", "anneal", "mcts", "evolve"];
/// Every driver, for the edge cases.
const ALL: [&str; 6] = [
    "exhaustive",
    "random",
    "beam(8)",
    "anneal",
    "mcts",
    "evolve",
];
const SEEDS: [u64; 3] = [1, 2, 3];

fn search<P: Traversable + Fingerprint>(
    text: &str,
    registry: Registry<P>,
    driver: &str,
    cost: impl Cost<P>,
    budget: SearchBudget,
    seed: u64,
    program: &P,
) -> Report {
    let space = Space::parse(text, Arc::new(registry)).unwrap_or_else(|e| panic!("{e}"));
    let driver = drivers::from_text(driver).unwrap_or_else(|e| panic!("{e}"));
    Search::new(space, driver, cost)
        .budget(budget)
        .seed(seed)
        .run(program)
}

/// A search of the nest space.
fn nest_search(driver: &str, budget: SearchBudget, seed: u64) -> Report {
    search(
        SPACE,
        registry(),
        driver,
        Model,
        budget,
        seed,
        &Nest::matmul(),
    )
}

fn evaluations(n: usize) -> SearchBudget {
    SearchBudget::default().evaluations(n)
}

/// Every candidate's strategy, parsed by the registry and applied to the start
/// program, gives the program the log names; a candidate whose strategy failed holds
/// the part that failed, and fails again.
fn assert_replays<P: Traversable + Fingerprint>(
    report: &Report,
    registry: &Registry<P>,
    start: &P,
) {
    assert_replays_within(
        report,
        registry,
        start,
        Budget::unlimited().applications(10_000_000),
    );
}

/// As [`assert_replays`], each replay within `budget` (a failed part may have run out
/// of the space's budget: replaying it runs out again).
fn assert_replays_within<P: Traversable + Fingerprint>(
    report: &Report,
    registry: &Registry<P>,
    start: &P,
    budget: Budget,
) {
    for c in &report.log {
        let strategy = registry
            .parse(&c.strategy)
            .unwrap_or_else(|e| panic!("{}: `{}`: {e}", report.driver, c.strategy));
        let replayed = strategy.apply(start, &mut elevate_core::Context::new(budget));
        if c.status == Status::StrategyFailed {
            assert!(
                replayed.is_err(),
                "{}: `{}` replays",
                report.driver,
                c.strategy
            );
            continue;
        }
        let program =
            replayed.unwrap_or_else(|e| panic!("{}: `{}` failed: {e}", report.driver, c.strategy));
        assert_eq!(
            program.fingerprint(),
            c.program_hash,
            "{}: `{}`",
            report.driver,
            c.strategy
        );
    }
}

/// The nest model that also records every program it is asked to evaluate.
#[derive(Default)]
struct Counting {
    seen: Mutex<Vec<u64>>,
}

impl Cost<Nest> for &Counting {
    fn name(&self) -> String {
        "counting".into()
    }

    fn evaluate(&self, nest: &Nest) -> Result<Measure, Rejection> {
        self.seen.lock().unwrap().push(nest.fingerprint());
        Model.evaluate(nest)
    }
}

/// Every point of `SPACE`, computed from its coordinates without the search: its
/// coordinates, and its program's fingerprint and cost (`None`: it failed).
struct Point {
    at: [usize; 6],
    program: Option<u64>,
    cost: Option<f64>,
}

const TILES: [u32; 5] = [8, 16, 32, 64, 128];
const ORDERS: [&str; 6] = ["ijk", "ikj", "jik", "jki", "kij", "kji"];
const VECTORS: [u32; 4] = [1, 4, 8, 16];
const UNROLLS: [u32; 3] = [1, 2, 4];
const PARALLEL: [Option<char>; 4] = [None, Some('i'), Some('j'), Some('k')];
const SIZES: [usize; 6] = [5, 5, 6, 4, 3, 4];

fn landscape() -> &'static [Point] {
    static POINTS: OnceLock<Vec<Point>> = OnceLock::new();
    POINTS.get_or_init(|| {
        let r = registry();
        let start = Nest::matmul();
        let mut points = Vec::new();
        for n in 0..SIZES.iter().product() {
            let mut at = [0; 6];
            let mut rest = n;
            for d in (0..6).rev() {
                at[d] = rest % SIZES[d];
                rest /= SIZES[d];
            }
            let mut text = format!(
                "topDown(tile(i, {})) ; topDown(tile(j, {})) ; order({}) ; \
                 try(topDown(vectorize({}))) ; try(topDown(unroll({})))",
                TILES[at[0]], TILES[at[1]], ORDERS[at[2]], VECTORS[at[3]], UNROLLS[at[4]]
            );
            if let Some(v) = PARALLEL[at[5]] {
                text += &format!(" ; topDown(parallel({v}))");
            }
            let program = r.parse(&text).unwrap().run(&start).ok();
            points.push(Point {
                at,
                program: program.as_ref().map(Fingerprint::fingerprint),
                cost: program.as_ref().and_then(|p| Model::cost(p).ok()),
            });
        }
        points
    })
}

/// The lowest cost of the space.
fn optimum() -> f64 {
    landscape()
        .iter()
        .filter_map(|p| p.cost)
        .fold(f64::INFINITY, f64::min)
}

/// Exhaustive search of the nest space, once for all tests.
fn exhaustive() -> &'static Report {
    static REPORT: OnceLock<Report> = OnceLock::new();
    REPORT.get_or_init(|| nest_search("exhaustive", evaluations(1_000_000), 0))
}

#[test]
fn the_test_landscape_has_local_optima_one_global_optimum_and_failing_points() {
    let points = landscape();
    assert_eq!(points.len(), 7_200);
    let best = optimum();
    let at_best: BTreeSet<u64> = points
        .iter()
        .filter(|p| p.cost == Some(best))
        .filter_map(|p| p.program)
        .collect();
    assert_eq!(at_best.len(), 1, "one program is the global optimum");
    // Local optima: no point that differs in one coordinate is cheaper.
    let index = |at: [usize; 6]| at.iter().zip(SIZES).fold(0, |n, (&a, s)| n * s + a);
    let local_optima = points
        .iter()
        .filter(|p| {
            let Some(cost) = p.cost else { return false };
            (0..6).all(|d| {
                (0..SIZES[d]).all(|v| {
                    let mut at = p.at;
                    at[d] = v;
                    points[index(at)].cost.is_none_or(|c| c >= cost)
                })
            })
        })
        .count();
    assert!(local_optima >= 3, "{local_optima} local optima");
    let strategy_failed = points.iter().filter(|p| p.program.is_none()).count();
    let rejected = points
        .iter()
        .filter(|p| p.program.is_some() && p.cost.is_none())
        .count();
    assert!(strategy_failed > 0 && rejected > 0);
}

#[test]
fn exhaustive_evaluates_every_distinct_program_once_and_finds_the_optimum() {
    let counting = Counting::default();
    let report = search(
        SPACE,
        registry(),
        "exhaustive",
        &counting,
        evaluations(1_000_000),
        0,
        &Nest::matmul(),
    );
    let seen = counting.seen.into_inner().unwrap();
    let distinct: BTreeSet<u64> = seen.iter().copied().collect();
    assert_eq!(distinct.len(), seen.len(), "a program evaluated twice");
    let expected: BTreeSet<u64> = landscape().iter().filter_map(|p| p.program).collect();
    assert_eq!(distinct, expected);
    assert_eq!(report.distinct_programs, expected.len());
    assert!(
        report.evaluations > report.distinct_programs,
        "the space repeats programs"
    );
    assert_eq!(report.best().and_then(|b| b.cost()), Some(optimum()));
    assert_eq!(exhaustive().log, report.log, "exhaustive is deterministic");
}

#[test]
fn every_driver_gets_within_10_percent_of_the_optimum_with_a_quarter_of_the_evaluations() {
    let budget = exhaustive().evaluations / 4;
    let target = 1.1 * optimum();
    for driver in DRIVERS {
        for seed in SEEDS {
            let report = nest_search(driver, evaluations(budget), seed);
            assert!(report.evaluations <= budget);
            let best = report
                .best()
                .and_then(|b| b.cost())
                .unwrap_or(f64::INFINITY);
            assert!(
                best <= target,
                "{driver}, seed {seed}: best {best:.0} after {} evaluations, optimum {:.0}",
                report.evaluations,
                optimum()
            );
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_log_and_another_seed_another() {
    let key = |r: &Report| -> Vec<(String, Option<f64>, Status)> {
        r.log
            .iter()
            .map(|c| (c.strategy.clone(), c.cost(), c.status))
            .collect()
    };
    for driver in DRIVERS {
        let a = nest_search(driver, evaluations(300), 7);
        let b = nest_search(driver, evaluations(300), 7);
        let c = nest_search(driver, evaluations(300), 8);
        assert!(!a.log.is_empty());
        assert_eq!(key(&a), key(&b), "{driver}");
        assert_eq!(a.log, b.log, "{driver}");
        assert_ne!(key(&a), key(&c), "{driver}: the seed changes nothing");
    }
}

/// The nest model, recording the size of every batch it is given.
#[derive(Default)]
struct Batches {
    sizes: Mutex<Vec<usize>>,
}

impl Cost<Nest> for &Batches {
    fn name(&self) -> String {
        "batches".into()
    }

    fn evaluate(&self, nest: &Nest) -> Result<Measure, Rejection> {
        Model.evaluate(nest)
    }

    fn evaluate_all(&self, nests: &[&Nest], jobs: usize) -> Vec<Result<Measure, Rejection>> {
        self.sizes.lock().unwrap().push(nests.len());
        Model.evaluate_all(nests, jobs)
    }
}

#[test]
fn drivers_hand_the_cost_batches_and_threads_change_nothing() {
    let space = || Space::parse(SPACE, Arc::new(registry())).unwrap();
    for driver in ALL {
        let batches = Batches::default();
        let sequential = Search::new(space(), drivers::from_text(driver).unwrap(), &batches)
            .budget(evaluations(300))
            .seed(5)
            .run(&Nest::matmul());
        let sizes = batches.sizes.into_inner().unwrap();
        assert!(
            sizes.iter().all(|&n| n <= drivers::BATCH),
            "{driver}: {sizes:?}"
        );
        let largest = sizes.iter().copied().max().unwrap_or(0);
        assert!(largest >= 4, "{driver}: batches of at most {largest}");
        let parallel = Search::new(space(), drivers::from_text(driver).unwrap(), Model)
            .budget(evaluations(300))
            .seed(5)
            .jobs(4)
            .run(&Nest::matmul());
        assert_eq!(sequential.log, parallel.log, "{driver}");
    }
}

#[test]
fn every_logged_candidate_replays_to_its_program() {
    let r = registry();
    for driver in ALL {
        let report = nest_search(driver, evaluations(400), 1);
        assert!(report.log.iter().any(|c| c.status == Status::Ok));
        assert_replays(&report, &r, &Nest::matmul());
    }
}

#[test]
fn a_budget_of_zero_evaluates_nothing() {
    for driver in ALL {
        let counting = Counting::default();
        let report = search(
            SPACE,
            registry(),
            driver,
            &counting,
            evaluations(0),
            1,
            &Nest::matmul(),
        );
        assert_eq!(report.evaluations, 0, "{driver}");
        assert!(counting.seen.lock().unwrap().is_empty(), "{driver}");
    }
}

/// The nest model, taking this many milliseconds per program.
struct Slow(u64);

impl Cost<Nest> for Slow {
    fn name(&self) -> String {
        "slow".into()
    }

    fn evaluate(&self, nest: &Nest) -> Result<Measure, Rejection> {
        std::thread::sleep(Duration::from_millis(self.0));
        Model.evaluate(nest)
    }
}

#[test]
fn a_time_budget_stops_every_driver() {
    // Without the time limit each of these would evaluate far more than 7,200 / 8
    // points at 2 ms each; the limit must end the search long before.
    let budget = SearchBudget::default().time(Duration::from_millis(100));
    for driver in ALL {
        let report = search(
            SPACE,
            registry(),
            driver,
            Slow(2),
            budget,
            1,
            &Nest::matmul(),
        );
        assert!(
            report.evaluations < landscape().len() / 8,
            "{driver}: {} evaluations",
            report.evaluations
        );
    }
}

#[test]
fn a_search_told_to_stop_stops_as_if_its_budget_were_spent() {
    use std::sync::atomic::{AtomicBool, Ordering};
    for driver in ALL {
        let space = || Space::parse(SPACE, Arc::new(registry())).unwrap();
        let driver_of = || drivers::from_text(driver).unwrap();
        // Set before the start: nothing is evaluated.
        let stopped = Arc::new(AtomicBool::new(true));
        let report = Search::new(space(), driver_of(), Model)
            .budget(evaluations(1_000))
            .stop_on(stopped)
            .run(&Nest::matmul());
        assert_eq!(report.evaluations, 0, "{driver}");
        // Set by an observer at the tenth candidate: the search ends within a batch.
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let report = Search::new(space(), driver_of(), Model)
            .budget(evaluations(1_000))
            .stop_on(stop)
            .observe(move |p| {
                if p.evaluations >= 10 {
                    flag.store(true, Ordering::Relaxed);
                }
            })
            .run(&Nest::matmul());
        assert!(
            (10..200).contains(&report.evaluations),
            "{driver}: {} evaluations",
            report.evaluations
        );
    }
}

#[test]
fn a_time_budget_stops_a_search_within_a_batch() {
    // A batch is evaluated a few candidates at a time under a time budget, so the
    // search ends after about 0.1 s / 25 ms = 4 candidates (fewer on a busy machine),
    // not after its first batch of 32.
    let budget = SearchBudget::default().time(Duration::from_millis(100));
    for driver in ["random", "evolve(32)"] {
        let report = search(
            SPACE,
            registry(),
            driver,
            Slow(25),
            budget,
            1,
            &Nest::matmul(),
        );
        assert!(
            (1..16).contains(&report.evaluations),
            "{driver}: {} evaluations",
            report.evaluations
        );
    }
}

/// Rejects every program.
struct Nothing;

impl<P> Cost<P> for Nothing {
    fn name(&self) -> String {
        "nothing".into()
    }

    fn evaluate(&self, _: &P) -> Result<Measure, Rejection> {
        Err(Rejection::new(Status::CompileFailed, "rejects everything"))
    }
}

#[test]
fn spaces_whose_every_point_fails_end_with_every_candidate_failed() {
    let failing_strategies =
        "{fail, topDown(parallel(k)), topDown(tile(i, {128, 7}))} ; order({ijk, kji})";
    for driver in ALL {
        let rejected = search(
            SPACE,
            registry(),
            driver,
            Nothing,
            evaluations(200),
            1,
            &Nest::matmul(),
        );
        let failed = search(
            failing_strategies,
            registry(),
            driver,
            Model,
            evaluations(200),
            1,
            &Nest::matmul(),
        );
        for report in [&rejected, &failed] {
            assert!(report.evaluations > 0, "{driver}");
            assert_eq!(report.failed, report.evaluations, "{driver}");
            assert!(report.best().is_none(), "{driver}");
        }
        // Four failing points, each logged once by the drivers that remember them.
        if driver != "random" {
            assert_eq!(failed.evaluations, 4, "{driver}");
        }
        assert_replays(&failed, &registry(), &Nest::matmul());
    }
}

#[test]
fn spaces_of_one_point_give_one_candidate() {
    for text in ["order(kij)", "id", "fail", "{order(kij)}"] {
        for driver in ALL {
            let report = search(
                text,
                registry(),
                driver,
                Model,
                evaluations(100),
                1,
                &Nest::matmul(),
            );
            let distinct: BTreeSet<&str> = report.log.iter().map(|c| &*c.strategy).collect();
            assert_eq!(distinct.len(), 1, "{driver} on `{text}`");
            if driver != "random" {
                assert_eq!(report.evaluations, 1, "{driver} on `{text}`");
            }
        }
    }
}

#[test]
fn drivers_explore_steps() {
    let start: Term = "((a + 0) * 1 + -(-(b * 1))) * (c + 0)".parse().unwrap();
    let text = "steps(4, {addZero, mulOne, negNeg}) ; {id, try(topDown(addZero))}";
    let r = crate::text::registry();
    for driver in ALL {
        let report = search(
            text,
            crate::text::registry(),
            driver,
            TermSize,
            evaluations(300),
            3,
            &start,
        );
        assert!(report.evaluations > 0, "{driver}");
        assert_replays(&report, &r, &start);
        // Four steps remove four of the five redexes; `try(topDown(addZero))` the last.
        let best = report.best().and_then(|b| b.cost());
        let simplest: Term = "(a + b) * c".parse().unwrap();
        assert_eq!(best, Some(simplest.to_string().len() as f64), "{driver}");
    }
    let nest_steps =
        "steps(3, {tile(i, {16, 32}), tile(j, {32, 64}), vectorize(8), parallel({i, j}), \
                      order({ikj, jik})})";
    for driver in ALL {
        let report = search(
            nest_steps,
            registry(),
            driver,
            Model,
            evaluations(200),
            1,
            &Nest::matmul(),
        );
        assert!(
            report.log.iter().any(|c| c.status == Status::Ok),
            "{driver}"
        );
        assert_replays(&report, &registry(), &Nest::matmul());
    }
}

/// A random space over the arithmetic rules: choices of random strategies around
/// `steps` over two more, on a random term.
#[derive(Clone, Debug)]
struct AnySpace {
    text: String,
    term: Term,
    seed: u64,
}

impl Arbitrary for AnySpace {
    fn arbitrary(g: &mut Gen) -> Self {
        // Half the options in `try`, so that more points get past their first part.
        let mut option = || {
            let wrap = if bool::arbitrary(g) { "try" } else { "" };
            format!("{wrap}({})", Desc::arbitrary(g).build())
        };
        let text = format!(
            "{{{}, {}}} ; steps(2, {{{}, {}}}) ; {{{}, {}, {}}}",
            option(),
            option(),
            option(),
            option(),
            option(),
            option(),
            option()
        );
        AnySpace {
            text,
            term: AnyTerm::arbitrary(g).0,
            seed: u64::arbitrary(g),
        }
    }
}

#[test]
fn drivers_never_panic_on_random_spaces_and_their_logs_replay() {
    fn property(s: AnySpace) -> bool {
        let r = crate::text::registry();
        let space = Space::parse(&s.text, Arc::new(crate::text::registry()))
            .unwrap_or_else(|e| panic!("{e}: {}", s.text))
            // `repeat(addComm)` never stops: a small budget per part keeps it short.
            .with_budget(Budget::unlimited().applications(1_000));
        for driver in ALL {
            let report = Search::new(space.clone(), drivers::from_text(driver).unwrap(), TermSize)
                .budget(evaluations(25))
                .seed(s.seed)
                .run(&s.term);
            assert!(report.evaluations > 0 && report.evaluations <= 25);
            // Every part of a point had 1,000 applications; the point has at most 8 parts.
            assert_replays_within(
                &report,
                &r,
                &s.term,
                Budget::unlimited().applications(8_000),
            );
        }
        true
    }
    QuickCheck::new()
        .tests(30)
        .quickcheck(property as fn(AnySpace) -> bool);
}

/// Shorter terms are better.
struct TermSize;

impl Cost<Term> for TermSize {
    fn name(&self) -> String {
        "size".into()
    }

    fn evaluate(&self, t: &Term) -> Result<Measure, Rejection> {
        Ok(Measure::cost(t.to_string().len() as f64))
    }
}

#[test]
fn drivers_by_name() {
    for (text, name) in [
        ("exhaustive", "exhaustive"),
        ("random", "random"),
        ("beam(8)", "beam(8)"),
        (" beam ( 3 ) ", "beam(3)"),
        ("beam", "beam(8)"),
        ("anneal", "anneal"),
        ("mcts", "mcts"),
        ("evolve", "evolve(32)"),
        ("evolve(100)", "evolve(100)"),
        ("beam(4096)", "beam(4096)"),
    ] {
        let driver = drivers::from_text::<Nest>(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(driver.name(), name);
    }
    for (text, message) in [
        ("beam(0)", "at least 1"),
        ("beam(x)", "positive integer"),
        ("beam(-2)", "positive integer"),
        ("beam(1, 2)", "positive integer"),
        ("beam()", "expected the width"),
        ("beam(8", "expected `)`"),
        ("evolve(0)", "at least 1"),
        ("evolve(1)", "at least 2"),
        ("evolve(99999999999999999999999)", "at most 4096"),
        ("beam(4097)", "at most 4096"),
        ("anneal(3)", "takes no arguments"),
        ("mcts()", "takes no arguments"),
        ("greedy", "unknown driver `greedy`"),
        ("", "expected a driver"),
    ] {
        let err = drivers::from_text::<Nest>(text)
            .err()
            .unwrap_or_else(|| panic!("{text}"));
        assert!(err.to_string().contains(message), "{text}: {err}");
    }
}
