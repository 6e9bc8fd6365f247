"""elevate: strategy-combinator rewriting of RISE programs, from Python.

Programs are immutable values; strategies rewrite them or fail and compose with
``>>`` (sequence) and ``|`` (left choice); the library's rules and strategies are
functions of :mod:`elevate.rules`. A chosen program compiles through MLIR into a
function on NumPy arrays, and :func:`search` explores a space of strategies.

>>> import elevate
>>> p = elevate.Program.parse("def double(x: n.f32) = x |> map(fun(v => v * 2.0))")
>>> p.type
'n.f32 -> n.f32'
"""

from __future__ import annotations

from . import onnx, rules
from ._native import (
    CompileError,
    Compiled,
    CompiledNetwork,
    ElevateError,
    Environment,
    EvalError,
    GpuCompiled,
    GpuError,
    InputError,
    ModelError,
    Network,
    ParseError,
    Program,
    SearchError,
    Strategy,
    StrategyError,
    TypeCheckError,
    UnknownNameError,
    __version__,
)
from .search import search
from .saturation import saturate, sketch_guided

try:  # Registers `elevate/Schedule-v0` where Gymnasium is installed.
    from . import gym
except ImportError:  # pragma: no cover - Gymnasium is optional
    pass

__all__ = [
    "CompileError",
    "Compiled",
    "CompiledNetwork",
    "ElevateError",
    "Environment",
    "EvalError",
    "GpuCompiled",
    "GpuError",
    "InputError",
    "ModelError",
    "Network",
    "ParseError",
    "Program",
    "SearchError",
    "Strategy",
    "StrategyError",
    "TypeCheckError",
    "UnknownNameError",
    "__version__",
    "onnx",
    "rules",
    "saturate",
    "search",
    "sketch_guided",
]
