//! The analytical cost model: an estimate of the run time of a low-level RISE program
//! on a [`Machine`], from its [loop nests](super::loop_nests) and without compiling it.
//!
//! Each top-level loop nest (and what runs outside all loops) is estimated on its own,
//! and the nests add up. Within a nest, each of these is a lower bound on the time,
//! and the estimate is the largest plus a tenth of the others (they overlap, not
//! perfectly):
//!
//! - **compute**: the arithmetic as fused multiply-adds on the machine's FMA units,
//!   vector operations of `w` lanes taking `⌈w / lanes⌉` instructions, scalar ones one
//!   each, except in an innermost loop (not a reduction) over unit-stride data, which
//!   the compiler vectorizes ([`Machine::auto_vectorize`]);
//! - **issue**: every instruction (arithmetic, loads, stores, and the bookkeeping of
//!   each iteration of a loop that is not unrolled) through the core's issue width;
//! - **loads and stores**: the load and store ports (a vector of contiguous lanes is
//!   one access per cache line's worth, a broadcast one, a gather two per lane (a
//!   load and an insert); a read
//!   of an input that does not move with the innermost loops is hoisted out of them);
//! - **memory traffic**: for each cache level, the lines each access brings in: the
//!   distinct lines it touches in the largest loop nest around it whose one iteration's
//!   footprint (every access's lines within it) fits in the cache, times the trips of
//!   the loops outside that nest (which find their data evicted), through the
//!   bandwidth of the level below (a program whose buffers all fit in a level finds
//!   them there, as repeated runs do: [`Machine::warm`]);
//! - **latency**: a reduction whose accumulator is in registers waits for each
//!   addition before the next, unless the loops around it offer independent work to
//!   overlap it with (small reductions inside larger loops).
//!
//! An array accumulator small enough for the registers, accessed only through
//! unrolled or tiny loops inside its reduction, stays in registers and costs no memory
//! access (a register tile). A parallel loop divides the time of what it contains by
//! the cores it keeps busy (balanced: `trips / ⌈trips / cores⌉`), except the memory
//! bandwidth the cores share, and costs the start of a parallel region each time it
//! runs.

use super::loop_nests::{
    loop_nests, Access, Accumulator, LoopId, LoopKind, Nests, NestsError, Role,
};
use crate::term::Term;
use elevate_core::{Budget, Context};
use elevate_strategies::search::{Cost, Measure, Rejection, Status};
use rustc_hash::{FxHashMap, FxHashSet};

/// The data an access touches: buffer, first element, strides, lanes.
type DataKey = (usize, i64, Vec<(LoopId, i64)>, i64);

/// A cache level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cache {
    /// Its capacity in bytes (per core, or in all when shared).
    pub bytes: f64,
    /// Bytes per cycle it receives from the level below: per core, or for a shared
    /// cache (the last level, filled from memory) for all cores together.
    pub fill_bytes_per_cycle: f64,
    /// Whether all cores share it.
    pub shared: bool,
}

/// The machine the model estimates for: a multi-core CPU with SIMD units and three
/// levels of cache. [`Machine::default`] is a recent x86-64 core with AVX-512 (the
/// development machine: AMD Zen 5, two cores); [`Machine::host`] adjusts the cores and
/// vector width to the machine it runs on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Machine {
    /// Cores for parallel loops.
    pub cores: u32,
    /// Clock frequency.
    pub ghz: f64,
    /// `f32` lanes of a vector register.
    pub lanes: u32,
    /// Vector registers.
    pub registers: u32,
    /// Fused multiply-adds issued per cycle.
    pub fma_per_cycle: f64,
    /// Cycles before an FMA's result can be used.
    pub fma_latency: f64,
    /// Loads (of up to a vector register) per cycle.
    pub loads_per_cycle: f64,
    /// Stores per cycle.
    pub stores_per_cycle: f64,
    /// Instructions issued per cycle.
    pub issue_width: f64,
    /// Instructions the core keeps in flight (its reorder window).
    pub window: f64,
    /// Bytes of a cache line.
    pub line: f64,
    /// L1 data, L2, L3 (the last filled from memory).
    pub caches: [Cache; 3],
    /// Microseconds to start a parallel loop.
    pub fork_us: f64,
    /// Whether the compiler vectorizes innermost loops over unit-stride data by itself
    /// (LLVM's loop vectorizer does, in the bridge's compiled code).
    pub auto_vectorize: bool,
    /// Whether a program whose buffers all fit in a cache level finds them there (as
    /// the repeated runs of a measurement do), rather than in the level below.
    pub warm: bool,
}

