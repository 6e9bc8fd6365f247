//! The seven matrix-multiplication optimizations of the ELEVATE paper's TVM case
//! study (`baseline`, `blocking`, `vectorization`, `loopPerm`, `arrayPacking`,
//! `cacheBlocks`, `par`) as sketch guides from the high-level matmul, as in Koehler
//! et al., "Sketch-Guided Equality Saturation": each goal is at most three sketches,
//! each with the rules it may use, the last one the goal's loop nest.
//!
//! Loop nests are written with [`nest`]: outermost first, each loop `contains` the
//! next, so a sketch fixes the order of the loops and their sizes, and leaves the
//! rest (layout, how the data reaches the loops) to the e-graph. Block loops and
//! row loops have the same trip count (32 blocks of 32 rows of a 1024 matrix); they
//! are told apart by the dimensions of what they iterate over
//! (`map[32, 32, n]` iterates over blocks of rows).

use super::cost::CostModel;
use super::rules::RuleSet;
use super::runner::SaturationLimits;
use super::saturate::SaturationError;
use super::sketch::{guided, GuideStep, GuidedOutcome, Sketch};
use crate::term::Term;
use std::time::{Duration, Instant};

/// A loop of a nest.
#[derive(Debug, Clone)]
pub enum Loop {
    /// A map-like loop (`map`, `mapSeq`, `mapPar`) over an array of these dimensions.
    Map(&'static str, String),
    /// A reduction (`reduceSeq`, `reduceSeqUnroll`) of this length.
    Reduce(&'static str, i64),
}

/// The sketch of a loop nest, outermost loop first, around `inner`.
///
/// ```
/// use elevate_rise::egraph::goals::{nest, Loop};
/// let s = nest(&[Loop::Map("map", "32".into()), Loop::Reduce("reduceSeq", 4)], "?");
/// assert_eq!(s, "contains(map[32](contains(contains(reduceSeq[4](contains(?), ?, ?)))))");
/// ```
pub fn nest(loops: &[Loop], inner: &str) -> String {
    loops
        .iter()
        .rev()
        .fold(inner.to_string(), |inside, l| match l {
            Loop::Map(prim, dims) => format!("contains({prim}[{dims}](contains({inside})))"),
            Loop::Reduce(prim, n) => {
                format!("contains({prim}[{n}](contains({inside}), ?, ?))")
            }
        })
}

/// A goal: its name and its sketch guide.
#[derive(Clone)]
pub struct Goal {
    /// The ELEVATE strategy whose loop nest it reaches.
    pub name: &'static str,
    /// The steps, at most three.
    pub steps: Vec<GuideStep>,
}

fn step(sketch: String, rules: &str, limits: SaturationLimits) -> GuideStep {
    GuideStep::new(
        Sketch::parse(&sketch).unwrap_or_else(|e| panic!("the goal sketch `{sketch}`: {e}")),
        RuleSet::parse(rules).unwrap_or_else(|e| panic!("the goal rules `{rules}`: {e}")),
        limits,
    )
}

/// The rules of the steps.
const SPLIT: &str =
    "splitJoin(32),blockedSum(4),reduceSeq,splitBeforeMap,reduceSeqMapFusion,reduceMapToSeq,betaReduction";
const REORDER: &str =
    "mapFission,mapMapInterchange,liftReduceSeq,liftReduceSeqInit,addReduceSeqInit,mapMapEta,betaReduction,etaReduction";

/// The seven goals for an `n x n` matmul (`n` a multiple of 32; ELEVATE's is 1024):
/// 32x32 blocks of the result, the reduction split in blocks of 4, the innermost
/// loop on vectors of 32.
pub fn matmul_goals(n: i64) -> Vec<Goal> {
    let limits = SaturationLimits {
        iterations: 30,
        nodes: 200_000,
        time: Duration::from_secs(10),
        memory_mb: 4096,
    };
    let blocks = |prim: &'static str| Loop::Map(prim, format!("{}, 32, {n}", n / 32));
    let rows = Loop::Map("map", "32".into());
    let ko = |prim| Loop::Reduce(prim, n / 4);
    let ki = |prim| Loop::Reduce(prim, 4);
    // The tiles (xo, yo) and the split reduction (ko, ki) with the multiplication in
    // the inner reduction, before reordering: the reductions then read the inputs
    // themselves (views), not a computed array.
    let split = step(
        nest(
            &[blocks("map"), rows.clone(), blocks("map"), rows.clone()],
            &format!(
                "reduceSeq[{}](contains(reduceSeq[4](contains(mul), ?, ?)), ?, split(4)(zip(?, ?)))",
                n / 4
            ),
        ),
        SPLIT,
        limits,
    );
    // TVM's `xo, yo, ko, ki, xi, yi` and `xo, yo, ko, xi, ki, yi`.
    let blocked = |m: &'static str, r: &'static str| {
        vec![
            blocks(m),
            blocks("map"),
            ko(r),
            ki(r),
            rows.clone(),
            rows.clone(),
        ]
    };
    let permuted = |m: &'static str, r: &'static str| {
        vec![
            blocks(m),
            blocks("map"),
            ko("reduceSeq"),
            rows.clone(),
            ki(r),
            rows.clone(),
        ]
    };
    // The same with the innermost loop (`yi`) on one vector of 32.
    let vectorized = |mut loops: Vec<Loop>| {
        loops.pop();
        nest(&loops, "asScalar(map[1](?, ?))")
    };
    let packed = |inner: String| format!("let(toMem(contains(mapPar(?, ?))), fun({inner}))");
    let baseline = step(
        format!(
            "mapSeq[{n}](fun(contains(mapSeq[{n}](fun(reduceSeq[{n}](?, ?, zip(?, ?))), ?))), ?)"
        ),
        "lowering,betaReduction,etaReduction",
        limits,
    );
    // Tile and split, reorder into `loops`, then (if any) finish with `rules` until
    // `last` holds.
    let guide = |name, loops: Vec<Loop>, finish: Option<(String, &str)>| {
        let mut steps = vec![split.clone(), step(nest(&loops, "?"), REORDER, limits)];
        if let Some((last, rules)) = finish {
            steps.push(step(last, rules, limits));
        }
        Goal { name, steps }
    };
    let vectorize = "vectorize(32),betaReduction";
    let pack = "packB,vectorize(32),betaReduction";
    let unroll = "packB,vectorize(32),unroll,betaReduction";
    let parallelize = "packB,vectorize(32),unroll,mapPar,betaReduction";
    let perm = permuted("map", "reduceSeq");
    vec![
        Goal {
            name: "baseline",
            steps: vec![baseline],
        },
        guide("blocking", blocked("map", "reduceSeq"), None),
        guide(
            "vectorization",
            blocked("map", "reduceSeq"),
            Some((vectorized(blocked("map", "reduceSeq")), vectorize)),
        ),
        guide(
            "loopPerm",
            perm.clone(),
            Some((vectorized(perm.clone()), vectorize)),
        ),
        guide(
            "arrayPacking",
            perm.clone(),
            Some((packed(vectorized(perm.clone())), pack)),
        ),
        guide(
            "cacheBlocks",
            perm.clone(),
            Some((
                packed(vectorized(permuted("map", "reduceSeqUnroll"))),
                unroll,
            )),
        ),
        guide(
            "par",
            perm,
            Some((
                packed(vectorized(permuted("mapPar", "reduceSeqUnroll"))),
                parallelize,
            )),
        ),
    ]
}

/// The high-level matmul of `matmul.rise` with its sizes fixed to `n`, typed.
pub fn matmul(n: i64) -> Term {
    let src = format!(
        "fun(a: {n}.{n}.f32, b: {n}.{n}.f32 => a |> map(fun(arow => transpose(b) |> map(fun(bcol => zip(arow, bcol) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0))))))"
    );
    crate::infer(&crate::parse_term(&src).expect("the matmul parses")).expect("the matmul types")
}

/// What reaching a goal did.
#[derive(Debug, Clone)]
pub struct Reached {
    /// The goal.
    pub goal: &'static str,
    /// The search's outcome, or why it failed.
    pub outcome: Result<GuidedOutcome, SaturationError>,
    /// Wall-clock time of the whole search.
    pub time: Duration,
}

impl Reached {
    /// Whether the goal's last sketch was satisfied.
    pub fn found(&self) -> bool {
        self.outcome.is_ok()
    }

    /// The largest e-graph of its steps, in e-nodes.
    pub fn enodes(&self) -> usize {
        self.outcome.as_ref().map_or(0, |o| {
            o.steps.iter().map(|s| s.report.enodes).max().unwrap_or(0)
        })
    }

    /// The largest resident memory seen during its steps, MB.
    pub fn peak_mb(&self) -> f64 {
        self.outcome.as_ref().map_or(0.0, |o| {
            o.steps.iter().map(|s| s.report.peak_mb).fold(0.0, f64::max)
        })
    }
}

/// Runs a goal's guide from `program`.
pub fn reach(goal: &Goal, program: &Term) -> Reached {
    let start = Instant::now();
    let outcome = guided(program, &goal.steps, CostModel::Lowered);
    Reached {
        goal: goal.name,
        outcome,
        time: start.elapsed(),
    }
}
