"""Networks from Python: ONNX models imported, compiled and called on NumPy arrays,
against ONNX Runtime's outputs (the committed fixtures, `tests/onnx/make_fixtures.py`)."""

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import elevate

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "onnx" / "fixtures"
MODELS = sorted(
    p.name[: -len(".onnx")] for p in FIXTURES.glob("*.onnx") if not p.name.startswith("bad_")
)
BAD = sorted(p.name[: -len(".onnx")] for p in FIXTURES.glob("bad_*.onnx"))

# What each refused model's error names: the node (index, name, operator) where
# there is one, the attribute or tensor, and words of its message.
REFUSED = {
    "bad_unsupported_op": dict(node=(1, "the_tanh", "Tanh"), says="node 1 `the_tanh` (Tanh)"),
    "bad_dilation": dict(node=(0, "dilated", "Conv"), attribute="dilations", says="node 0 `dilated` (Conv)"),
    "bad_gemm_alpha": dict(node=(0, "scaled", "Gemm"), attribute="alpha", says="node 0 `scaled` (Gemm)"),
    "bad_shape": dict(node=(0, "mismatch", "Conv"), says="node 0 `mismatch` (Conv)"),
    "bad_cycle": dict(node_in=("a", "b"), says="the graph has a cycle"),
    "bad_weight_size": dict(tensor="w", says="tensor `w`"),
    "bad_dynamic": dict(says="dynamic size 2"),
    "bad_opset": dict(says="opset 11"),
    "bad_two_inputs": dict(says="2 inputs"),
    "bad_truncated": dict(says="not an ONNX model"),
}


def relative_error(found, expected):
    """The worst |found - expected| / max(|expected|, 1), as the Rust tests measure."""
    assert found.shape == expected.shape, (found.shape, expected.shape)
    return float(np.max(np.abs(found - expected) / np.maximum(np.abs(expected), 1.0)))


def fixture(name):
    """A fixture's input and ONNX Runtime's output for it."""
    return np.load(FIXTURES / f"{name}.input.npy"), np.load(FIXTURES / f"{name}.ort.npy")


def load(name):
    """A fixture model, its symbolic batch (if any) the input's."""
    x, _ = fixture(name)
    return elevate.onnx.load(FIXTURES / f"{name}.onnx", batch=x.shape[0])


@pytest.fixture(scope="module")
def block():
    """The residual block, imported and compiled with the library's strategy."""
    net = load("resnet_block")
    return net, net.compile("network")


def test_the_fixtures_are_there():
    assert len(MODELS) >= 40, MODELS
    assert "resnet_block" in MODELS and "tiny_resnet" in MODELS
    assert BAD == sorted(REFUSED), "a refused model without an expectation (or one missing)"


@pytest.mark.parametrize("name", MODELS)
def test_every_model_compiled_computes_what_onnx_runtime_computes(name):
    x, expected = fixture(name)
    net = load(name)
    assert net.input_shape == x.shape
    assert net.output_shape == expected.shape
    compiled = net.compile("network", threads=2)
    found = compiled(x)
    assert found.dtype == np.float32
    assert relative_error(found, expected) <= 1e-4
    # A second call on the same compiled network gives the same result.
    np.testing.assert_array_equal(compiled(x), found)


@pytest.mark.parametrize("name", BAD)
def test_refused_models_are_model_errors_naming_where(name):
    path = FIXTURES / f"{name}.onnx"
    with pytest.raises(elevate.ModelError) as caught:
        elevate.onnx.load(path)
    e = caught.value
    want = REFUSED[name]
    assert isinstance(e, elevate.ElevateError)
    assert str(e).startswith(str(path)), str(e)
    assert e.file == str(path)
    assert want["says"] in str(e), str(e)
    if "node" in want:
        index, node, op = want["node"]
        assert e.node == {"index": index, "name": node, "op": op}, e.node
    elif "node_in" in want:
        assert e.node is not None and e.node["name"] in want["node_in"], e.node
    else:
        assert e.node is None
    assert e.attribute == want.get("attribute")
    assert e.tensor == want.get("tensor")


def test_a_missing_model_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no_such.onnx"):
        elevate.onnx.load(tmp_path / "no_such.onnx")


def test_a_batch_is_imposed_on_a_symbolic_batch_only():
    x, _ = fixture("batch_symbolic")
    assert elevate.onnx.load(FIXTURES / "batch_symbolic.onnx").input_shape[0] == 1
    assert elevate.onnx.load(FIXTURES / "batch_symbolic.onnx", batch=3).input_shape[0] == 3
    fixed = elevate.onnx.load(FIXTURES / "conv_batch2.onnx")
    assert fixed.input_shape[0] == 2
    with pytest.raises(elevate.ModelError, match="fixed batch of 2"):
        elevate.onnx.load(FIXTURES / "conv_batch2.onnx", batch=3)
    with pytest.raises(ValueError, match="batch"):
        elevate.onnx.load(FIXTURES / "relu.onnx", batch=0)


