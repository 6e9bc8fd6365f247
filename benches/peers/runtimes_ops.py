"""ONNX Runtime and PyTorch (eager) as peers of `examples/ops_bench.rs`: each operator of
the suite written as its user would write it in each (one ONNX node or a few, built
with `onnx.helper`; the `torch.nn.functional` call), run on one thread, the two checked
against each other, and timed (in turns, the fastest of three medians each), as one
JSON line per operator and runtime:

    {"op": ..., "peer": "onnxruntime" | "pytorch", "peer_version": ..., "form": ...,
     "ms": ..., "threads": 1}

or `"error"` where it did not run or the two disagree. The operators and sizes are
`ops_suite.py`'s (those of `suite()` in benches/support/ops.rs); `--quick` takes
`suite(4)`'s (each dimension a quarter, without the 1000 matmul). It runs in the networks benchmark's
environment (`benches/peers/networks/setup`: PyTorch, ONNX, ONNX Runtime).

Two operators have no single node in either runtime and are written as their users
would write them: the 5-point Jacobi stencil is a 3x3 convolution with the stencil's
weights, and the separable blur two convolutions (1x3, then 3x1). A padding on one
side only (the stride-2 convolution's) is `F.pad` before the convolution in PyTorch
(its `conv2d` pads both sides alike), a `pads` attribute in ONNX.
"""

import argparse
import json
import math
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper

import ops_suite

torch.set_num_threads(1)
torch.set_num_interop_threads(1)


class Op:
    """An operator at a size: its inputs, its PyTorch form and its ONNX graph."""

    def __init__(self, name, inputs, torch_fn, nodes, out_shape, form):
        self.name = name
        # NumPy inputs (float32), named x0, x1, ... in the ONNX graph.
        self.inputs = inputs
        # The PyTorch function of the inputs' tensors.
        self.torch_fn = torch_fn
        # The ONNX nodes, reading x0, x1, ... and constants, writing "y".
        self.nodes = nodes
        self.out_shape = out_shape
        # How it is written, for the JSON line.
        self.form = form


def uniform(gen, *shape):
    """Floats in [-1, 1), as float32."""
    return gen.uniform(-1.0, 1.0, size=shape).astype(np.float32)


def node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, **attrs)


def constant(name, array):
    """A node making the float32 constant `array` as `name`."""
    tensor = helper.make_tensor(name + "_value", TensorProto.FLOAT, array.shape,
                                array.astype(np.float32).ravel().tolist())
    return node("Constant", [], [name], value=tensor)


def matmul_op(m, n, k, name=None, batch=None, epilogue=False):
    """A product of `m x k` by `k x n` (`batch` of them), with a bias and ReLU after it
    where `epilogue`."""
    gen = np.random.default_rng(m + n + k)
    lead = (batch,) if batch else ()
    inputs = [uniform(gen, *lead, m, k), uniform(gen, *lead, k, n)]
    if epilogue:
        inputs.append(uniform(gen, n))

        def torch_fn(a, b, bias):
            return torch.relu(torch.addmm(bias, a, b))

        nodes = [node("Gemm", ["x0", "x1", "x2"], ["g"]), node("Relu", ["g"], ["y"])]
        form = "Gemm + Relu; torch.addmm + relu"
    else:
        torch_fn = torch.matmul
        nodes = [node("MatMul", ["x0", "x1"], ["y"])]
        form = "MatMul; torch.matmul"
    return Op(name or f"matmul {m}x{n}x{k}", inputs, torch_fn, nodes, lead + (m, n), form)


def conv_op(name, c, h, w, k, stride, pads):
    """A 3x3 convolution, NCHW by OIHW, padded by `pads` (top, bottom, left, right)."""
    gen = np.random.default_rng(c + h + k)
    inputs = [uniform(gen, 1, c, h, w), uniform(gen, k, c, 3, 3)]
    top, bottom, left, right = pads
    oh = (h + top + bottom - 3) // stride + 1
    ow = (w + left + right - 3) // stride + 1

    def torch_fn(x, wt):
        if top == bottom and left == right:
            return F.conv2d(x, wt, stride=stride, padding=(top, left))
        return F.conv2d(F.pad(x, (left, right, top, bottom)), wt, stride=stride)

    nodes = [node("Conv", ["x0", "x1"], ["y"], kernel_shape=[3, 3], strides=[stride, stride],
                  pads=[top, left, bottom, right])]
    return Op(name, inputs, torch_fn, nodes, (1, k, oh, ow), "Conv; F.conv2d")


