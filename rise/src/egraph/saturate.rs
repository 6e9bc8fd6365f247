//! Equality saturation as a strategy: build the e-graph of a program, grow it with
//! rewrites under limits ([`super::runner`]), extract the best program by a cost model
//! ([`super::cost`]).
//!
//! The time limit covers the whole: growing stops early enough for extraction to
//! finish within the limit (at least [`EXTRACTION_SHARE`] of it, more for an e-graph
//! that was slow to build); an extraction that would run past [`EXTRACTION_END`]
//! times the limit gives up for the class's smallest term (read off the analysis in
//! linear time), and the report says so.

use super::convert::{
    add_body, added_expr, best_expr, expr_to_open_term, parameter_idents, parameters,
    with_parameters, Nodes,
};
use super::cost::{expr_cost, CostModel};
use super::lang::{Rise, RiseGraph};
use super::rules::RuleSet;
use super::runner::{GoalFn, Phases, Progress, ProgressFn, Reserve, Run, SaturationLimits};
use super::sketch::{self, Sketch};
use crate::term::{Ident, Term};
use egg::{Id, Language, RecExpr};
use elevate_core::stack::guard;
use elevate_core::{BudgetLimit, Context, Failure, Name, RewriteResult, Strategy, StrategyImpl};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The least share of the time limit that growing leaves for extraction.
pub const EXTRACTION_SHARE: f64 = 0.05;

/// How far past the time limit (as a multiple of it) extraction may run before it
/// gives up for the smallest term.
pub const EXTRACTION_END: f64 = 1.05;

/// The longest time limit that means something (a limit of `u64::MAX` seconds is no
/// limit, not an overflow).
const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// `start + d`, with `d` at most a century.
pub(crate) fn after(start: Instant, d: Duration) -> Instant {
    start + d.min(CENTURY)
}

/// The deepest program whose equality proof is explained (egg writes proofs
/// recursively).
const MAX_EXPLAINED_DEPTH: usize = 2_000;

/// What a saturation did.
#[derive(Debug, Clone)]
pub struct Report {
    /// Why it stopped: `saturated`, `iterations`, `nodes`, `time`, `memory`, `goal`.
    pub stop_reason: String,
    /// Iterations run.
    pub iterations: usize,
    /// E-nodes at the end.
    pub enodes: usize,
    /// E-classes at the end.
    pub eclasses: usize,
    /// Wall-clock time of growing and extracting.
    pub time: Duration,
    /// The largest resident memory seen, MB (the process's, sampled every iteration).
    pub peak_mb: f64,
    /// The extracted program's cost.
    pub cost: f64,
    /// Whether extraction ran out of time and the smallest program was taken instead
    /// of the cheapest.
    pub smallest_for_time: bool,
    /// Successful rule applications, by rule.
    pub applied: Vec<(String, usize)>,
    /// Time spent matching, applying and rebuilding, over all iterations.
    pub phases: Phases,
}

impl Report {
    /// The report as one JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        let ms = |d: Duration| (d.as_secs_f64() * 1e4).round() / 10.0;
        let mut json = serde_json::json!({
            "stop_reason": self.stop_reason,
            "iterations": self.iterations,
            "enodes": self.enodes,
            "eclasses": self.eclasses,
            "ms": ms(self.time),
            "peak_mb": (self.peak_mb * 10.0).round() / 10.0,
            "cost": self.cost,
            "applied": self.applied.iter().map(|(r, n)| serde_json::json!([r, n])).collect::<Vec<_>>(),
            "build_ms": ms(self.phases.build),
            "search_ms": ms(self.phases.search),
            "apply_ms": ms(self.phases.apply),
            "rebuild_ms": ms(self.phases.rebuild),
            "extract_ms": ms(self.phases.extract),
        });
        if self.smallest_for_time {
            json["extraction"] = "smallest (out of time)".into();
        }
        json
    }
}

/// One step of an explanation: the program after it and the rule that led to it
/// (`None` for the start; `<=` marks a rule used from right to left).
#[derive(Debug, Clone)]
pub struct ExplanationStep {
    /// The rule, if any.
    pub rule: Option<String>,
    /// The whole program after the step, as RISE text.
    pub program: String,
}

/// The result of [`Saturation::run`].
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The extracted program, typed.
    pub program: Term,
    /// What the run did.
    pub report: Report,
    /// The rewrites that prove the program equal to the input, if asked for.
    pub explanation: Option<Vec<ExplanationStep>>,
}

