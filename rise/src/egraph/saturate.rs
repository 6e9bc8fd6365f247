//! Equality saturation as a strategy: build the e-graph of a program, grow it with
//! rewrites under limits, extract the best program by a cost model.

use super::convert::{add_body, expr_to_open_term, parameter_idents, parameters, with_parameters};
use super::lang::{Op, Rise, RiseAnalysis, RiseGraph};
use super::rules::RuleSet;
use crate::prim::Prim;
use crate::term::Ident;
use crate::term::Term;
use egg::{CostFunction, Extractor, Id, Language, RecExpr, Runner, StopReason};
use elevate_core::{Context, Failure, Name, RewriteResult, Strategy, StrategyImpl};
use smallvec::SmallVec;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// When a saturation stops, whichever comes first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Iterations (rounds of applying every rule).
    pub iterations: usize,
    /// E-nodes.
    pub nodes: usize,
    /// Wall-clock time.
    pub time: Duration,
    /// Resident memory of the process, in MB.
    pub memory_mb: usize,
}

impl Default for Limits {
    /// 30 iterations, 100,000 e-nodes, 10 s, 4 GB.
    fn default() -> Self {
        Limits {
            iterations: 30,
            nodes: 100_000,
            time: Duration::from_secs(10),
            memory_mb: 4096,
        }
    }
}

impl std::fmt::Display for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "iterations={},nodes={},ms={},mb={}",
            self.iterations,
            self.nodes,
            self.time.as_millis(),
            self.memory_mb
        )
    }
}

impl std::str::FromStr for Limits {
    type Err = String;

    /// `iterations=30,nodes=100000,ms=10000,mb=4096` (any subset, the rest default).
    fn from_str(s: &str) -> Result<Limits, String> {
        let mut limits = Limits::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("a limit is `key=value`, found `{part}`"))?;
            let value: u64 = value
                .trim()
                .parse()
                .map_err(|_| format!("the limit `{key}` needs a whole number, found `{value}`"))?;
            match key.trim() {
                "iterations" | "iters" => limits.iterations = value as usize,
                "nodes" => limits.nodes = value as usize,
                "ms" | "time" => limits.time = Duration::from_millis(value),
                "s" => limits.time = Duration::from_secs(value),
                "mb" | "memory" => limits.memory_mb = value as usize,
                other => {
                    return Err(format!(
                        "unknown limit `{other}` (iterations, nodes, ms, s, mb)"
                    ))
                }
            }
        }
        Ok(limits)
    }
}

/// How extraction ranks the programs of an e-graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostModel {
    /// The number of nodes.
    AstSize,
    /// A work model of low-level RISE: a loop costs its trip count (read from the
    /// iterated array's type) times the work of its body, so nests cost their
    /// iteration space, and a map also writes its results; vector loops iterate over
    /// fewer, wider elements; `mapPar` divides by two threads (once: nested
    /// parallelism gains nothing) but costs a fork; unrolling saves a little where
    /// the trip count is small and costs where it is large; a high-level `map`/`reduce`
    /// costs 10^9 more, since the bridge wants them lowered; a primitive costs one, other nodes
    /// (binders, variables, applications) a hundredth.
    Lowered,
}

impl CostModel {
    /// Its name, as `--cost` takes it.
    pub fn name(self) -> &'static str {
        match self {
            CostModel::AstSize => "size",
            CostModel::Lowered => "lowered",
        }
    }

    /// The model named `name`.
    pub fn from_name(name: &str) -> Option<CostModel> {
        match name {
            "size" | "ast-size" | "astSize" => Some(CostModel::AstSize),
            "lowered" | "low-level" | "work" => Some(CostModel::Lowered),
            _ => None,
        }
    }
}

