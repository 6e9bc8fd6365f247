"""Exports the networks benchmark's models (`examples/networks_bench.rs`): torchvision's
ResNet-18, ResNet-50, VGG-11 and MobileNetV2 with random weights (`weights=None`:
nothing is downloaded), in eval mode, batch 1, 224x224, to ONNX (opset 17, the
TorchScript exporter), into `target/models/`:

- `NAME.onnx`: the model;
- `NAME.pt`: its state dict, so that PyTorch eager (`peers.py`) runs the very weights
  the ONNX file holds;
- `NAME.json`: `{"network", "flops", "parameters", "seed", "torch", "onnx_opset"}`,
  `flops` counted on the ONNX graph (2 x the multiply-adds of every `Conv`, `Gemm` and
  `MatMul`, from the inferred shapes);
- `NAME.ort.npy`: ONNX Runtime's output (1x1000 f32) on the input below;
- `input.npy`: one seeded input, 1x3x224x224 f32 (standard normal, NumPy seed 0),
  shared by every model.

The weights are seeded (torch's generator, one seed per model). torchvision's default
initialization leaves BatchNorm an identity (mean 0, variance 1, scale 1, shift 0);
its statistics and affine parameters are drawn at random as well (seeded), so that a
compiler that folds BatchNorm into the convolution before it is checked doing so.

A model whose files are all there is skipped (the input is seeded, the same every
time; where `input.npy` is missing, it is made again and every output with it).
Prints one JSON line per model: `{"network", "onnx", "flops", "parameters",
"exported": true/false}`.

    PY=$(benches/peers/networks/setup)
    $PY benches/peers/networks/export_models.py [--only resnet18 ...] [--out DIR]
"""

import argparse
import json
import os
import sys
import warnings

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
MODELS = ["resnet18", "resnet50", "vgg11", "mobilenet_v2"]
# The seed of each model's weights (torch.manual_seed), and of the input (NumPy).
SEEDS = {name: 1 + i for i, name in enumerate(MODELS)}
INPUT_SEED = 0
OPSET = 17
SHAPE = (1, 3, 224, 224)


def make_input():
    """The benchmark's input: 1x3x224x224 f32, standard normal, seeded."""
    return np.random.default_rng(INPUT_SEED).standard_normal(SHAPE).astype(np.float32)


def build(name):
    """torchvision's `name` with random, seeded weights (BatchNorm's too), in eval
    mode. The same for every call: `peers.py` loads the saved state dict into it."""
    import torch
    import torchvision

    torch.manual_seed(SEEDS[name])
    model = getattr(torchvision.models, name)(weights=None)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                c = module.num_features
                module.running_mean.copy_(0.1 * torch.randn(c))
                module.running_var.copy_(0.5 + torch.rand(c))
                module.weight.copy_(0.5 + torch.rand(c))
                module.bias.copy_(0.1 * torch.randn(c))
    return model.eval()


def model_from_state(name, path):
    """torchvision's `name` (no weights downloaded) with the state dict at `path`, in
    eval mode: the model `NAME.onnx` holds."""
    import torch
    import torchvision

    model = getattr(torchvision.models, name)(weights=None)
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    return model.eval()


