//! Kernels as MLIR text: the payload (`linalg.matmul` where the kernel is one,
//! `linalg.generic` otherwise, on memrefs) and the Transform script that applies the
//! program's schedule to them.

use super::eval::{LoopKind, SExpr};
use super::kernel::{Buf, DimExpr, Kernel, Operand, Reduction, ScheduledLoop};
use crate::boundary::TrapSite;
use crate::text::{binary_text, literal_text, memref_type, mlir_scalar, scalar_bytes};
use elevate_rise::prim::Prim;
use elevate_rise::types::Scalar;
use std::fmt::Write;

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

/// The lines that schedule kernel `n`'s fill of its output (`extents`) as
/// [`copy_schedule`] does a copy, across threads.
fn fill_script(lines: &mut Vec<String>, n: usize, extents: &[i64], floats: bool) {
    let any = "!transform.any_op";
    let mut h = format!("%fill{n}");
    lines.push(format!(
        "{h} = transform.structured.match ops{{[\"linalg.fill\"]}} attributes{{elevate.fill = {n} : i64}} in %root : ({any}) -> {any}"
    ));
    let mut tile = extents.to_vec();
    for (j, st) in copy_schedule(extents, true, floats).iter().enumerate() {
        if st.kind == LoopKind::Lane || st.trips <= 1 {
            continue;
        }
        let mut sizes = vec![0i64; extents.len()];
        sizes[st.dim] = st.step;
        let (t, l) = (format!("%fill{n}t{j}"), format!("%fill{n}l{j}"));
        lines.push(tiling_line(&t, &l, &h, st.kind, &sizes));
        tile[st.dim] = st.step;
        h = t;
    }
    if floats {
        lines.push(format!(
            "transform.structured.vectorize {h} vector_sizes [{}] : {any}",
            list(&tile)
        ));
    }
}