/// Why a saturation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SaturationError(pub String);

/// An equality saturation: rules, limits, a cost model, and options.
///
/// ```
/// use elevate_rise::egraph::{CostModel, SaturationLimits, RuleSet, Saturation};
/// use elevate_rise::{infer, parse_term, print_term};
/// let t = infer(&parse_term("fun(xs: 8.f32 => xs |> map(neg) |> map(abs))").unwrap()).unwrap();
/// let rules = RuleSet::parse("mapFusion,betaReduction").unwrap();
/// let s = Saturation::new(rules, SaturationLimits::default(), CostModel::Lowered);
/// let out = s.run(&t).unwrap();
/// assert_eq!(print_term(&out.program), "fun(xs: 8.f32 => xs |> map(fun(x => abs(-x))))");
/// assert_eq!(out.report.stop_reason, "saturated");
/// ```
#[derive(Clone)]
pub struct Saturation {
    rules: RuleSet,
    limits: SaturationLimits,
    cost: CostModel,
    explain: bool,
    progress: Option<ProgressFn>,
    goal: Option<GoalFn>,
    names_above: u64,
}

impl Saturation {
    /// A saturation with these rules, limits and cost model.
    pub fn new(rules: RuleSet, limits: SaturationLimits, cost: CostModel) -> Saturation {
        Saturation {
            rules,
            limits,
            cost,
            explain: false,
            progress: None,
            goal: None,
            names_above: 0,
        }
    }

    /// Also prove the result equal to the input ([`Outcome::explanation`]); slower.
    pub fn with_explanations(mut self) -> Saturation {
        self.explain = true;
        self
    }

    /// Names the binders of extracted programs with identities `>= floor` (and above
    /// the input's): a strategy run passes its supply's, so that they are new to the
    /// whole program, not only to the part saturated.
    pub fn with_names_above(mut self, floor: u64) -> Saturation {
        self.names_above = floor;
        self
    }

    /// Calls `f` after every iteration.
    pub fn with_progress(mut self, f: impl FnMut(&Progress) + Send + 'static) -> Saturation {
        self.progress = Some(Arc::new(Mutex::new(f)));
        self
    }

    /// Stops as soon as `goal(egraph, root)` holds (checked after every iteration).
    pub fn with_goal(
        mut self,
        goal: impl Fn(&RiseGraph, Id) -> bool + Send + Sync + 'static,
    ) -> Saturation {
        self.goal = Some(Arc::new(goal));
        self
    }

    /// The rules.
    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    /// The limits.
    pub fn limits(&self) -> SaturationLimits {
        self.limits
    }

    /// The same saturation with other limits.
    pub fn with_limits(mut self, limits: SaturationLimits) -> Saturation {
        self.limits = limits;
        self
    }

    /// Grows the e-graph of `program` (typed, or typed here); extraction is up to the
    /// caller ([`Grown::extract`], [`Grown::extract_sketch`]), within the time limit.
    pub fn grow(&self, program: &Term) -> Result<Grown, SaturationError> {
        let start = Instant::now();
        let typed = if program.ty().is_some() {
            program.clone()
        } else {
            crate::infer(program).map_err(|e| SaturationError(e.message))?
        };
        let (params, body) = parameters(&typed);
        let idents = parameter_idents(&params);
        let mut egraph = RiseGraph::default();
        if self.explain {
            egraph = egraph.with_explanations_enabled();
        }
        let converting = Instant::now();
        let root = add_body(&mut egraph, &body, &idents).map_err(|e| SaturationError(e.0))?;
        egraph.analysis.names.reserve_above(self.names_above);
        let input = self.explain.then(|| added_expr(&egraph, root));
        egraph.rebuild();
        let time = self.limits.time.min(CENTURY);
        let floor = time.mul_f64(EXTRACTION_SHARE);
        // Building a small e-graph takes too little time to tell its speed.
        let converted = converting.elapsed();
        let per_node = match converted >= floor {
            true => converted / u32::try_from(egraph.total_size().max(1)).unwrap_or(u32::MAX),
            false => Duration::ZERO,
        };
        let ran = Run {
            rewrites: self.rules.rewrites(),
            limits: self.limits,
            start,
            end: after(start, time),
            reserve: Reserve { floor, per_node },
            progress: self.progress.as_ref(),
            goal: self.goal.as_ref(),
        }
        .run(&mut egraph, root);
        let report = Report {
            stop_reason: ran.stop_reason.to_string(),
            iterations: ran.iterations,
            enodes: egraph.total_number_of_nodes(),
            eclasses: egraph.number_of_classes(),
            time: start.elapsed(),
            peak_mb: ran.peak_mb,
            cost: 0.0,
            smallest_for_time: false,
            applied: ran.applied,
            phases: Phases {
                build: converted,
                ..ran.phases
            },
        };
        Ok(Grown {
            root: egraph.find(root),
            egraph,
            params,
            idents,
            input,
            report,
            start,
            extract_by: after(
                start,
                time.saturating_add(time.mul_f64(EXTRACTION_END - 1.0)),
            ),
            per_node,
        })
    }

