"""Apache TVM as a peer of `examples/ops_bench.rs`: the operator suite in `tvm.te`,
scheduled with TensorIR (`tvm.s_tir.Schedule`), built for this machine's CPU, checked
against NumPy and timed on one thread, as one JSON line per operator:

    {"op": ..., "peer": "tvm", "schedule": ..., "ms": ..., "threads": 1}

The operators and sizes are `ops_suite.py`'s (those of `suite()` in
benches/support/ops.rs); `--quick` takes `suite(4)`'s (each dimension a quarter,
without the 1000 matmul). Each operator tries its schedules in
order and keeps the first that builds and gives NumPy's values; a fallback says so in
"schedule". A summary with GFLOPS or GB/s goes to stderr.
"""

import argparse
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

import ops_suite

# One thread: TVM's runtime reads this when it loads.
os.environ["TVM_NUM_THREADS"] = "1"

import tvm  # noqa: E402
from tvm import s_tir, te, topi  # noqa: E402

LOWEST_F32 = float(np.finfo(np.float32).min)


@dataclass
class Op:
    """An operator at a size: how to build it, its inputs, its reference and its work."""

    name: str
    # Builds the te tensors: the inputs' placeholders, then the output.
    compute: Callable[[], tuple]
    # Schedules, tried in order: (name, function of the Schedule).
    schedules: list
    # NumPy inputs, in the order of the function's parameters.
    inputs: list
    # The expected output (float64 NumPy, compared with tolerance).
    reference: Callable[[list], np.ndarray]
    # ("gflops", floating-point operations) or ("gb_per_s", bytes moved once).
    work: tuple
    tolerance: float = 1e-4


# ---------------------------------------------------------------------------------
# Helpers.


def rng(seed):
    """A NumPy generator, the same for every run."""
    return np.random.default_rng(seed)


def uniform(gen, *shape):
    """Float32 values in [-1, 1) of the given shape."""
    return gen.uniform(-1.0, 1.0, size=shape).astype(np.float32)


def block_for(n, want=32, multiple=1):
    """The divisor of `n` between 8 and 64 nearest `want` (a multiple of `multiple`),
    or, where there is none, the largest divisor up to 64."""
    options = [d for d in range(8, 65) if n % d == 0 and d % multiple == 0]
    if not options:
        return divisor_at_most(n, 64)
    return min(options, key=lambda d: (abs(d - want), -d))


def divisor_at_most(n, most):
    """The largest divisor of `n` that is at most `most`."""
    return max(d for d in range(1, min(n, most) + 1) if n % d == 0)


def pad_numpy(x, top, bottom, left, right):
    """`x` (float64) with zeros around its last two axes."""
    width = [(0, 0)] * (x.ndim - 2) + [(top, bottom), (left, right)]
    return np.pad(x.astype(np.float64), width)


def fuse_parallel(sch, loops):
    """Fuses `loops` and makes the result parallel (one thread here, but the schedule
    is TVM's ordinary one)."""
    loop = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    sch.parallel(loop)
    return loop


# ---------------------------------------------------------------------------------
# Matrix products: TVM's "optimize matmul on CPU" tutorial schedule.


