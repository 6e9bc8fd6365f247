//! A small loop-nest IR to search over: the loops of `C[i,j] += A[i,k] * B[k,j]`
//! (extents 192, 256, 128) with a tile size each, an order, a vector width and an
//! unrolling of the innermost loop, and a parallel loop; strategies that set them;
//! and an analytical cost with a realistic landscape: small tiles re-read memory,
//! large ones spill out of the cache, vectors pay off along the contiguous `j`,
//! unrolling helps until registers spill, and a parallel loop needs enough blocks
//! and costs a fork and join per iteration of the block loops around it.

use elevate_core::{rule, Strategy, Traversable};
use elevate_strategies::search::{parallel_map, Cost, Fingerprint, Measure, Rejection, Status};
use elevate_strategies::text::{int_arg, name_arg, ArgError, Registry};
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

/// A loop nest: a loop around a nest, or the body `C[i,j] += A[i,k] * B[k,j]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Nest {
    Loop(Arc<Loop>),
    Body,
}

/// One loop. A tile equal to the extent means the loop is not tiled; a vector width
/// of 1 means it is not vectorized.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Loop {
    pub var: char,
    pub extent: u32,
    pub tile: u32,
    pub vector: u32,
    pub unroll: u32,
    pub parallel: bool,
    pub body: Nest,
}

impl Nest {
    /// The untransformed matmul: loops `i`, `j`, `k`.
    pub fn matmul() -> Nest {
        [('k', 128), ('j', 256), ('i', 192)]
            .into_iter()
            .fold(Nest::Body, |body, (var, extent)| {
                Nest::Loop(Arc::new(Loop {
                    var,
                    extent,
                    tile: extent,
                    vector: 1,
                    unroll: 1,
                    parallel: false,
                    body,
                }))
            })
    }

    /// The loops from the outermost in.
    pub fn loops(&self) -> Vec<&Loop> {
        let mut loops = Vec::new();
        let mut node = self;
        while let Nest::Loop(l) = node {
            loops.push(&**l);
            node = &l.body;
        }
        loops
    }

    fn as_loop(&self) -> Option<&Loop> {
        match self {
            Nest::Loop(l) => Some(l),
            Nest::Body => None,
        }
    }

    /// This loop with `change` made to it.
    fn edit(&self, change: impl FnOnce(&mut Loop)) -> Option<Nest> {
        let mut l = self.as_loop()?.clone();
        change(&mut l);
        Some(Nest::Loop(Arc::new(l)))
    }
}

impl Traversable for Nest {
    fn arity(&self) -> usize {
        match self {
            Nest::Loop(_) => 1,
            Nest::Body => 0,
        }
    }

    fn child(&self, index: usize) -> &Self {
        match self {
            Nest::Loop(l) if index == 0 => &l.body,
            _ => panic!("no child {index}"),
        }
    }

    fn with_child(&self, index: usize, child: Self) -> Self {
        assert_eq!(index, 0, "a loop has one child");
        self.edit(|l| l.body = child).expect("a loop")
    }
}

impl Fingerprint for Nest {
    fn fingerprint(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        self.hash(&mut hasher);
        hasher.finish()
    }
}

impl fmt::Display for Nest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let loops = self.loops();
        for l in &loops {
            write!(f, "for {} < {}", l.var, l.extent)?;
            if l.tile < l.extent {
                write!(f, " tile {}", l.tile)?;
            }
            if l.vector > 1 {
                write!(f, " vec {}", l.vector)?;
            }
            if l.unroll > 1 {
                write!(f, " unroll {}", l.unroll)?;
            }
            if l.parallel {
                f.write_str(" par")?;
            }
            f.write_str(" { ")?;
        }
        f.write_str("C[i,j] += A[i,k] * B[k,j]")?;
        for _ in &loops {
            f.write_str(" }")?;
        }
        Ok(())
    }
}

fn var(name: &str) -> Result<char, ArgError> {
    match name {
        "i" | "j" | "k" => Ok(name.chars().next().unwrap_or('i')),
        _ => Err(ArgError::invalid(
            0,
            format!("argument 1 must be a loop, i, j or k, found `{name}`"),
        )),
    }
}