/// The line that tiles `h` by `sizes` into `t` and its loop `l`: across threads for a
/// parallel loop (`scf.forall`), a sequential loop otherwise.
fn tiling_line(t: &str, l: &str, h: &str, kind: LoopKind, sizes: &[i64]) -> String {
    let any = "!transform.any_op";
    let tiling = if kind == LoopKind::Par {
        "tile_using_forall"
    } else {
        "tile_using_for"
    };
    format!(
        "{t}, {l} = transform.structured.{tiling} {h} tile_sizes [{}] : ({any}) -> ({any}, {any})",
        list(sizes)
    )
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

/// The named operation a kernel is, if any: `linalg.matmul` with its dimensions
/// `(m, n, k)`.
pub(crate) fn matmul_dims(k: &Kernel) -> Option<[usize; 3]> {
    let simple =
        |e: &DimExpr| (e.c == 0 && e.terms.len() == 1 && e.terms[0].1 == 1).then(|| e.terms[0].0);
    let (Some(Reduction::Combine(Prim::Add, _)), 3, 2) =
        (&k.reduction, k.dims.len(), k.inputs.len())
    else {
        return None;
    };
    if k.inputs
        .iter()
        .chain([k.out()])
        .any(|o| o.expanded() || o.map.len() != 2)
    {
        return None;
    }
    let [SExpr::Bin(Prim::Mul, a, b)] = k.body.as_slice() else {
        return None;
    };
    let (SExpr::Load(0, _, s), SExpr::Load(1, _, s2)) = (&**a, &**b) else {
        return None;
    };
    if s != s2 || !s.is_float() {
        return None;
    }
    let (i, j) = (simple(&k.out().map[0])?, simple(&k.out().map[1])?);
    let (a0, a1) = (simple(&k.inputs[0].map[0])?, simple(&k.inputs[0].map[1])?);
    let (b0, b1) = (simple(&k.inputs[1].map[0])?, simple(&k.inputs[1].map[1])?);
    (a0 == i && b1 == j && a1 == b0 && k.dims[a1].reduction && i != j).then_some([i, j, a1])
}

fn list(xs: &[i64]) -> String {
    xs.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn dim_expr_text(e: &DimExpr) -> String {
    let mut parts: Vec<String> = e
        .terms
        .iter()
        .map(|(d, k)| match k {
            1 => format!("d{d}"),
            k => format!("d{d} * {k}"),
        })
        .collect();
    if e.c != 0 || parts.is_empty() {
        parts.push(e.c.to_string());
    }
    parts.join(" + ")
}

fn affine_map(rank: usize, map: &[DimExpr]) -> String {
    let dims: Vec<String> = (0..rank).map(|d| format!("d{d}")).collect();
    let results: Vec<String> = map.iter().map(dim_expr_text).collect();
    format!(
        "affine_map<({}) -> ({})>",
        dims.join(", "),
        results.join(", ")
    )
}

/// The payload function's body lines for the kernels: the allocations of the
/// program's own buffers, each kernel's lines (in order), the deallocations; and the
/// flop count.
pub(crate) struct PayloadText {
    pub(crate) allocs: Vec<String>,
    pub(crate) kernels: Vec<Vec<String>>,
    pub(crate) deallocs: Vec<String>,
    pub(crate) flops: u64,
    /// The operations that may trap (numbered after the function's first
    /// `trap_base`).
    pub(crate) traps: Vec<TrapSite>,
}

impl PayloadText {
    /// All the lines, in order.
    pub(crate) fn lines(self) -> Vec<String> {
        let mut lines = self.allocs;
        lines.extend(self.kernels.into_iter().flatten());
        lines.extend(self.deallocs);
        lines
    }
}

pub(crate) fn payload_lines(
    kernels: &[Kernel],
    bufs: &[Buf],
    allocated: &[usize],
    trap_base: usize,
) -> PayloadText {
    let mut traps = Vec::new();
    let mut allocs = Vec::new();
    let mut kernel_lines = Vec::new();
    let mut flops = 0u64;
    let mut fresh = 0usize;
    let mut name = |prefix: &str| {
        fresh += 1;
        format!("%{prefix}{fresh}")
    };
    for b in allocated {
        let buf = &bufs[*b];
        allocs.push(format!(
            "{} = memref.alloc() {{alignment = 64 : i64}} : {}",
            buf.name,
            memref_type(&buf.dims, buf.scalar)
        ));
    }
    for (n, k) in kernels.iter().enumerate() {
        kernel_lines.push(Vec::new());
        let lines = kernel_lines.last_mut().expect("pushed above");
        // Operands, reshaped where a buffer dimension is split into several.
        let mut view = |o: &Operand, lines: &mut Vec<String>| -> (String, String) {
            let buf = &bufs[o.buf];
            let (mut v, mut ty) = (buf.name.clone(), memref_type(&buf.dims, buf.scalar));
            let shape = o.shape();
            if let Some(st) = &o.strided {
                // The buffer's own offset (a parameter's view may start anywhere), plus
                // the first element read.
                let meta = name("meta");
                let rank = buf.dims.len();
                let off = format!("{meta}#1");
                let index_types = vec!["index"; 1 + 2 * rank].join(", ");
                lines.push(format!(
                    "{meta}:{} = memref.extract_strided_metadata {v} : {ty} -> memref<{}>, {index_types}",
                    2 + 2 * rank,
                    mlir_scalar(buf.scalar)
                ));
                let first = name("first");
                lines.push(format!("{first} = arith.constant {} : index", st.offset));
                let start = name("start");
                lines.push(format!("{start} = arith.addi {off}, {first} : index"));
                let sizes: Vec<i64> = st.dims.iter().map(|(n, _)| *n).collect();
                let strides: Vec<i64> = st.dims.iter().map(|(_, s)| *s).collect();
                // (An element at a constant position is a view of rank 0.)
                let shape: String = sizes.iter().map(|s| format!("{s}x")).collect();
                let to = format!(
                    "memref<{shape}{}, strided<[{}], offset: ?>>",
                    mlir_scalar(buf.scalar),
                    list(&strides)
                );
                let x = name("slide");
                lines.push(format!(
                    "{x} = memref.reinterpret_cast {v} to offset: [{start}], sizes: [{}], strides: [{}] : {ty} to {to}",
                    list(&sizes),
                    list(&strides)
                ));
                return (x, to);
            }
            if o.expanded() {
                let mut groups = Vec::new();
                let mut next = 0;
                for e in &o.expand {
                    let g: Vec<String> = (next..next + e.len()).map(|i| i.to_string()).collect();
                    next += e.len();
                    groups.push(format!("[{}]", g.join(", ")));
                }
                let to = memref_type(&shape, buf.scalar);
                let x = name("view");
                lines.push(format!(
                    "{x} = memref.expand_shape {v} [{}] output_shape [{}] : {ty} into {to}",
                    groups.join(", "),
                    list(&shape)
                ));
                (v, ty) = (x, to);
            }
            if o.windowed() {
                // Row-major strides of the shape, and the window's offset in elements.
                let mut strides = vec![1i64; shape.len()];
                for i in (0..shape.len().saturating_sub(1)).rev() {
                    strides[i] = strides[i + 1] * shape[i + 1];
                }
                let offsets: Vec<i64> = o.window.iter().map(|(off, _)| *off).collect();
                let sizes: Vec<i64> = o.window.iter().map(|(_, size)| *size).collect();
                let start: i64 = offsets.iter().zip(&strides).map(|(o, s)| o * s).sum();
                let to = format!(
                    "memref<{}x{}, strided<[{}], offset: {start}>>",
                    sizes
                        .iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                        .join("x"),
                    mlir_scalar(buf.scalar),
                    list(&strides)
                );
                let x = name("window");
                lines.push(format!(
                    "{x} = memref.subview {v}[{}] [{}] [{}] : {ty} to {to}",
                    list(&offsets),
                    list(&sizes),
                    list(&vec![1; sizes.len()])
                ));
                (v, ty) = (x, to);
            }
            (v, ty)
        };
        let ins: Vec<(String, String)> = k.inputs.iter().map(|o| view(o, lines)).collect();
        let outs: Vec<(String, String)> = k.outs.iter().map(|o| view(o, lines)).collect();
        let inits: &[_] = match &k.reduction {
            Some(Reduction::Combine(_, init)) => &[*init],
            Some(Reduction::Fold(inits)) => inits,
            None => &[],
        };
        for (init, out) in inits.iter().zip(&outs) {
            let c = name("init");
            let (text, s) = literal_text(*init);
            lines.push(format!("{c} = arith.constant {text} : {}", mlir_scalar(s)));
            lines.push(format!(
                "linalg.fill {{elevate.fill = {n} : i64}} ins({c} : {}) outs({} : {})",
                mlir_scalar(s),
                out.0,
                out.1
            ));
        }
        let iterations = k
            .dims
            .iter()
            .fold(1u64, |n, d| n.saturating_mul(d.extent.max(0) as u64));
        flops = flops.saturating_add(iterations.saturating_mul(float_ops(k) as u64));
        let names = |v: &[(String, String)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        let types = |v: &[(String, String)]| v.iter().map(|(_, t)| t.clone()).collect::<Vec<_>>();
        if matmul_dims(k).is_some() {
            lines.push(format!(
                "linalg.matmul {{elevate.kernel = {n} : i64}} ins({} : {}) outs({} : {})",
                names(&ins).join(", "),
                types(&ins).join(", "),
                outs[0].0,
                outs[0].1
            ));
            continue;
        }
        let rank = k.dims.len();
        let maps: Vec<String> = k
            .inputs
            .iter()
            .chain(&k.outs)
            .map(|o| affine_map(rank, &o.map))
            .collect();
        let iterators: Vec<&str> = k
            .dims
            .iter()
            .map(|d| {
                if d.reduction {
                    "\"reduction\""
                } else {
                    "\"parallel\""
                }
            })
            .collect();
        let ins_text = if ins.is_empty() {
            String::new()
        } else {
            format!(
                "ins({} : {}) ",
                names(&ins).join(", "),
                types(&ins).join(", ")
            )
        };
        lines.push(format!(
            "linalg.generic {{elevate.kernel = {n} : i64, indexing_maps = [{}], iterator_types = [{}]}} {ins_text}outs({} : {}) {{",
            maps.join(", "),
            iterators.join(", "),
            names(&outs).join(", "),
            types(&outs).join(", ")
        ));
        let out_scalars: Vec<&str> = k
            .outs
            .iter()
            .map(|o| mlir_scalar(bufs[o.buf].scalar))
            .collect();
        let args: Vec<String> = k
            .inputs
            .iter()
            .enumerate()
            .map(|(i, o)| format!("%in{i}: {}", mlir_scalar(bufs[o.buf].scalar)))
            .chain(
                out_scalars
                    .iter()
                    .enumerate()
                    .map(|(j, t)| format!("%acc{j}: {t}")),
            )
            .collect();
        lines.push(format!("^bb0({}):", args.join(", ")));
        let mut body = Body {
            lines: Vec::new(),
            next: 0,
            kernel: k,
            bufs,
            traps: &mut traps,
            trap_base,
        };
        let values: Vec<String> = k.body.iter().map(|b| body.expr(b)).collect();
        let results = match &k.reduction {
            Some(Reduction::Combine(op, _)) => {
                vec![body.binary(*op, "%acc0", &values[0], bufs[k.out().buf].scalar)]
            }
            _ => values,
        };
        lines.extend(body.lines.into_iter().map(|l| format!("  {l}")));
        lines.push(format!(
            "  linalg.yield {} : {}",
            results.join(", "),
            out_scalars.join(", ")
        ));
        lines.push("}".to_string());
    }
    let deallocs = allocated
        .iter()
        .map(|b| {
            let buf = &bufs[*b];
            format!(
                "memref.dealloc {} : {}",
                buf.name,
                memref_type(&buf.dims, buf.scalar)
            )
        })
        .collect();
    PayloadText {
        allocs,
        kernels: kernel_lines,
        deallocs,
        flops,
        traps,
    }
}

/// Floating-point operations per iteration of a kernel.
fn float_ops(k: &Kernel) -> usize {
    fn count(e: &SExpr) -> usize {
        match e {
            SExpr::Bin(_, a, b) => usize::from(a.scalar().is_float()) + count(a) + count(b),
            SExpr::Un(_, a) => usize::from(a.scalar().is_float()) + count(a),
            SExpr::Pick(c, a, b) => count(c) + count(a) + count(b),
            _ => 0,
        }
    }
    let combine = match k.reduction {
        Some(Reduction::Combine(..)) => usize::from(k.body[0].scalar().is_float()),
        _ => 0,
    };
    k.body.iter().map(count).sum::<usize>() + combine
}

/// A `linalg.generic` region's operations.
pub(super) struct Body<'a> {
    lines: Vec<String>,
    next: usize,
    pub(super) kernel: &'a Kernel,
    pub(super) bufs: &'a [Buf],
    /// The operations that may trap, found so far, after the first `trap_base` of the
    /// function's.
    pub(super) traps: &'a mut Vec<TrapSite>,
    pub(super) trap_base: usize,
}

impl Body<'_> {
    /// A line without a result.
    pub(super) fn push(&mut self, line: String) {
        self.lines.push(line);
    }

    /// A new value's name.
    pub(super) fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%b{}", self.next)
    }

    pub(super) fn op(&mut self, rhs: String) -> String {
        let x = self.fresh();
        self.lines.push(format!("{x} = {rhs}"));
        x
    }

    pub(super) fn expr(&mut self, e: &SExpr) -> String {
        match e {
            SExpr::Lit(l) => {
                let (text, s) = literal_text(*l);
                self.op(format!("arith.constant {text} : {}", mlir_scalar(s)))
            }
            SExpr::Param(name, _) => name.clone(),
            SExpr::Load(k, _, _) => format!("%in{k}"),
            SExpr::Gather(g) => self.gather(g),
            SExpr::Position(a) => self.position(a),
            SExpr::Checked { op, x, y, span } => {
                let s = x.scalar();
                let (x, y) = (self.expr(x), self.expr(y));
                self.checked_division(*op, &x, &y, s, *span)
            }
            SExpr::Bin(p, a, b) => {
                let s = a.scalar();
                let (x, y) = (self.expr(a), self.expr(b));
                self.binary(*p, &x, &y, s)
            }
            SExpr::Un(p, a) => {
                let s = a.scalar();
                let x = self.expr(a);
                let t = mlir_scalar(s);
                match (p, s.is_float()) {
                    (Prim::Neg, true) => self.op(format!("arith.negf {x} : {t}")),
                    (Prim::Neg, false) => {
                        let zero = self.op(format!("arith.constant 0 : {t}"));
                        self.op(format!("arith.subi {zero}, {x} : {t}"))
                    }
                    (Prim::Exp, _) if s == Scalar::F32 => {
                        crate::exp::exp_f32(&mut |rhs| self.op(rhs), &x, t)
                    }
                    (Prim::Exp, _) => self.op(format!("math.exp {x} : {t}")),
                    (Prim::Sqrt, _) => self.op(format!("math.sqrt {x} : {t}")),
                    (Prim::Abs, true) => self.op(format!("math.absf {x} : {t}")),
                    _ => self.op(format!("math.absi {x} : {t}")),
                }
            }
            SExpr::Pick(c, a, b) => {
                let t = mlir_scalar(a.scalar());
                let (c, x, y) = (self.expr(c), self.expr(a), self.expr(b));
                self.op(format!("arith.select {c}, {x}, {y} : {t}"))
            }
            // A fold's accumulator (numbered as its output).
            SExpr::Acc(j, _, _) => format!("%acc{j}"),
            SExpr::Red { .. } | SExpr::Fold { .. } | SExpr::Select { .. } => {
                unreachable!("kernel bodies have no reductions or guards")
            }
        }
    }

    fn binary(&mut self, p: Prim, x: &str, y: &str, s: Scalar) -> String {
        // The symbolic evaluation only builds binary nodes of binary primitives.
        let rhs = binary_text(p, x, y, s.is_float(), mlir_scalar(s))
            .unwrap_or_else(|| unreachable!("`{}` is not binary", p.name()));
        self.op(rhs)
    }
}

