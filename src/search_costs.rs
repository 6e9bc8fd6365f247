//! The costs and the `auto` space `elevate search` offers for RISE programs, and the
//! MLIR text of the best program.

use elevate_bridge::measure::{model_cost, Measured, ModelMeasured};
use elevate_bridge::Options;
use elevate_rise::search::{Auto, Machine};
use elevate_rise::Term;
use elevate_strategies::search::Cost;

/// Candidates `model+measured` measures in each round: the model's best few.
const MEASURED_PER_ROUND: usize = 4;

/// The cost `name` names for searches from `start` (typed, with concrete sizes):
/// `model` (an analytical model of this machine), `measured` (compiled, timed, checked
/// against the interpreter) or `model+measured` (the model ranks each round, its best
/// few are measured).
pub fn make(
    name: &str,
    start: &Term,
    threads: Option<usize>,
) -> Result<Box<dyn Cost<Term>>, String> {
    let mut machine = Machine::host();
    if let Some(threads) = threads {
        machine.cores = u32::try_from(threads.max(1)).unwrap_or(u32::MAX);
    }
    let measured = || {
        let measured = Measured::new(start).map_err(|e| e.to_string())?;
        Ok::<_, String>(match threads {
            Some(threads) => measured.threads(threads),
            None => measured,
        })
    };
    match name {
        "model" => Ok(Box::new(model_cost(machine))),
        // Every measured candidate gets the model's estimate too, for the report's
        // `model_spearman`.
        "measured" => Ok(Box::new(measured()?.with_model(model_cost(machine)))),
        "model+measured" => Ok(Box::new(ModelMeasured::new(
            model_cost(machine),
            measured()?,
            MEASURED_PER_ROUND,
        ))),
        _ => Err(format!(
            "unknown cost `{name}` (model, measured, model+measured)"
        )),
    }
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
    let (module, script) = (payload.mlir.clone(), payload.transform.clone());
    let script = script.unwrap_or_else(|| payload.transform_text());
    Ok(format!(
        "// The payload.\n{module}\n// Its Transform script.\n{script}"
    ))
}