def gemm_te(batch, m, n, k, bn, epilogue):
    """`C = A * B` (`A: m x k`, `B: k x n`, with a leading batch axis when `batch`),
    B packed into column blocks of `bn` (`packedB[j / bn, k, j % bn]`); with
    `epilogue`, `out = relu(C + bias)` as well."""
    lead = (batch,) if batch else ()
    a = te.placeholder(lead + (m, k), name="A")
    b = te.placeholder(lead + (k, n), name="B")
    r = te.reduce_axis((0, k), name="r")
    if batch:
        packed = te.compute(
            (batch, n // bn, k, bn),
            lambda q, x, y, z: b[q, y, x * bn + z],
            name="packedB",
        )
        c = te.compute(
            (batch, m, n),
            lambda q, i, j: te.sum(
                a[q, i, r] * packed[q, j // bn, r, j % bn], axis=r
            ),
            name="C",
        )
    else:
        packed = te.compute(
            (n // bn, k, bn), lambda x, y, z: b[y, x * bn + z], name="packedB"
        )
        c = te.compute(
            (m, n),
            lambda i, j: te.sum(a[i, r] * packed[j // bn, r, j % bn], axis=r),
            name="C",
        )
    if not epilogue:
        return [a, b, c]
    bias = te.placeholder((n,), name="bias")
    out = te.compute(
        (m, n),
        lambda i, j: te.max(c[i, j] + bias[j], te.const(0.0, "float32")),
        name="out",
    )
    return [a, b, bias, out]


def gemm_tutorial(bm, bn, kfactor, epilogue):
    """The tutorial's schedule: 32x32 blocks of C (`bm` x `bn` where 32 does not
    divide), the reduction split by `kfactor` and permuted outside the block's rows,
    the block's columns vectorized, B packed into `bn`-wide column panels, and each
    block accumulated in a write cache (the epilogue, where there is one, is the
    write-back); `vectorize` and `parallel` before `decompose_reduction`."""

    def schedule(sch):
        compute = sch.get_sblock("C")
        if epilogue:
            write = sch.get_sblock("out")
        else:
            write = sch.cache_write(compute, 0, "global")
        loops = sch.get_loops(write)
        i, j = loops[-2:]
        io, ii = sch.split(i, [None, bm])
        jo, ji = sch.split(j, [None, bn])
        sch.reorder(io, jo, ii, ji)
        sch.compute_at(compute, jo)
        ic, jc, kc = sch.get_loops(compute)[-3:]
        ko, ki = sch.split(kc, [None, kfactor])
        sch.reorder(ko, ic, ki, jc)
        sch.unroll(ki)
        sch.vectorize(jc)
        sch.vectorize(ji)
        fuse_parallel(sch, loops[:-2] + [io])
        packed = sch.get_sblock("packedB")
        packed_loops = sch.get_loops(packed)
        sch.vectorize(packed_loops[-1])
        fuse_parallel(sch, packed_loops[:-3] + [packed_loops[-3]])
        sch.decompose_reduction(compute, ko)

    return schedule


def gemm_simple(bn):
    """A fallback: C's columns split by `bn` and vectorized, the reduction outside."""

    def schedule(sch):
        compute = sch.get_sblock("C")
        loops = sch.get_loops(compute)
        i, j, kc = loops[-3:]
        jo, ji = sch.split(j, [None, bn])
        sch.reorder(i, jo, kc, ji)
        sch.vectorize(ji)
        sch.decompose_reduction(compute, kc)

    return schedule


def matmul_op(m, n, k, name=None, batch=None, epilogue=False):
    """A matrix product `m x k` by `k x n` (batched when `batch`; with `bias` and relu
    when `epilogue`) and its schedules."""
    bm, bn = block_for(m), block_for(n, multiple=8)
    gen = rng(m * 7 + n * 3 + k)
    lead = (batch,) if batch else ()
    inputs = [uniform(gen, *lead, m, k), uniform(gen, *lead, k, n)]
    if epilogue:
        inputs.append(uniform(gen, n))

    def reference(xs):
        c = np.matmul(xs[0].astype(np.float64), xs[1].astype(np.float64))
        return np.maximum(c + xs[2], 0.0) if epilogue else c

    suffix = " + fused bias-relu" if epilogue else ""
    return Op(
        name=name or f"matmul {m}x{n}x{k}",
        compute=lambda: gemm_te(batch, m, n, k, bn, epilogue),
        schedules=[
            (f"tutorial gemm {bm}x{bn}{suffix}", gemm_tutorial(bm, bn, 4, epilogue)),
            (f"fallback: vectorized columns by {bn}", gemm_simple(bn)),
        ],
        inputs=inputs,
        reference=reference,
        work=("gflops", 2.0 * (batch or 1) * m * n * k),
        tolerance=1e-4 * math.sqrt(k),
    )


# ---------------------------------------------------------------------------------
# Convolutions: a channel-blocked direct conv2d (NCHW in and out, OIHW weights).


def padded(x, channels, height, width, top, bottom, left, right, name="pad"):
    """`x[0]` (c x h x w, of a batch of one) with zeros around it."""
    return te.compute(
        (channels, height + top + bottom, width + left + right),
        lambda c, y, z: te.if_then_else(
            te.all(y >= top, y < height + top, z >= left, z < width + left),
            x[0, c, y - top, z - left],
            te.const(0.0, "float32"),
        ),
        name=name,
    )


def conv_te(c, h, w, k, stride, oc, pads):
    """A 3x3 convolution of a `1 x c x h x w` input by `k x c x 3 x 3` weights at
    `stride` with zero padding `pads` (top, bottom, left, right): the weights packed
    OIHW -> OIHW`oc`o, the output computed as `k/oc x oh x ow x oc` and written back
    as NCHW."""
    top, bottom, left, right = pads
    oh = (h + top + bottom - 3) // stride + 1
    ow = (w + left + right - 3) // stride + 1
    x = te.placeholder((1, c, h, w), name="x")
    wt = te.placeholder((k, c, 3, 3), name="w")
    pad = padded(x, c, h, w, top, bottom, left, right)
    wpack = te.compute(
        (k // oc, c, 3, 3, oc),
        lambda ko, ci, ry, rx, oi: wt[ko * oc + oi, ci, ry, rx],
        name="wpack",
    )
    rc = te.reduce_axis((0, c), name="rc")
    ry = te.reduce_axis((0, 3), name="ry")
    rx = te.reduce_axis((0, 3), name="rx")
    conv = te.compute(
        (k // oc, oh, ow, oc),
        lambda ko, y, z, oi: te.sum(
            pad[rc, y * stride + ry, z * stride + rx] * wpack[ko, rc, ry, rx, oi],
            axis=[rc, ry, rx],
        ),
        name="conv",
    )
    out = te.compute(
        (1, k, oh, ow), lambda n, o, y, z: conv[o // oc, y, z, o % oc], name="out"
    )
    return [x, wt, out]


def conv_blocked(oc, xt):
    """Output channels blocked by `oc` (the innermost, vectorized axis), a register
    tile of `xt` output pixels of a row (unrolled), the reduction over input channels
    and taps outside the tile; the padding split into a zero fill and a copy, rows
    vectorized."""

    def schedule(sch):
        out = sch.get_sblock("out")
        conv = sch.get_sblock("conv")
        n, o, y, z = sch.get_loops(out)
        ko, oi = sch.split(o, [None, oc])
        zo, zi = sch.split(z, [None, xt])
        sch.reorder(ko, y, zo, oi, zi)
        sch.compute_at(conv, zo, preserve_unit_loops=True)
        zc, oc_loop, rc, ry, rx = sch.get_loops(conv)[-5:]
        sch.reorder(rc, ry, rx, zc, oc_loop)
        sch.unroll(zc)
        sch.vectorize(oc_loop)
        fuse_parallel(sch, [n, ko])
        wpack = sch.get_sblock("wpack")
        sch.vectorize(sch.get_loops(wpack)[-1])
        pad = sch.get_sblock("pad")
        fill = sch.decompose_padding(pad, sch.get_loops(pad)[0])
        for block in [pad, fill]:
            sch.vectorize(sch.get_loops(block)[-1])
        sch.decompose_reduction(conv, rc)

    return schedule


def conv_simple(oc):
    """A fallback: the blocked output channels vectorized, nothing else."""

    def schedule(sch):
        conv = sch.get_sblock("conv")
        loops = sch.get_loops(conv)
        sch.reorder(*loops[:3], *loops[4:], loops[3])
        sch.vectorize(loops[3])
        sch.decompose_reduction(conv, loops[4])

    return schedule


def conv_reference(x, wt, stride, pads):
    """The convolution in NumPy (float64), NCHW by OIHW."""
    xp = pad_numpy(x, *pads)
    k = wt.shape[0]
    _, c, hp, wp = xp.shape
    oh, ow = (hp - 3) // stride + 1, (wp - 3) // stride + 1
    out = np.zeros((1, k, oh, ow))
    for dy in range(3):
        for dx in range(3):
            window = xp[0, :, dy : dy + stride * oh : stride, dx : dx + stride * ow : stride]
            out[0] += np.einsum("chw,kc->khw", window, wt[:, :, dy, dx].astype(np.float64))
    return out


def conv_op(name, c, h, w, k, stride, pads, oc_want, xt_want):
    """A 3x3 convolution of the suite and its schedules (output-channel blocks of the
    largest divisor of `k` up to `oc_want`; a register tile of the output row's
    largest divisor up to `xt_want` pixels)."""
    oc = divisor_at_most(k, oc_want)
    top, bottom, left, right = pads
    ow = (w + left + right - 3) // stride + 1
    oh = (h + top + bottom - 3) // stride + 1
    xt = divisor_at_most(ow, xt_want)
    gen = rng(c * 11 + h + k)
    inputs = [uniform(gen, 1, c, h, w), uniform(gen, k, c, 3, 3)]
    return Op(
        name=name,
        compute=lambda: conv_te(c, h, w, k, stride, oc, pads),
        schedules=[
            (f"channel-blocked direct conv OIHW{oc}o, {xt}-pixel tile", conv_blocked(oc, xt)),
            (f"fallback: vectorized OIHW{oc}o channels", conv_simple(oc)),
        ],
        inputs=inputs,
        reference=lambda xs: conv_reference(xs[0], xs[1], stride, pads),
        work=("gflops", 2.0 * k * c * 9 * oh * ow),
        tolerance=1e-4 * math.sqrt(9 * c),
    )


def depthwise_te(c, h, w):
    """The depthwise 3x3 convolution, stride 1, zero padding 1, each channel with its
    own kernel."""
    x = te.placeholder((c, h, w), name="x")
    wt = te.placeholder((c, 3, 3), name="w")
    pad = te.compute(
        (c, h + 2, w + 2),
        lambda ch, y, z: te.if_then_else(
            te.all(y >= 1, y <= h, z >= 1, z <= w),
            x[ch, y - 1, z - 1],
            te.const(0.0, "float32"),
        ),
        name="pad",
    )
    ry = te.reduce_axis((0, 3), name="ry")
    rx = te.reduce_axis((0, 3), name="rx")
    out = te.compute(
        (c, h, w),
        lambda ch, y, z: te.sum(pad[ch, y + ry, z + rx] * wt[ch, ry, rx], axis=[ry, rx]),
        name="out",
    )
    return [x, wt, out]


def depthwise_vectorized(lanes):
    """Channels parallel, each channel's padding computed at it (a zero fill and a
    copy), each output row in vectors of `lanes` pixels with the taps unrolled inside
    (one accumulator a vector)."""

    def schedule(sch):
        out = sch.get_sblock("out")
        ch, y, z, ry, rx = sch.get_loops(out)
        zo, zi = sch.split(z, [None, lanes])
        sch.reorder(ch, y, zo, ry, rx, zi)
        sch.unroll(ry)
        sch.unroll(rx)
        sch.vectorize(zi)
        sch.parallel(ch)
        pad = sch.get_sblock("pad")
        sch.compute_at(pad, ch)
        pad_loops = sch.get_loops(pad)
        sch.vectorize(pad_loops[-1])
        sch.decompose_padding(pad, pad_loops[1])
        sch.decompose_reduction(out, ry)

    return schedule


def depthwise_op(c, h, w):
    """The depthwise convolution of the suite."""
    gen = rng(c + h)
    inputs = [uniform(gen, c, h, w), uniform(gen, c, 3, 3)]
    lanes = divisor_at_most(w, 8)

    def reference(xs):
        xp = pad_numpy(xs[0], 1, 1, 1, 1)
        out = np.zeros((c, h, w))
        for dy in range(3):
            for dx in range(3):
                out += xp[:, dy : dy + h, dx : dx + w] * xs[1][:, dy, dx, None, None]
        return out

    return Op(
        name="depthwise_conv",
        compute=lambda: depthwise_te(c, h, w),
        schedules=[
            (f"vectors of {lanes} pixels, unrolled taps, parallel channels",
             depthwise_vectorized(lanes)),
            ("fallback: default", None),
        ],
        inputs=inputs,
        reference=reference,
        work=("gflops", 2.0 * c * 9 * h * w),
    )


# ---------------------------------------------------------------------------------
# Max pooling.


def maxpool_te(c, h, w):
    """3x3 max pooling at stride 2 without padding, `(2h+3) x (2w+3)` in, `(h+1) x (w+1)`
    out, in two stages (the same maxima: max is associative): each output row's three
    input rows first, whole rows at a time, then three columns at stride 2."""
    x = te.placeholder((c, 2 * h + 3, 2 * w + 3), name="x")
    ry = te.reduce_axis((0, 3), name="ry")
    cols = te.compute(
        (c, h + 1, 2 * w + 3),
        lambda ch, y, z: te.max(x[ch, 2 * y + ry, z], axis=ry),
        name="cols",
    )
    rx = te.reduce_axis((0, 3), name="rx")
    out = te.compute(
        (c, h + 1, w + 1),
        lambda ch, y, z: te.max(cols[ch, y, 2 * z + rx], axis=rx),
        name="out",
    )
    return [x, out]


def maxpool_vectorized(sch):
    """Channels parallel; for each output row, its three input rows' maxima computed
    at it (vectorized over the whole row), then the columns' (vectorized over the
    output row); the taps unrolled."""
    out = sch.get_sblock("out")
    ch, y, z, rx = sch.get_loops(out)
    sch.reorder(ch, y, rx, z)
    sch.unroll(rx)
    sch.vectorize(z)
    sch.parallel(ch)
    cols = sch.get_sblock("cols")
    sch.compute_at(cols, y)
    zc, ry = sch.get_loops(cols)[-2:]
    sch.reorder(ry, zc)
    sch.unroll(ry)
    sch.vectorize(zc)
    sch.decompose_reduction(cols, ry)
    sch.decompose_reduction(out, rx)


def maxpool_op(c, h, w):
    """The max pooling of the suite."""
    gen = rng(c + h + 1)
    inputs = [uniform(gen, c, 2 * h + 3, 2 * w + 3)]

    def reference(xs):
        x = xs[0]
        out = np.full((c, h + 1, w + 1), LOWEST_F32, dtype=np.float32)
        for dy in range(3):
            for dx in range(3):
                out = np.maximum(out, x[:, dy : dy + 2 * h + 1 : 2, dx : dx + 2 * w + 1 : 2])
        return out

    return Op(
        name="maxpool 3x3 s2",
        compute=lambda: maxpool_te(c, h, w),
        schedules=[
            ("rows then columns, vectorized rows, parallel channels", maxpool_vectorized),
            ("fallback: default", None),
        ],
        inputs=inputs,
        reference=reference,
        work=("gb_per_s", 4.0 * c * ((2 * h + 3) ** 2 + (h + 1) ** 2)),
        tolerance=0.0,
    )


# ---------------------------------------------------------------------------------
# Elementwise operators.


def elementwise_te(n, m, binary):
    """`a + b` (when `binary`) or `max(a, 0)`, `n x m`."""
    a = te.placeholder((n, m), name="a")
    if binary:
        b = te.placeholder((n, m), name="b")
        out = te.compute((n, m), lambda i, j: a[i, j] + b[i, j], name="out")
        return [a, b, out]
    zero = te.const(0.0, "float32")
    out = te.compute((n, m), lambda i, j: te.max(a[i, j], zero), name="out")
    return [a, out]


def flat_vectorized(lanes):
    """The block's loops fused, split by `lanes`, the inner part vectorized and the
    outer one parallel."""

    def schedule(sch):
        out = sch.get_sblock("out")
        fused = sch.fuse(*sch.get_loops(out))
        outer, inner = sch.split(fused, [None, lanes])
        sch.vectorize(inner)
        sch.parallel(outer)

    return schedule


def elementwise_op(name, n, m, binary):
    """`add` or `relu` of the suite."""
    gen = rng(n + (1 if binary else 2))
    inputs = [uniform(gen, n, m) for _ in range(2 if binary else 1)]

    def reference(xs):
        return xs[0] + xs[1] if binary else np.maximum(xs[0], 0.0)

    return Op(
        name=name,
        compute=lambda: elementwise_te(n, m, binary),
        schedules=[
            ("fused, vectorized by 64, parallel", flat_vectorized(64)),
            ("fallback: default", None),
        ],
        inputs=inputs,
        reference=reference,
        work=("gb_per_s", 4.0 * (3 if binary else 2) * n * m),
        tolerance=0.0,
    )


# ---------------------------------------------------------------------------------
# Softmax.


def softmax_te(b, n, fast):
    """The stable softmax of each row: `exp(x - max(x)) / sum(exp(x - max(x)))`, with
    `exp` from libm (one call a lane) or, when `fast`, TVM's polynomial `fast_exp`
    (as in its `fast_softmax`)."""
    x = te.placeholder((b, n), name="x")
    r1 = te.reduce_axis((0, n), name="r1")
    top = te.compute((b,), lambda i: te.max(x[i, r1], axis=r1), name="top")
    if fast:
        shifted = te.compute((b, n), lambda i, j: x[i, j] - top[i], name="shifted")
        e = topi.fast_exp(shifted)
    else:
        e = te.compute((b, n), lambda i, j: te.exp(x[i, j] - top[i]), name="e")
    r2 = te.reduce_axis((0, n), name="r2")
    total = te.compute((b,), lambda i: te.sum(e[i, r2], axis=r2), name="total")
    out = te.compute((b, n), lambda i, j: e[i, j] / total[i], name="out")
    return [x, out]


def exp_block(sch):
    """The name of the exponentials' block, the shift inlined into it where it is a
    block of its own (`fast_exp`)."""
    try:
        sch.compute_inline(sch.get_sblock("shifted"))
    except Exception:  # noqa: BLE001 (no such block: libm's exp)
        return "e"
    return "T_fast_exp"


def softmax_vectorized(sch):
    """Rows parallel, every stage computed at its row (the exponentials in a row
    buffer), the elementwise stages vectorized by 8 and the two reductions on 8 lanes
    of partial results (rfactor), vectorized."""
    e = exp_block(sch)
    for name in ["top", "total"]:
        block = sch.get_sblock(name)
        _, inner = sch.split(sch.get_loops(block)[-1], [None, 8])
        sch.rfactor(inner, 0)
    out = sch.get_sblock("out")
    i, _ = sch.get_loops(out)
    for name in ["total", "total_rf", e, "top", "top_rf"]:
        sch.compute_at(sch.get_sblock(name), i)
    for name in ["out", e]:
        block = sch.get_sblock(name)
        _, inner = sch.split(sch.get_loops(block)[-1], [None, 8])
        sch.vectorize(inner)
    sch.parallel(i)
    for name in ["top_rf", "total_rf"]:
        partial = sch.get_sblock(name)
        lanes, steps = sch.get_loops(partial)[-2:]
        sch.reorder(steps, lanes)
        sch.vectorize(lanes)
        sch.decompose_reduction(partial, steps)


def softmax_simple(sch):
    """A fallback: rows parallel, every stage at its row, the elementwise stages
    vectorized, the reductions scalar."""
    e = exp_block(sch)
    i, _ = sch.get_loops(sch.get_sblock("out"))
    for name in ["total", e, "top"]:
        sch.compute_at(sch.get_sblock(name), i)
    for name in ["out", e]:
        block = sch.get_sblock(name)
        _, inner = sch.split(sch.get_loops(block)[-1], [None, 8])
        sch.vectorize(inner)
    sch.parallel(i)


def softmax_op(b, n, fast):
    """The softmax of the suite (with TVM's `fast_exp` when `fast`)."""
    exp = ", fast_exp" if fast else ", libm exp"
    gen = rng(b + n)
    inputs = [gen.normal(0.0, 2.0, size=(b, n)).astype(np.float32)]

    def reference(xs):
        x = xs[0].astype(np.float64)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    return Op(
        name="softmax",
        compute=lambda: softmax_te(b, n, fast),
        schedules=[
            (f"rows parallel, vectorized by 8, rfactor reductions{exp}", softmax_vectorized),
            (f"fallback: rows parallel, vectorized by 8, scalar reductions{exp}", softmax_simple),
            (f"fallback: default{exp}", None),
        ],
        inputs=inputs,
        reference=reference,
        work=("gb_per_s", 4.0 * 2 * b * n),
        tolerance=1e-6,
    )


# ---------------------------------------------------------------------------------
# Stencils.


def zero_outside(img, h, w):
    """`img[y, z]`, and 0 outside its `h x w` pixels."""
    zero = te.const(0.0, "float32")

    def at(y, z):
        return te.if_then_else(te.all(y >= 0, y < h, z >= 0, z < w), img[y, z], zero)

    return at


def jacobi_te(h, w):
    """One 5-point Jacobi sweep with zero boundary: the mean of a point and its four
    neighbours (those outside read as 0)."""
    img = te.placeholder((h, w), name="img")
    at = zero_outside(img, h, w)
    out = te.compute(
        (h, w),
        lambda y, z: te.const(0.2, "float32")
        * (at(y - 1, z) + at(y, z - 1) + img[y, z] + at(y, z + 1) + at(y + 1, z)),
        name="out",
    )
    return [img, out]


def vectorize_interior(sch, block, lanes):
    """The block's last loop split by `lanes`, its outer part partitioned into the
    first vector, the interior and the last vector, and the interior's vectors
    vectorized: there the bounds checks on the columns fold away."""
    _, columns = sch.get_loops(sch.get_sblock(block))[-2:]
    outer, _ = sch.split(columns, [None, lanes])
    name = sch.get(outer).loop_var.name
    sch.loop_partition(outer, [1, None, 1])
    interior = sch.get_sblock(f"{block}_{name}1")
    sch.vectorize(sch.get_loops(interior)[-1])


def jacobi_vectorized(lanes):
    """Rows parallel, each row's interior vectorized by `lanes` (the first and last
    vector scalar, with their bounds checks)."""

    def schedule(sch):
        y, _ = sch.get_loops(sch.get_sblock("out"))
        sch.parallel(y)
        vectorize_interior(sch, "out", lanes)

    return schedule


def jacobi_op(h, w):
    """The Jacobi sweep of the suite."""
    gen = rng(h + 5)
    inputs = [uniform(gen, h, w)]

    def reference(xs):
        p = pad_numpy(xs[0], 1, 1, 1, 1)
        return 0.2 * (p[:-2, 1:-1] + p[1:-1, :-2] + p[1:-1, 1:-1] + p[1:-1, 2:] + p[2:, 1:-1])

    return Op(
        name="jacobi2d",
        compute=lambda: jacobi_te(h, w),
        schedules=[
            ("rows parallel, interior vectorized by 8 (loop_partition)", jacobi_vectorized(8)),
            ("fallback: default", None),
        ],
        inputs=inputs,
        reference=reference,
        work=("gb_per_s", 4.0 * 2 * h * w),
        tolerance=1e-6,
    )


def blur_te(h, w):
    """The separable 3x3 blur with zero padding: rows filtered by `wh` (into a buffer),
    then columns by `wv` (pixels outside read as 0 in both)."""
    img = te.placeholder((h, w), name="img")
    wv = te.placeholder((3,), name="wv")
    wh = te.placeholder((3,), name="wh")
    at = zero_outside(img, h, w)
    rows = te.compute(
        (h, w),
        lambda y, z: wh[0] * at(y, z - 1) + wh[1] * img[y, z] + wh[2] * at(y, z + 1),
        name="rows",
    )
    row_at = zero_outside(rows, h, w)
    out = te.compute(
        (h, w),
        lambda y, z: wv[0] * row_at(y - 1, z) + wv[1] * rows[y, z] + wv[2] * row_at(y + 1, z),
        name="out",
    )
    return [img, wv, wh, out]


def blur_tiles(tile, lanes):
    """Output rows in tiles of `tile` (parallel), the row filter computed at each tile
    (its rows and one more on each side), both stages vectorized by `lanes` (the row
    filter on its interior: the first and last vector scalar)."""

    def schedule(sch):
        y, z = sch.get_loops(sch.get_sblock("out"))
        yo, _ = sch.split(y, [None, tile])
        _, zi = sch.split(z, [None, lanes])
        sch.vectorize(zi)
        sch.parallel(yo)
        sch.compute_at(sch.get_sblock("rows"), yo)
        vectorize_interior(sch, "rows", lanes)

    return schedule


def blur_op(h, w):
    """The separable blur of the suite (binomial weights)."""
    gen = rng(h + 9)
    weights = np.array([0.25, 0.5, 0.25], dtype=np.float32)
    inputs = [uniform(gen, h, w), weights, weights.copy()]

    def reference(xs):
        img, wv, wh = (x.astype(np.float64) for x in xs)
        p = np.pad(img, [(0, 0), (1, 1)])
        r = wh[0] * p[:, :-2] + wh[1] * p[:, 1:-1] + wh[2] * p[:, 2:]
        q = np.pad(r, [(1, 1), (0, 0)])
        return wv[0] * q[:-2] + wv[1] * q[1:-1] + wv[2] * q[2:]

    tile = divisor_at_most(h, 32)
    return Op(
        name="blur_separable",
        compute=lambda: blur_te(h, w),
        schedules=[
            (f"{tile}-row tiles, row filter at the tile, vectorized by 8", blur_tiles(tile, 8)),
            ("fallback: default", None),
        ],
        inputs=inputs,
        reference=reference,
        work=("gb_per_s", 4.0 * 2 * h * w),
        tolerance=1e-6,
    )


# ---------------------------------------------------------------------------------
# The suite (`suite()` of benches/support/ops.rs).


# The register tiles of each convolution's schedule: (output channels a block, output
# pixels a tile).
CONV_TILES = {"conv2d 3x3 s1": (16, 4), "conv2d 3x3 s2": (32, 2)}


def suite(scale, fast_exp=False):
    """The operators of `ops_suite.suite(scale)`, as TVM computes and schedules them;
    softmax with TVM's `fast_exp` when `fast_exp`."""
    builders = {
        "matmul": matmul_op,
        "conv": lambda **a: conv_op(**a, oc_want=CONV_TILES[a["name"]][0],
                                    xt_want=CONV_TILES[a["name"]][1]),
        "depthwise": depthwise_op,
        "maxpool": maxpool_op,
        "elementwise": elementwise_op,
        "softmax": lambda **a: softmax_op(**a, fast=fast_exp),
        "jacobi": jacobi_op,
        "blur": blur_op,
    }
    return [builders[kind](**arguments) for kind, arguments in ops_suite.suite(scale)]


# ---------------------------------------------------------------------------------
# Building, checking and timing.


def target():
    """This machine's CPU as an LLVM target (`-mcpu=native` would be a generic CPU)."""
    return tvm.target.Target({"kind": "llvm", "mcpu": tvm.target.codegen.llvm_get_system_cpu()})


def build(op, schedule):
    """`op` scheduled by `schedule` (None: as `te.create_prim_func` gives it), built."""
    func = te.create_prim_func(op.compute())
    sch = s_tir.Schedule(tvm.IRModule({"main": func}))
    if schedule is not None:
        schedule(sch)
    return tvm.build(sch.mod, target=target())


def check(op, lib, dev):
    """Runs `lib` on `op`'s inputs and asserts NumPy's values; returns the arguments
    (inputs and output) for timing."""
    expected = op.reference(op.inputs)
    args = [tvm.runtime.tensor(x, dev) for x in op.inputs]
    out = tvm.runtime.tensor(np.full(expected.shape, np.nan, dtype=np.float32), dev)
    args.append(out)
    lib(*args)
    got = out.numpy()
    if not np.allclose(got, expected, rtol=max(op.tolerance, 1e-6), atol=op.tolerance):
        error = np.nanmax(np.abs(got - expected)) if not np.isnan(got).all() else np.nan
        raise ValueError(f"values differ from NumPy's (largest difference {error:.3g})")
    return args


def median_ms(lib, args, dev, quick):
    """The median time of a call in milliseconds, after a warm-up: each of 5 (or 3 for
    slow calls and in quick runs) repeats runs the call for at least 50 ms."""
    start = time.perf_counter()
    lib(*args)
    once = time.perf_counter() - start
    number = max(1, math.ceil(0.05 / max(once, 1e-9)))
    repeat = 3 if quick or once > 0.5 else 5
    timer = lib.time_evaluator(lib.entry_name, dev, number=number, repeat=repeat)
    return float(np.median(timer(*args).results)) * 1e3


def threads():
    """The threads of TVM's runtime pool (1: `TVM_NUM_THREADS` is set above)."""
    count = tvm.get_global_func("runtime.NumThreads", allow_missing=True)
    return int(count()) if count is not None else 1


def run(op, dev, quick):
    """`op` with its first schedule that builds and checks: its JSON line (an "error"
    line where none does)."""
    failures = []
    for name, schedule in op.schedules:
        try:
            lib = build(op, schedule)
            args = check(op, lib, dev)
        except Exception as error:  # noqa: BLE001 (any failure: the next schedule)
            summary = str(error).strip().splitlines()
            reason = summary[-1] if summary else type(error).__name__
            failures.append(f"{name}: {reason}")
            print(f"tvm_ops: {op.name}: schedule '{name}' failed: {reason}", file=sys.stderr)
            continue
        ms = median_ms(lib, args, dev, quick)
        line = {"op": op.name, "peer": "tvm", "schedule": name, "ms": round(ms, 3),
                "threads": threads()}
        unit, amount = op.work
        rate = amount / ms / 1e6
        print(f"tvm_ops: {op.name:22} {ms:10.3f} ms {rate:9.2f} {unit}  ({name})", file=sys.stderr)
        return line
    return {"op": op.name, "peer": "tvm", "error": "; ".join(failures), "threads": threads()}


def selected(op, only):
    """Whether `op` is one that `--only` asks for (all when it asks for none): its name,
    or a name it starts with."""
    return not only or any(op.name == o or op.name.startswith(o) for o in only)


def main():
    """Runs the suite (or `--only` parts of it) and prints a JSON line per operator."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="suite(4)'s sizes, without 1000^3")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="only operators with this name or prefix (repeatable)")
    parser.add_argument("--fast-exp", action="store_true",
                        help="softmax with TVM's polynomial fast_exp instead of libm's exp")
    args = parser.parse_args()
    dev = tvm.cpu(0)
    for op in suite(4 if args.quick else 1, args.fast_exp):
        if selected(op, args.only):
            print(json.dumps(run(op, dev, args.quick)), flush=True)


if __name__ == "__main__":
    main()