/// The unrolling of the loops marked `mark`, each by its factor.
fn unroll(lines: &mut Vec<String>, unrolls: &[(String, i64)]) {
    let any = "!transform.any_op";
    for (j, (mark, factor)) in unrolls.iter().enumerate() {
        lines.push(format!(
            "%u{j} = transform.structured.match attributes{{{mark}}} in %root : ({any}) -> {any}"
        ));
        lines.push(format!(
            "transform.loop.unroll %u{j} {{ factor = {factor} }} : {any}"
        ));
    }
}

/// The Transform script: each kernel tiled loop by loop as the program nests its
/// loops (`scf.forall` for `mapPar`), its output tile promoted to a local buffer where
/// the program accumulates into an array, vectorized where the program's innermost
/// loops are vector lanes (with the unrolled loops inside them), unrolled where the
/// program unrolls; then the vector operations lowered to FMAs and the accumulators
/// kept in registers (redundant transfers hoisted out of loops).
pub(crate) fn transform_script(kernels: &[Kernel], bufs: &[Buf]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "module attributes {{transform.with_named_sequence}} {{");
    let _ = writeln!(
        s,
        "  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{"
    );
    let mut lines: Vec<String> = Vec::new();
    let mut unrolls: Vec<(String, i64)> = Vec::new();
    let mut vectorized = false;
    // Whether a vectorized operation reduces over more than one element per step.
    let mut wide_reduction = false;
    let any = "!transform.any_op";
    let parallel = kernels
        .iter()
        .any(|k| k.schedule.iter().any(|st| st.kind == LoopKind::Par));
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
        lines.push(format!(
            "{h} = transform.structured.match ops{{[\"{op}\"]}} attributes{{elevate.kernel = {n} : i64}} in %root : ({any}) -> {any}"
        ));
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
                    .saturating_mul(scalar_bytes(bufs[k.out().buf].scalar) as i64);
                if bytes <= PROMOTE_LIMIT_BYTES {
                    let p = format!("%k{n}p{j}");
                    let stack = if bytes <= ALLOCA_LIMIT_BYTES {
                        ", use_alloca"
                    } else {
                        ""
                    };
                    lines.push(format!(
                        "{p} = transform.structured.promote {h} {{ operands_to_promote = [{}]{stack} }} : ({any}) -> {any}",
                        k.inputs.len()
                    ));
                    h = p;
                    promoted = true;
                }
            }
            let mut sizes = vec![0i64; k.dims.len()];
            sizes[position(st.dim)] = st.step;
            let (t, l) = (format!("%k{n}t{j}"), format!("%k{n}l{j}"));
            lines.push(tiling_line(&t, &l, &h, st.kind, &sizes));
            if matches!(st.kind, LoopKind::Unroll | LoopKind::ReduceUnroll) {
                let mark = format!("elevate.unroll_{n}_{j}");
                lines.push(format!("transform.annotate {l} \"{mark}\" : {any}"));
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
            lines.push(format!(
                "transform.structured.vectorize {h} vector_sizes [{}] : {any}",
                list(&sizes)
            ));
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
        lines.push(format!(
            "%f = transform.structured.match ops{{[\"func.func\"]}} in %root : ({any}) -> {any}"
        ));
        let patterns = |lines: &mut Vec<String>, handle: &str, ps: &[&str]| {
            lines.push(format!("transform.apply_patterns to {handle} {{"));
            for p in ps {
                lines.push(format!("  transform.apply_patterns.{p}"));
            }
            lines.push(format!("}} : {any}"));
        };
        patterns(
            &mut lines,
            "%f",
            &[
                "vector.reduction_to_contract",
                "vector.transfer_permutation_patterns",
                "canonicalization",
            ],
        );
        // A contraction that reduces one element per step (a register tile: the
        // reduction's loops outside the vector operation) is a broadcast and an FMA per
        // vector of lanes, whatever its rank (`parallelarith`); outer products are for
        // contractions that reduce several elements at once (the vectorized steps of
        // `par`), and unroll a rank-5 convolution's lanes one by one.
        let contraction = if wide_reduction {
            "vector.lower_contraction lowering_strategy = \"outerproduct\""
        } else {
            "vector.lower_contraction lowering_strategy = \"parallelarith\""
        };
        patterns(
            &mut lines,
            "%f",
            &[contraction, "vector.lower_outerproduct", "canonicalization"],
        );
        // Unrolled before the hoisting: a register tile's rows are then transfers at
        // constant positions, which the hoisting keeps in registers across every
        // reduction loop around them (a window's taps as well as a product's `k`).
        unroll(&mut lines, &unrolls);
        lines.push(format!(
            "%f2 = transform.structured.hoist_redundant_vector_transfers %f : ({any}) -> {any}"
        ));
        patterns(
            &mut lines,
            "%f2",
            &[
                "vector.lower_transfer max_transfer_rank = 1",
                "vector.transfer_to_scf full_unroll = true",
                "canonicalization",
            ],
        );
    }
    if !vectorized {
        unroll(&mut lines, &unrolls);
    }
    for l in lines {
        let _ = writeln!(s, "    {l}");
    }
    let _ = writeln!(s, "    transform.yield");
    let _ = writeln!(s, "  }}");
    let _ = writeln!(s, "}}");
    s
}
