//! The costs and the `auto` space `elevate search` offers for RISE programs, and the
//! MLIR text of the best program.

use elevate_bridge::measure::CandidateLimits;
#[cfg(feature = "mlir")]
use elevate_bridge::measure::{InFlight, Measured, ModelMeasured, WorkerCommand};
use elevate_bridge::Options;
use elevate_rise::search::{Auto, Machine, ModelCost};
use elevate_rise::Term;
use elevate_strategies::search::Cost;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Candidates `model+measured` measures in each round: the model's best few.
#[cfg(feature = "mlir")]
const MEASURED_PER_ROUND: usize = 4;

/// How a measured cost measures: its workers, their limits, when it stops.
#[derive(Debug, Clone, Default)]
pub struct Measuring {
    /// Threads of each candidate's parallel loops (`None`: one per core).
    pub threads: Option<usize>,
    /// The limits of each candidate.
    pub limits: Option<CandidateLimits>,
    /// How workers are started (`None`: [`WorkerCommand::from_env`]).
    #[cfg(feature = "mlir")]
    pub worker: Option<WorkerCommand>,
    /// Stops the workers (killing them) once set.
    pub stop: Option<Arc<AtomicBool>>,
    /// The search's time budget, if it has one: the interpreter may take a quarter of
    /// it (at least 5 s) for the reference values, else the start program compiled
    /// with `defaultLowering` alone gives them.
    pub time: Option<Duration>,
}

/// What a measured cost is doing now, for a progress display.
#[cfg(feature = "mlir")]
pub type Watch = Arc<dyn Fn() -> Vec<InFlight> + Send + Sync>;

/// A cost made by [`make`], and what its measurements are doing, where it measures.
pub struct Made {
    /// The cost.
    pub cost: Box<dyn Cost<Term>>,
    /// The candidates in flight, where the cost measures.
    #[cfg(feature = "mlir")]
    pub watch: Option<Watch>,
    /// Where the reference values came from, once known, where the cost measures.
    pub reference: Option<Arc<Mutex<Option<&'static str>>>>,
}

/// The cost `name` names for searches from `start` (typed, with concrete sizes):
/// `model` (an analytical model of this machine), `measured` (compiled, timed, checked
/// against the interpreter, in worker processes) or `model+measured` (the model ranks
/// each round, its best few are measured). A measured cost starts a worker before it
/// returns: one that cannot be started is an error here.
pub fn make(name: &str, start: &Term, measuring: &Measuring) -> Result<Made, String> {
    let mut machine = Machine::host();
    if let Some(threads) = measuring.threads {
        machine.cores = u32::try_from(threads.max(1)).unwrap_or(u32::MAX);
    }
    match name {
        "model" => Ok(Made {
            cost: Box::new(ModelCost::new(machine)),
            #[cfg(feature = "mlir")]
            watch: None,
            reference: None,
        }),
        #[cfg(feature = "mlir")]
        "measured" | "model+measured" => make_measured(name, machine, start, measuring),
        #[cfg(not(feature = "mlir"))]
        "measured" | "model+measured" => {
            let _ = start;
            Err(format!(
                "the cost `{name}` compiles candidates: it needs the `mlir` feature"
            ))
        }
        _ => Err(format!(
            "unknown cost `{name}` (model, measured, model+measured)"
        )),
    }
}

/// The costs that measure: `measured` or `model+measured`.
#[cfg(feature = "mlir")]
fn make_measured(
    name: &str,
    machine: Machine,
    start: &Term,
    measuring: &Measuring,
) -> Result<Made, String> {
    let measured = || {
        let mut measured = Measured::new(start).map_err(|e| e.to_string())?;
        if let Some(worker) = &measuring.worker {
            measured = measured.worker(worker.clone());
        }
        if let Some(limits) = measuring.limits {
            measured = measured.limits(limits);
        }
        if let Some(threads) = measuring.threads {
            measured = measured.threads(threads);
        }
        if let Some(stop) = &measuring.stop {
            measured = measured.stop_on(stop.clone());
        }
        if let Some(time) = measuring.time {
            measured = measured.reference_time((time / 4).max(Duration::from_secs(5)));
        }
        measured
            .start_worker()
            .map_err(|e| format!("the worker: {e}"))?;
        Ok::<_, String>(measured)
    };
    let watched = |m: &Measured| -> Watch {
        let handle = m.in_flight_handle();
        Arc::new(move || handle.lock().map(|f| f.clone()).unwrap_or_default())
    };
    match name {
        // Every measured candidate gets the model's estimate too, for the report's
        // `model_spearman`.
        "measured" => {
            let m = measured()?.with_model(ModelCost::new(machine));
            let (watch, reference) = (Some(watched(&m)), Some(m.reference_source_handle()));
            Ok(Made {
                cost: Box::new(m),
                watch,
                reference,
            })
        }
        _ => {
            let m = measured()?;
            let (watch, reference) = (Some(watched(&m)), Some(m.reference_source_handle()));
            Ok(Made {
                cost: Box::new(ModelMeasured::new(
                    ModelCost::new(machine),
                    m,
                    MEASURED_PER_ROUND,
                )),
                watch,
                reference,
            })
        }
    }
}

/// Whether `name` is a cost [`make`] makes.
pub fn is_cost(name: &str) -> bool {
    matches!(name, "model" | "measured" | "model+measured")
}

/// What `auto` stands for: its sizes for the machine it runs on.
pub fn auto() -> Auto {
    Auto::host()
}

/// The payload of `term` (after `defaultLowering`) and its Transform script.
pub fn mlir_text(name: &str, term: &Term) -> Result<String, String> {
    let options = Options::default();
    let lowered = elevate_bridge::rewrite(term, None, &options).map_err(|e| e.to_string())?;
    let payload =
        elevate_bridge::payload(name, &lowered, &options.limits).map_err(|e| e.to_string())?;
    // As MLIR prints them (custom forms) where MLIR is at hand.
    #[cfg(feature = "mlir")]
    let (module, script) = elevate_bridge::jit::printed(&payload).map_err(|e| e.to_string())?;
    #[cfg(not(feature = "mlir"))]
    let (module, script) = (
        payload.mlir().to_string(),
        payload.transform().map(String::from),
    );
    let script = script.unwrap_or_else(|| payload.transform_text());
    Ok(format!(
        "// The payload.\n{module}\n// Its Transform script.\n{script}"
    ))
}
