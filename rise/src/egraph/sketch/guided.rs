//! Sketch-guided search: equality saturation in steps, each stopped as soon as its
//! sketch can be extracted, each starting from the program the previous one chose.

use super::{satisfied, Sketch};
use crate::egraph::cost::CostModel;
use crate::egraph::rules::RuleSet;
use crate::egraph::runner::SaturationLimits;
use crate::egraph::saturate::{after, Report, Saturation, SaturationError};
use crate::term::Term;
use elevate_core::{BudgetLimit, Context, Failure, Name, RewriteResult, Strategy, StrategyImpl};
use std::time::Instant;

/// One step of a sketch-guided search: saturate with `rules` within `limits` until a
/// program satisfying `sketch` exists, then continue from the cheapest such program.
#[derive(Clone)]
pub struct GuideStep {
    /// The shape the step must reach.
    pub sketch: Sketch,
    /// The rewrites it may use.
    pub rules: RuleSet,
    /// When it gives up.
    pub limits: SaturationLimits,
}

impl GuideStep {
    /// A step.
    pub fn new(sketch: Sketch, rules: RuleSet, limits: SaturationLimits) -> GuideStep {
        GuideStep {
            sketch,
            rules,
            limits,
        }
    }
}

/// What one step of a search did.
#[derive(Debug, Clone)]
pub struct StepReport {
    /// The step's sketch, as text.
    pub sketch: String,
    /// The saturation's report (its `cost` is the chosen program's).
    pub report: Report,
    /// Whether a program satisfying the sketch was found. A search ends with an error
    /// at the first step that finds none, so the steps of a [`GuidedOutcome`] all
    /// say `true`.
    pub found: bool,
}

/// The result of [`guided`].
#[derive(Debug, Clone)]
pub struct GuidedOutcome {
    /// The last step's program, typed.
    pub program: Term,
    /// One report per step, in order.
    pub steps: Vec<StepReport>,
}

/// Runs the steps one after the other from `program` (typed, or typed here): each
/// grows an e-graph from the previous step's program until its sketch is satisfiable
/// (stop reason `goal`) or a limit, and extracts the cheapest program (by `cost`)
/// that satisfies the sketch. Fails at the first step whose sketch no program of
/// its e-graph satisfies, naming the step and its sketch.
///
/// ```
/// use elevate_rise::egraph::sketch::{guided, GuideStep, Sketch};
/// use elevate_rise::egraph::{CostModel, SaturationLimits, RuleSet};
/// use elevate_rise::{infer, parse_term, print_term};
/// let t = infer(&parse_term("fun(xs: 8.f32 => xs |> map(neg))").unwrap()).unwrap();
/// let step = |sketch: &str, rules: &str| {
///     GuideStep::new(sketch.parse().unwrap(), RuleSet::parse(rules).unwrap(), SaturationLimits::default())
/// };
/// let steps = [
///     // Tile the loop: 2 chunks of 4.
///     step("contains(map[2](map[4](?)))", "splitJoin(4)"),
///     // Then process the chunks in parallel.
///     step("contains(mapPar(map[4](?)))", "mapPar"),
/// ];
/// let out = guided(&t, &steps, CostModel::Lowered).unwrap();
/// assert_eq!(
///     print_term(&out.program),
///     "fun(xs: 8.f32 => xs |> split(4) |> mapPar(map(neg)) |> join)"
/// );
/// assert_eq!(out.steps[0].report.stop_reason, "goal");
/// ```
pub fn guided(
    program: &Term,
    steps: &[GuideStep],
    cost: CostModel,
) -> Result<GuidedOutcome, SaturationError> {
    guided_until(program, steps, cost, None, 0).map_err(|stop| match stop {
        Stop::Failed(e) => e,
        Stop::OutOfTime => unreachable!("no deadline was given"),
    })
}

/// Why a search with a deadline ended without a program.
enum Stop {
    /// A step failed.
    Failed(SaturationError),
    /// The deadline came first.
    OutOfTime,
}

