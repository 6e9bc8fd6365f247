"""The interpreter and compiled functions against NumPy, and calls without copies."""

import numpy as np
import pytest

import elevate

RNG = np.random.default_rng(7)


def conv3x3(img, w):
    padded = np.pad(img, 1)
    out = np.zeros_like(img)
    for i in range(img.shape[0]):
        for j in range(img.shape[1]):
            out[i, j] = np.sum(padded[i : i + 3, j : j + 3] * w)
    return out


def stencil(x, w):
    padded = np.pad(x, 1)
    return np.array([np.dot(padded[i : i + 3], w) for i in range(len(x))], dtype=x.dtype)


def floats(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


def test_eval_agrees_with_numpy_on_random_inputs(examples, matmul):
    conv = elevate.Program.load(str(examples / "conv2d.rise"))
    sten = elevate.Program.load(str(examples / "stencil1d.rise"))
    for _ in range(3):
        a, b = floats(5, 3), floats(3, 4)
        np.testing.assert_allclose(matmul.eval(a, b), a @ b, rtol=1e-5, atol=1e-5)
        img, w = floats(6, 7), floats(3, 3)
        np.testing.assert_allclose(conv.eval(img, w), conv3x3(img, w), rtol=1e-5, atol=1e-5)
        x, w3 = floats(9), floats(3)
        np.testing.assert_allclose(sten.eval(x, w3), stencil(x, w3), rtol=1e-5, atol=1e-5)
    assert matmul.eval(a, b).dtype == np.float32


def test_eval_reports_inputs_that_do_not_fit(matmul):
    with pytest.raises(elevate.InputError):
        matmul.eval(floats(2, 3), floats(4, 2))


@pytest.mark.parametrize("strategy", [None, "baseline", "blocking", "vectorization", "par"])
def test_compiled_matmul_agrees_with_numpy(matmul, strategy):
    f = matmul.compile(strategy, nats={"n": 64, "k": 64, "m": 64})
    for _ in range(2):
        a, b = floats(64, 64), floats(64, 64)
        np.testing.assert_allclose(f(a, b), a @ b, rtol=1e-4, atol=1e-4)


def test_compiled_conv_and_stencil_agree_with_numpy(examples):
    conv = elevate.Program.load(str(examples / "conv2d.rise")).compile(nats={"n": 16, "m": 20})
    img, w = floats(16, 20), floats(3, 3)
    np.testing.assert_allclose(conv(img, w), conv3x3(img, w), rtol=1e-4, atol=1e-5)
    sten = elevate.Program.load(str(examples / "stencil1d.rise")).compile(nats={"n": 64})
    x, w3 = floats(64), floats(3)
    np.testing.assert_allclose(sten(x, w3), stencil(x, w3), rtol=1e-4, atol=1e-5)


def test_contiguous_arrays_are_read_and_written_in_place(matmul):
    f = matmul.compile(nats={"n": 8, "k": 8, "m": 8})
    a, b = floats(8, 8), floats(8, 8)
    assert f.addresses(a, b) == [a.ctypes.data, b.ctypes.data]
    out = np.empty((8, 8), dtype=np.float32)
    result = f(a, b, out=out)
    assert result is out and result.ctypes.data == out.ctypes.data
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)
    # A transposed view is not row-major: it is copied once, and still right.
    t = np.ascontiguousarray(b.T).T
    assert f.addresses(a, t)[1] != t.ctypes.data
    np.testing.assert_allclose(f(a, t), a @ b, rtol=1e-5, atol=1e-5)


def test_calls_with_the_wrong_dtype_shape_or_count_are_input_errors(matmul):
    f = matmul.compile(nats={"n": 4, "k": 4, "m": 4})
    with pytest.raises(elevate.InputError, match="float32"):
        f(np.zeros((4, 4)), np.zeros((4, 4), dtype=np.float32))
    with pytest.raises(elevate.InputError, match="shape"):
        f(floats(4, 5), floats(4, 4))
    with pytest.raises(elevate.InputError, match="inputs"):
        f(floats(4, 4))
    a = floats(4, 4)
    with pytest.raises(elevate.InputError, match="out"):
        f(a, floats(4, 4), out=np.zeros((4, 4)))


def test_bench_reports_times(matmul):
    line = matmul.compile("par", nats={"n": 32, "k": 32, "m": 32}).bench(5)
    assert line["runs"] == 5 and 0 < line["min_ms"] <= line["median_ms"] <= line["max_ms"]
    assert line["gflops"] > 0


def test_the_gpu_target_compiles_to_ptx_and_runs_or_says_there_is_no_gpu(examples):
    program = elevate.Program.load(str(examples / "gpu" / "scale.rise"))
    f = program.compile(target="gpu", nats={"n": 1024})
    assert all(".target sm_90" in ptx for ptx in f.ptx)
    x = floats(1024)
    try:
        y = f(x)
    except elevate.GpuError as e:
        assert "no GPU" in str(e)
    else:
        np.testing.assert_allclose(y, program.eval(x), rtol=1e-6)


def test_inputs_nested_deeper_than_numpy_allows_are_refused(matmul):
    deep = 1.0
    for _ in range(100):
        deep = [deep]
    with pytest.raises(ValueError, match="nested"):
        matmul.eval(deep, deep)


def test_a_compiled_function_is_shared_by_threads(matmul):
    from concurrent.futures import ThreadPoolExecutor

    f = matmul.compile("par", nats={"n": 64, "k": 64, "m": 64})
    pairs = [(floats(64, 64), floats(64, 64)) for _ in range(8)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda ab: f(*ab), pairs))
    for (a, b), c in zip(pairs, results):
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_a_result_of_pairs_is_evaluated_but_not_compiled_to_memory():
    pairs = elevate.Program.parse("def f(x: n.f32, y: n.f32) = zip(x, y)")
    assert pairs.eval([1.0, 2.0], [3.0, 4.0]) == [[1.0, 3.0], [2.0, 4.0]]
    with pytest.raises(elevate.InputError, match="2 arrays"):
        pairs.compile(nats={"n": 4})
