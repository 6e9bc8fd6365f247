"""Search over strategies (``spec/search.md``) from Python."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from ._checks import _check_search_arguments
from ._native import Network, Program, _search, _search_network

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
    program: Union[Program, Network, str],
    space: str = "auto",
    driver: Optional[str] = None,
    cost: Optional[str] = None,
    budget: Optional[Mapping[str, float]] = None,
    seed: Optional[int] = None,
    jobs: Optional[int] = None,
    nats: Optional[Mapping[str, int]] = None,
    threads: Optional[int] = None,
    executor: Union[str, Executor, None] = None,
    limits: Optional[str] = None,
    out: Union[str, "os.PathLike[str]", None] = None,
    resume: bool = False,
) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """Searches ``space`` (strategy text with choice points, or ``auto``) from
    ``program`` (a :class:`Program` or a path) with ``driver`` (``exhaustive``,
    ``random`` (the default), ``beam(W)``, ``anneal``, ``mcts``, ``evolve(P)``),
    ranked by ``cost`` (``model`` (the default), ``measured``, ``model+measured``),
    within ``budget`` (``{"evals": N, "time": S}``, either or both; 100 evaluations by
    default), from ``seed`` (0 by default).

    Measured candidates are compiled and run in worker processes (``python -m
    elevate.worker``), ``jobs`` of them at once (all cores by default), each under
    ``limits`` (``"compile=S,run=S,memory=SIZE"``, any of them; the defaults as
    ``elevate search``'s): a candidate whose worker passes a limit, crashes or runs
    out of memory is a failed candidate (``compile timeout``, ``timeout``,
    ``crashed``, ``out of memory``) and the search goes on. Or candidates go to
    ``executor``: ``"ray"`` (a local Ray cluster, or the one ``ray.init`` joined),
    ``"ray://ADDRESS"``, or any object with ``evaluate(programs, cost, start, jobs)``.

    With ``out``, the search's directory is written as it goes (``log.jsonl`` a line
    per candidate, ``report.json`` after every round, then ``best.*`` and the
    pictures), as ``elevate search --out`` writes it; with ``resume=True`` too, a
    search already in ``out`` goes on to this budget (its driver, seed and cost its
    own; its logged candidates not evaluated again), and one is started where there
    is none.

    A :class:`Network` is searched layer by layer (``spec/networks.md``, "Search"):
    each distinct layer once, a task scheduler spreading the budget by each layer's
    share of the network's time and how fast it still improves; the report's
    ``best_strategy`` is the network's strategy (``network.compile(...)`` takes it),
    its ``layers`` each layer's search. Its candidates run in this machine's workers
    (no ``executor``), and the log is ``out``'s ``log.jsonl`` (empty without ``out``).

    Returns the report (a dict with the keys of ``elevate search``'s report line) and
    the log (one dict per candidate, as ``log.jsonl``).
    """
    _check_search_arguments(0 if seed is None else seed, jobs, threads, budget, nats)
    if isinstance(program, str):
        program = Program.load(program)
    budget = dict(budget or {"evals": 100})
    unknown = set(budget) - {"evals", "time"}
    if unknown:
        raise ValueError(f"unknown budget {sorted(unknown)} (evals, time)")
    evals = budget.get("evals")
    seconds = budget.get("time")
    if limits is not None and not isinstance(limits, str):
        raise TypeError(f"limits must be text such as 'compile=5,run=1,memory=2G', found {limits!r}")
    if isinstance(program, Network):
        if executor not in (None, "local"):
            raise ValueError("a network's layers are searched on this machine (executor='local')")
        report = _search_network(
            program, space, driver, cost,
            None if evals is None else int(evals),
            None if seconds is None else float(seconds),
            seed, jobs, threads, limits,
            None if out is None else os.fspath(out),
            bool(resume),
        )
        layer_log: List[Dict[str, Any]] = []
        if out is not None and os.path.exists(os.path.join(out, "log.jsonl")):
            with open(os.path.join(out, "log.jsonl"), encoding="utf-8") as f:
                layer_log = [json.loads(line) for line in f if line.strip()]
        return json.loads(report), layer_log
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
        limits,
        None if out is None else os.fspath(out),
        bool(resume),
    )
    return json.loads(report), [json.loads(line) for line in log]