impl Default for Machine {
    fn default() -> Self {
        Machine {
            cores: 2,
            ghz: 4.5,
            lanes: 16,
            registers: 32,
            fma_per_cycle: 2.0,
            fma_latency: 4.0,
            loads_per_cycle: 2.0,
            stores_per_cycle: 1.0,
            issue_width: 6.0,
            window: 300.0,
            line: 64.0,
            caches: [
                Cache {
                    bytes: 48.0 * 1024.0,
                    fill_bytes_per_cycle: 64.0,
                    shared: false,
                },
                Cache {
                    bytes: 1024.0 * 1024.0,
                    fill_bytes_per_cycle: 32.0,
                    shared: false,
                },
                Cache {
                    bytes: 32.0 * 1024.0 * 1024.0,
                    // 40 GB/s at 4.5 GHz.
                    fill_bytes_per_cycle: 9.0,
                    shared: true,
                },
            ],
            fork_us: 3.0,
            auto_vectorize: true,
            warm: true,
        }
    }
}

impl Machine {
    /// [`Machine::default`] with the cores and the vector width of the machine this
    /// runs on.
    pub fn host() -> Machine {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        let lanes = super::library::host_f32_lanes();
        Machine {
            cores,
            lanes,
            registers: if lanes == 16 { 32 } else { 16 },
            ..Machine::default()
        }
    }

    /// The peak of arithmetic in lane operations per second on all cores.
    pub fn peak_flops(&self) -> f64 {
        2.0 * self.fma_per_cycle * f64::from(self.lanes) * self.ghz * 1e9 * f64::from(self.cores)
    }
}

/// What bounds one loop nest, in cycles of one core (parallel parts divided by the
/// cores they use).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NestEstimate {
    /// The outermost loop of the nest (`None`: what runs outside all loops).
    pub root: Option<LoopId>,
    /// Arithmetic.
    pub compute: f64,
    /// Instructions through the issue width.
    pub issue: f64,
    /// Load ports.
    pub loads: f64,
    /// Store ports.
    pub stores: f64,
    /// Lines missing in L1, L2 and L3 (brought from the level below).
    pub traffic: [f64; 3],
    /// Reductions waiting for their accumulator.
    pub latency: f64,
    /// Starting parallel loops.
    pub fork: f64,
    /// The estimate, in cycles.
    pub cycles: f64,
}

/// The model's estimate for a program.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Estimate {
    /// Estimated milliseconds.
    pub ms: f64,
    /// Lane operations (flops, for floating-point programs).
    pub ops: f64,
    /// Each nest's bounds.
    pub nests: Vec<NestEstimate>,
}

/// The estimate of `program` (closed, typed, low-level, concrete sizes) on `machine`.
pub fn estimate(program: &Term, machine: &Machine) -> Result<Estimate, NestsError> {
    Ok(estimate_nests(&loop_nests(program)?, machine))
}

/// The estimate of a trace on `machine`.
pub fn estimate_nests(t: &Nests, machine: &Machine) -> Estimate {
    Model::new(t, machine).estimate()
}

struct Model<'a> {
    t: &'a Nests,
    m: &'a Machine,
    /// For each loop: its children.
    children: Vec<Vec<LoopId>>,
    /// Accesses that are registers (a register tile's accumulator).
    in_registers: Vec<bool>,
    /// For each loop: the speedup its outermost parallel ancestor gives (1 if none).
    speedup: Vec<f64>,
    /// For each loop: its nest's root.
    root: Vec<LoopId>,
}

