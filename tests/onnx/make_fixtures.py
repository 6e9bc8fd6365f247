"""Builds the ONNX fixtures of elevate-onnx's tests: small models (each operator alone,
and small networks), seeded random weights and input, ONNX Runtime's output, and a few
models the importer must refuse. Run by `scripts/onnx-fixtures`.

For each model NAME: fixtures/NAME.onnx, NAME.input.npy (the input, seeded) and
NAME.ort.npy (ONNX Runtime's output, all graph optimizations off, so that it computes
each node as the model says). The refused ones are fixtures/bad_*.onnx only.
"""

import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "fixtures")
IR_VERSION = 10


class Net:
    """A graph being built: nodes, initializers (seeded), one input, one output."""

    def __init__(self, name, shape, seed, opset=17, batch="fixed"):
        self.name = name
        self.shape = list(shape)
        self.rng = np.random.default_rng(seed)
        self.opset = opset
        self.batch = batch
        self.nodes = []
        self.inits = []
        self.count = 0

    def fresh(self, base):
        self.count += 1
        return f"{base}{self.count}"

    def weight(self, name, shape, scale=0.5, positive=False):
        if positive:
            data = self.rng.uniform(0.5, 1.5, size=shape)
        else:
            data = self.rng.normal(0.0, scale, size=shape)
        self.inits.append(numpy_helper.from_array(data.astype(np.float32), name))
        return name

    def ints(self, name, values):
        self.inits.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name

    def scalar(self, name, value):
        self.inits.append(numpy_helper.from_array(np.array(value, dtype=np.float32), name))
        return name

    def op(self, op, inputs, name=None, outputs=1, **attrs):
        name = name or self.fresh(op.lower())
        outs = [f"{name}_out"] + [f"{name}_out{i}" for i in range(1, outputs)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0]

    def conv(self, x, cin, cout, k, stride=1, pads=None, bias=True, group=1, name=None, **attrs):
        name = name or self.fresh("conv")
        kh, kw = (k, k) if isinstance(k, int) else k
        sh, sw = (stride, stride) if isinstance(stride, int) else stride
        w = self.weight(f"{name}.weight", [cout, cin // group, kh, kw])
        inputs = [x, w]
        if bias:
            inputs.append(self.weight(f"{name}.bias", [cout]))
        if pads is not None:
            attrs["pads"] = pads
        return self.op("Conv", inputs, name=name, kernel_shape=[kh, kw], strides=[sh, sw], group=group, **attrs)

    def bn(self, x, c, name=None):
        name = name or self.fresh("bn")
        ins = [
            self.weight(f"{name}.weight", [c], positive=True),
            self.weight(f"{name}.bias", [c]),
            self.weight(f"{name}.running_mean", [c], scale=0.2),
            self.weight(f"{name}.running_var", [c], positive=True),
        ]
        return self.op("BatchNormalization", [x] + ins, name=name, epsilon=1e-5)

    def model(self, out, out_dims):
        dims = list(self.shape)
        if self.batch == "symbolic":
            dims[0] = "N"
            if out_dims is not None:
                out_dims = ["N"] + list(out_dims[1:])
        x = helper.make_tensor_value_info("input", TensorProto.FLOAT, dims)
        y = helper.make_tensor_value_info(out, TensorProto.FLOAT, out_dims)
        graph = helper.make_graph(self.nodes, self.name, [x], [y], self.inits)
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", self.opset)],
            producer_name="elevate-fixtures",
        )
        model.ir_version = IR_VERSION
        return model

    def save(self, out):
        path = os.path.join(OUT, f"{self.name}.onnx")
        run_shape = list(self.shape)
        if self.batch == "symbolic":
            run_shape[0] = 2
        x = np.random.default_rng(1000 + len(self.name)).normal(0.0, 1.0, size=run_shape).astype(np.float32)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        # Run once to learn the output's shape, then declare it and check the model.
        session = ort.InferenceSession(
            self.model(out, None).SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        (y,) = session.run(None, {"input": x})
        model = self.model(out, list(y.shape))
        onnx.checker.check_model(model, full_check=True)
        onnx.save(model, path)
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        (y,) = session.run(None, {"input": x})
        np.save(os.path.join(OUT, f"{self.name}.input.npy"), x)
        np.save(os.path.join(OUT, f"{self.name}.ort.npy"), y.astype(np.float32))
        print(f"{self.name}: {list(x.shape)} -> {list(y.shape)}")


def single_convs():
    cases = [
        # name, input, cout, kernel, stride, pads, bias
        ("conv3x3_s1_p1", [1, 3, 12, 12], 4, 3, 1, [1, 1, 1, 1], True),
        ("conv3x3_s1_p1_nobias", [1, 3, 12, 12], 4, 3, 1, [1, 1, 1, 1], False),
        ("conv3x3_s2_p1", [1, 3, 16, 16], 4, 3, 2, [1, 1, 1, 1], True),
        ("conv3x3_s2_p1_odd", [1, 3, 15, 13], 4, 3, 2, [1, 1, 1, 1], False),
        ("conv1x1_s1", [1, 4, 8, 8], 6, 1, 1, [0, 0, 0, 0], True),
        ("conv1x1_s2", [1, 4, 8, 8], 6, 1, 2, [0, 0, 0, 0], False),
        ("conv7x7_s2_p3", [1, 3, 16, 16], 4, 7, 2, [3, 3, 3, 3], False),
        ("conv3x3_valid", [1, 2, 10, 9], 3, 3, 1, [0, 0, 0, 0], True),
        ("conv3x3_asym_pads", [1, 2, 9, 10], 3, 3, 1, [1, 0, 2, 1], True),
        ("conv3x3_s2_asym_pads", [1, 2, 12, 11], 3, 3, 2, [0, 1, 1, 0], False),
        ("conv_rect_k3x1_s2x1", [1, 2, 11, 8], 3, (3, 1), (2, 1), [1, 0, 1, 0], True),
    ]
    for name, shape, cout, k, stride, pads, bias in cases:
        n = Net(name, shape, seed=len(name))
        y = n.conv("input", shape[1], cout, k, stride, pads, bias)
        n.save(y)
    n = Net("conv3x3_s2_same_upper", [1, 3, 9, 9], seed=7)
    n.save(n.conv("input", 3, 4, 3, 2, None, True, auto_pad="SAME_UPPER"))
    n = Net("conv_batch2", [2, 3, 8, 8], seed=8)
    n.save(n.conv("input", 3, 4, 3, 1, [1, 1, 1, 1], True))
    for name, stride, bias in [("depthwise3x3_s1", 1, True), ("depthwise3x3_s2", 2, False)]:
        n = Net(name, [1, 4, 10, 10], seed=9 + stride)
        n.save(n.conv("input", 4, 4, 3, stride, [1, 1, 1, 1], bias, group=4))


def single_ops():
    n = Net("maxpool3x3_s2_p1", [1, 3, 11, 11], seed=20)
    n.save(n.op("MaxPool", ["input"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    n = Net("maxpool2x2_s2", [1, 3, 8, 8], seed=21)
    n.save(n.op("MaxPool", ["input"], kernel_shape=[2, 2], strides=[2, 2]))
    n = Net("avgpool3x3_s1_p1_incl", [1, 2, 8, 8], seed=22)
    n.save(n.op("AveragePool", ["input"], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], count_include_pad=1))
    n = Net("avgpool3x3_s2_p1_excl", [1, 2, 9, 8], seed=23)
    n.save(n.op("AveragePool", ["input"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    n = Net("avgpool2x2_s2", [1, 2, 8, 8], seed=24)
    n.save(n.op("AveragePool", ["input"], kernel_shape=[2, 2], strides=[2, 2]))
    n = Net("globalavgpool", [1, 5, 7, 6], seed=25)
    n.save(n.op("GlobalAveragePool", ["input"]))
    n = Net("batchnorm", [1, 4, 6, 6], seed=26, opset=15)
    n.save(n.bn("input", 4))
    n = Net("relu", [1, 3, 5, 5], seed=27)
    n.save(n.op("Relu", ["input"]))
    n = Net("relu_2d", [3, 7], seed=28)
    n.save(n.op("Relu", ["input"]))
    n = Net("clip", [1, 3, 5, 5], seed=29, opset=13)
    n.save(n.op("Clip", ["input", n.scalar("lo", 0.0), n.scalar("hi", 0.5)]))
    n = Net("clip_min_only", [1, 2, 4, 4], seed=30)
    n.save(n.op("Clip", ["input", n.scalar("lo", -0.25)]))
    n = Net("clip_constant_nodes", [1, 2, 4, 4], seed=31, opset=21)
    lo = n.op("Constant", [], value=numpy_helper.from_array(np.array(-0.5, dtype=np.float32)))
    hi = n.op("Constant", [], value_float=0.75)
    n.save(n.op("Clip", ["input", lo, hi]))
    n = Net("add", [1, 3, 6, 6], seed=32)
    r = n.op("Relu", ["input"])
    n.save(n.op("Add", ["input", r]))
    n = Net("add_bias", [1, 3, 6, 6], seed=33)
    n.save(n.op("Add", ["input", n.weight("channel_bias", [1, 3, 1, 1])]))
    n = Net("mul_scalar", [1, 3, 4, 4], seed=34)
    n.save(n.op("Mul", ["input", n.scalar("factor", 0.125)]))
    n = Net("flatten", [1, 3, 4, 5], seed=35)
    n.save(n.op("Flatten", ["input"], axis=1))
    n = Net("reshape_flatten", [2, 3, 4, 4], seed=36, opset=14)
    n.save(n.op("Reshape", ["input", n.ints("shape", [0, -1])]))
    for name, trans_b, bias in [("gemm_tb0", 0, True), ("gemm_tb1", 1, True), ("gemm_nobias", 1, False)]:
        n = Net(name, [2, 12], seed=37 + trans_b)
        inputs = ["input", n.weight("fc.weight", [10, 12] if trans_b else [12, 10])]
        if bias:
            inputs.append(n.weight("fc.bias", [10]))
        n.save(n.op("Gemm", inputs, transB=trans_b))
    n = Net("matmul_bias", [3, 8], seed=40)
    m = n.op("MatMul", ["input", n.weight("w", [8, 5])])
    n.save(n.op("Add", [m, n.weight("b", [5])]))
    n = Net("softmax", [2, 10], seed=41, opset=13)
    n.save(n.op("Softmax", [n.op("Mul", ["input", n.scalar("temperature", 3.0)])], axis=-1))
    n = Net("concat", [1, 2, 6, 6], seed=42)
    a = n.conv("input", 2, 3, 3, 1, [1, 1, 1, 1], True)
    b = n.conv("input", 2, 2, 1, 1, [0, 0, 0, 0], False)
    n.save(n.op("Concat", [a, b], axis=1))
    n = Net("concat3", [1, 2, 5, 5], seed=43)
    r = n.op("Relu", ["input"])
    n.save(n.op("Concat", ["input", r, "input"], axis=1))
    n = Net("identity_dropout", [1, 2, 4, 4], seed=44, opset=13)
    r = n.op("Relu", ["input"])
    i = n.op("Identity", [r])
    d = n.op("Dropout", [i], outputs=2)
    n.save(n.op("Relu", [d]))


def networks():
    # A ResNet basic block: conv-bn-relu-conv-bn, plus the input, relu.
    n = Net("resnet_block", [1, 4, 8, 8], seed=50, opset=21)
    y = n.op("Relu", [n.bn(n.conv("input", 4, 4, 3, 1, [1, 1, 1, 1], False), 4)])
    y = n.bn(n.conv(y, 4, 4, 3, 1, [1, 1, 1, 1], False), 4)
    n.save(n.op("Relu", [n.op("Add", [y, "input"])]))
    # A downsampling block: stride 2 and a 1x1 stride-2 projection of the input.
    n = Net("resnet_down", [1, 4, 8, 8], seed=51)
    y = n.op("Relu", [n.bn(n.conv("input", 4, 8, 3, 2, [1, 1, 1, 1], False), 8)])
    y = n.bn(n.conv(y, 8, 8, 3, 1, [1, 1, 1, 1], False), 8)
    skip = n.bn(n.conv("input", 4, 8, 1, 2, [0, 0, 0, 0], False), 8)
    n.save(n.op("Relu", [n.op("Add", [y, skip])]))
    # A MobileNetV2 inverted residual: 1x1 expand, ReLU6, depthwise 3x3, ReLU6, 1x1
    # project, plus the input.
    n = Net("mobilenet_block", [1, 4, 8, 8], seed=52, opset=13)
    lo, hi = n.scalar("six_lo", 0.0), n.scalar("six_hi", 6.0)
    y = n.op("Clip", [n.bn(n.conv("input", 4, 12, 1, 1, [0, 0, 0, 0], False), 12), lo, hi])
    y = n.op("Clip", [n.bn(n.conv(y, 12, 12, 3, 1, [1, 1, 1, 1], False, group=12), 12), lo, hi])
    y = n.bn(n.conv(y, 12, 4, 1, 1, [0, 0, 0, 0], False), 4)
    n.save(n.op("Add", ["input", y]))
    # A VGG block: two 3x3 convolutions with ReLU, 2x2 max pooling.
    n = Net("vgg_block", [1, 3, 12, 12], seed=53)
    y = n.op("Relu", [n.conv("input", 3, 6, 3, 1, [1, 1, 1, 1], True)])
    y = n.op("Relu", [n.conv(y, 6, 6, 3, 1, [1, 1, 1, 1], True)])
    n.save(n.op("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2]))
    # A classifier head: global average pooling, flatten, a dense layer, softmax.
    n = Net("classifier_head", [1, 8, 4, 4], seed=54)
    y = n.op("Flatten", [n.op("GlobalAveragePool", ["input"])], axis=1)
    y = n.op("Gemm", [y, n.weight("fc.weight", [5, 8]), n.weight("fc.bias", [5])], transB=1)
    n.save(n.op("Softmax", [y], axis=1))
    # A symbolic batch (run at 2): conv, relu, pooling, dense.
    n = Net("batch_symbolic", [1, 3, 8, 8], seed=55, batch="symbolic")
    y = n.op("Relu", [n.conv("input", 3, 4, 3, 2, [1, 1, 1, 1], True)])
    y = n.op("Flatten", [n.op("GlobalAveragePool", [y])], axis=1)
    n.save(n.op("Gemm", [y, n.weight("fc.weight", [3, 4]), n.weight("fc.bias", [3])], transB=1))
    # A ResNet in small: the stem (7x7/2, BN, ReLU, 3x3/2 max pool), a basic block,
    # the head.
    n = Net("tiny_resnet", [1, 3, 16, 16], seed=56, opset=17)
    y = n.op("Relu", [n.bn(n.conv("input", 3, 4, 7, 2, [3, 3, 3, 3], False), 4)])
    y = n.op("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    z = n.op("Relu", [n.bn(n.conv(y, 4, 4, 3, 1, [1, 1, 1, 1], False), 4)])
    z = n.bn(n.conv(z, 4, 4, 3, 1, [1, 1, 1, 1], False), 4)
    y = n.op("Relu", [n.op("Add", [z, y])])
    y = n.op("Flatten", [n.op("GlobalAveragePool", [y])], axis=1)
    n.save(n.op("Gemm", [y, n.weight("fc.weight", [6, 4]), n.weight("fc.bias", [6])], transB=1))


def save_bad(model, name):
    onnx.save(model, os.path.join(OUT, f"{name}.onnx"))
    print(f"{name}: refused")


def bad_model(nodes, inits, dims=(1, 2, 6, 6), opset=17, extra_inputs=()):
    x = helper.make_tensor_value_info("input", TensorProto.FLOAT, list(dims))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, "bad", [x, *extra_inputs], [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = IR_VERSION
    return model


def bad():
    rng = np.random.default_rng(99)
    w = numpy_helper.from_array(rng.normal(size=(3, 2, 3, 3)).astype(np.float32), "w")
    relu = helper.make_node("Relu", ["input"], ["r"], name="first_relu")
    save_bad(bad_model([relu, helper.make_node("Tanh", ["r"], ["y"], name="the_tanh")], []), "bad_unsupported_op")
    conv = helper.make_node("Conv", ["input", "w"], ["y"], name="dilated", kernel_shape=[3, 3], dilations=[2, 2])
    save_bad(bad_model([conv], [w]), "bad_dilation")
    gemm = helper.make_node("Gemm", ["input", "fc"], ["y"], name="scaled", alpha=0.5)
    fc = numpy_helper.from_array(rng.normal(size=(6, 4)).astype(np.float32), "fc")
    save_bad(bad_model([gemm], [fc], dims=(1, 6)), "bad_gemm_alpha")
    save_bad(bad_model([helper.make_node("Relu", ["input"], ["y"])], [], dims=(1, 2, "height", 6)), "bad_dynamic")
    save_bad(bad_model([helper.make_node("Relu", ["input"], ["y"])], [], opset=11), "bad_opset")
    a = helper.make_node("Add", ["input", "b_out"], ["a_out"], name="a")
    b = helper.make_node("Relu", ["a_out"], ["b_out"], name="b")
    c = helper.make_node("Relu", ["a_out"], ["y"], name="c")
    save_bad(bad_model([c, a, b], []), "bad_cycle")
    short = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[3, 2, 3, 3])
    short.raw_data = rng.normal(size=(3 * 2 * 3 * 3 - 5,)).astype(np.float32).tobytes()
    conv = helper.make_node("Conv", ["input", "w"], ["y"], name="conv", kernel_shape=[3, 3])
    save_bad(bad_model([conv], [short]), "bad_weight_size")
    wrong = numpy_helper.from_array(rng.normal(size=(3, 5, 3, 3)).astype(np.float32), "w")
    save_bad(bad_model([helper.make_node("Conv", ["input", "w"], ["y"], name="mismatch")], [wrong]), "bad_shape")
    two = helper.make_tensor_value_info("other", TensorProto.FLOAT, [1, 2, 6, 6])
    save_bad(bad_model([helper.make_node("Add", ["input", "other"], ["y"], name="sum")], [], extra_inputs=[two]), "bad_two_inputs")
    good = os.path.join(OUT, "resnet_block.onnx")
    data = open(good, "rb").read()
    with open(os.path.join(OUT, "bad_truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])
    print("bad_truncated: refused")


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith((".onnx", ".npy")):
            os.remove(os.path.join(OUT, f))
    single_convs()
    single_ops()
    networks()
    bad()


if __name__ == "__main__":
    main()