def flops_of(model_proto):
    """Floating-point operations of one inference: 2 x the multiply-adds of every
    `Conv` (its output's elements x input channels per group x kernel taps), `Gemm`
    and `MatMul`, with the shapes ONNX's shape inference gives."""
    import onnx

    inferred = onnx.shape_inference.infer_shapes(model_proto)
    graph = inferred.graph
    shapes = {}
    for value in list(graph.input) + list(graph.value_info) + list(graph.output):
        dims = value.type.tensor_type.shape.dim
        shapes[value.name] = [d.dim_value if d.HasField("dim_value") else None for d in dims]
    for init in graph.initializer:
        shapes[init.name] = list(init.dims)

    def attr(node, key, default):
        for a in node.attribute:
            if a.name == key:
                return onnx.helper.get_attribute_value(a)
        return default

    def product(xs):
        out = 1
        for x in xs:
            if x is None:
                raise ValueError("a dimension without a value")
            out *= x
        return out

    total = 0
    for node in graph.node:
        if node.op_type == "Conv":
            weight = shapes[node.input[1]]  # Cout x Cin/groups x kh x kw
            out = shapes[node.output[0]]
            total += 2 * product(out) * product(weight[1:])
        elif node.op_type == "Gemm":
            a, b = shapes[node.input[0]], shapes[node.input[1]]
            m = a[1] if attr(node, "transA", 0) else a[0]
            k = a[0] if attr(node, "transA", 0) else a[1]
            n = b[0] if attr(node, "transB", 0) else b[1]
            total += 2 * m * n * k
        elif node.op_type == "MatMul":
            a, out = shapes[node.input[0]], shapes[node.output[0]]
            total += 2 * product(out) * a[-1]
    return total


def ort_session(path, threads, profile=None):
    """An ONNX Runtime session of the model at `path` as the benchmark runs it: the CPU
    provider, every graph optimization, `threads` intra-op threads, one inter-op
    thread, sequential execution; profiled into files named `profile...` if given."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    if profile is not None:
        options.enable_profiling = True
        options.profile_file_prefix = profile
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(path, sess_options=options,
                                providers=["CPUExecutionProvider"])


def paths(out, name):
    """The files of model `name` in `out`."""
    return {ext: os.path.join(out, f"{name}.{ext}") for ext in ("onnx", "pt", "json", "ort.npy")}


def export(name, out, x, force):
    """Exports `name` into `out` unless its files are all there (or `force`); its
    JSON line."""
    import onnx
    import torch

    files = paths(out, name)
    if not force and all(os.path.exists(p) for p in files.values()):
        with open(files["json"], encoding="utf-8") as f:
            meta = json.load(f)
        return {"network": name, "onnx": files["onnx"], "flops": meta["flops"],
                "parameters": meta["parameters"], "exported": False}
    model = build(name)
    torch.save(model.state_dict(), files["pt"])
    # The model as peers.py sees it: from the saved state, not the object in hand.
    model = model_from_state(name, files["pt"])
    tmp = files["onnx"] + ".part"
    with torch.no_grad(), warnings.catch_warnings():
        # The TorchScript exporter (dynamo=False) is deprecated; it is the one asked for.
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(model, (torch.from_numpy(x),), tmp, dynamo=False,
                          opset_version=OPSET, input_names=["input"],
                          output_names=["output"])
    proto = onnx.load(tmp)
    onnx.checker.check_model(proto)
    flops = flops_of(proto)
    parameters = sum(p.numel() for p in model.parameters())
    os.replace(tmp, files["onnx"])
    (y,) = ort_session(files["onnx"], 1).run(None, {"input": x})
    np.save(files["ort.npy"], y.astype(np.float32))
    meta = {"network": name, "flops": flops, "parameters": parameters,
            "seed": SEEDS[name], "input_seed": INPUT_SEED, "torch": torch.__version__,
            "onnx_opset": OPSET, "input_shape": list(SHAPE), "output_shape": list(y.shape)}
    with open(files["json"], "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
    return {"network": name, "onnx": files["onnx"], "flops": flops,
            "parameters": parameters, "exported": True}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=MODELS, default=MODELS,
                        help="the models to export (default: all)")
    parser.add_argument("--out", default=os.path.join(REPO, "target", "models"),
                        help="the folder (default: target/models)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    input_path = os.path.join(args.out, "input.npy")
    force = not os.path.exists(input_path)
    x = make_input()
    if force:
        np.save(input_path, x)
    elif not np.array_equal(np.load(input_path), x):
        raise SystemExit(f"export_models: {input_path} is not the seeded input; remove it")
    for name in args.only:
        print(json.dumps(export(name, args.out, x, force)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
