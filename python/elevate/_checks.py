"""Checks of the Python API's arguments: an argument that is not of its kind is a
``TypeError``, one out of its range a ``ValueError``, and either names the argument and
what it must be (``seed must be a non-negative integer below 2**64, found -1``), as the
native module's checks do (``python/src/convert.rs``)."""

from __future__ import annotations

import numbers
import operator
from typing import Any, Mapping, Optional

__all__ = ["check_nats", "integer", "range_text", "seconds"]

#: The most threads (or jobs) an argument may ask for, as the command line's ``--threads``.
MAX_THREADS = 4096

#: The most seconds a time budget may give, as the native module's.
MAX_SECONDS = 1e7

_BELOW = {2**64 - 1: "2**64", 2**63 - 1: "2**63", 2**32 - 1: "2**32", 2**31 - 1: "2**31"}


def range_text(low: int, high: Optional[int]) -> str:
    """What an integer in ``low..high`` (``high`` included; ``None``: no bound) is, in words."""
    if high is None:
        return {0: "a non-negative integer", 1: "a positive integer"}.get(low, f"an integer of at least {low}")
    if high in _BELOW and low in (0, 1):
        kind = "a non-negative" if low == 0 else "a positive"
        return f"{kind} integer below {_BELOW[high]}"
    return f"an integer from {low} to {high}"


def _shown(n: int) -> str:
    try:
        text = str(n)
    except ValueError:  # more digits than Python prints
        return "an integer too long to print"
    if len(text) > 40:
        return f"{text[:20]}... ({len(text.lstrip('-'))} digits)"
    return text


def integer(value: Any, name: str, low: int = 0, high: Optional[int] = None) -> int:
    """``value`` (an int, or anything with ``__index__`` such as NumPy's integers; not a
    bool) as an int in ``low..high``, or a ``TypeError``/``ValueError`` naming ``name``."""
    expected = range_text(low, high)
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        raise TypeError(f"{name} must be {expected}, found {type(value).__name__}")
    try:
        index = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be {expected}, found {type(value).__name__}") from None
    if index < low or (high is not None and index > high):
        raise ValueError(f"{name} must be {expected}, found {_shown(index)}")
    return index


def seconds(value: Any, name: str) -> float:
    """A number of seconds, more than 0 and at most 10^7, or an error naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number of seconds, found {type(value).__name__}")
    try:
        s = float(value)
    except OverflowError:
        s = float("inf")
    if not (0 < s <= MAX_SECONDS):
        raise ValueError(f"{name} must be more than 0 and at most 10^7 seconds, found {value}")
    return s


def check_nats(value: Any) -> None:
    """Sizes: ``None``, or a mapping of names to non-negative integers below 2**63."""
    if value is None:
        return
    if not isinstance(value, Mapping):
        raise TypeError(f'nats must be a dict of sizes (such as {{"n": 64}}), found {type(value).__name__}')
    for key, size in value.items():
        if not isinstance(key, str):
            raise TypeError(f"nats must name its sizes with strings, found a key of type {type(key).__name__}")
        integer(size, f"nats['{key}']", 0, 2**63 - 1)


def _check_search_arguments(
    seed: Any, jobs: Any, threads: Any, budget: Any, nats: Any = None
) -> None:
    """The checks of :func:`elevate.search`'s numbers: ``seed`` (below 2**64), ``jobs``
    and ``threads`` (``None``, or 0 to 4096, as the command line's), ``budget``
    (``None`` or a mapping: ``evals`` a positive integer below 2**64, ``time`` more than
    0 and at most 10^7 seconds, nothing else) and ``nats``."""
    integer(seed, "seed", 0, 2**64 - 1)
    if jobs is not None:
        integer(jobs, "jobs", 0, MAX_THREADS)
    if threads is not None:
        integer(threads, "threads", 0, MAX_THREADS)
    if budget is not None:
        if not isinstance(budget, Mapping):
            raise TypeError(
                f'budget must be a dict such as {{"evals": 100, "time": 60}}, found {type(budget).__name__}'
            )
        unknown = set(budget) - {"evals", "time"}
        if unknown:
            raise ValueError(f"unknown budget {sorted(map(str, unknown))} (evals, time)")
        if budget.get("evals") is not None:
            integer(budget["evals"], "budget['evals']", 1, 2**64 - 1)
        if budget.get("time") is not None:
            seconds(budget["time"], "budget['time']")
    check_nats(nats)
