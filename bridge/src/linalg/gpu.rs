//! The Transform script of a structured payload for the GPU: each kernel's GPU maps
//! (`mapGlobal`, `mapWorkGroup`, `mapLocal`) become two `scf.forall` loops, one over
//! the blocks of the grid and one over the threads of a block
//! (`tile_using_forall ... mapping`), then a `gpu.launch` of its own
//! (`gpu.map_forall_to_blocks ... generate_gpu_launch`) whose threads are the inner
//! loop's (`gpu.map_nested_forall_to_threads`). A reduction's start values (its
//! output's fill) are a launch of their own before it. What the maps leave (the
//! sequential loops and reductions inside a thread) runs in each thread as loops.

use super::emit::matmul_dims;
use super::script::{matching, script_module, tiling, vectorize, ANY};
use crate::ir::{Attr, MemorySpace, Op};
use crate::loop_program::Kernel;
use crate::loop_program::{GpuLevel, LoopKind, ScalarExpr};

/// The threads of a block where the program leaves the block's size to the bridge
/// (`mapGlobal`): a multiple of the warp, and enough blocks for every SM.
const GLOBAL_BLOCK_THREADS: i64 = 256;

/// The most shared memory a block has without opting in, in bytes.
const MAX_SHARED_BYTES: i64 = 48 * 1024;

/// The most elements of a thread's vector (its registers).
const MAX_THREAD_VECTOR: i64 = 64;

/// The most threads a block has on NVIDIA GPUs.
const MAX_BLOCK_THREADS: i64 = 1024;

/// What a tiling maps its loop to: blocks or threads, in dimension `x`, `y`, `z`.
fn mapping(level: Level, dims: &[u8]) -> Attr {
    let thread = level == Level::Thread;
    Attr::Array(
        dims.iter()
            .map(|&axis| Attr::GpuMapping { thread, axis })
            .collect(),
    )
}

/// What a GPU loop maps to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Block,
    Thread,
}

/// The tiling of `h` by `sizes` into `t` and its `scf.forall` `l`, mapped by `map`.
fn forall(t: &str, l: &str, h: &str, sizes: &[i64], map: Attr) -> Op {
    Op::new("transform.structured.tile_using_forall")
        .prop("mapping", map)
        .prop("operandSegmentSizes", Attr::segments(&[1, 0, 0, 0, 0]))
        .prop("static_tile_sizes", Attr::I64s(sizes.to_vec()))
        .operand(h, ANY)
        .result(t, ANY)
        .result(l, ANY)
}

/// The launch of the blocks of forall `l` (handle `launch`), its threads those of the
/// nested forall, `block` of them in each dimension.
fn launch(ops: &mut Vec<Op>, l: &str, launch: &str, block: [i64; 3]) {
    ops.push(
        Op::new("transform.gpu.map_forall_to_blocks")
            .prop("generate_gpu_launch", Attr::Unit)
            .operand(l, ANY)
            .result(launch, ANY),
    );
    ops.push(
        Op::new("transform.gpu.map_nested_forall_to_threads")
            .prop("block_dims", Attr::I64s(block.to_vec()))
            .prop("sync_after_distribute", Attr::Bool(true))
            .prop("warp_size", Attr::i64(32))
            .operand(launch, ANY)
            .result(format!("{launch}t"), ANY),
    );
}

/// The largest divisor of `n` not above `most`.
fn divisor_up_to(n: i64, most: i64) -> i64 {
    (1..=most.min(n).max(1))
        .rev()
        .find(|d| n % d == 0)
        .unwrap_or(1)
}

/// The GPU script, or why a kernel cannot run on the GPU.
pub(crate) fn gpu_script(kernels: &[Kernel]) -> Result<Op, String> {
    let mut ops = Vec::new();
    for (n, k) in kernels.iter().enumerate() {
        kernel_script(&mut ops, n, k)?;
    }
    Ok(script_module(ops))
}