def test_a_network_says_its_program_weights_and_layers(block):
    net, _ = block
    assert isinstance(net.program, elevate.Program)
    assert net.program.entry == "resnet_block"
    assert net.source.rstrip().endswith(net.layers[-1]["name"])
    kinds = [layer["kind"] for layer in net.layers]
    assert kinds == ["conv", "batchnorm", "relu", "conv", "batchnorm", "add", "relu"]
    first = net.layers[0]
    assert first["def"].startswith("conv_") and first["node"] == "conv1"
    assert first["args"] == [net.input_name, "conv1_weight"]
    assert net.flops == sum(layer["flops"] for layer in net.layers) > 0
    weights = net.weights
    assert list(weights)[0] == "conv1_weight"
    assert weights["conv1_weight"].shape == (4, 4, 3, 3)
    assert all(w.dtype == np.float32 for w in weights.values())
    # The arrays are the network's: read-only, and the dict a copy.
    with pytest.raises(ValueError):
        weights["conv1_weight"][0, 0, 0, 0] = 1.0
    weights.clear()
    assert len(net.weights) == 10
    params = [name for name, _ in net.program.signature["params"]]
    assert params == [net.input_name, *net.weights]


def test_wrong_inputs_are_input_errors_naming_the_shape(block):
    _, compiled = block
    x, _ = fixture("resnet_block")
    with pytest.raises(elevate.InputError, match=r"float32 array of shape \[1, 4, 8, 8\]"):
        compiled(x.astype(np.float64))
    with pytest.raises(elevate.InputError, match=r"shape \[1, 4, 8, 8\], found .* \[1, 4, 8\]"):
        compiled(x[:, :, :, 0])
    with pytest.raises(elevate.InputError, match=r"\[1, 4, 8, 8\]"):
        compiled(x.reshape(4, 64))
    with pytest.raises(elevate.InputError):
        compiled(x.astype(np.int32))
    with pytest.raises(elevate.InputError):
        compiled("not an array")


def test_layouts_and_sequences_are_copied_once(block):
    _, compiled = block
    x, expected = fixture("resnet_block")
    # A non-contiguous view of the same values, and nested lists.
    strided = np.ascontiguousarray(x[..., ::-1])[..., ::-1]
    assert not strided.flags.c_contiguous
    np.testing.assert_array_equal(compiled(strided), compiled(x))
    assert relative_error(compiled(x.tolist()), expected) <= 1e-4


