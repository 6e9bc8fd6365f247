//! Cost models: how extraction ranks the programs of an e-graph.

use super::lang::{Op, Rise, Types};
use crate::prim::Prim;
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
        // Loops the cost does not weigh as loops (on the GPU, a scan, an iteration),
        // and everything that is not a loop. (No wildcard: a new primitive must be
        // placed.)
        Prim::MapGlobal | Prim::MapWorkGroup | Prim::MapLocal | Prim::ScanSeq | Prim::Iterate => {
            return None
        }
        Prim::Id
        | Prim::Neg
        | Prim::Not
        | Prim::Add
        | Prim::Sub
        | Prim::Mul
        | Prim::Div
        | Prim::Mod
        | Prim::Max
        | Prim::Min
        | Prim::Exp
        | Prim::Sqrt
        | Prim::Abs
        | Prim::Lt
        | Prim::Gt
        | Prim::Equal
        | Prim::Select
        | Prim::Cast
        | Prim::Let
        | Prim::ToMem
        | Prim::ToGlobal
        | Prim::ToShared
        | Prim::ToPrivate
        | Prim::Generate
        | Prim::Idx
        | Prim::IndexAsNat
        | Prim::NatAsIndex
        | Prim::Take
        | Prim::Drop
        | Prim::Concat
        | Prim::Split
        | Prim::Join
        | Prim::Slide
        | Prim::Transpose
        | Prim::PadCst
        | Prim::PadClamp
        | Prim::Zip
        | Prim::Unzip
        | Prim::MakePair
        | Prim::Fst
        | Prim::Snd
        | Prim::MapFst
        | Prim::MapSnd
        | Prim::VectorFromScalar
        | Prim::AsVector
        | Prim::AsVectorAligned
        | Prim::AsScalar => return None,
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
                let n = match types.get(enode.ty).map(Type::kind) {
                    Some(TypeKind::Fun(param, _)) => length(param),
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