/// The cost of a (sub)program under a [`CostModel`]: its total, and for a loop
/// primitive that still waits for its array, the work of one iteration.
#[derive(Debug, Clone)]
pub struct Work {
    /// The total cost.
    pub total: f64,
    pending: Option<Pending>,
    /// Whether it contains a parallel loop (a parallel loop inside one gains nothing).
    parallel: bool,
    /// Whether it computes (arithmetic, a reduction), rather than only rearranging
    /// data: a high-level `map` of a function that does not is a view, which costs
    /// nothing to leave high-level (`defaultLowering` keeps it so).
    computes: bool,
}

#[derive(Debug, Clone)]
struct Pending {
    prim: Prim,
    /// Value arguments received so far.
    args: usize,
    /// The work of one iteration (the function's).
    per_item: f64,
    /// Work outside the loop (the start value).
    outside: f64,
    /// Whether the function computes.
    computes: bool,
}

impl PartialEq for Work {
    fn eq(&self, other: &Self) -> bool {
        self.total == other.total
    }
}

impl PartialOrd for Work {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        self.total.partial_cmp(&other.total)
    }
}

/// Which argument of a loop primitive is the iterated array, and how much one
/// iteration is worth relative to a sequential loop's.
fn loop_shape(p: Prim) -> Option<(usize, f64)> {
    Some(match p {
        Prim::MapSeq | Prim::ReduceSeq => (if p == Prim::MapSeq { 1 } else { 2 }, 1.0),
        Prim::MapSeqUnroll | Prim::ReduceSeqUnroll => {
            (if p == Prim::MapSeqUnroll { 1 } else { 2 }, 0.9)
        }
        Prim::MapPar => (1, 0.5),
        Prim::Map => (1, 1.0),
        Prim::Reduce => (2, 1.0),
        _ => return None,
    })
}

/// The cost of a loop of `n` iterations; `nested_parallel` if its body has a
/// parallel loop.
fn loop_cost(pending: &Pending, n: f64, nested_parallel: bool) -> f64 {
    let (array_arg, mut factor) = loop_shape(pending.prim).expect("a loop primitive");
    if pending.prim == Prim::Map && !pending.computes {
        // A view: its elements are computed where they are read.
        return pending.outside + pending.per_item;
    }
    let par = pending.prim == Prim::MapPar;
    let mut fixed = if par { 20_000.0 } else { 0.0 };
    if matches!(pending.prim, Prim::Map | Prim::Reduce) {
        fixed += UNLOWERED;
    }
    if par && nested_parallel {
        factor = 1.0;
    }
    let unrolled = matches!(pending.prim, Prim::MapSeqUnroll | Prim::ReduceSeqUnroll);
    if unrolled && n > 32.0 {
        factor = 1.2;
    }
    // A map writes its results to memory; a reduction keeps one value.
    let writes = if array_arg == 1 { n } else { 0.0 };
    pending.outside + n * factor * pending.per_item.max(1.0) + writes + fixed
}

/// The length of an array type (64 where it is symbolic).
fn length(ty: super::lang::TyId) -> f64 {
    if ty == super::lang::TyId::NAT {
        return 1.0;
    }
    match ty.get().kind() {
        crate::types::TypeKind::Array(n, _) => n.as_const().map_or(64.0, |n| n as f64),
        _ => 1.0,
    }
}

/// The cost of a loop that is not lowered (`map`, `reduce`): the bridge wants
/// none.
const UNLOWERED: f64 = 1e9;

/// The cost of a node that computes nothing, in [`CostModel::Lowered`].
const NODE: f64 = 0.01;

/// An egg cost function from a [`CostModel`].
pub struct Cost(pub CostModel);

impl CostFunction<Rise> for Cost {
    type Cost = Work;

    fn cost<C>(&mut self, enode: &Rise, mut costs: C) -> Work
    where
        C: FnMut(Id) -> Work,
    {
        let kids: SmallVec<[Work; 3]> = enode.children.iter().map(|&c| costs(c)).collect();
        self.0.combine(enode, &kids)
    }
}