def depthwise_op(c, h, w):
    """The depthwise 3x3 convolution (zero padding 1) of `c` channels."""
    gen = np.random.default_rng(c + h)
    inputs = [uniform(gen, 1, c, h, w), uniform(gen, c, 1, 3, 3)]

    def torch_fn(x, wt):
        return F.conv2d(x, wt, padding=1, groups=c)

    nodes = [node("Conv", ["x0", "x1"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                  group=c)]
    return Op("depthwise_conv", inputs, torch_fn, nodes, (1, c, h, w),
              "Conv (group = channels); F.conv2d(groups)")


def maxpool_op(c, h, w):
    """3x3 max pooling at stride 2 without padding, `(2h+3) x (2w+3)` in."""
    gen = np.random.default_rng(c + h + 1)
    inputs = [uniform(gen, 1, c, 2 * h + 3, 2 * w + 3)]

    def torch_fn(x):
        return F.max_pool2d(x, 3, stride=2)

    nodes = [node("MaxPool", ["x0"], ["y"], kernel_shape=[3, 3], strides=[2, 2])]
    return Op("maxpool 3x3 s2", inputs, torch_fn, nodes, (1, c, h + 1, w + 1),
              "MaxPool; F.max_pool2d")


def elementwise_op(name, n, m, binary):
    """`add` or `relu` of `n x m`."""
    gen = np.random.default_rng(n + (1 if binary else 2))
    inputs = [uniform(gen, n, m) for _ in range(2 if binary else 1)]
    if binary:
        return Op(name, inputs, torch.add, [node("Add", ["x0", "x1"], ["y"])], (n, m),
                  "Add; torch.add")
    return Op(name, inputs, torch.relu, [node("Relu", ["x0"], ["y"])], (n, m),
              "Relu; torch.relu")


def softmax_op(b, n):
    """Softmax over the rows of `b x n`."""
    gen = np.random.default_rng(b + n)
    inputs = [gen.normal(0.0, 2.0, size=(b, n)).astype(np.float32)]
    return Op("softmax", inputs, lambda x: torch.softmax(x, dim=1),
              [node("Softmax", ["x0"], ["y"], axis=1)], (b, n), "Softmax; torch.softmax")


def jacobi_op(h, w):
    """The 5-point Jacobi stencil (zero outside): a 3x3 convolution with its weights."""
    gen = np.random.default_rng(h + 5)
    inputs = [uniform(gen, 1, 1, h, w)]
    stencil = np.array([[0.0, 0.2, 0.0], [0.2, 0.2, 0.2], [0.0, 0.2, 0.0]],
                       dtype=np.float32).reshape(1, 1, 3, 3)
    weights = torch.from_numpy(stencil)

    def torch_fn(x):
        return F.conv2d(x, weights, padding=1)

    nodes = [constant("stencil", stencil),
             node("Conv", ["x0", "stencil"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    return Op("jacobi2d", inputs, torch_fn, nodes, (1, 1, h, w),
              "Conv with the stencil's 3x3 weights; F.conv2d")


def blur_op(h, w):
    """The separable 3x3 blur (zero outside): rows by `wh`, then columns by `wv`."""
    gen = np.random.default_rng(h + 9)
    weights = np.array([0.25, 0.5, 0.25], dtype=np.float32)
    inputs = [uniform(gen, 1, 1, h, w), weights.reshape(1, 1, 3, 1),
              weights.reshape(1, 1, 1, 3).copy()]

    def torch_fn(x, wv, wh):
        return F.conv2d(F.conv2d(x, wh, padding=(0, 1)), wv, padding=(1, 0))

    nodes = [node("Conv", ["x0", "x2"], ["rows"], kernel_shape=[1, 3], pads=[0, 1, 0, 1]),
             node("Conv", ["rows", "x1"], ["y"], kernel_shape=[3, 1], pads=[1, 0, 1, 0])]
    return Op("blur_separable", inputs, torch_fn, nodes, (1, 1, h, w),
              "Conv 1x3 then Conv 3x1; F.conv2d twice")


def suite(scale):
    """The operators of `ops_suite.suite(scale)`, each built when it is asked for (its
    inputs are large)."""
    builders = {
        "matmul": matmul_op,
        "conv": conv_op,
        "depthwise": depthwise_op,
        "maxpool": maxpool_op,
        "elementwise": elementwise_op,
        "softmax": softmax_op,
        "jacobi": jacobi_op,
        "blur": blur_op,
    }
    return [lambda kind=kind, arguments=arguments: builders[kind](**arguments)
            for kind, arguments in ops_suite.suite(scale)]


def session(op):
    """An ONNX Runtime session of `op`'s graph on one thread, all its optimizations on."""
    inputs = [helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, list(x.shape))
              for i, x in enumerate(op.inputs)]
    output = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(op.out_shape))
    graph = helper.make_graph(op.nodes, "op", inputs, [output])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


def median_ms(call, quick):
    """The median time of a call in milliseconds, after a warm-up: each of 5 (3 for slow
    calls and in quick runs) repeats runs the call for at least 50 ms."""
    call()
    start = time.perf_counter()
    call()
    once = time.perf_counter() - start
    number = max(1, math.ceil(0.05 / max(once, 1e-9)))
    repeats = []
    for _ in range(3 if quick or once > 0.5 else 5):
        start = time.perf_counter()
        for _ in range(number):
            call()
        repeats.append((time.perf_counter() - start) / number)
    return float(np.median(repeats)) * 1e3


def run(op, quick):
    """`op` in both runtimes: their JSON lines."""
    feeds = {f"x{i}": x for i, x in enumerate(op.inputs)}
    tensors = [torch.from_numpy(x) for x in op.inputs]
    lines, outputs, calls = [], {}, {}
    try:
        sess = session(op)
        outputs["onnxruntime"] = sess.run(["y"], feeds)[0]
        calls["onnxruntime"] = (lambda: sess.run(["y"], feeds), ort.__version__, 1)
    except Exception as error:  # noqa: BLE001 (reported in the line)
        lines.append({"op": op.name, "peer": "onnxruntime", "error": str(error).strip()[:300]})
    try:
        with torch.inference_mode():
            outputs["pytorch"] = op.torch_fn(*tensors).numpy()
        calls["pytorch"] = (lambda: op.torch_fn(*tensors), torch.__version__,
                            torch.get_num_threads())
    except Exception as error:  # noqa: BLE001 (reported in the line)
        lines.append({"op": op.name, "peer": "pytorch", "error": str(error).strip()[:300]})
    if len(outputs) == 2:
        a, b = outputs["onnxruntime"], outputs["pytorch"]
        scale = max(1.0, float(np.abs(b).max()))
        if a.shape != b.shape or not np.allclose(a, b, rtol=1e-4, atol=1e-4 * scale):
            error = "the two runtimes disagree" + (
                f" (largest difference {np.abs(a - b).max():.3g})" if a.shape == b.shape
                else f" (shapes {a.shape} and {b.shape})")
            return [{"op": op.name, "peer": p, "error": error} for p in outputs]
    # The runtimes in turns, each its fastest median of the rounds: a runtime's first
    # calls after the other's can be slower (PyTorch's ReLU of 2048 x 2048 took 24 ms
    # once after ONNX Runtime's, 1.2 ms on its own).
    best = {peer: math.inf for peer in calls}
    for _ in range(1 if quick else 3):
        for peer, (call, _, _) in calls.items():
            with torch.inference_mode():
                best[peer] = min(best[peer], median_ms(call, quick))
    for peer, (call, version, threads) in calls.items():
        ms = best[peer]
        print(f"runtimes_ops: {op.name:22} {peer:12} {ms:10.3f} ms", file=sys.stderr)
        lines.append({"op": op.name, "peer": peer, "peer_version": version, "form": op.form,
                      "ms": round(ms, 3), "threads": threads,
                      "checked": len(outputs) == 2})
    return lines


def selected(name, only):
    """Whether the operator `name` is one that `--only` asks for (all when it asks for
    none): its name, or a name it starts with."""
    return not only or any(name == o or name.startswith(o) for o in only)


def main():
    """Runs the suite (or `--only` parts of it) and prints a JSON line per operator and
    runtime."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="suite(4)'s sizes, without 1000^3")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="only operators with this name or prefix (repeatable)")
    args = parser.parse_args()
    for make in suite(4 if args.quick else 1):
        op = make()
        if selected(op.name, args.only):
            for line in run(op, args.quick):
                print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
