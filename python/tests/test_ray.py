"""Search on a (local) Ray cluster: the same log as a local search, and a worker that
dies loses no candidate."""

import os
import signal

import pytest

ray = pytest.importorskip("ray")

import elevate
from elevate.executors import RayExecutor, evaluate_program

SIZES = {"n": 64, "k": 64, "m": 64}


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def comparable(log):
    return [{k: v for k, v in line.items() if k not in ("ms", "compile_ms")} for line in log]


@pytest.mark.parametrize("driver", ["random", "evolve(6)"])
def test_a_ray_search_logs_what_a_local_search_logs(cluster, matmul, driver):
    local = elevate.search(matmul, "auto", driver, "model", {"evals": 16}, seed=5, nats=SIZES, jobs=2)
    remote = elevate.search(matmul, "auto", driver, "model", {"evals": 16}, seed=5, nats=SIZES, jobs=2, executor="ray")
    assert comparable(remote[1]) == comparable(local[1])
    assert remote[0]["best_strategy"] == local[0]["best_strategy"]
    assert remote[0]["evaluations"] == 16


def test_a_worker_that_dies_loses_no_candidate(cluster, matmul, tmp_path):
    marker = str(tmp_path / "died")

    @ray.remote
    def dies_once(program, cost, start):
        # The first candidate any worker takes: its process is killed.
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL)
        except FileExistsError:
            return evaluate_program(program, cost, start)
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)

    executor = RayExecutor(task=dies_once, max_retries=3)
    local = elevate.search(matmul, "auto", "random", "model", {"evals": 12}, seed=2, nats=SIZES, jobs=2)
    remote = elevate.search(matmul, "auto", "random", "model", {"evals": 12}, seed=2, nats=SIZES, jobs=2, executor=executor)
    assert os.path.exists(marker), "no worker died"
    assert comparable(remote[1]) == comparable(local[1])
    assert [line["index"] for line in remote[1]] == list(range(12))
