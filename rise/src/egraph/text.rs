//! Equality saturation in the strategy language: `saturate` and `sketchGuided`.

use super::cost::CostModel;
use super::rules::RuleSet;
use super::runner::SaturationLimits;
use super::saturate::saturate;
use super::sketch::{sketch_guided, GuideStep, Sketch};
use crate::term::Term;
use elevate_strategies::text::{str_arg, ArgError, Registry, Value};

/// Registers `saturate("RULES", "LIMITS", "COST")` (only the rules are required: the
/// limits default to [`SaturationLimits::default`] and the cost model to `lowered`) and
/// `sketchGuided("SKETCH", "RULES", "LIMITS", ..., "COST")`.
pub fn register(r: &mut Registry<Term>) {
    r.add(
        "saturate",
        "(\"RULES\", \"LIMITS\", \"COST\")",
        "equality saturation, then extraction: RULES as for `elevate saturate --rules` \
         (e.g. \"default\"), LIMITS e.g. \"iterations=10,nodes=50000,ms=5000\", \
         COST \"lowered\" (default) or \"size\"",
        |a| {
            if a.is_empty() || a.len() > 3 {
                return Err(ArgError::invalid(
                    None,
                    format!("expects 1 to 3 arguments, found {}", a.len()),
                ));
            }
            let rules = rules(a, 0)?;
            let limits = match a.get(1) {
                Some(_) => limits(a, 1)?,
                None => SaturationLimits::default(),
            };
            let cost = match a.get(2) {
                Some(_) => cost(a, 2)?,
                None => CostModel::Lowered,
            };
            Ok(saturate(rules, limits, cost))
        },
    );
    r.add(
        "sketchGuided",
        "(\"SKETCH\", \"RULES\", \"LIMITS\", ..., \"COST\")",
        "sketch-guided equality saturation: per step a sketch (as `elevate saturate \
         --sketch`), its rules and its limits; each step saturates from the previous \
         step's program until the sketch is satisfiable and extracts the cheapest such \
         program; COST \"lowered\" or \"size\"",
        |a| {
            if a.len() < 4 || a.len() % 3 != 1 {
                return Err(ArgError::invalid(
                    None,
                    format!(
                        "expects triples (sketch, rules, limits) and a cost model, found {} \
                         arguments",
                        a.len()
                    ),
                ));
            }
            let mut steps = Vec::new();
            for k in (0..a.len() - 1).step_by(3) {
                let sketch =
                    Sketch::parse(str_arg(a, k)?).map_err(|e| ArgError::invalid(k, e.message))?;
                steps.push(GuideStep::new(sketch, rules(a, k + 1)?, limits(a, k + 2)?));
            }
            Ok(sketch_guided(steps, cost(a, a.len() - 1)?))
        },
    );
}

/// Argument `i` as a rule set's text.
fn rules(a: &[Value<Term>], i: usize) -> Result<RuleSet, ArgError> {
    RuleSet::parse(str_arg(a, i)?).map_err(|e| ArgError::invalid(i, e.to_string()))
}

/// Argument `i` as limits text.
fn limits(a: &[Value<Term>], i: usize) -> Result<SaturationLimits, ArgError> {
    str_arg(a, i)?
        .parse::<SaturationLimits>()
        .map_err(|e| ArgError::invalid(i, e.to_string()))
}

/// Argument `i` as a cost model's name.
fn cost(a: &[Value<Term>], i: usize) -> Result<CostModel, ArgError> {
    let name = str_arg(a, i)?;
    CostModel::from_name(name)
        .ok_or_else(|| ArgError::invalid(i, format!("unknown cost model `{name}` (lowered, size)")))
}