impl Work {
    /// The cost of nothing (for satisfiability without costs).
    pub fn zero() -> Work {
        Work {
            total: 0.0,
            pending: None,
            parallel: false,
            computes: false,
        }
    }
}

impl CostModel {
    /// The cost of `enode` whose children cost `kids` (in order). Costs never fall
    /// below a child's, so extraction may settle the cheapest classes first.
    pub fn combine(self, enode: &Rise, kids: &[Work]) -> Work {
        let mut kids = kids.iter().cloned();
        let mut costs = |_: Id| kids.next().expect("one cost per child");
        let plain = |total: f64, parallel: bool, computes: bool| Work {
            total,
            pending: None,
            parallel,
            computes,
        };
        if self == CostModel::AstSize {
            let total = enode
                .children()
                .iter()
                .map(|&c| costs(c).total)
                .sum::<f64>()
                + 1.0;
            return plain(total, false, false);
        }
        match (&enode.op, enode.children.as_slice()) {
            (Op::Prim(p), []) if loop_shape(*p).is_some() => Work {
                total: 1.0,
                pending: Some(Pending {
                    prim: *p,
                    args: 0,
                    per_item: 0.0,
                    outside: 1.0,
                    computes: false,
                }),
                parallel: false,
                computes: p.computes(),
            },
            (Op::App, [f, a]) => {
                let (f, a) = (costs(*f), costs(*a));
                let parallel = f.parallel || a.parallel;
                let computing = f.computes || a.computes;
                let Some(mut pending) = f.pending else {
                    return plain(NODE + f.total + a.total, parallel, computing);
                };
                let (array_arg, _) = loop_shape(pending.prim).expect("a loop primitive");
                if pending.args == array_arg {
                    // The loop was costed when it got its last other argument.
                    return plain(NODE + f.total + a.total, parallel, computing);
                }
                if pending.args == 0 {
                    pending.per_item += a.total;
                    pending.computes = a.computes;
                } else {
                    pending.outside += a.total;
                }
                pending.args += 1;
                if pending.args < array_arg {
                    return Work {
                        total: pending.outside + pending.per_item + NODE,
                        pending: Some(pending),
                        parallel,
                        computes: computing,
                    };
                }
                // `map(f)`, `reduceSeq(op)(init)`: a function of the array, whose length
                // its type tells; its cost is the whole loop's, even where it is passed
                // on (`mapSeq(map(g))`) rather than applied here.
                let n = match enode.ty.get().kind() {
                    crate::types::TypeKind::Fun(param, _) => length(super::lang::TyId::of(param)),
                    _ => 1.0,
                };
                let total = loop_cost(&pending, n, f.parallel || a.parallel) + NODE;
                let par = pending.prim == Prim::MapPar;
                // A lowered map computes (it materializes), even of a view.
                let computes = computing || pending.prim != Prim::Map;
                Work {
                    total,
                    pending: Some(pending),
                    parallel: parallel || par,
                    computes,
                }
            }
            _ => {
                // Primitives compute; binders, variables and applications are free
                // but for a trace, so that of equal schedules the simplest wins.
                let mut total = if matches!(enode.op, Op::Prim(_)) {
                    1.0
                } else {
                    NODE
                };
                let mut parallel = false;
                let mut computing = matches!(enode.op, Op::Prim(p) if p.computes());
                for &c in enode.children() {
                    let c = costs(c);
                    total += c.total;
                    parallel |= c.parallel;
                    computing |= c.computes;
                }
                plain(total, parallel, computing)
            }
        }
    }
}

/// One iteration, for progress reports.
#[derive(Debug, Clone)]
pub struct Progress {
    /// The iteration (from 1).
    pub iteration: usize,
    /// E-nodes.
    pub enodes: usize,
    /// E-classes.
    pub eclasses: usize,
    /// Resident memory of the process, MB.
    pub memory_mb: f64,
    /// The rule applied most often in the last iteration, with its count.
    pub top_rule: Option<(String, usize)>,
    /// Time since the start.
    pub elapsed: Duration,
}

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
    /// Successful rule applications, by rule.
    pub applied: Vec<(String, usize)>,
    /// Time spent matching, applying and rebuilding, over all iterations.
    pub phases: Phases,
}

