//! The costs and the `auto` space `elevate search` offers for RISE programs, and the
//! MLIR text of the best program.

use elevate_bridge::Options;
use elevate_rise::search::{Auto, Machine, ModelCost};
use elevate_rise::{NatEnv, Program, Term};
use elevate_strategies::search::Cost;

/// The cost `name` names: `model` (an analytical model of this machine).
pub fn make(
    name: &str,
    program: &Program,
    nats: &NatEnv,
    threads: Option<usize>,
) -> Result<Box<dyn Cost<Term>>, String> {
    let _ = (program, nats);
    match name {
        "model" => {
            let mut machine = Machine::host();
            if let Some(threads) = threads {
                machine.cores = u32::try_from(threads.max(1)).unwrap_or(u32::MAX);
            }
            Ok(Box::new(ModelCost::new(machine)))
        }
        _ => Err(format!("unknown cost `{name}` (model)")),
    }
}

/// What `auto` stands for.
pub fn auto() -> Auto {
    Auto::default()
}

/// The payload of `term` (after `defaultLowering`) and its Transform script.
pub fn mlir_text(name: &str, term: &Term) -> Result<String, String> {
    let options = Options::default();
    let lowered = elevate_bridge::rewrite(term, None, &options).map_err(|e| e.to_string())?;
    let payload =
        elevate_bridge::payload(name, &lowered, &options.limits).map_err(|e| e.to_string())?;
    Ok(format!(
        "// The payload.\n{}\n// Its Transform script.\n{}",
        payload.mlir,
        payload.transform_text()
    ))
}
