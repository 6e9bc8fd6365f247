"""Search from Python: each driver reproducible under a fixed seed, the report's keys."""

import pytest

import elevate

SIZES = {"n": 64, "k": 64, "m": 64}
REPORT_KEYS = {
    "driver", "seed", "cost", "evaluations", "distinct_programs", "failed", "space_size",
    "seconds", "candidates_per_s", "baseline_cost", "best_cost", "speedup", "best_strategy",
    "best_program_hash", "found_at", "model_spearman", "baseline_spread_cost",
    "best_spread_cost", "statuses",
}
LOG_KEYS = {
    "index", "strategy", "program_hash", "status", "reason", "cost", "ms", "compile_ms",
    "model_cost", "cached", "best_so_far", "min_ms", "median_ms", "max_ms",
}


def without_times(log):
    times = ("ms", "compile_ms", "min_ms", "median_ms", "max_ms")
    return [{k: v for k, v in line.items() if k not in times} for line in log]


@pytest.mark.parametrize("driver", ["exhaustive", "random", "beam(4)", "anneal", "mcts", "evolve(8)"])
def test_each_driver_is_reproducible_under_a_seed(matmul, driver):
    runs = [
        elevate.search(matmul, "auto", driver, "model", {"evals": 12}, seed=3, nats=SIZES, jobs=2)
        for _ in range(2)
    ]
    (report, log), (again, log_again) = runs
    assert set(report) == REPORT_KEYS
    assert all(set(line) == LOG_KEYS for line in log)
    assert report["evaluations"] == len(log) <= 12
    assert without_times(log) == without_times(log_again)
    assert report["best_strategy"] == again["best_strategy"]
    assert report["speedup"] and report["speedup"] > 1


def test_the_best_point_replays_to_its_program(matmul):
    report, _ = elevate.search(matmul, "auto", "random", "model", {"evals": 10}, seed=1, nats=SIZES)
    best, _ = elevate.Strategy.parse(report["best_strategy"]).apply(matmul.instantiate(SIZES))
    assert best.fingerprint == report["best_program_hash"]


def test_a_search_with_bad_arguments_says_what_is_wrong(matmul):
    with pytest.raises(elevate.ParseError):
        elevate.search(matmul, "tile({16, 32}", nats=SIZES)
    with pytest.raises(elevate.SearchError, match="driver"):
        elevate.search(matmul, "auto", "greedy", nats=SIZES)
    with pytest.raises(elevate.SearchError, match="cost"):
        elevate.search(matmul, "auto", cost="guess", nats=SIZES)
    with pytest.raises(ValueError):
        elevate.search(matmul, "auto", budget={"steps": 3}, nats=SIZES)


def test_a_time_budget_stops_a_search(matmul):
    report, _ = elevate.search(matmul, "auto", "random", budget={"time": 0.5}, nats=SIZES)
    assert report["seconds"] < 5


def test_ctrl_c_stops_a_search_and_raises_keyboard_interrupt(matmul):
    import _thread
    import threading
    import time

    threading.Timer(0.2, _thread.interrupt_main).start()
    started = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        # Exhaustive: thousands of points, no early end of its own.
        elevate.search(matmul, "auto", "exhaustive", "model", {"time": 120}, nats=SIZES, jobs=1)
    assert time.perf_counter() - started < 20
