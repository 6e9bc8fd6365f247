"""Search over strategies (``spec/search.md``) from Python."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from ._native import Program, _search

__all__ = ["search"]

Executor = Any


def _executor(executor: Union[str, Executor, None], jobs: Optional[int]) -> Optional[Executor]:
    if executor is None or executor == "local":
        return None
    if isinstance(executor, str):
        if executor == "ray" or executor.startswith("ray://"):
            from .executors import RayExecutor

            address = None if executor == "ray" else executor
            return RayExecutor(address=address)
        raise ValueError(f"unknown executor `{executor}` (local, ray, ray://ADDRESS)")
    if not hasattr(executor, "evaluate"):
        raise TypeError("an executor has a method evaluate(programs, cost, start, jobs)")
    return executor


def search(
    program: Union[Program, str],
    space: str = "auto",
    driver: str = "random",
    cost: str = "model",
    budget: Optional[Mapping[str, float]] = None,
    seed: int = 0,
    jobs: Optional[int] = None,
    nats: Optional[Mapping[str, int]] = None,
    threads: Optional[int] = None,
    executor: Union[str, Executor, None] = None,
) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """Searches ``space`` (strategy text with choice points, or ``auto``) from
    ``program`` (a :class:`Program` or a path) with ``driver`` (``exhaustive``,
    ``random``, ``beam(W)``, ``anneal``, ``mcts``, ``evolve(P)``), ranked by ``cost``
    (``model``, ``measured``, ``model+measured``), within ``budget``
    (``{"evals": N, "time": S}``, either or both; 100 evaluations by default).

    Candidates are evaluated on ``jobs`` threads (all cores by default), or by
    ``executor``: ``"ray"`` (a local Ray cluster, or the one ``ray.init`` joined),
    ``"ray://ADDRESS"``, or any object with ``evaluate(programs, cost, start, jobs)``.

    Returns the report (a dict with the keys of ``elevate search``'s report line) and
    the log (one dict per candidate, as ``log.jsonl``).
    """
    if isinstance(program, str):
        program = Program.load(program)
    budget = dict(budget or {"evals": 100})
    unknown = set(budget) - {"evals", "time"}
    if unknown:
        raise ValueError(f"unknown budget {sorted(unknown)} (evals, time)")
    evals = budget.get("evals")
    seconds = budget.get("time")
    report, log = _search(
        program,
        space,
        driver,
        cost,
        None if evals is None else int(evals),
        None if seconds is None else float(seconds),
        seed,
        jobs,
        None if nats is None else dict(nats),
        threads,
        _executor(executor, jobs),
    )
    return json.loads(report), [json.loads(line) for line in log]