impl<'a> Model<'a> {
    fn new(t: &'a Nests, m: &'a Machine) -> Model<'a> {
        let n = t.loops.len();
        let mut children = vec![Vec::new(); n];
        let mut root = vec![0; n];
        let mut speedup = vec![1.0; n];
        for (l, lp) in t.loops.iter().enumerate() {
            // Parents come first, so theirs are known.
            match lp.parent {
                Some(p) => {
                    children[p as usize].push(l as LoopId);
                    root[l] = root[p as usize];
                    speedup[l] = speedup[p as usize];
                }
                None => root[l] = l as LoopId,
            }
            if lp.kind == LoopKind::Par && speedup[l] == 1.0 && lp.trips > 1 {
                let cores = f64::from(m.cores.max(1));
                let trips = lp.trips as f64;
                speedup[l] = trips / (trips / cores).ceil();
            }
        }
        let mut model = Model {
            t,
            m,
            children,
            in_registers: vec![false; t.accesses.len()],
            speedup,
            root,
        };
        model.find_register_tiles();
        model
    }

    fn trips(&self, l: LoopId) -> f64 {
        self.t.loops[l as usize].trips.max(1) as f64
    }

    fn bytes(&self, a: &Access) -> f64 {
        f64::from(self.t.buffers[a.buffer].bytes)
    }

    /// Marks the accesses to array accumulators that live in registers.
    fn find_register_tiles(&mut self) {
        let budget = f64::from(self.m.registers) * f64::from(self.m.lanes) * 4.0 * 0.75;
        for (r, lp) in self.t.loops.iter().enumerate() {
            let Some(Accumulator::Buffer {
                buffer: b,
                elements,
            }) = lp.accumulator
            else {
                continue;
            };
            if elements as f64 * f64::from(self.t.buffers[b].bytes) > budget {
                continue;
            }
            let mine: Vec<usize> = (0..self.t.accesses.len())
                .filter(|&k| {
                    let a = &self.t.accesses[k];
                    a.via.contains(&b) && self.inside(a.owner, r as LoopId)
                })
                .collect();
            let held = mine.iter().all(|&k| {
                let a = &self.t.accesses[k];
                a.lane_stride <= 1
                    && self
                        .t
                        .path(a.owner)
                        .into_iter()
                        .take_while(|l| *l != r as LoopId)
                        .all(|l| {
                            let inner = &self.t.loops[l as usize];
                            inner.kind.unrolled() || inner.trips <= 4
                        })
            });
            if held {
                for k in mine {
                    self.in_registers[k] = true;
                }
            }
        }
    }

    /// Whether loop `l` is `ancestor` or inside it.
    fn inside(&self, l: Option<LoopId>, ancestor: LoopId) -> bool {
        self.t.path(l).contains(&ancestor)
    }

    /// Whether an innermost loop's scalar work is vectorized by the compiler: a loop
    /// (not a reduction) over data read and written with unit stride or not at all.
    fn auto_vectorized(&self, l: LoopId) -> bool {
        let lp = &self.t.loops[l as usize];
        self.m.auto_vectorize
            && !lp.kind.reduction()
            && self.children[l as usize].is_empty()
            && lp.trips >= 4
            && self
                .t
                .accesses
                .iter()
                .filter(|a| a.owner == Some(l))
                .all(|a| a.lanes == 1 && a.stride(l).abs() <= 1)
    }

    /// Distinct cache lines `a` touches while the loops `varying` run.
    fn lines(&self, a: &Access, varying: &[LoopId]) -> f64 {
        let line = self.m.line;
        let bytes = self.bytes(a);
        let mut dims: Vec<(f64, f64)> = varying
            .iter()
            .filter_map(|l| {
                let s = a.stride(*l).unsigned_abs() as f64 * bytes;
                let t = self.trips(*l);
                (s > 0.0 && t > 1.0).then_some((s, t))
            })
            .collect();
        if a.lanes > 1 && a.lane_stride != 0 {
            dims.push((a.lane_stride.unsigned_abs() as f64 * bytes, a.lanes as f64));
        }
        let small: f64 = dims
            .iter()
            .filter(|(s, _)| *s < line)
            .map(|(s, t)| s * (t - 1.0))
            .sum();
        let big: f64 = dims
            .iter()
            .filter(|(s, _)| *s >= line)
            .map(|(_, t)| t)
            .product();
        let span: f64 = dims.iter().map(|(s, t)| s * (t - 1.0)).sum::<f64>() + bytes;
        let whole = (self.t.buffers[a.buffer].elements as f64 * bytes / line)
            .ceil()
            .max(1.0);
        (((small + bytes) / line).ceil() * big)
            .min((span / line).ceil() + 1.0)
            .min(whole)
    }

    /// The accesses (distinct data: a read and a write of the same elements count
    /// once) inside loop `l`, or outside all loops for `None`, with the loops between
    /// each and `l`.
    fn footprint_lines(&self, l: LoopId) -> f64 {
        let mut seen: FxHashSet<DataKey> = FxHashSet::default();
        let mut total = 0.0;
        for (k, a) in self.t.accesses.iter().enumerate() {
            if self.in_registers[k] {
                continue;
            }
            let path = self.t.path(a.owner);
            let Some(at) = path.iter().position(|x| *x == l) else {
                continue;
            };
            let key = (a.buffer, a.offset, a.strides.clone(), a.lanes);
            if !seen.insert(key) {
                continue;
            }
            total += self.lines(a, &path[..at]);
        }
        total
    }

    fn estimate(&self) -> Estimate {
        let mut nests: Vec<NestEstimate> = Vec::new();
        let mut index: FxHashMap<Option<LoopId>, usize> = FxHashMap::default();
        let mut nest_of = |root: Option<LoopId>, nests: &mut Vec<NestEstimate>| {
            *index.entry(root).or_insert_with(|| {
                nests.push(NestEstimate {
                    root,
                    ..NestEstimate::default()
                });
                nests.len() - 1
            })
        };
        // Each loop body's footprint, once.
        let footprints: Vec<f64> = (0..self.t.loops.len())
            .map(|l| self.footprint_lines(l as LoopId))
            .collect();

        // Arithmetic, loop bookkeeping, latency, parallel starts.
        let lanes = f64::from(self.m.lanes);
        let root_nest = nest_of(None, &mut nests);
        let w = &self.t.work;
        nests[root_nest].compute +=
            (w.scalar + w.vector * (f64::from(w.lanes) / lanes).ceil()) / 2.0;
        for (l, lp) in self.t.loops.iter().enumerate() {
            let id = l as LoopId;
            let n = nest_of(Some(self.root[l]), &mut nests);
            let iterations = self.t.iterations(id);
            let par = self.speedup[l];
            let vector = lp.work.vector * (f64::from(lp.work.lanes) / lanes).ceil();
            let scalar = if self.auto_vectorized(id) {
                lp.work.scalar / lanes.min(lp.trips as f64)
            } else {
                lp.work.scalar
            };
            // A multiply and an add are one fused instruction.
            let instructions = (vector + scalar) / 2.0;
            nests[n].compute += iterations * instructions / self.m.fma_per_cycle / par;
            nests[n].issue += iterations * instructions / par;
            if !lp.kind.unrolled() && lp.trips > 1 {
                // Counter, comparison, branch (per vector in a vectorized loop).
                let per = if self.auto_vectorized(id) {
                    lanes.min(lp.trips as f64)
                } else {
                    1.0
                };
                nests[n].issue += iterations * 3.0 / per / par;
            }
            if lp.kind == LoopKind::Par && lp.trips > 1 {
                let starts = iterations / lp.trips as f64;
                let fork = self.m.fork_us * 1e3 * self.m.ghz;
                // A parallel loop inside another starts on each core at once.
                nests[n].fork += starts * fork / self.speedup_of_parent(id);
            }
            nests[n].latency += self.latency(id) / par;
        }

        // Loads and stores, and the traffic of each cache level.
        for (k, a) in self.t.accesses.iter().enumerate() {
            if self.in_registers[k] {
                continue;
            }
            let n = match a.owner {
                Some(l) => nest_of(Some(self.root[l as usize]), &mut nests),
                None => root_nest,
            };
            let par = a.owner.map_or(1.0, |l| self.speedup[l as usize]);
            let path = self.t.path(a.owner);
            let executions = self.executions(a, &path);
            let per = self.accesses_per_execution(a, &path);
            let instructions = executions * per / par;
            if a.write {
                nests[n].stores += instructions / self.m.stores_per_cycle;
            } else {
                nests[n].loads += instructions / self.m.loads_per_cycle;
            }
            nests[n].issue += instructions;
            for level in 0..3 {
                let cap = self.m.caches[level].bytes * 0.7 / self.m.line;
                // The loops whose one iteration fits: the innermost ones up to the
                // first that does not.
                let fits = path
                    .iter()
                    .take_while(|l| footprints[**l as usize] <= cap)
                    .count();
                let outside: f64 = path[fits..].iter().map(|l| self.trips(*l)).product();
                let misses = self.lines(a, &path[..fits]) * outside;
                let shared = level == 2 && self.m.caches[2].shared;
                nests[n].traffic[level] += misses / if shared { 1.0 } else { par };
            }
        }

        let bytes: f64 = self
            .t
            .buffers
            .iter()
            .map(|b| b.elements as f64 * f64::from(b.bytes))
            .sum();
        // Data that fits in a level stays there from the previous run.
        let resident: Vec<bool> = self
            .m
            .caches
            .iter()
            .map(|c| self.m.warm && bytes <= c.bytes * 0.7)
            .collect();
        let mut ms = 0.0;
        for nest in &mut nests {
            for (level, warm) in resident.iter().enumerate() {
                if *warm {
                    nest.traffic[level] = 0.0;
                }
            }
            let mut bounds = vec![
                nest.compute,
                nest.issue / self.m.issue_width,
                nest.loads,
                nest.stores,
                nest.latency,
            ];
            for (level, cache) in self.m.caches.iter().enumerate() {
                bounds.push(nest.traffic[level] * self.m.line / cache.fill_bytes_per_cycle);
            }
            let max = bounds.iter().cloned().fold(0.0, f64::max);
            let rest: f64 = bounds.iter().sum::<f64>() - max;
            nest.cycles = max + 0.1 * rest + nest.fork;
            ms += nest.cycles / (self.m.ghz * 1e6);
        }
        Estimate {
            ms,
            ops: self.t.ops(),
            nests,
        }
    }

    fn speedup_of_parent(&self, l: LoopId) -> f64 {
        self.t.loops[l as usize]
            .parent
            .map_or(1.0, |p| self.speedup[p as usize])
    }

    /// How many times `a` runs: its loop's iterations, except that a read of an input
    /// that does not move with the innermost loops runs once for all their iterations.
    fn executions(&self, a: &Access, path: &[LoopId]) -> f64 {
        let hoisted = if !a.write && self.t.buffers[a.buffer].role == Role::Input {
            path.iter().take_while(|l| a.stride(**l) == 0).count()
        } else {
            0
        };
        path[hoisted..].iter().map(|l| self.trips(*l)).product()
    }

    /// Load or store instructions per execution of `a`.
    fn accesses_per_execution(&self, a: &Access, path: &[LoopId]) -> f64 {
        let bytes = self.bytes(a);
        let vector_bytes = f64::from(self.m.lanes) * 4.0;
        match (a.lanes, a.lane_stride) {
            (1, _) => match path.first() {
                Some(l) if self.auto_vectorized(*l) && a.stride(*l) != 0 => {
                    bytes / vector_bytes.min(bytes * self.trips(*l))
                }
                _ => 1.0,
            },
            (_, 0) => 1.0,
            (n, 1) => (n as f64 * bytes / vector_bytes).ceil(),
            // A gather: a load and an insert into the vector per lane (what a strided
            // vector read compiles to without gather instructions), slower than the
            // scalar loads it replaces.
            (n, _) => 2.0 * n as f64,
        }
    }

    /// The cycles reduction `l` waits for its accumulator, in all: each step waits
    /// for the previous one's additions (its independent accumulators, vectors of a
    /// register tile, wait together); the next execution of the whole reduction
    /// overlaps with it when it is short enough to be in flight at once.
    fn latency(&self, l: LoopId) -> f64 {
        let lp = &self.t.loops[l as usize];
        let vector_bytes = f64::from(self.m.lanes) * 4.0;
        let chains = match lp.accumulator {
            Some(Accumulator::Register(lanes)) => {
                (f64::from(lanes) / f64::from(self.m.lanes)).ceil()
            }
            Some(Accumulator::Buffer {
                buffer: b,
                elements,
            }) => {
                let held = (0..self.t.accesses.len()).any(|k| {
                    let a = &self.t.accesses[k];
                    self.in_registers[k] && a.via.contains(&b) && self.inside(a.owner, l)
                });
                if !held {
                    return 0.0; // in memory: many independent elements per step
                }
                (elements as f64 * f64::from(self.t.buffers[b].bytes) / vector_bytes).ceil()
            }
            None => return 0.0,
        };
        let steps = lp.trips.max(1) as f64;
        let executions = self.t.iterations(l) / steps;
        // The step's accumulations, and about two other instructions each.
        let in_flight = steps * chains * 3.0;
        let overlap = (self.m.window / in_flight).max(1.0);
        executions * steps * self.m.fma_latency / overlap
    }
}