/// [`guided`] with every step's time limit cut to what is left before `until`, and
/// extracted binders named `>= names_above`.
fn guided_until(
    program: &Term,
    steps: &[GuideStep],
    cost: CostModel,
    until: Option<Instant>,
    names_above: u64,
) -> Result<GuidedOutcome, Stop> {
    let mut program = program.clone();
    let mut reports = Vec::with_capacity(steps.len());
    for (k, step) in steps.iter().enumerate() {
        let failed = |what: String| {
            Stop::Failed(SaturationError(format!(
                "step {} of {} of the sketch-guided search (`{}`): {what}",
                k + 1,
                steps.len(),
                step.sketch
            )))
        };
        let mut limits = step.limits;
        let left = until.map(|until| until.saturating_duration_since(Instant::now()));
        let bound = left.is_some_and(|left| left <= limits.time);
        if let Some(left) = left.filter(|_| bound) {
            if left.is_zero() {
                return Err(Stop::OutOfTime);
            }
            limits.time = left;
        }
        let goal = step.sketch.clone();
        let saturation = Saturation::new(step.rules.clone(), limits, cost)
            .with_goal(move |egraph, root| satisfied(egraph, root, &goal))
            .with_names_above(names_above);
        let mut grown = saturation
            .grow(&program)
            .map_err(|e| failed(e.to_string()))?;
        let found = match grown.extract_sketch(&step.sketch, cost) {
            Err(_) if bound => return Err(Stop::OutOfTime),
            found => found.map_err(|e| failed(e.to_string()))?,
        };
        let Some(body) = found else {
            let r = &grown.report;
            if bound && r.stop_reason == "time" {
                return Err(Stop::OutOfTime);
            }
            return Err(failed(format!(
                "no program satisfies the sketch (the saturation with `{}` stopped: {}, \
                 after {} iterations, {} e-nodes)",
                step.rules.text(),
                r.stop_reason,
                r.iterations,
                r.enodes
            )));
        };
        program = grown.program(&body);
        reports.push(StepReport {
            sketch: step.sketch.to_string(),
            report: grown.report,
            found: true,
        });
    }
    Ok(GuidedOutcome {
        program,
        steps: reports,
    })
}

/// [`guided`] as a strategy: the last step's program, or a failure if a step finds
/// no program satisfying its sketch (or the program cannot enter the e-graph).
///
/// ```
/// use elevate_rise::egraph::sketch::{sketch_guided, GuideStep};
/// use elevate_rise::egraph::{CostModel, SaturationLimits, RuleSet};
/// use elevate_rise::{infer, parse_term, print_term};
/// let t = infer(&parse_term("fun(xs: 8.f32 => xs |> map(neg) |> map(abs))").unwrap()).unwrap();
/// let rules = RuleSet::parse("mapFusion,betaReduction").unwrap();
/// let fuse = GuideStep::new("map(fun(?), ?)".parse().unwrap(), rules, SaturationLimits::default());
/// let s = sketch_guided(vec![fuse], CostModel::Lowered);
/// assert_eq!(print_term(&s.run(&t).unwrap()), "fun(xs: 8.f32 => xs |> map(fun(x => abs(-x))))");
/// ```
pub fn sketch_guided(steps: Vec<GuideStep>, cost: CostModel) -> Strategy<Term> {
    Strategy::new(SketchGuidedStrategy { steps, cost })
}

/// A sketch-guided search as a strategy (see [`sketch_guided`]).
pub struct SketchGuidedStrategy {
    /// The steps.
    pub steps: Vec<GuideStep>,
    /// How extraction ranks programs.
    pub cost: CostModel,
}

impl StrategyImpl<Term> for SketchGuidedStrategy {
    /// Runs the steps within what is left of the context's time budget; where that
    /// runs out first, the failure says so.
    fn apply(&self, program: &Term, cx: &mut Context) -> RewriteResult<Term> {
        let name = self.name();
        let max_time = cx.budget().max_time;
        let until = max_time.map(|max| after(Instant::now(), max.saturating_sub(cx.elapsed())));
        let names_above = cx.names().peek();
        match guided_until(program, &self.steps, self.cost, until, names_above) {
            Ok(outcome) => {
                cx.record_step(&name)?;
                cx.names_mut().reserve_above(outcome.program.name_floor());
                Ok(outcome.program)
            }
            Err(Stop::OutOfTime) => {
                let ms = max_time.map_or(0, |t| t.as_millis() as u64);
                Err(Failure::budget(name, BudgetLimit::Time(ms)))
            }
            Err(Stop::Failed(e)) => {
                cx.log(|| format!("sketchGuided: {e}"));
                Err(Failure::no_match(name))
            }
        }
    }

    fn name(&self) -> Name {
        Name::new("sketchGuided")
    }

    /// `sketchGuided("SKETCH", "RULES", "LIMITS", ..., "COST")`: three strings per step.
    fn write_text(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("sketchGuided(")?;
        for step in &self.steps {
            write!(
                f,
                "\"{}\", \"{}\", \"{}\", ",
                step.sketch,
                step.rules.text(),
                step.limits
            )?;
        }
        write!(f, "\"{}\")", self.cost.name())
    }
}
