"""Every argument of the API is checked: a wrong kind is a TypeError, a value out of its
range a ValueError (never a bare OverflowError), and the message names the argument."""

import re

import gymnasium
import numpy as np
import pytest

import elevate
import elevate.gym
from elevate._checks import _check_search_arguments

SIZES = {"n": 64, "k": 64, "m": 64}
BAD_COUNTS = [(-1, ValueError), (2**64, ValueError), (2**200, ValueError), (1.5, TypeError), ("3", TypeError), (True, TypeError)]


def raises(kind, name):
    """pytest.raises for `kind` (exactly: not an OverflowError) whose message names `name`."""
    return pytest.raises(kind, match=re.escape(name))


def assert_not_overflow(info):
    assert not isinstance(info.value, OverflowError), info.value


@pytest.fixture(scope="module")
def compiled():
    program = elevate.Program.load(str(elevate_examples() / "matmul.rise"))
    return program.compile(nats={"n": 4, "k": 4, "m": 4})


@pytest.fixture(scope="module")
def scal():
    return elevate.Program.load(str(elevate_examples() / "scal.rise")).compile(nats={"n": 8})


def elevate_examples():
    from pathlib import Path

    return Path(__file__).resolve().parents[2] / "examples" / "rise"


# Compiled functions: runs, and one input per parameter.


@pytest.mark.parametrize("runs, kind", BAD_COUNTS + [(0, ValueError), (10**6 + 1, ValueError)])
def test_bench_and_rust_call_ns_check_runs_alike(compiled, runs, kind):
    a = np.ones((4, 4), np.float32)
    for method in (compiled.bench, compiled.rust_call_ns):
        with raises(kind, "runs") as info:
            method(runs, a, a)
        assert_not_overflow(info)
        assert "1 to 1000000" in str(info.value)


def test_rust_call_ns_refuses_zero_runs_as_bench_does(compiled):
    a = np.ones((4, 4), np.float32)
    with raises(ValueError, "runs must be an integer from 1 to 1000000, found 0"):
        compiled.rust_call_ns(0, a, a)
    with raises(ValueError, "runs must be an integer from 1 to 1000000, found 0"):
        compiled.bench(0, a, a)
    assert compiled.rust_call_ns(np.int64(2), a, a) > 0
    assert compiled.rust_call_ns(2) > 0, "random inputs when none are given, as bench"


def test_addresses_and_raw_calls_check_the_number_of_inputs(compiled):
    a = np.ones((4, 4), np.float32)
    for call in (compiled.addresses, compiled, lambda *args: compiled.rust_call_ns(1, *args)):
        with raises(elevate.InputError, "expected 2 inputs, one per parameter, found 1"):
            call(a)
        with raises(elevate.InputError, "expected 2 inputs, one per parameter, found 3"):
            call(a, a, a)
    assert compiled.addresses(a, a) == [a.ctypes.data, a.ctypes.data]


def test_a_scalar_input_out_of_range_names_its_parameter(scal):
    x = np.ones(8, np.float32)
    np.testing.assert_allclose(scal(2.0, x), 2 * x)
    with raises(elevate.InputError, "parameter 1") as info:
        scal("2", x)
    assert "f32" in str(info.value)
    for call in (scal, lambda *args: scal.rust_call_ns(1, *args)):
        with raises(elevate.InputError, "parameter 1") as info:
            call(10**400, x)
        assert_not_overflow(info)
        assert "range" in str(info.value)


def test_an_integer_scalar_out_of_its_type_names_its_parameter():
    f = elevate.Program.parse("def shift(c: i32, x: n.i32) = x |> map(fun(v => c + v))").compile(nats={"n": 4})
    x = np.arange(4, dtype=np.int32)
    np.testing.assert_array_equal(f(np.int64(3), x), x + 3)
    for bad, words in [(2**31, "found 2147483648"), (-(2**31) - 1, "found -2147483649"), (1.5, "found float"), (True, "found bool")]:
        with raises(elevate.InputError, "parameter 1: a scalar of i32 must be an integer from -2147483648 to 2147483647") as info:
            f(bad, x)
        assert words in str(info.value)
        with raises(elevate.InputError, "parameter 1"):
            f.rust_call_ns(1, bad, x)


