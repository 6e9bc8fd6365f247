//! The Transform script of a structured payload: the schedule the program encodes,
//! applied to its kernels (each `linalg` operation found by its `elevate.kernel`
//! number), built as operations ([`crate::ir`]).

use super::emit::matmul_dims;
use crate::ir::{Attr, Block, Op, Type, Value, TRANSFORM_ENTRY};
use crate::loop_program::LoopKind;
use crate::loop_program::{Buf, DimExpr, Kernel, Operand, Reduction, ScheduledLoop};
use elevate_rise::types::Scalar;

/// The type of every handle.
pub(crate) const ANY: &Type = &Type::AnyOp;

/// `vector.lower_contraction`'s strategies (`VectorContractLowering`): outer
/// products, and a broadcast and an FMA per vector of lanes.
const OUTER_PRODUCT: i64 = 2;
const PARALLEL_ARITH: i64 = 3;

/// Output tiles up to this size are promoted to a buffer of their own (one per tile:
/// the accumulator block stays in the L1 cache, without the output's row stride).
const PROMOTE_LIMIT_BYTES: i64 = 256 * 1024;

/// Promoted tiles up to this size are on the stack: a register tile's accumulators
/// (384 bytes for 6 x 16) are promoted once per step of its loops, thousands of times
/// a call, and the stack costs nothing to allocate (an OpenMP thread's stack is
/// megabytes).
const ALLOCA_LIMIT_BYTES: i64 = 16 * 1024;

/// A kernel the program does not schedule runs across threads from this many
/// elements on (below, starting the threads costs more than the copy).
const FREE_PARALLEL_ELEMENTS: i64 = 1 << 16;

/// The bridge's schedule for a kernel no loop of the program writes (a copy or a
/// fill it adds): its last dimension in vectors of up to 16 lanes where they divide
/// it and every operand reads it contiguously (a copy out of a blocked layout would
/// gather), and its first across threads where the program runs loops in parallel
/// and the kernel is large enough to pay for it. Without these, a padded operand's
/// copy and a result's rows are scalar and sequential: a pass over memory outside
/// every parallel loop, which bounds how a product scales with threads.
fn free_schedule(k: &Kernel, bufs: &[Buf], parallel: bool) -> Vec<ScheduledLoop> {
    if k.reduction.is_some() || k.dims.iter().any(|d| d.reduction) {
        return k.schedule.clone();
    }
    let Some(last) = k.dims.len().checked_sub(1) else {
        return k.schedule.clone();
    };
    // (As the program's own vectors are: of floats, whose operations all lower.)
    let floats = k
        .inputs
        .iter()
        .chain(&k.outs)
        .all(|o| bufs[o.buf].scalar == Scalar::F32);
    let contiguous = k
        .inputs
        .iter()
        .chain(&k.outs)
        .all(|o| reads_contiguously(o, last));
    let extents: Vec<i64> = k.dims.iter().map(|d| d.extent).collect();
    copy_schedule(&extents, parallel, floats && contiguous && !k.checks())
}

/// Whether consecutive values of dimension `d` are consecutive elements of operand
/// `o` (or `o` does not depend on `d`).
fn reads_contiguously(o: &Operand, d: usize) -> bool {
    let mentions = |e: &DimExpr| e.terms.iter().any(|(x, _)| *x == d);
    let innermost = o.map.last().is_some_and(|e| e.terms == [(d, 1)]);
    match &o.strided {
        _ if !o.map.iter().any(mentions) => true,
        Some(view) => innermost && view.dims.last().is_some_and(|(_, stride)| *stride == 1),
        None => innermost && o.map[..o.map.len() - 1].iter().all(|e| !mentions(e)),
    }
}

/// The operations that schedule kernel `n`'s fill of its output (`extents`) as
/// [`copy_schedule`] does a copy, across threads.
fn fill_script(ops: &mut Vec<Op>, n: usize, extents: &[i64], floats: bool) {
    let mut h = format!("%fill{n}");
    ops.push(matching(&h, Some("linalg.fill"), Some(("elevate.fill", n))));
    let mut tile = extents.to_vec();
    for (j, st) in copy_schedule(extents, true, floats).iter().enumerate() {
        if st.kind == LoopKind::Lane || st.trips <= 1 {
            continue;
        }
        let mut sizes = vec![0i64; extents.len()];
        sizes[st.dim] = st.step;
        let (t, l) = (format!("%fill{n}t{j}"), format!("%fill{n}l{j}"));
        ops.push(tiling(&t, &l, &h, st.kind, &sizes));
        tile[st.dim] = st.step;
        h = t;
    }
    if floats {
        ops.push(vectorize(&h, &tile));
    }
}

