//! What a program looks like to a learning agent: numbers that describe its loop
//! nests (`spec/search.md`: trip counts, loop order, vector width, parallel loops,
//! buffers read and written, arithmetic intensity), read off the loop nests of the
//! program after `defaultLowering` (its loop program, the one the bridge compiles).

use super::fingerprint::fingerprint;
use super::loop_nests::{loop_nests, LoopId, LoopKind, Nests};
use crate::rules::default_lowering;
use crate::term::Term;
use elevate_core::{Budget, Context};
use elevate_strategies::search::Features;
use rustc_hash::FxHashMap;
use std::sync::Mutex;

/// The nests described, heaviest first (a program's lighter nests beyond are left
/// out).
pub const NESTS: usize = 3;

/// The loops described per nest: its outermost loop, then inwards through the
/// heaviest loop at each level.
pub const DEPTH: usize = 6;

/// Numbers per loop: log2 of its trip count, and its kind.
const PER_LOOP: usize = 2;

/// Numbers per nest: its loops, then its vector lanes, parallel loops, log2 of the
/// bytes it reads and of those it writes, its arithmetic intensity (operations per
/// byte) and log10 of its operations.
pub const PER_NEST: usize = DEPTH * PER_LOOP + 6;

/// The most programs whose features are kept (forgotten all at once beyond).
const KEPT: usize = 1 << 14;

/// The loop-nest features of RISE programs, remembered per program (by fingerprint):
/// an agent meets the same programs again and again.
///
/// ```
/// use elevate_rise::{search::features::LoopNests, Program};
/// use elevate_strategies::search::Features;
/// let p = Program::load("def f(x: 64.32.f32) = x |> map(map(fun(v => v * 2.0)))", None).unwrap();
/// let numbers = LoopNests::default().describe(&p.entry().term);
/// assert_eq!(numbers.len(), LoopNests::default().len());
/// assert_eq!(numbers[..3], [1.0, 6.0, 1.0]); // one nest; 64 iterations, sequential
/// ```
#[derive(Default)]
pub struct LoopNests {
    seen: Mutex<FxHashMap<u64, Vec<f64>>>,
}

impl Features<Term> for LoopNests {
    /// The number of nests, then [`PER_NEST`] numbers for each of [`NESTS`] nests.
    fn len(&self) -> usize {
        1 + NESTS * PER_NEST
    }

    /// Zeros for a program that cannot be lowered and read as loop nests (a point of a space
    /// whose strategy failed).
    fn describe(&self, program: &Term) -> Vec<f64> {
        let key = fingerprint(program);
        if let Some(known) = self.seen.lock().ok().and_then(|s| s.get(&key).cloned()) {
            return known;
        }
        let numbers = lowered_nests(program)
            .map(|t| describe(&t))
            .unwrap_or_else(|| vec![0.0; self.len()]);
        if let Ok(mut seen) = self.seen.lock() {
            if seen.len() >= KEPT {
                seen.clear();
            }
            seen.insert(key, numbers.clone());
        }
        numbers
    }
}

fn lowered_nests(program: &Term) -> Option<Nests> {
    let mut cx = Context::new(Budget::unlimited().steps(10_000_000));
    let low = default_lowering().apply(program, &mut cx).ok()?;
    loop_nests(&low).ok()
}

/// A loop's kind as a number: sequential 1, parallel 2, unrolled 3, reduction 4,
/// unrolled reduction 5, copy 6.
fn kind_code(kind: LoopKind) -> f64 {
    match kind {
        LoopKind::Seq => 1.0,
        LoopKind::Par => 2.0,
        LoopKind::Unroll => 3.0,
        LoopKind::Reduce => 4.0,
        LoopKind::ReduceUnroll => 5.0,
        LoopKind::Copy => 6.0,
    }
}

fn describe(t: &Nests) -> Vec<f64> {
    let count = t.loops.len();
    // Each loop's operations in all its iterations, its inner loops' included.
    let mut work: Vec<f64> = (0..count)
        .map(|l| t.loops[l].work.ops() * t.iterations(l as LoopId))
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); count];
    for l in (0..count).rev() {
        if let Some(p) = t.loops[l].parent {
            work[p as usize] += work[l];
            children[p as usize].push(l);
        }
    }
    let mut roots: Vec<usize> = (0..count)
        .filter(|&l| t.loops[l].parent.is_none())
        .collect();
    roots.sort_by(|&a, &b| work[b].total_cmp(&work[a]).then(a.cmp(&b)));
    let mut out = vec![roots.len() as f64];
    for slot in 0..NESTS {
        let mut nest = vec![0.0; PER_NEST];
        if let Some(&root) = roots.get(slot) {
            describe_nest(t, root, &work, &children, &mut nest);
        }
        out.extend(nest);
    }
    out
}

fn describe_nest(t: &Nests, root: usize, work: &[f64], children: &[Vec<usize>], out: &mut [f64]) {
    // The heaviest path from the root inwards.
    let mut l = Some(root);
    let mut depth = 0;
    while let Some(at) = l {
        if depth < DEPTH {
            out[depth * PER_LOOP] = (t.loops[at].trips.max(1) as f64).log2();
            out[depth * PER_LOOP + 1] = kind_code(t.loops[at].kind);
        }
        depth += 1;
        l = children[at]
            .iter()
            .copied()
            .max_by(|&a, &b| work[a].total_cmp(&work[b]).then(b.cmp(&a)));
    }
    // The whole nest: every loop under the root.
    let in_nest = |l: Option<LoopId>| t.path(l).last().is_some_and(|r| *r as usize == root);
    let lanes = (0..t.loops.len())
        .filter(|&k| in_nest(Some(k as LoopId)))
        .map(|k| t.loops[k].work.lanes)
        .chain(
            t.accesses
                .iter()
                .filter(|a| in_nest(a.owner))
                .map(|a| a.lanes.max(1) as u32),
        )
        .max()
        .unwrap_or(1);
    let parallel = (0..t.loops.len())
        .filter(|&k| in_nest(Some(k as LoopId)) && t.loops[k].kind == LoopKind::Par)
        .count();
    let mut read = vec![false; t.buffers.len()];
    let mut written = vec![false; t.buffers.len()];
    for a in t.accesses.iter().filter(|a| in_nest(a.owner)) {
        if a.write {
            written[a.buffer] = true;
        } else {
            read[a.buffer] = true;
        }
    }
    let bytes = |marked: &[bool]| -> f64 {
        t.buffers
            .iter()
            .zip(marked)
            .filter(|(_, m)| **m)
            .map(|(b, _)| b.elements.max(0) as f64 * f64::from(b.bytes))
            .sum()
    };
    let (bytes_read, bytes_written) = (bytes(&read), bytes(&written));
    let base = DEPTH * PER_LOOP;
    out[base] = f64::from(lanes);
    out[base + 1] = parallel as f64;
    out[base + 2] = (1.0 + bytes_read).log2();
    out[base + 3] = (1.0 + bytes_written).log2();
    out[base + 4] = work[root] / (bytes_read + bytes_written).max(1.0);
    out[base + 5] = (1.0 + work[root]).log10();
}