def test_an_integer_input_beyond_64_bits_names_its_parameter():
    program = elevate.Program.parse("def inc(x: n.i64) = x |> map(fun(v => v + v))")
    np.testing.assert_array_equal(program.eval([1, 2]), [2, 4])
    with raises(ValueError, "parameter 1") as info:
        program.eval([1, 2**64])
    assert_not_overflow(info)
    assert "2**63" in str(info.value)


# Sizes.


@pytest.mark.parametrize(
    "size, kind",
    [(-1, ValueError), (2**63, ValueError), (2**64, ValueError), (1.5, TypeError), ("64", TypeError), (None, TypeError)],
)
def test_sizes_out_of_range_name_the_size(matmul, size, kind):
    nats = {"n": size, "k": 4, "m": 4}
    calls = [
        lambda: matmul.instantiate(nats),
        lambda: matmul.compile(nats=nats),
        lambda: matmul.emit("rise", nats=nats),
        lambda: elevate.Environment(matmul, nats=nats),
        lambda: elevate.gym.ScheduleEnv(matmul, nats=nats),
    ]
    for call in calls:
        with raises(kind, "nats['n']") as info:
            call()
        assert_not_overflow(info)
    if kind is ValueError:
        assert "a non-negative integer below 2**63" in str(info.value)


def test_sizes_that_are_not_a_mapping_are_a_type_error(matmul):
    for nats in ([("n", 4)], 4, "n=4"):
        with raises(TypeError, "nats"):
            matmul.instantiate(nats)
        with raises(TypeError, "nats"):
            matmul.compile(nats=nats)
    with raises(TypeError, "nats"):
        matmul.instantiate({4: 4})


# Strategy budgets.


@pytest.mark.parametrize(
    "budget, kind, name",
    [
        (-1, ValueError, "budget must be a non-negative integer below 2**64, found -1"),
        (2**64, ValueError, "budget"),
        (1.5, TypeError, "budget"),
        ([3], TypeError, "budget"),
        ({"steps": -1}, ValueError, "budget['steps'] must be a non-negative integer below 2**64"),
        ({"steps": 2**64}, ValueError, "budget['steps']"),
        ({"steps": "many"}, TypeError, "budget['steps']"),
        ({"time": -1}, ValueError, "budget['time']"),
        ({"time": float("nan")}, ValueError, "budget['time']"),
        ({"time": 10**400}, ValueError, "budget['time']"),
        ({"time": "1"}, TypeError, "budget['time']"),
        ({"time": True}, TypeError, "budget['time']"),
        ({"evals": 3}, ValueError, "unknown budget `evals`"),
        ({3: 3}, TypeError, "budget's keys"),
    ],
)
def test_strategy_budgets_are_checked(matmul, budget, kind, name):
    with raises(kind, name) as info:
        elevate.rules.DFNF().apply(matmul, budget=budget)
    assert_not_overflow(info)
    with raises(kind, name):
        elevate.saturate(matmul, budget=budget)


def test_good_budgets_still_apply(matmul):
    for budget in (None, 10**6, np.int64(10**6), {"steps": 10**6}, {"time": 5}, {"steps": 10**6, "time": 5.0}):
        program, _ = elevate.rules.DFNF().apply(matmul, budget=budget)
        assert isinstance(program, elevate.Program)


# The environment.


@pytest.mark.parametrize("threads, kind", BAD_COUNTS + [(4097, ValueError)])
def test_environment_threads_are_checked(matmul, threads, kind):
    for make in (elevate.Environment, elevate.gym.ScheduleEnv):
        with raises(kind, "threads") as info:
            make(matmul, nats=SIZES, threads=threads)
        assert_not_overflow(info)


def test_native_environment_actions_name_their_argument(matmul):
    env = elevate.Environment(matmul, nats=SIZES)
    transformations, parameters = env.shape
    for bad, kind in BAD_COUNTS + [(transformations, ValueError)]:
        with raises(kind, "transformation") as info:
            env.step(bad, 0)
        assert_not_overflow(info)
    for bad, kind in BAD_COUNTS + [(parameters, ValueError)]:
        with raises(kind, "parameter") as info:
            env.step(0, bad)
        assert_not_overflow(info)
    with raises(ValueError, f"transformation must be an integer from 0 to {transformations - 1}, found -1"):
        env.step(-1, 0)
    for bad, kind in BAD_COUNTS:
        with raises(kind, "transformation") as info:
            env.parameter_count(bad)
        assert_not_overflow(info)
    t, p = env.legal_actions()[0]
    assert env.parameter_count(np.int64(t)) >= 1
    env.step(np.int64(t), np.int64(p))