/// `transform.structured.match` in `%root` of the operations named `name` (any, if
/// `None`) that carry `attribute` (a kernel's or a fill's number), as handle `h`.
pub(crate) fn matching(h: &str, name: Option<&str>, attribute: Option<(&str, usize)>) -> Op {
    let mut m = Op::new("transform.structured.match").operand("%root", ANY);
    if let Some((key, n)) = attribute {
        let number = Attr::i64(n as i64);
        m = m.prop("op_attrs", Attr::Dict(vec![(key.to_string(), number)]));
    }
    if let Some(name) = name {
        m = m.prop("ops", Attr::names(&[name]));
    }
    m.result(h, ANY)
}

/// `transform.structured.match` in `%root` of the operations marked `mark` (a unit
/// attribute), as handle `h`.
fn matching_unit(h: &str, mark: &str) -> Op {
    Op::new("transform.structured.match")
        .operand("%root", ANY)
        .prop("op_attrs", Attr::Dict(vec![(mark.to_string(), Attr::Unit)]))
        .result(h, ANY)
}

/// `array<i1: false, ...>`: no size of `n` is scalable.
fn fixed_sizes(n: usize) -> Attr {
    Attr::Bools(vec![false; n])
}

/// The tiling of `h` by `sizes` (one of them not 0) into `t` and its loop `l`: across
/// threads for a parallel loop (`scf.forall`), a sequential loop otherwise.
pub(crate) fn tiling(t: &str, l: &str, h: &str, kind: LoopKind, sizes: &[i64]) -> Op {
    let op = if kind.is_parallel() {
        Op::new("transform.structured.tile_using_forall")
            .prop("operandSegmentSizes", Attr::segments(&[1, 0, 0, 0, 0]))
            .prop("static_tile_sizes", Attr::I64s(sizes.to_vec()))
    } else {
        Op::new("transform.structured.tile_using_for")
            .prop("scalable_sizes", fixed_sizes(sizes.len()))
            .prop("static_sizes", Attr::I64s(sizes.to_vec()))
    };
    op.operand(h, ANY).result(t, ANY).result(l, ANY)
}

/// The vectorization of `h` in vectors of `sizes`.
pub(crate) fn vectorize(h: &str, sizes: &[i64]) -> Op {
    Op::new("transform.structured.vectorize")
        .operand(h, ANY)
        .prop("scalable_sizes", fixed_sizes(sizes.len()))
        .prop("static_vector_sizes", Attr::I64s(sizes.to_vec()))
}

/// `transform.apply_patterns` of `patterns` (each a name and its attributes) to
/// `handle`.
fn patterns(handle: &str, patterns: Vec<(&str, Vec<(&str, Attr)>)>) -> Op {
    let ops = patterns
        .into_iter()
        .map(|(name, props)| {
            props.into_iter().fold(
                Op::new(format!("transform.apply_patterns.{name}")),
                |op, (k, v)| op.prop(k, v),
            )
        })
        .collect();
    Op::new("transform.apply_patterns")
        .operand(handle, ANY)
        .prop("max_iterations", Attr::i64(-1))
        .prop("max_num_rewrites", Attr::i64(-1))
        .region(Block::new(Vec::new(), ops))
}

/// [`free_schedule`] for an element-wise nest of `extents` (a copy or a fill), in
/// vectors where `vectors`.
fn copy_schedule(extents: &[i64], parallel: bool, vectors: bool) -> Vec<ScheduledLoop> {
    let Some(last) = extents.len().checked_sub(1) else {
        return Vec::new();
    };
    let elements = extents.iter().fold(1i64, |n, e| n.saturating_mul(*e));
    let step = |dim, step, trips, kind| ScheduledLoop {
        dim,
        step,
        trips,
        kind,
        array_acc: false,
    };
    let mut schedule = Vec::new();
    for (d, &e) in extents.iter().enumerate().take(last) {
        let threads = d == 0 && parallel && elements >= FREE_PARALLEL_ELEMENTS;
        let kind = if threads {
            LoopKind::Par
        } else {
            LoopKind::Seq
        };
        schedule.push(step(d, 1, e, kind));
    }
    let e = extents[last];
    match [16, 8, 4].into_iter().find(|w| vectors && e % w == 0) {
        Some(w) => {
            schedule.push(step(last, w, e / w, LoopKind::Seq));
            schedule.push(step(last, 1, w, LoopKind::Lane));
        }
        None => schedule.push(step(last, 1, e, LoopKind::Seq)),
    }
    schedule
}