/// Kernel `n`'s fills and its own launch.
fn kernel_script(ops: &mut Vec<Op>, n: usize, k: &Kernel) -> Result<(), String> {
    let gpu: Vec<_> = k
        .schedule
        .iter()
        .filter(|st| matches!(st.kind, LoopKind::Gpu(..)))
        .collect();
    let first_other = k
        .schedule
        .iter()
        .position(|st| !matches!(st.kind, LoopKind::Gpu(..)))
        .unwrap_or(k.schedule.len());
    // A copy the bridge adds (a result's rows, a padded operand) is the bridge's to
    // map, as its fills are.
    let parallel = k.reduction.is_none() && k.dims.iter().all(|d| !d.reduction);
    if gpu.is_empty() && k.free && parallel && !k.dims.is_empty() {
        let h = format!("%g{n}");
        ops.push(matching(
            &h,
            Some("linalg.generic"),
            Some(("elevate.kernel", n)),
        ));
        let extents: Vec<i64> = k.dims.iter().map(|d| d.extent).collect();
        mapped_by_bridge(ops, &h, &extents);
        return Ok(());
    }
    if gpu.is_empty() || k.free {
        return Err(format!(
            "kernel {n} is in no GPU map: on the GPU every kernel's outer loops are \
             `mapGlobal`, or `mapWorkGroup` and `mapLocal`"
        ));
    }
    if gpu.len() > first_other {
        return Err(format!(
            "kernel {n} has a GPU map inside a sequential loop or a reduction"
        ));
    }
    let lanes = vector_lanes(n, k)?;
    let position = |d: usize| match matmul_dims(k) {
        Some(m) => m.iter().position(|x| *x == d).unwrap_or(d),
        None => d,
    };
    let rank = k.dims.len();
    // Each loop's tile at the block level and at the thread level, and the threads of
    // a block in each dimension.
    let (mut blocks, mut threads) = (vec![0i64; rank], vec![0i64; rank]);
    let (mut block_ids, mut thread_ids) = (Vec::new(), Vec::new());
    let mut block_dims = [1i64; 3];
    let thread_loops: i64 = gpu
        .iter()
        .filter(|st| matches!(st.kind, LoopKind::Gpu(GpuLevel::Thread, _)))
        .map(|st| st.trips)
        .product();
    // Each global map's threads per block: x first (up to a warp where y and z share
    // the block), then y and z with what is left of the block.
    let mut budget = (GLOBAL_BLOCK_THREADS / thread_loops.max(1)).max(1);
    let mut globals: Vec<(u8, i64)> = gpu
        .iter()
        .filter_map(|st| match st.kind {
            LoopKind::Gpu(GpuLevel::Global, d) => Some((d, st.trips)),
            _ => None,
        })
        .collect();
    globals.sort();
    let several = globals.len() > 1;
    let mut per_block = [1i64; 3];
    for (d, trips) in globals {
        let most = if several && d == 0 {
            budget.min(32)
        } else {
            budget
        };
        let b = divisor_up_to(trips, most);
        budget = (budget / b).max(1);
        per_block[usize::from(d)] = b;
    }
    for st in &gpu {
        let LoopKind::Gpu(level, d) = st.kind else {
            continue;
        };
        let at = position(st.dim);
        let taken = |ids: &Vec<(usize, u8)>| ids.iter().any(|(_, x)| *x == d);
        match level {
            GpuLevel::Block => {
                if taken(&block_ids) {
                    return Err(format!(
                        "kernel {n} maps two loops to blocks in dimension {d}"
                    ));
                }
                blocks[at] = st.step;
                block_ids.push((at, d));
            }
            GpuLevel::Thread => {
                if taken(&thread_ids) {
                    return Err(format!(
                        "kernel {n} maps two loops to threads in dimension {d}"
                    ));
                }
                threads[at] = st.step;
                thread_ids.push((at, d));
                block_dims[usize::from(d)] = st.trips;
            }
            GpuLevel::Global => {
                if taken(&block_ids) || taken(&thread_ids) {
                    return Err(format!("kernel {n} maps two loops to dimension {d}"));
                }
                let b = per_block[usize::from(d)];
                blocks[at] = st.step * b;
                threads[at] = st.step;
                block_ids.push((at, d));
                thread_ids.push((at, d));
                block_dims[usize::from(d)] = b;
            }
        }
    }
    if block_dims.iter().product::<i64>() > MAX_BLOCK_THREADS {
        return Err(format!(
            "kernel {n} has blocks of {} threads, more than a GPU block takes ({MAX_BLOCK_THREADS})",
            block_dims.iter().product::<i64>()
        ));
    }
    let op = if matmul_dims(k).is_some() {
        "linalg.matmul"
    } else {
        "linalg.generic"
    };
    let by_position = |ids: &mut Vec<(usize, u8)>| {
        ids.sort();
        ids.iter().map(|(_, d)| *d).collect::<Vec<u8>>()
    };
    // The start values of a reduction: its outputs' fills, a launch of their own.
    if k.reduction.is_some() {
        let [out] = &k.outs[..] else {
            return Err(format!(
                "kernel {n} folds several accumulators, which the GPU target does not take yet"
            ));
        };
        let extents: Vec<i64> = out.window.iter().map(|(_, size)| *size).collect();
        fill_script(ops, n, &extents);
    }
    let h = format!("%g{n}");
    ops.push(matching(&h, Some(op), Some(("elevate.kernel", n))));
    if block_ids.is_empty() {
        // Only threads: one block of them.
        blocks = k.dims.iter().map(|d| d.extent).collect();
        block_ids.push((0, 0));
    }
    let (bt, bl) = (format!("%g{n}b"), format!("%g{n}bl"));
    let block_map = mapping(Level::Block, &by_position(&mut block_ids));
    ops.push(forall(&bt, &bl, &h, &blocks, block_map));
    let mut in_block = bt;
    if !k.shared.is_empty() {
        if thread_ids.is_empty() {
            return Err(format!(
                "kernel {n} stages inputs in shared memory (`toShared`) without threads in its blocks"
            ));
        }
        if let Some(i) = k.shared.iter().find(|i| k.inputs[**i].map.len() != 2) {
            return Err(format!(
                "kernel {n} stages its input {i} in shared memory, which the GPU target \
                 takes only for matrices"
            ));
        }
        // The reduction a tile at a time where the program splits it (the first
        // reduction loop inside the maps that steps by more than one); else what the
        // block reads at once (its tile and the halo around it, for a stencil).
        let tile = k.schedule[first_other..]
            .iter()
            .find(|st| k.dims[st.dim].reduction && st.step > 1);
        let mut sizes = vec![0i64; rank];
        if let Some(t) = tile {
            sizes[position(t.dim)] = t.step;
        }
        let extent = |d: usize| match blocks[position(d)] {
            0 => match tile {
                Some(t) if t.dim == d => t.step,
                _ => k.dims[d].extent,
            },
            b => b,
        };
        let bytes: i64 = k
            .shared
            .iter()
            .map(|i| {
                let elements: i64 = k.inputs[*i]
                    .map
                    .iter()
                    .map(|e| {
                        e.terms
                            .iter()
                            .map(|(d, c)| c.abs() * (extent(*d) - 1))
                            .sum::<i64>()
                            + 1
                    })
                    .product();
                elements.saturating_mul(scalar_bytes(k, *i))
            })
            .sum();
        if bytes > MAX_SHARED_BYTES {
            return Err(format!(
                "kernel {n} stages {bytes} bytes in each block's shared memory, more than a \
                 block has ({MAX_SHARED_BYTES}): split its reduction into smaller tiles"
            ));
        }
        let sizes = tile.is_some().then_some(&sizes[..]);
        in_block = staged(ops, n, &in_block, &bl, sizes, &k.shared, block_dims);
    }
    let mut per_thread = in_block;
    if !thread_ids.is_empty() {
        let (tt, tl) = (format!("%g{n}t"), format!("%g{n}tl"));
        let thread_map = mapping(Level::Thread, &by_position(&mut thread_ids));
        ops.push(forall(&tt, &tl, &per_thread, &threads, thread_map));
        per_thread = tt;
    }
    if lanes.is_some() {
        // Each thread's vector: what is left of each dimension in a thread.
        let mut sizes = vec![0i64; rank];
        for (d, dim) in k.dims.iter().enumerate() {
            let at = position(d);
            sizes[at] = [threads[at], blocks[at], dim.extent]
                .into_iter()
                .find(|s| *s > 0)
                .unwrap_or(1);
        }
        if sizes.iter().product::<i64>() > MAX_THREAD_VECTOR {
            return Err(format!(
                "kernel {n} computes vectors of {} elements in each thread, more than the \
                 GPU target takes ({MAX_THREAD_VECTOR})",
                sizes.iter().product::<i64>()
            ));
        }
        ops.push(vectorize(&per_thread, &sizes));
    }
    launch(ops, &bl, &format!("%g{n}launch"), block_dims);
    Ok(())
}