@pytest.fixture
def gym_env(matmul):
    return gymnasium.make(elevate.gym.ENV_ID, program=matmul, nats=SIZES).unwrapped


def test_gym_actions_outside_the_action_space_name_the_action(gym_env):
    gym_env.reset()
    transformations, parameters = gym_env.action_space.nvec
    cases = [
        ([-1, 0], ValueError, "action[0] (the transformation) must be an integer from 0 to"),
        ([transformations, 0], ValueError, "action[0]"),
        ([2**64, 0], ValueError, "action[0]"),
        ([0, -1], ValueError, "action[1] (the parameter) must be an integer from 0 to"),
        ([0, parameters], ValueError, "action[1]"),
        ([0, 2**64], ValueError, "action[1]"),
        ([0.5, 0], TypeError, "action[0]"),
        (np.array([0.0, 0.0]), TypeError, "action[0]"),
        ([0, 0, 0], ValueError, "action must be two integers"),
        (3, TypeError, "action must be two integers"),
    ]
    for action, kind, name in cases:
        with raises(kind, name) as info:
            gym_env.step(action)
        assert_not_overflow(info)
    # None of them took a step: the episode goes on with a legal action.
    _, _, _, _, info = gym_env.step(np.array(gym_env.legal_actions()[0]))
    assert not info["illegal"]


@pytest.mark.parametrize("seed, kind", [(-1, ValueError), (1.5, TypeError), ("1", TypeError)])
def test_gym_reset_seeds_are_checked(gym_env, seed, kind):
    with raises(kind, "seed") as info:
        gym_env.reset(seed=seed)
    assert_not_overflow(info)
    gym_env.reset(seed=np.int64(3))
    gym_env.reset(seed=2**70)


def test_gym_program_must_be_a_program_or_a_path():
    with raises(TypeError, "program"):
        elevate.gym.ScheduleEnv(3)


# Search (checked by elevate.search before the native search starts).


@pytest.mark.parametrize(
    "arguments, kind, name",
    [
        ({"seed": -1}, ValueError, "seed must be a non-negative integer below 2**64, found -1"),
        ({"seed": 2**64}, ValueError, "seed"),
        ({"seed": 1.5}, TypeError, "seed"),
        ({"seed": None}, TypeError, "seed"),
        ({"jobs": -1}, ValueError, "jobs must be an integer from 0 to 4096, found -1"),
        ({"jobs": 2**64}, ValueError, "jobs"),
        ({"jobs": "2"}, TypeError, "jobs"),
        ({"threads": -1}, ValueError, "threads"),
        ({"threads": 4097}, ValueError, "threads"),
        ({"threads": 2.0}, TypeError, "threads"),
        ({"budget": {"evals": -1}}, ValueError, "budget['evals'] must be a positive integer below 2**64"),
        ({"budget": {"evals": 0}}, ValueError, "budget['evals']"),
        ({"budget": {"evals": 2**64}}, ValueError, "budget['evals']"),
        ({"budget": {"evals": 2.5}}, TypeError, "budget['evals']"),
        ({"budget": {"time": -1}}, ValueError, "budget['time']"),
        ({"budget": {"time": 1e8}}, ValueError, "budget['time']"),
        ({"budget": {"time": "1"}}, TypeError, "budget['time']"),
        ({"budget": {"steps": 3}}, ValueError, "unknown budget"),
        ({"budget": 100}, TypeError, "budget"),
        ({"nats": {"n": -1}}, ValueError, "nats['n']"),
        ({"nats": {"n": 2**64}}, ValueError, "nats['n']"),
        ({"nats": [4]}, TypeError, "nats"),
    ],
)
def test_search_arguments_are_checked(arguments, kind, name):
    given = {"seed": 0, "jobs": None, "threads": None, "budget": None, **arguments}
    with raises(kind, name) as info:
        _check_search_arguments(**given)
    assert_not_overflow(info)


def test_good_search_arguments_pass():
    _check_search_arguments(0, None, None, None)
    _check_search_arguments(2**64 - 1, 4, 0, {"evals": 10, "time": 0.5}, {"n": 64})
    _check_search_arguments(np.uint64(7), np.int64(2), 4096, {"evals": np.int64(1)})