/// The unrolling of the loops marked `mark`, each by its factor.
fn unroll(ops: &mut Vec<Op>, unrolls: &[(String, i64)]) {
    for (j, (mark, factor)) in unrolls.iter().enumerate() {
        let u = format!("%u{j}");
        ops.push(matching_unit(&u, mark));
        ops.push(
            Op::new("transform.loop.unroll")
                .operand(u, ANY)
                .prop("factor", Attr::i64(*factor)),
        );
    }
}

/// The Transform script: each kernel tiled loop by loop as the program nests its
/// loops (`scf.forall` for `mapPar`), its output tile promoted to a local buffer where
/// the program accumulates into an array, vectorized where the program's innermost
/// loops are vector lanes (with the unrolled loops inside them), unrolled where the
/// program unrolls; then the vector operations lowered to FMAs and the accumulators
/// kept in registers (redundant transfers hoisted out of loops).
pub(crate) fn transform_script(kernels: &[Kernel], bufs: &[Buf]) -> Op {
    let mut lines: Vec<Op> = Vec::new();
    let mut unrolls: Vec<(String, i64)> = Vec::new();
    let mut vectorized = false;
    // Whether a vectorized operation reduces over more than one element per step.
    let mut wide_reduction = false;
    let parallel = kernels
        .iter()
        .any(|k| k.schedule.iter().any(|st| st.kind.is_parallel()));
    for (n, k) in kernels.iter().enumerate() {
        let own_schedule;
        let schedule = if k.free {
            own_schedule = free_schedule(k, bufs, parallel);
            &own_schedule
        } else {
            &k.schedule
        };
        let matmul = matmul_dims(k);
        let op = if matmul.is_some() {
            "linalg.matmul"
        } else {
            "linalg.generic"
        };
        // Position of each dimension in the op's tile sizes.
        let position = |d: usize| match matmul {
            Some(m) => m.iter().position(|x| *x == d).unwrap_or(d),
            None => d,
        };
        let mut h = format!("%k{n}");
        lines.push(matching(&h, Some(op), Some(("elevate.kernel", n))));
        // The innermost loops that are vector lanes and unrolled reductions: one vector
        // operation (the contraction's lowering unrolls the reduction).
        let plain = k.inputs.iter().chain(&k.outs).all(|o| {
            o.map
                .iter()
                .all(|e| e.c == 0 && e.terms.len() <= 1 && e.terms.iter().all(|t| t.1 == 1))
        });
        let tail_start = schedule
            .iter()
            .rposition(|st| !matches!(st.kind, LoopKind::Lane | LoopKind::ReduceUnroll))
            .map_or(0, |i| i + 1);
        // (A fold's step is no operation the vectorizer knows how to reduce.)
        let fold = matches!(k.reduction, Some(Reduction::Fold(_)));
        // (Nor is a read at an index computed from data, or a checked division.)
        let vector_tail = plain
            && !fold
            && !k.checks()
            && schedule[tail_start..]
                .iter()
                .any(|st| st.kind == LoopKind::Lane);
        let tiled = if vector_tail {
            &schedule[..tail_start]
        } else {
            &schedule[..]
        };
        // The current tile's size in each dimension.
        let mut tile: Vec<i64> = k.dims.iter().map(|d| d.extent).collect();
        let mut promoted = false;
        // Promotion copies the output tile to a buffer of its own once the output is
        // tiled: the whole output (where the outer loops run once, or only the
        // reduction is tiled yet) stays where it is, rather than being copied in and out
        // around every step.
        let mut output_tiled = false;
        for (j, st) in tiled.iter().enumerate() {
            if st.trips <= 1 {
                continue;
            }
            if st.array_acc && !promoted && output_tiled {
                let bytes: i64 = k
                    .out()
                    .map
                    .iter()
                    .flat_map(|e| e.terms.iter().map(|(d, _)| tile[*d]))
                    .fold(1i64, |n, t| n.saturating_mul(t))
                    .saturating_mul(bufs[k.out().buf].scalar.bytes() as i64);
                if bytes <= PROMOTE_LIMIT_BYTES {
                    let p = format!("%k{n}p{j}");
                    let mut promote = Op::new("transform.structured.promote")
                        .operand(&h, ANY)
                        .prop(
                            "operands_to_promote",
                            Attr::Ints(vec![k.inputs.len() as i64]),
                        )
                        .prop("use_full_tile_buffers", Attr::Array(Vec::new()));
                    if bytes <= ALLOCA_LIMIT_BYTES {
                        promote = promote.prop("use_alloca", Attr::Unit);
                    }
                    lines.push(promote.result(&p, ANY));
                    h = p;
                    promoted = true;
                }
            }
            let mut sizes = vec![0i64; k.dims.len()];
            sizes[position(st.dim)] = st.step;
            let (t, l) = (format!("%k{n}t{j}"), format!("%k{n}l{j}"));
            lines.push(tiling(&t, &l, &h, st.kind, &sizes));
            if matches!(st.kind, LoopKind::Unroll | LoopKind::ReduceUnroll) {
                let mark = format!("elevate.unroll_{n}_{j}");
                lines.push(
                    Op::new("transform.annotate")
                        .operand(&l, ANY)
                        .prop("name", Attr::string(&mark)),
                );
                unrolls.push((mark, st.trips));
            }
            tile[st.dim] = st.step;
            output_tiled |= !k.dims[st.dim].reduction;
            h = t;
        }
        if vector_tail {
            let mut sizes = vec![0i64; k.dims.len()];
            for (d, size) in tile.iter().enumerate() {
                sizes[position(d)] = *size;
            }
            lines.push(vectorize(&h, &sizes));
            vectorized = true;
            wide_reduction |= tile
                .iter()
                .zip(&k.dims)
                .any(|(size, dim)| dim.reduction && *size > 1);
        }
        // A large reduction's start values, written before it runs, are a pass over
        // its output: across threads too where the program runs loops in parallel.
        if let (true, Some(Reduction::Combine(..)), [out]) = (parallel, &k.reduction, &k.outs[..]) {
            let extents: Vec<i64> = out.window.iter().map(|(_, size)| *size).collect();
            let elements = extents.iter().fold(1i64, |n, e| n.saturating_mul(*e));
            if elements >= FREE_PARALLEL_ELEMENTS {
                let floats = bufs[out.buf].scalar == Scalar::F32;
                fill_script(&mut lines, n, &extents, floats);
                vectorized |= floats;
            }
        }
    }
    if vectorized {
        lines.push(matching("%f", Some("func.func"), None));
        lines.push(patterns(
            "%f",
            vec![
                ("vector.reduction_to_contract", vec![]),
                ("vector.transfer_permutation_patterns", vec![]),
                ("canonicalization", vec![]),
            ],
        ));
        // A contraction that reduces one element per step (a register tile: the
        // reduction's loops outside the vector operation) is a broadcast and an FMA per
        // vector of lanes, whatever its rank (`parallelarith`); outer products are for
        // contractions that reduce several elements at once (the vectorized steps of
        // `par`), and unroll a rank-5 convolution's lanes one by one.
        let strategy = if wide_reduction {
            OUTER_PRODUCT
        } else {
            PARALLEL_ARITH
        };
        lines.push(patterns(
            "%f",
            vec![
                (
                    "vector.lower_contraction",
                    vec![("lowering_strategy", Attr::i32(strategy))],
                ),
                ("vector.lower_outerproduct", vec![]),
                ("canonicalization", vec![]),
            ],
        ));
        // Unrolled before the hoisting: a register tile's rows are then transfers at
        // constant positions, which the hoisting keeps in registers across every
        // reduction loop around them (a window's taps as well as a product's `k`).
        unroll(&mut lines, &unrolls);
        lines.push(
            Op::new("transform.structured.hoist_redundant_vector_transfers")
                .operand("%f", ANY)
                .result("%f2", ANY),
        );
        let rank_one = || ("max_transfer_rank", Attr::i64(1));
        lines.push(patterns(
            "%f2",
            vec![
                ("vector.lower_transfer", vec![rank_one()]),
                (
                    "vector.transfer_to_scf",
                    vec![("full_unroll", Attr::Bool(true)), rank_one()],
                ),
                ("canonicalization", vec![]),
            ],
        ));
    }
    if !vectorized {
        unroll(&mut lines, &unrolls);
    }
    script_module(lines)
}

/// The script module: `@__transform_main` on `%root` (the payload), running `ops`.
pub(crate) fn script_module(mut ops: Vec<Op>) -> Op {
    ops.push(Op::new("transform.yield"));
    let main = Op::new("transform.named_sequence")
        .prop(
            "arg_attrs",
            Attr::Array(vec![Attr::Dict(vec![(
                "transform.readonly".to_string(),
                Attr::Unit,
            )])]),
        )
        .prop(
            "function_type",
            Attr::Type(Type::Function(vec![ANY.clone()], Vec::new())),
        )
        .prop("sym_name", Attr::string(TRANSFORM_ENTRY))
        .region(Block::new(vec![Value::new("%root", ANY.clone())], ops));
    crate::ir::module(
        vec![main],
        vec![("transform.with_named_sequence", Attr::Unit)],
    )
}