/// The lanes of kernel `n`'s vectors, if it computes on vectors: only where every loop
/// around them is a GPU map and every buffer reads and writes whole vectors (at a
/// multiple of the lanes, in its contiguous dimension), so that each is one aligned
/// vector load or store (`ld.global.v4`).
fn vector_lanes(n: usize, k: &Kernel) -> Result<Option<i64>, String> {
    let Some(lane) = k.schedule.iter().find(|st| st.kind == LoopKind::Lane) else {
        return Ok(None);
    };
    if k.schedule
        .iter()
        .any(|st| !matches!(st.kind, LoopKind::Gpu(..) | LoopKind::Lane))
    {
        return Err(format!(
            "kernel {n} computes on vectors inside a sequential loop or a reduction, which \
             the GPU target does not take yet"
        ));
    }
    let lanes = lane.trips;
    let whole = |o: &crate::loop_program::Operand| {
        let Some((last, rest)) = o.map.split_last() else {
            return true;
        };
        let plain = last.terms.as_slice() == [(lane.dim, 1)] && last.c == 0;
        let aligned = o.window.last().is_some_and(|(start, _)| start % lanes == 0);
        let elsewhere = rest
            .iter()
            .any(|e| e.terms.iter().any(|(d, _)| *d == lane.dim));
        let reads_lanes = o
            .map
            .iter()
            .any(|e| e.terms.iter().any(|(d, _)| *d == lane.dim));
        o.strided.is_none() && !o.expanded() && (!reads_lanes || (plain && aligned && !elsewhere))
    };
    if !k.inputs.iter().chain(&k.outs).all(whole) {
        return Err(format!(
            "kernel {n} reads or writes vectors that are not whole vectors of a buffer (a \
             stencil's taps, a transposed read), which the GPU target does not take yet"
        ));
    }
    Ok(Some(lanes))
}