    /// Saturates and extracts the best program by the cost model.
    pub fn run(&self, program: &Term) -> Result<Outcome, SaturationError> {
        let mut grown = self.grow(program)?;
        let best = grown.extract(self.cost);
        let explanation = match self.explain {
            true => Some(grown.explain(&best)?),
            false => None,
        };
        Ok(Outcome {
            program: grown.program(&best),
            report: grown.report,
            explanation,
        })
    }
}

/// A grown e-graph, with what is needed to turn what it holds back into programs.
pub struct Grown {
    /// The e-graph.
    pub egraph: RiseGraph,
    /// The class of the program's body.
    pub root: Id,
    /// The program's parameter lambdas (outside the e-graph).
    pub params: Vec<Term>,
    idents: Vec<Ident>,
    /// The input's body, for explanations.
    input: Option<RecExpr<Rise>>,
    /// What the growth did.
    pub report: Report,
    /// When the saturation started.
    start: Instant,
    /// When extraction gives up.
    extract_by: Instant,
    /// How long building the e-graph took per e-node (zero if too quick to tell): about
    /// as long as extraction takes per e-node.
    per_node: Duration,
}

/// Extraction ran past the saturation's time limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the time limit ran out during extraction")]
pub struct OutOfTime;

impl Grown {
    /// The program whose body is `body` (an expression extracted from the e-graph).
    pub fn program(&mut self, body: &RecExpr<Rise>) -> Term {
        with_parameters(
            &self.params,
            expr_to_open_term(&mut self.egraph.analysis, body, &self.idents),
        )
    }

    /// The root's best expression by `cost`; its cost and the time so far go into the
    /// report. If the time limit runs out first, the root's smallest expression (and
    /// [`Report::smallest_for_time`]).
    pub fn extract(&mut self, cost: CostModel) -> RecExpr<Rise> {
        let started = Instant::now();
        // An extraction that cannot finish in time is not started.
        let nodes = u32::try_from(self.egraph.total_size()).unwrap_or(u32::MAX);
        let expected = self.per_node.saturating_mul(nodes);
        let found = match after(Instant::now(), expected) > self.extract_by {
            true => Err(OutOfTime),
            false => sketch::extract_within(
                &self.egraph,
                self.root,
                &Sketch::Any,
                cost,
                Some(self.extract_by),
            ),
        };
        let best = match found {
            Ok(Some((_, best))) => best,
            // Every class holds a term, so `?` always has one.
            Ok(None) | Err(OutOfTime) => {
                self.report.smallest_for_time = true;
                best_expr(&self.egraph, self.root)
            }
        };
        self.report.cost = expr_cost(cost, &self.egraph.analysis.types, &best).total;
        self.report.phases.extract += started.elapsed();
        self.report.time = self.start.elapsed();
        best
    }

    /// The root's cheapest expression by `cost` that satisfies `sketch`, if one does;
    /// its cost and the time so far go into the report.
    pub fn extract_sketch(
        &mut self,
        sketch: &Sketch,
        cost: CostModel,
    ) -> Result<Option<RecExpr<Rise>>, OutOfTime> {
        let started = Instant::now();
        let found =
            sketch::extract_within(&self.egraph, self.root, sketch, cost, Some(self.extract_by));
        self.report.phases.extract += started.elapsed();
        self.report.time = self.start.elapsed();
        Ok(found?.map(|(total, best)| {
            self.report.cost = total;
            best
        }))
    }