/// Where a saturation's time went (egg's own accounting, per iteration, summed).
#[derive(Debug, Clone, Copy, Default)]
pub struct Phases {
    /// Searching for matches.
    pub search: Duration,
    /// Applying the matches.
    pub apply: Duration,
    /// Restoring the e-graph's invariants.
    pub rebuild: Duration,
}

impl Report {
    /// The report as one JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "stop_reason": self.stop_reason,
            "iterations": self.iterations,
            "enodes": self.enodes,
            "eclasses": self.eclasses,
            "ms": (self.time.as_secs_f64() * 1e4).round() / 10.0,
            "peak_mb": (self.peak_mb * 10.0).round() / 10.0,
            "cost": self.cost,
            "applied": self.applied.iter().map(|(r, n)| serde_json::json!([r, n])).collect::<Vec<_>>(),
            "search_ms": (self.phases.search.as_secs_f64() * 1e4).round() / 10.0,
            "apply_ms": (self.phases.apply.as_secs_f64() * 1e4).round() / 10.0,
            "rebuild_ms": (self.phases.rebuild.as_secs_f64() * 1e4).round() / 10.0,
        })
    }
}

/// One step of an explanation: the program after it and the rule that led to it
/// (`None` for the start; `<=` marks a rule used from right to left).
#[derive(Debug, Clone)]
pub struct Step {
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
    pub explanation: Option<Vec<Step>>,
}

/// Why a saturation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaturationError(pub String);

impl std::fmt::Display for SaturationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SaturationError {}

/// The resident memory of this process, MB (0 where the platform does not say).
pub fn resident_mb() -> f64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(0.0, |pages| pages * 4096.0 / (1024.0 * 1024.0))
}

type ProgressFn = Arc<Mutex<dyn FnMut(&Progress) + Send>>;
type GoalFn = Arc<dyn Fn(&RiseGraph, Id) -> bool + Send + Sync>;

/// An equality saturation: rules, limits, a cost model, and options.
///
/// ```
/// use elevate_rise::egraph::{CostModel, Limits, RuleSet, Saturation};
/// use elevate_rise::{infer, parse_term, print_term};
/// let t = infer(&parse_term("fun(xs: 8.f32 => xs |> map(neg) |> map(abs))").unwrap()).unwrap();
/// let rules = RuleSet::parse("mapFusion,betaReduction").unwrap();
/// let s = Saturation::new(rules, Limits::default(), CostModel::Lowered);
/// let out = s.run(&t).unwrap();
/// assert_eq!(print_term(&out.program), "fun(xs: 8.f32 => xs |> map(fun(x => abs(-x))))");
/// assert_eq!(out.report.stop_reason, "saturated");
/// ```
#[derive(Clone)]
pub struct Saturation {
    rules: RuleSet,
    limits: Limits,
    cost: CostModel,
    explain: bool,
    progress: Option<ProgressFn>,
    goal: Option<GoalFn>,
}

impl Saturation {
    /// A saturation with these rules, limits and cost model.
    pub fn new(rules: RuleSet, limits: Limits, cost: CostModel) -> Saturation {
        Saturation {
            rules,
            limits,
            cost,
            explain: false,
            progress: None,
            goal: None,
        }
    }