/// Kernel `n`'s block-level operation `h` (in the block loop `bl`), a tile of its
/// reduction at a time where `sizes` says, its `shared` inputs' tiles copied into
/// shared memory (at each step) by the block's threads (`block` of them); returns the
/// operation on the staged tiles. The barriers are the thread mapping's: one after
/// each copy, one after the computation (before the next step's copies overwrite its
/// tiles).
fn staged(
    ops: &mut Vec<Op>,
    n: usize,
    h: &str,
    bl: &str,
    sizes: Option<&[i64]>,
    shared: &[usize],
    block: [i64; 3],
) -> String {
    let (kt, kl, p) = (format!("%g{n}k"), format!("%g{n}kl"), format!("%g{n}p"));
    let kt = match sizes {
        Some(sizes) => {
            ops.push(tiling(&kt, &kl, h, LoopKind::Reduce, sizes));
            kt
        }
        None => h.to_string(),
    };
    let list = shared.iter().map(|&k| k as i64).collect();
    ops.push(
        Op::new("transform.structured.promote")
            .operand(&kt, ANY)
            .prop("operands_to_promote", Attr::Ints(list))
            .prop("use_full_tile_buffers", Attr::Array(Vec::new()))
            .prop("memory_space", Attr::Space(MemorySpace::Workgroup))
            .result(&p, ANY),
    );
    // Each copy's last two dimensions over the block's threads in y and x.
    let copies = format!("%g{n}c");
    ops.push(
        Op::new("transform.structured.match")
            .operand(bl, ANY)
            .prop("ops", Attr::names(&["linalg.copy"]))
            .result(&copies, ANY),
    );
    let (ct, cl) = (format!("%g{n}ct"), format!("%g{n}cl"));
    ops.push(
        Op::new("transform.structured.tile_using_forall")
            .prop("mapping", mapping(Level::Thread, &[1, 0]))
            .prop("operandSegmentSizes", Attr::segments(&[1, 0, 0, 0, 0]))
            .prop("static_num_threads", Attr::I64s(vec![block[1], block[0]]))
            .operand(&copies, ANY)
            .result(&ct, ANY)
            .result(&cl, ANY),
    );
    p
}

/// The bytes of an element of kernel `k`'s input `i` (as its body loads it).
fn scalar_bytes(k: &Kernel, i: usize) -> i64 {
    for e in k.body.iter().flat_map(|b| b.nodes()) {
        if let ScalarExpr::Load(j, _, s) = e {
            if *j == i {
                return s.bytes() as i64;
            }
        }
    }
    8
}

/// The fill of kernel `n`'s output (`extents`), mapped by the bridge.
fn fill_script(ops: &mut Vec<Op>, n: usize, extents: &[i64]) {
    let h = format!("%f{n}");
    ops.push(matching(&h, Some("linalg.fill"), Some(("elevate.fill", n))));
    mapped_by_bridge(ops, &h, extents);
}

/// The operation of handle `h` over `extents` (every dimension parallel) as a launch
/// the bridge chooses: its last dimension on the threads of a block (up to 256), the
/// two before it on blocks, what is left a loop in each thread.
fn mapped_by_bridge(ops: &mut Vec<Op>, h: &str, extents: &[i64]) {
    let Some(last) = extents.len().checked_sub(1) else {
        return;
    };
    let b = divisor_up_to(extents[last], GLOBAL_BLOCK_THREADS);
    let mut blocks = vec![0i64; extents.len()];
    let mut threads = vec![0i64; extents.len()];
    blocks[last] = b;
    threads[last] = 1;
    let mut ids = vec![0u8];
    for (k, d) in (0..last).rev().take(2).zip([1u8, 2]) {
        blocks[k] = 1;
        ids.insert(0, d);
    }
    let (bt, bl, tt, tl) = (
        format!("{h}b"),
        format!("{h}bl"),
        format!("{h}t"),
        format!("{h}tl"),
    );
    ops.push(forall(&bt, &bl, h, &blocks, mapping(Level::Block, &ids)));
    ops.push(forall(
        &tt,
        &tl,
        &bt,
        &threads,
        mapping(Level::Thread, &[0]),
    ));
    launch(ops, &bl, &format!("{h}launch"), [b, 1, 1]);
}
