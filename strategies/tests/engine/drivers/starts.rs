//! Points to start from: a space derived by `auto` names the schedules a library
//! would pick by hand, every driver that learns evaluates them first (each on its
//! own), and the best measured time wins over an estimate.

use super::nest::{registry, Model, Nest, SPACE};
use super::ALL;
use elevate_core::{Budget, Context};
use elevate_strategies::search::{
    drivers, AutoSpace, Cost, Measure, Rejection, Search, SearchBudget, Space,
};
use std::sync::{Arc, Mutex};

/// `auto` for nests: the test space, with the given points to start from.
struct NestAuto(Vec<String>);

impl AutoSpace<Nest> for NestAuto {
    fn space_for(&self, _: &Nest) -> Result<String, String> {
        Ok(SPACE.to_string())
    }

    fn starts(&self, _: &Nest) -> Vec<String> {
        self.0.clone()
    }
}

/// A point of the space, written with other whitespace than the space's.
const START: &str = "topDown(tile(i,64));topDown(tile(j, 32)) ; order(ikj) ;\n try(topDown(vectorize(8))) ; try(topDown(unroll(2))) ; id";
/// The same point as the space writes it.
const START_TEXT: &str = "topDown(tile(i, 64)) ; topDown(tile(j, 32)) ; order(ikj) ; try(topDown(vectorize(8))) ; try(topDown(unroll(2))) ; id";

fn auto_space(starts: &[&str]) -> Space<Nest> {
    let starts = starts.iter().map(|s| s.to_string()).collect();
    Space::parse_with_auto("auto", Arc::new(registry()), NestAuto(starts)).expect("auto")
}

/// The model, recording how many programs each round held.
struct Rounds(Mutex<Vec<usize>>);

impl Cost<Nest> for Rounds {
    fn name(&self) -> String {
        "rounds".into()
    }

    fn evaluate(&self, nest: &Nest) -> Result<Measure, Rejection> {
        Model.evaluate(nest)
    }

    fn evaluate_all(&self, nests: &[&Nest], jobs: usize) -> Vec<Result<Measure, Rejection>> {
        self.0.lock().expect("rounds").push(nests.len());
        Model.evaluate_all(nests, jobs)
    }
}

#[test]
fn a_point_known_by_its_text_is_followed_to_its_decisions() {
    let space = Space::parse(SPACE, Arc::new(registry())).expect("space");
    let root = space.start(&Nest::matmul());
    let point = root.follow(START).expect("a point of the space");
    assert!(point.is_complete());
    assert_eq!(point.text(), START_TEXT);
    assert_eq!(
        point.decisions().collect::<Vec<_>>(),
        [3, 2, 1, 2, 1, 0],
        "64 is the 4th tile, 32 the 3rd, ikj the 2nd order, ..."
    );
    let replayed = registry()
        .parse(START)
        .expect("parses")
        .apply(&Nest::matmul(), &mut Context::new(Budget::unlimited()))
        .expect("applies");
    assert_eq!(*point.program(), replayed);
    // Not points of the space: a tile it does not offer, a part missing, a part more.
    for text in [
        &START_TEXT.replace("tile(i, 64)", "tile(i, 48)"),
        &START_TEXT.replace(" ; id", ""),
        &format!("{START_TEXT} ; id"),
    ] {
        assert!(root.follow(text).is_none(), "{text}");
    }
}

#[test]
fn every_driver_evaluates_the_points_to_start_from_first_each_on_its_own() {
    let other = START_TEXT.replace("order(ikj)", "order(kij)");
    for driver in ALL {
        let rounds = Rounds(Mutex::new(Vec::new()));
        let space = auto_space(&[START, "topDown(tile(i, 48))", &other]);
        let report = Search::new(space, drivers::from_text(driver).expect("driver"), &rounds)
            .budget(SearchBudget::default().evaluations(60))
            .seed(7)
            .run(&Nest::matmul());
        let rounds = rounds.0.lock().expect("rounds").clone();
        if driver == "exhaustive" {
            // Every point in the space's order: the starts among them.
            assert_eq!(report.evaluations, 60);
            continue;
        }
        let first: Vec<&str> = report.log[..2].iter().map(|c| &*c.strategy).collect();
        assert_eq!(first, [START_TEXT, &other], "{driver}: the starts first");
        assert_eq!(
            rounds[..2],
            [1, 1],
            "{driver}: each start in a round of its own"
        );
        let start_cost = report.log[0].cost().expect("the start runs");
        let best = report.best().and_then(|b| b.cost()).expect("a best");
        assert!(best <= start_cost, "{driver}: {best} > {start_cost}");
    }
}

#[test]
fn a_space_that_is_not_auto_alone_has_no_points_to_start_from() {
    let space = Space::parse_with_auto(
        "auto ; id",
        Arc::new(registry()),
        NestAuto(vec![START.to_string()]),
    )
    .expect("space");
    assert!(space.starts(&Nest::matmul()).is_empty());
    assert_eq!(auto_space(&[START]).starts(&Nest::matmul()).len(), 1);
}

/// The model's cost for every program, a measured time (the cost doubled) only for
/// those with a vector width of 16: as `model+measured` ranks the candidates it did
/// not time by the model.
struct SomeMeasured;

impl Cost<Nest> for SomeMeasured {
    fn name(&self) -> String {
        "some measured".into()
    }

    fn evaluate(&self, nest: &Nest) -> Result<Measure, Rejection> {
        let cost = Model::cost(nest)?;
        let timed = nest.loops().iter().any(|l| l.vector == 16);
        Ok(Measure {
            cost: if timed { 2.0 * cost } else { cost },
            model: Some(cost),
            ms: timed.then_some(2.0 * cost),
            compile_ms: None,
            spread_ms: None,
        })
    }
}

#[test]
fn the_best_is_the_fastest_measured_candidate_when_some_are_measured() {
    let space = Space::parse(SPACE, Arc::new(registry())).expect("space");
    let report = Search::new(space, drivers::exhaustive(), SomeMeasured)
        .budget(SearchBudget::default().evaluations(400))
        .run(&Nest::matmul());
    let best = report.best().expect("a best");
    let measured =
        |c: &&elevate_strategies::search::Candidate| c.measure.is_some_and(|m| m.ms.is_some());
    let fastest = report
        .log
        .iter()
        .filter(measured)
        .map(|c| c.cost().unwrap_or(f64::INFINITY))
        .fold(f64::INFINITY, f64::min);
    let lowest_estimate = report
        .log
        .iter()
        .filter_map(|c| c.cost())
        .fold(f64::INFINITY, f64::min);
    assert!(
        lowest_estimate < fastest,
        "the landscape puts an estimate first"
    );
    assert!(best.measure.is_some_and(|m| m.ms.is_some()));
    assert_eq!(best.cost(), Some(fastest));
    assert_eq!(report.log.last().and_then(|c| c.best_so_far), Some(fastest));
}