/// `tile(v, n)`: on loop `v`, tiles of `n` (which must divide the extent).
fn tile(v: char, n: u32) -> Strategy<Nest> {
    rule(format!("tile({v}, {n})"), move |p: &Nest| {
        let l = p
            .as_loop()
            .filter(|l| l.var == v && n > 0 && l.extent % n == 0)?;
        (l.tile == l.extent).then(|| p.edit(|l| l.tile = n))?
    })
}

/// `vectorize(w)`: the innermost loop in vectors of `w` lanes (at most its tile).
fn vectorize(w: u32) -> Strategy<Nest> {
    rule(format!("vectorize({w})"), move |p: &Nest| {
        let l = p.as_loop()?;
        let fits = w > 0 && w <= l.tile && l.tile % w == 0;
        (l.body == Nest::Body && fits).then(|| p.edit(|l| l.vector = w))?
    })
}

/// `unroll(u)`: the innermost loop's vectors unrolled `u` times (they must fit its
/// tile).
fn unroll(u: u32) -> Strategy<Nest> {
    rule(format!("unroll({u})"), move |p: &Nest| {
        let l = p.as_loop()?;
        let step = l.vector * u;
        let fits = u > 0 && step <= l.tile && l.tile % step == 0;
        (l.body == Nest::Body && fits).then(|| p.edit(|l| l.unroll = u))?
    })
}

/// `parallel(v)`: loop `v` in parallel; never `k`, which carries the reduction.
fn parallel(v: char) -> Strategy<Nest> {
    rule(format!("parallel({v})"), move |p: &Nest| {
        let l = p.as_loop()?;
        (l.var == v && v != 'k').then(|| p.edit(|l| l.parallel = true))?
    })
}

/// `order(xyz)`: the whole nest with its loops in this order, from the outermost in.
fn order(vars: String) -> Strategy<Nest> {
    rule(format!("order({vars})"), move |p: &Nest| {
        let loops = p.loops();
        let mut wanted: Vec<char> = vars.chars().collect();
        let mut have: Vec<char> = loops.iter().map(|l| l.var).collect();
        wanted.sort_unstable();
        have.sort_unstable();
        if wanted != have || loops.is_empty() {
            return None;
        }
        let nest = vars.chars().rev().fold(Nest::Body, |body, v| {
            let l = loops
                .iter()
                .find(|l| l.var == v)
                .expect("a loop of the nest");
            Nest::Loop(Arc::new(Loop {
                body,
                ..(*l).clone()
            }))
        });
        Some(nest)
    })
}

/// Elevate's combinators with `tile`, `order`, `vectorize`, `unroll` and `parallel`.
pub fn registry() -> Registry<Nest> {
    let mut r = Registry::with_combinators();
    let size = |args: &[_], i| -> Result<u32, ArgError> {
        u32::try_from(int_arg(args, i)?)
            .map_err(|_| ArgError::invalid(i, format!("argument {} is too large", i + 1)))
    };
    r.add("tile", "(v, n)", "tiles loop v by n", move |a| {
        Ok(tile(var(name_arg(a, 0)?)?, size(a, 1)?))
    });
    r.add(
        "vectorize",
        "(w)",
        "the innermost loop in vectors of w",
        move |a| Ok(vectorize(size(a, 0)?)),
    );
    r.add(
        "unroll",
        "(u)",
        "the innermost loop's vectors unrolled u times",
        move |a| Ok(unroll(size(a, 0)?)),
    );
    r.add("parallel", "(v)", "loop v in parallel", |a| {
        Ok(parallel(var(name_arg(a, 0)?)?))
    });
    r.add("order", "(xyz)", "the loops in this order", |a| {
        Ok(order(name_arg(a, 0)?.to_string()))
    });
    r
}

/// The space of the driver tests: 5 x 5 x 6 x 4 x 3 x 4 = 7,200 points. Tiles of 128
/// do not divide `i`'s 192 and `k` cannot run in parallel: those points fail, and so
/// do vectors of more than 4 lanes along `i` (in the cost). A vector or unrolling that
/// does not fit its loop leaves it as it was (`try`): the same program again.
pub const SPACE: &str = "topDown(tile(i, {8, 16, 32, 64, 128})) ; \
    topDown(tile(j, {8, 16, 32, 64, 128})) ; \
    order({ijk, ikj, jik, jki, kij, kji}) ; \
    try(topDown(vectorize({1, 4, 8, 16}))) ; \
    try(topDown(unroll({1, 2, 4}))) ; \
    {id, topDown(parallel({i, j, k}))}";

