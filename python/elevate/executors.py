"""Executors: where a search's candidates are evaluated.

A search (``elevate.search`` or ``elevate search``) makes its candidates and keeps
its log in one process; an executor evaluates each round's candidate programs (sent
as RISE text) and answers with one result per program, in order. Results are
deterministic under the model cost, so a search gives the same log whatever executes
it.

:class:`RayExecutor` sends each candidate to a Ray task: ``ray.init()`` starts a
local cluster, an address (``ray://HOST:10001`` or ``auto``) joins a running one. A
worker that dies has its task retried on another (``max_retries``); each candidate's
result is taken once, in the order of the round, so nothing in the log is lost or
doubled.

``python -m elevate.executors ray://HOST:10001`` serves a Ray executor to the
command line: ``elevate search ... --executor ray://HOST:10001`` starts it and sends
it one JSON request per line (``{"programs": [...], "cost": ..., "start": ...,
"jobs": N}``), each answered by one line (a JSON list of results).
"""

from __future__ import annotations

import functools
import json
import sys
from typing import Any, Callable, List, Optional, Sequence

from ._native import CostEvaluator

__all__ = ["LocalExecutor", "RayExecutor", "evaluate_program", "serve"]


@functools.lru_cache(maxsize=8)
def _evaluator(cost: str, start: str, threads: Optional[int] = None) -> CostEvaluator:
    return CostEvaluator(cost, start, threads)


def evaluate_program(program: str, cost: str, start: str) -> str:
    """The result of one candidate (RISE text) by ``cost`` for searches from ``start``,
    as one JSON object (``cost``, ``model``, ``ms``, ``compile_ms``; or ``status`` and
    ``reason``). What a worker runs; its evaluator is kept between candidates."""
    return _evaluator(cost, start).evaluate([program])[0]


class LocalExecutor:
    """Evaluates candidates in this process, on ``jobs`` threads (for comparison)."""

    def evaluate(self, programs: Sequence[str], cost: str, start: str, jobs: int) -> List[str]:
        return _evaluator(cost, start).evaluate(list(programs), jobs)


class RayExecutor:
    """Evaluates candidates as Ray tasks, one per candidate.

    ``address``: ``None`` starts (or reuses) a local cluster; ``"auto"`` or
    ``"ray://HOST:PORT"`` joins a running one. ``max_retries``: how often a task whose
    worker died is run again elsewhere. ``num_cpus``: the cores each task holds (give a
    measured cost a machine's cores). ``task``: a Ray remote function
    ``(program, cost, start) -> str`` to run instead of :func:`evaluate_program`.
    """

    def __init__(
        self,
        address: Optional[str] = None,
        max_retries: int = 3,
        num_cpus: float = 1,
        task: Optional[Any] = None,
    ) -> None:
        import ray

        if not ray.is_initialized():
            ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
        if task is None:
            task = ray.remote(evaluate_program)
        self._ray = ray
        self._task = task.options(max_retries=max_retries, num_cpus=num_cpus, retry_exceptions=False)

    def evaluate(self, programs: Sequence[str], cost: str, start: str, jobs: int) -> List[str]:
        futures = [self._task.remote(program, cost, start) for program in programs]
        results = []
        for program, future in zip(programs, futures):
            try:
                results.append(self._ray.get(future))
            except Exception as e:  # the task failed for good: a failed candidate
                results.append(json.dumps({"status": "compile failed", "reason": f"executor: {e}"}))
        return results


def serve(executor: Any, requests=sys.stdin, answers=sys.stdout) -> None:
    """Answers JSON requests, one per line, with ``executor`` (see the module)."""
    for line in requests:
        if not line.strip():
            continue
        request = json.loads(line)
        results = executor.evaluate(request["programs"], request["cost"], request["start"], request.get("jobs", 1))
        answers.write("[" + ",".join(results) + "]\n")
        answers.flush()


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 1:
        print("usage: python -m elevate.executors ray|ray://HOST:PORT|auto|local", file=sys.stderr)
        return 2
    target = argv[0]
    if target == "local":
        executor: Any = LocalExecutor()
    elif target == "ray":
        executor = RayExecutor()
    else:
        executor = RayExecutor(address=target)
    serve(executor)
    return 0


if __name__ == "__main__":
    # Run as `elevate.executors`, not `__main__`, so that Ray workers import the
    # functions they are sent by their real names.
    from elevate.executors import main as _main

    sys.exit(_main())