    /// The steps that rewrite the input's body into `to` (needs explanations).
    pub fn explain(&mut self, to: &RecExpr<Rise>) -> Result<Vec<ExplanationStep>, SaturationError> {
        let Some(input) = &self.input else {
            return Err(SaturationError(
                "explanations were not enabled for this saturation".into(),
            ));
        };
        let depth = depth(input).max(depth(to));
        if depth > MAX_EXPLAINED_DEPTH {
            return Err(SaturationError(format!(
                "the program is {depth} levels deep: explanations are written for programs \
                 up to {MAX_EXPLAINED_DEPTH} levels"
            )));
        }
        let input = input.clone();
        let mut explanation = self.egraph.explain_equivalence(&input, to);
        let flat: Vec<egg::FlatTerm<Rise>> = explanation.make_flat_explanation().clone();
        Ok(flat
            .iter()
            .map(|flat| ExplanationStep {
                rule: rule_of(flat),
                program: crate::print::print_term(&self.program(&flat_expr(flat))),
            })
            .collect())
    }
}

/// The depth of an expression (its root is the last node).
fn depth(expr: &RecExpr<Rise>) -> usize {
    let mut depths: Vec<usize> = Vec::with_capacity(expr.as_ref().len());
    for node in expr.as_ref() {
        let below = node
            .children()
            .iter()
            .map(|&c| depths[usize::from(c)])
            .max();
        depths.push(below.map_or(1, |d| d + 1));
    }
    depths.last().copied().unwrap_or(0)
}

fn rule_of(flat: &egg::FlatTerm<Rise>) -> Option<String> {
    if let Some(r) = flat.forward_rule {
        return Some(r.to_string());
    }
    if let Some(r) = flat.backward_rule {
        return Some(format!("{r} <="));
    }
    flat.children.iter().find_map(|c| guard(|| rule_of(c)))
}

fn flat_expr(flat: &egg::FlatTerm<Rise>) -> RecExpr<Rise> {
    fn go(flat: &egg::FlatTerm<Rise>, out: &mut Nodes) -> Id {
        let children: Vec<Id> = flat.children.iter().map(|c| guard(|| go(c, out))).collect();
        let mut node = flat.node.clone();
        node.children = children.into_iter().collect();
        out.add(node)
    }
    let mut out = Nodes::default();
    go(flat, &mut out);
    out.finish()
}

/// `saturate(rules, limits, cost)` as a strategy: the extracted program, or a
/// failure if the program cannot enter the e-graph.
pub fn saturate(rules: RuleSet, limits: SaturationLimits, cost: CostModel) -> Strategy<Term> {
    Strategy::new(SaturateStrategy(Saturation::new(rules, limits, cost)))
}

/// A [`Saturation`] as a strategy.
pub struct SaturateStrategy(pub Saturation);

impl StrategyImpl<Term> for SaturateStrategy {
    /// Saturates `program` (its types inferred afresh, since rewrites before may have
    /// left some nodes untyped) within its limits and what is left of the context's
    /// time budget. Where the context's time runs out first, the failure says so.
    fn apply(&self, program: &Term, cx: &mut Context) -> RewriteResult<Term> {
        let name = self.name();
        let mut limits = self.0.limits;
        let context_time = cx.budget().max_time;
        let mut bound_by_context = false;
        if let Some(max) = context_time {
            let left = max.saturating_sub(cx.elapsed());
            if left <= limits.time {
                limits.time = left;
                bound_by_context = true;
            }
        }
        let out_of_budget = || {
            let ms = context_time.map_or(0, |t| t.as_millis() as u64);
            Failure::budget(name.clone(), BudgetLimit::Time(ms))
        };
        if bound_by_context && limits.time.is_zero() {
            return Err(out_of_budget());
        }
        let saturation = self
            .0
            .clone()
            .with_limits(limits)
            .with_names_above(cx.names().peek());
        let outcome = crate::infer(program)
            .map_err(|e| SaturationError(e.message))
            .and_then(|typed| saturation.run(&typed));
        match outcome {
            Ok(outcome) if bound_by_context && outcome.report.stop_reason == "time" => {
                Err(out_of_budget())
            }
            Ok(outcome) => {
                cx.record_step(&name)?;
                cx.names_mut().reserve_above(outcome.program.name_floor());
                Ok(outcome.program)
            }
            Err(e) => {
                cx.log(|| format!("saturate: {e}"));
                Err(Failure::no_match(name))
            }
        }
    }

    fn name(&self) -> Name {
        Name::new("saturate")
    }

    fn write_text(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "saturate(\"{}\", \"{}\", \"{}\")",
            self.0.rules.text(),
            self.0.limits,
            self.0.cost.name()
        )
    }
}