/// The analytical cost (a time in arbitrary units).
pub struct Model;

impl Model {
    /// The cost of `nest`, or why it cannot run.
    pub fn cost(nest: &Nest) -> Result<f64, Rejection> {
        let loops = nest.loops();
        let find = |v: char| loops.iter().find(|l| l.var == v).copied();
        let (Some(i), Some(j), Some(k), Some(inner)) =
            (find('i'), find('j'), find('k'), loops.last())
        else {
            return Err(Rejection::new(Status::CompileFailed, "not a matmul nest"));
        };
        let volume = (i.extent * j.extent * k.extent) as f64;
        let (w, u) = (inner.vector as f64, inner.unroll as f64);
        // Lanes along the contiguous j pay off fully (but 16 lanes are split in two
        // on this machine), along the reduction k partly (horizontal sums), along i
        // barely (gathers).
        let lanes = match inner.var {
            'j' if inner.vector >= 16 => 8.3,
            'j' => w,
            'k' => 1.0 + 0.7 * (w - 1.0),
            _ if inner.vector > 4 => {
                return Err(Rejection::new(
                    Status::CompileFailed,
                    "no strided gathers wider than 4 lanes",
                ))
            }
            _ => 1.0 + 0.1 * (w - 1.0),
        };
        // Unrolling hides latency a little, until the lanes in flight spill registers.
        let mut latency = match inner.unroll {
            1 => 1.0,
            2 => 0.98,
            _ => 0.97,
        };
        if inner.vector * inner.unroll > 32 {
            latency *= 1.1;
        }
        let compute = 0.3 * 2.0 * volume / lanes * latency;
        // Each block reads its panels of A and B and its tile of C: the further they
        // spill out of a 32 KiB cache, the slower every read.
        let (ti, tj, tk) = (i.tile as f64, j.tile as f64, k.tile as f64);
        let footprint = 4.0 * (ti * tk + tk * tj + ti * tj);
        let level = (footprint / (32.0 * 1024.0)).max(1.0);
        // The innermost loop decides the strides; the one around it, the reuse.
        let middle = loops[loops.len().saturating_sub(2)].var;
        let stride = match (middle, inner.var) {
            ('k', 'j') => 1.0,
            (_, 'j') => 1.02,
            ('i', 'k') => 1.6,
            (_, 'k') => 1.75,
            ('k', _) => 2.5,
            _ => 2.7,
        };
        let reads = volume * (1.0 / tj + 1.0 / ti + 1.0 / tk);
        let memory = 0.5 * reads * level * stride;
        // Every run of the innermost loop (fewer when unrolled) and every block costs
        // loop overhead.
        let inner_runs = volume / inner.tile as f64 / u;
        let blocks: f64 = loops.iter().map(|l| (l.extent / l.tile) as f64).product();
        let serial = compute + memory + inner_runs + 3_000.0 * blocks;
        let Some(at) = loops.iter().position(|l| l.parallel) else {
            return Ok(serial);
        };
        // Two cores over the blocks of the parallel loop, in whole rounds; a fork and
        // join per iteration of the block loops around it; j-tiles narrower than a
        // cache line share lines between the cores.
        let p = loops[at];
        let chunks = (p.extent / p.tile) as f64;
        let mut speedup = chunks / (chunks / 2.0).ceil();
        if p.var == 'j' && p.tile * 4 < 64 {
            speedup *= 0.6;
        }
        let forks: f64 = loops[..at]
            .iter()
            .map(|l| (l.extent / l.tile) as f64)
            .product();
        Ok(serial / speedup + 5_000.0 * forks)
    }
}

impl Cost<Nest> for Model {
    fn name(&self) -> String {
        "nest model".into()
    }

    fn evaluate(&self, nest: &Nest) -> Result<Measure, Rejection> {
        Model::cost(nest).map(Measure::cost)
    }

    fn evaluate_all(&self, nests: &[&Nest], jobs: usize) -> Vec<Result<Measure, Rejection>> {
        parallel_map(nests, jobs, |nest| self.evaluate(nest))
    }
}