    /// Also prove the result equal to the input ([`Outcome::explanation`]); slower.
    pub fn with_explanations(mut self) -> Saturation {
        self.explain = true;
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
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Grows the e-graph of `program` (typed, or typed here); extraction is up to the
    /// caller ([`Grown::program`]).
    pub fn grow(&self, program: &Term) -> Result<Grown, SaturationError> {
        let typed = if program.ty().is_some() {
            program.clone()
        } else {
            crate::infer(program).map_err(|e| SaturationError(e.message))?
        };
        let start = Instant::now();
        let (params, body) = parameters(&typed);
        let idents = parameter_idents(&params);
        let mut egraph = RiseGraph::default();
        if self.explain {
            egraph = egraph.with_explanations_enabled();
        }
        let root = add_body(&mut egraph, &body, &idents).map_err(|e| SaturationError(e.0))?;
        let input = egraph.id_to_expr(root);
        egraph.rebuild();
        let base_mb = resident_mb();
        let peak = Arc::new(Mutex::new(base_mb));
        let limits = self.limits;
        let hook_peak = peak.clone();
        let progress = self.progress.clone();
        let goal = self.goal.clone();
        let mut runner: Runner<Rise, RiseAnalysis, ()> = Runner::new(RiseAnalysis)
            .with_egraph(egraph)
            .with_iter_limit(limits.iterations)
            .with_node_limit(limits.nodes)
            .with_time_limit(limits.time)
            .with_hook(move |runner| {
                let mb = resident_mb();
                let mut peak = hook_peak.lock().expect("peak");
                *peak = peak.max(mb);
                if let (Some(f), Some(last)) = (&progress, runner.iterations.last()) {
                    let top_rule = last
                        .applied
                        .iter()
                        .max_by_key(|(_, &n)| n)
                        .map(|(r, &n)| (r.to_string(), n));
                    (f.lock().expect("progress"))(&Progress {
                        iteration: runner.iterations.len(),
                        enodes: runner.egraph.total_number_of_nodes(),
                        eclasses: runner.egraph.number_of_classes(),
                        memory_mb: mb,
                        top_rule,
                        elapsed: start.elapsed(),
                    });
                }
                if mb > limits.memory_mb as f64 {
                    return Err("memory".into());
                }
                if let Some(goal) = &goal {
                    if !runner.iterations.is_empty() && goal(&runner.egraph, runner.roots[0]) {
                        return Err("goal".into());
                    }
                }
                Ok(())
            });
        runner.roots.push(root);
        // The goal may hold before any rewrite.
        let reached_at_once = self.goal.as_ref().is_some_and(|g| g(&runner.egraph, root));
        if !reached_at_once {
            runner = runner.run(self.rules.rewrites());
        }
        let stop_reason = if reached_at_once {
            "goal".to_string()
        } else {
            match &runner.stop_reason {
                Some(StopReason::Saturated) => "saturated".into(),
                Some(StopReason::IterationLimit(_)) => "iterations".into(),
                Some(StopReason::NodeLimit(_)) => "nodes".into(),
                Some(StopReason::TimeLimit(_)) => "time".into(),
                Some(StopReason::Other(s)) => s.clone(),
                None => "unknown".into(),
            }
        };
        let mut applied: std::collections::BTreeMap<String, usize> = Default::default();
        for it in &runner.iterations {
            for (r, n) in &it.applied {
                *applied.entry(r.to_string()).or_default() += n;
            }
        }
        let mut applied: Vec<(String, usize)> = applied.into_iter().collect();
        applied.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let peak_mb = peak.lock().expect("peak").max(resident_mb());
        let mut egraph = runner.egraph;
        egraph.rebuild();
        let report = Report {
            stop_reason,
            iterations: runner.iterations.len(),
            enodes: egraph.total_number_of_nodes(),
            eclasses: egraph.number_of_classes(),
            time: start.elapsed(),
            peak_mb,
            cost: 0.0,
            applied,
            phases: runner
                .iterations
                .iter()
                .fold(Phases::default(), |p, it| Phases {
                    search: p.search + Duration::from_secs_f64(it.search_time),
                    apply: p.apply + Duration::from_secs_f64(it.apply_time),
                    rebuild: p.rebuild + Duration::from_secs_f64(it.rebuild_time),
                }),
        };
        Ok(Grown {
            root: egraph.find(root),
            egraph,
            params,
            idents,
            input,
            report,
        })
    }

    /// Saturates and extracts the best program by the cost model.
    pub fn run(&self, program: &Term) -> Result<Outcome, SaturationError> {
        let start = Instant::now();
        let mut grown = self.grow(program)?;
        let best = grown.extract(self.cost);
        grown.report.time = start.elapsed();
        let explanation = self.explain.then(|| grown.explain(&best));
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
    input: RecExpr<Rise>,
    /// What the growth did.
    pub report: Report,
}

impl Grown {
    /// The program whose body is `body` (an expression extracted from the e-graph).
    pub fn program(&self, body: &RecExpr<Rise>) -> Term {
        with_parameters(&self.params, expr_to_open_term(body, &self.idents))
    }

    /// The root's best expression by `cost`; its cost goes into the report.
    pub fn extract(&mut self, cost: CostModel) -> RecExpr<Rise> {
        let (cost, best) = Extractor::new(&self.egraph, Cost(cost)).find_best(self.root);
        self.report.cost = cost.total;
        best
    }

    /// The steps that rewrite the input's body into `to` (needs explanations).
    pub fn explain(&mut self, to: &RecExpr<Rise>) -> Vec<Step> {
        let mut explanation = self.egraph.explain_equivalence(&self.input, to);
        let flat: Vec<egg::FlatTerm<Rise>> = explanation.make_flat_explanation().clone();
        flat.iter()
            .map(|flat| Step {
                rule: rule_of(flat),
                program: crate::print::print_term(&self.program(&flat_expr(flat))),
            })
            .collect()
    }
}

fn rule_of(flat: &egg::FlatTerm<Rise>) -> Option<String> {
    if let Some(r) = flat.forward_rule {
        return Some(r.to_string());
    }
    if let Some(r) = flat.backward_rule {
        return Some(format!("{r} <="));
    }
    flat.children.iter().find_map(rule_of)
}

fn flat_expr(flat: &egg::FlatTerm<Rise>) -> RecExpr<Rise> {
    fn go(flat: &egg::FlatTerm<Rise>, out: &mut RecExpr<Rise>) -> Id {
        let children: Vec<Id> = flat.children.iter().map(|c| go(c, out)).collect();
        let mut node = flat.node.clone();
        node.children = children.into_iter().collect();
        out.add(node)
    }
    let mut out = RecExpr::default();
    go(flat, &mut out);
    out
}

/// `saturate(rules, limits, cost)` as a strategy: the extracted program, or a
/// failure if the program cannot enter the e-graph.
pub fn saturate(rules: RuleSet, limits: Limits, cost: CostModel) -> Strategy<Term> {
    Strategy::new(SaturateStrategy(Saturation::new(rules, limits, cost)))
}

/// A [`Saturation`] as a strategy.
pub struct SaturateStrategy(pub Saturation);

impl StrategyImpl<Term> for SaturateStrategy {
    /// Saturates `program` (its types inferred afresh, since rewrites before may have
    /// left some nodes untyped) within the limits and what is left of the context's
    /// time budget.
    fn apply(&self, program: &Term, cx: &mut Context) -> RewriteResult<Term> {
        let name = self.name();
        let mut saturation = self.0.clone();
        if let Some(max) = cx.budget().max_time {
            let left = max.saturating_sub(cx.elapsed());
            saturation.limits.time = saturation.limits.time.min(left);
        }
        let outcome = crate::infer(program)
            .map_err(|e| SaturationError(e.message))
            .and_then(|typed| saturation.run(&typed));
        match outcome {
            Ok(outcome) => {
                cx.record_step(&name)?;
                Ok(outcome.program)
            }
            Err(e) => {
                cx.log(|| format!("saturate: {e}"));
                Err(Failure::no_match(name).at_path(&cx.location()))
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