/// The model as a search cost (`--cost model`): each program is made low-level by
/// `defaultLowering` (what the bridge compiles), read as the loop nests of its loop
/// program ([`super::loop_nests`]), then estimated on the machine; the cost is the
/// estimate in milliseconds.
///
/// ```
/// use elevate_rise::{Program, search::ModelCost};
/// use elevate_strategies::search::Cost;
/// let p = Program::load("def f(x: 1024.f32) = x |> map(fun(v => v * 2.0))", None).unwrap();
/// let m = ModelCost::default().evaluate(&p.entry().term).unwrap();
/// assert!(m.cost > 0.0 && m.model == Some(m.cost));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ModelCost {
    /// The machine estimated for.
    pub machine: Machine,
    /// The budget of `defaultLowering`.
    pub budget: Budget,
}

impl Default for ModelCost {
    fn default() -> Self {
        ModelCost::new(Machine::default())
    }
}

impl ModelCost {
    /// The model for `machine`.
    pub fn new(machine: Machine) -> ModelCost {
        ModelCost {
            machine,
            budget: Budget::unlimited().steps(10_000_000),
        }
    }

    /// The estimate of `program` (typed, with concrete sizes), after `defaultLowering`.
    pub fn estimate(&self, program: &Term) -> Result<Estimate, Rejection> {
        let mut cx = Context::new(self.budget);
        let low = crate::rules::default_lowering()
            .apply(program, &mut cx)
            .map_err(|f| Rejection::new(Status::StrategyFailed, f.to_string()))?;
        loop_nests(&low)
            .map(|t| estimate_nests(&t, &self.machine))
            .map_err(|e| Rejection::new(Status::CompileFailed, e.to_string()))
    }
}

impl Cost<Term> for ModelCost {
    fn name(&self) -> String {
        "model".into()
    }

    fn evaluate(&self, program: &Term) -> Result<Measure, Rejection> {
        let e = self.estimate(program)?;
        Ok(Measure {
            cost: e.ms,
            model: Some(e.ms),
            ..Measure::default()
        })
    }

    fn evaluate_all(&self, programs: &[&Term], jobs: usize) -> Vec<Result<Measure, Rejection>> {
        elevate_strategies::search::parallel_map(programs, jobs, |p| self.evaluate(p))
    }
}
