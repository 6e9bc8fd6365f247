"""Equality saturation from Python: the library's ``saturate`` and ``sketchGuided``."""

from __future__ import annotations

import json
from typing import Optional, Sequence, Tuple, Union

from ._native import Program, Strategy

__all__ = ["saturate", "sketch_guided"]

Limits = Union[str, dict, None]


def _limits(limits: Limits) -> str:
    if limits is None:
        return "iterations=30,nodes=100000,ms=10000,mb=4096"
    if isinstance(limits, str):
        return limits
    return ",".join(f"{key}={value}" for key, value in limits.items())


def saturate(
    program: Program,
    rules: str = "default",
    limits: Limits = None,
    cost: str = "lowered",
    budget: Union[int, dict, None] = None,
) -> Program:
    """Equality saturation of ``program`` with ``rules`` (as ``elevate saturate --rules``)
    under ``limits`` (``{"iterations": 10, "nodes": 50000, "ms": 5000}`` or its text),
    then the cheapest program by ``cost`` (``lowered`` or ``size``)."""
    text = f"saturate({json.dumps(rules)}, {json.dumps(_limits(limits))}, {json.dumps(cost)})"
    result, _ = Strategy.parse(text).apply(program, budget=budget)
    return result


def sketch_guided(
    program: Program,
    steps: Sequence[Tuple[str, str, Limits]],
    cost: str = "lowered",
    budget: Union[int, dict, None] = None,
) -> Program:
    """Sketch-guided equality saturation: for each ``(sketch, rules, limits)`` step,
    saturate from the previous step's program until the sketch is satisfiable, and
    take its cheapest program that satisfies it."""
    if not steps:
        raise ValueError("sketch_guided needs at least one (sketch, rules, limits) step")
    arguments = []
    for sketch, rules, limits in steps:
        arguments += [json.dumps(sketch), json.dumps(rules), json.dumps(_limits(limits))]
    text = f"sketchGuided({', '.join(arguments + [json.dumps(cost)])})"
    result, _ = Strategy.parse(text).apply(program, budget=budget)
    return result
