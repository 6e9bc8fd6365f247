//! Cost models: how extraction ranks the programs of an e-graph.

use super::lang::{Op, Rise, Types};
use crate::prim::{Iteration, Makes, Prim, Schedule};
use crate::types::{Type, TypeKind};
use egg::{CostFunction, Id, Language, RecExpr};
use smallvec::SmallVec;

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
    /// How the loop iterates.
    iteration: Iteration,
    /// One iteration's worth relative to a sequential loop's.
    factor: f64,
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

/// A loop primitive as the cost weighs it: how it iterates, and how much one
/// iteration is worth relative to a sequential loop's. GPU maps and scans are not
/// weighed as loops (a CPU runs neither as one).
fn weighed_loop(p: Prim) -> Option<(Iteration, f64)> {
    let it = p.iteration()?;
    let factor = match it.schedule {
        Schedule::Unlowered | Schedule::Sequential => 1.0,
        Schedule::Unrolled => 0.9,
        Schedule::Parallel => 0.5,
        Schedule::Gpu(_) => return None,
    };
    match it.makes {
        Makes::Elements | Makes::Accumulation => Some((it, factor)),
        Makes::Prefixes => None,
    }
}

/// Whether `it` is a high-level `map`: a view where its function only rearranges.
fn unlowered_map(it: Iteration) -> bool {
    it.schedule == Schedule::Unlowered && it.makes == Makes::Elements
}

/// The cost of a loop of `n` iterations; `nested_parallel` if its body has a
/// parallel loop.
fn loop_cost(pending: &Pending, n: f64, nested_parallel: bool) -> f64 {
    let (it, mut factor) = (pending.iteration, pending.factor);
    if unlowered_map(it) && !pending.computes {
        // A view: its elements are computed where they are read.
        return pending.outside + pending.per_item;
    }
    let par = it.schedule == Schedule::Parallel;
    let mut fixed = if par { 20_000.0 } else { 0.0 };
    if it.schedule == Schedule::Unlowered {
        fixed += UNLOWERED;
    }
    if par && nested_parallel {
        factor = 1.0;
    }
    if it.schedule == Schedule::Unrolled && n > 32.0 {
        factor = 1.2;
    }
    // A map writes its results to memory; a reduction keeps one value.
    let writes = if it.makes == Makes::Elements { n } else { 0.0 };
    pending.outside + n * factor * pending.per_item.max(1.0) + writes + fixed
}

/// The length of an array type (64 where it is symbolic; 1 for other types).
fn length(ty: &Type) -> f64 {
    match ty.kind() {
        TypeKind::Array(n, _) => n.as_const().map_or(64.0, |n| n as f64),
        _ => 1.0,
    }
}

/// The cost of a loop that is not lowered (`map`, `reduce`): the bridge wants
/// none.
const UNLOWERED: f64 = 1e9;

/// The cost of a node that computes nothing, in [`CostModel::Lowered`].
const NODE: f64 = 0.01;

/// An egg cost function from a [`CostModel`], for the e-nodes of the e-graph whose
/// types are `types`.
pub struct Cost<'a> {
    /// The model.
    pub model: CostModel,
    /// The e-graph's types.
    pub types: &'a Types,
}

impl CostFunction<Rise> for Cost<'_> {
    type Cost = Work;

    fn cost<C>(&mut self, enode: &Rise, mut costs: C) -> Work
    where
        C: FnMut(Id) -> Work,
    {
        let kids: SmallVec<[Work; 3]> = enode.children.iter().map(|&c| costs(c)).collect();
        self.model.combine(self.types, enode, &kids)
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
    /// The cost of `enode` (of the e-graph whose types are `types`) whose children
    /// cost `kids` (in order). Costs never fall below a child's, so extraction may
    /// settle the cheapest classes first.
    pub fn combine(self, types: &Types, enode: &Rise, kids: &[Work]) -> Work {
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
            (Op::Prim(p), []) if weighed_loop(*p).is_some() => {
                let (iteration, factor) = weighed_loop(*p).expect("a weighed loop");
                Work {
                    total: 1.0,
                    pending: Some(Pending {
                        iteration,
                        factor,
                        args: 0,
                        per_item: 0.0,
                        outside: 1.0,
                        computes: false,
                    }),
                    parallel: false,
                    computes: p.computes(),
                }
            }
            (Op::App, [f, a]) => {
                let (f, a) = (costs(*f), costs(*a));
                let parallel = f.parallel || a.parallel;
                let computing = f.computes || a.computes;
                let Some(mut pending) = f.pending else {
                    return plain(NODE + f.total + a.total, parallel, computing);
                };
                let array_arg = pending.iteration.array;
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
                let n = match types.get(enode.ty).map(Type::kind) {
                    Some(TypeKind::Fun(param, _)) => length(param),
                    _ => 1.0,
                };
                let total = loop_cost(&pending, n, f.parallel || a.parallel) + NODE;
                let par = pending.iteration.schedule == Schedule::Parallel;
                // A lowered map computes (it materializes), even of a view.
                let computes = computing || !unlowered_map(pending.iteration);
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

/// The cost of the expression `expr` (of the e-graph whose types are `types`) by
/// `model`, as extraction computes it (a shared subterm counts at each use).
pub fn expr_cost(model: CostModel, types: &Types, expr: &RecExpr<Rise>) -> Work {
    let mut costs: Vec<Work> = Vec::with_capacity(expr.as_ref().len());
    for node in expr.as_ref() {
        let kids: SmallVec<[Work; 3]> = node
            .children
            .iter()
            .map(|&c| costs[usize::from(c)].clone())
            .collect();
        costs.push(model.combine(types, node, &kids));
    }
    costs.pop().unwrap_or_else(Work::zero)
}