def test_out_is_written_in_place(block):
    _, compiled = block
    x, expected = fixture("resnet_block")
    out = np.full(compiled.output_shape, np.nan, dtype=np.float32)
    address = out.ctypes.data
    result = compiled(x, out=out)
    assert result is out and out.ctypes.data == address
    assert relative_error(out, expected) <= 1e-4
    for bad in [
        np.zeros((1, 4, 8), np.float32),
        np.zeros(compiled.output_shape, np.float64),
        np.zeros((1, 4, 8, 16), np.float32)[..., ::2],
    ]:
        with pytest.raises(elevate.InputError, match=r"out: .*\[1, 4, 8, 8\]"):
            compiled(x, out=bad)
    frozen = np.zeros(compiled.output_shape, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(elevate.InputError, match="writeable"):
        compiled(x, out=frozen)
    # The input and the result are of one shape here: `out` may not be the input.
    same = x.copy()
    with pytest.raises(elevate.InputError, match="overlap"):
        compiled(same, out=same)
    np.testing.assert_array_equal(same, x)


def test_one_compiled_network_called_from_four_threads(block):
    _, compiled = block
    rng = np.random.default_rng(3)
    inputs = [rng.uniform(-1, 1, compiled.input_shape).astype(np.float32) for _ in range(16)]
    alone = [compiled(x) for x in inputs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(compiled, inputs))
    for a, b in zip(alone, together):
        np.testing.assert_array_equal(a, b)
    # The inputs differ, so their results do: the threads did not share one.
    assert not np.array_equal(together[0], together[1])


def test_a_layer_takes_its_own_strategy_and_bad_strategies_raise(block):
    net, library = block
    x, expected = fixture("resnet_block")
    compiled = net.compile("layer(0, id) ; network")
    assert relative_error(compiled(x), expected) <= 1e-4
    first = compiled.units[0]
    assert first["layers"] == [0] and first["strategy"] == "id"
    assert library.units[0]["strategy"] != "id"
    assert compiled.strategy == "layer(0, id) ; network"
    # A Strategy is applied to every layer.
    every = net.compile(elevate.Strategy.parse("id"))
    assert relative_error(every(x), expected) <= 1e-4
    assert all(u["strategy"] == "id" for u in every.units)
    for text in ["layer(x, id)", "layer(1)", "noSuchRule", "network ;", 'layers(conv, id)']:
        with pytest.raises(elevate.ParseError, match="not a network strategy"):
            net.compile(text)
    with pytest.raises(elevate.StrategyError, match="the network has 7 layers"):
        net.compile("layer(7, id)")
    with pytest.raises(elevate.StrategyError, match="no layer of that kind"):
        net.compile('layers("pool", id) ; network')
    with pytest.raises(TypeError):
        net.compile(42)
    with pytest.raises(ValueError, match="threads"):
        net.compile("network", threads=0)


def test_units_bench_and_profile(block):
    _, compiled = block
    x, _ = fixture("resnet_block")
    units = compiled.units
    assert sorted(i for u in units for i in u["layers"]) == list(range(7))
    assert any(u["prepared"] > 0 for u in units)
    assert compiled.compile_seconds >= sum(u["seconds"] for u in units) > 0
    line = compiled.bench(x, 5)
    assert line["runs"] == 5
    assert 0 < line["min_ms"] <= line["median_ms"] <= line["max_ms"]
    assert line["gflops"] > 0
    assert compiled.bench()["runs"] == 10
    profile = compiled.profile(x, runs=3)
    assert [p["layers"] for p in profile] == [u["layers"] for u in units]
    assert all(p["median_ms"] >= 0 for p in profile)
    with pytest.raises(ValueError, match="runs"):
        compiled.bench(x, 0)


def test_the_interpreter_agrees_and_refuses_large_networks(block):
    net, _ = block
    x, expected = fixture("resnet_block")
    assert net.interpreter_seconds < 60
    assert relative_error(net.eval(x), expected) <= 1e-4
    with pytest.raises(elevate.EvalError, match=r"would take about \d+ seconds"):
        net.eval(x, max_seconds=0)
    with pytest.raises(elevate.InputError, match=r"\[1, 4, 8, 8\]"):
        net.eval(x[0])


def test_a_saved_network_loads_back(block, tmp_path):
    net, compiled = block
    x, _ = fixture("resnet_block")
    rise, weights = net.save(tmp_path)
    assert rise == tmp_path / "resnet_block.rise" and weights.exists()
    again = elevate.Network.load(rise, weights)
    assert again.source == net.source and again.flops is None
    assert [(l["name"], l["def"], l["kind"]) for l in again.layers] == [
        (l["name"], l["def"], l["kind"]) for l in net.layers
    ]
    np.testing.assert_array_equal(again.compile().__call__(x), compiled(x))
    # The weights file by default: the program's path with `.safetensors`.
    assert elevate.Network.load(rise).weights.keys() == net.weights.keys()


def test_weights_that_do_not_fit_the_program_are_errors_naming_them(block, tmp_path):
    net, _ = block
    rise, _ = net.save(tmp_path)
    _, other = load("relu").save(tmp_path / "relu")
    with pytest.raises(elevate.InputError, match="no tensor `conv1_weight`"):
        elevate.Network.load(rise, other)
    with pytest.raises(FileNotFoundError):
        elevate.Network.load(rise, tmp_path / "missing.safetensors")
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"\x00\x01 not safetensors")
    with pytest.raises(elevate.ModelError):
        elevate.Network.load(rise, garbage)
    broken = tmp_path / "broken.rise"
    broken.write_text(net.source.replace("def resnet_block", "def resnet_block(", 1))
    with pytest.raises(elevate.ParseError) as caught:
        elevate.Network.load(broken, tmp_path / "resnet_block.safetensors")
    assert caught.value.file == str(broken) and caught.value.line is not None


def test_a_network_is_searched_layer_by_layer_and_its_strategy_compiles(tmp_path):
    net = load("tiny_resnet")
    x, expected = fixture("tiny_resnet")
    report, log = elevate.search(net, "auto", cost="model", budget={"evals": 20},
                                 out=tmp_path / "search")
    # Four distinct kernels, the two 3x3 convolutions one of them.
    assert report["tasks"] == 4
    assert [l["layers"] for l in report["layers"]][2] == [4, 7]
    assert report["evaluations"] == 20 and len(log) == 20
    assert {c["layer"] for c in log} <= {l["layer"] for l in report["layers"]}
    # The network's strategy: a `layer` part per improved layer, then `network`.
    strategy = report["best_strategy"]
    assert strategy.endswith("network")
    improved = sum(len(l["layers"]) for l in report["layers"] if l["improved"])
    assert strategy.count("layer(") == improved
    y = net.compile(strategy)(x)
    assert relative_error(y, expected) < 1e-4
    # Resumed to a larger budget: the old candidates kept.
    again, log2 = elevate.search(net, "auto", cost="model", budget={"evals": 28},
                                 out=tmp_path / "search", resume=True)
    assert again["evaluations"] == 28 and log2[:20] == log
    with pytest.raises(ValueError, match="this machine"):
        elevate.search(net, "auto", executor="ray")
