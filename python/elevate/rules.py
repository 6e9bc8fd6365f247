"""The RISE library's rules and strategies as functions that build a :class:`Strategy`.

Every name that strategy text can use is here, in snake case or as written:
``rules.tile(32, 32)`` is ``tile(32, 32)``, ``rules.default_lowering()`` is
``defaultLowering``, ``rules.DFNF()`` is ``DFNF``. Arguments are numbers, strings
(quoted for the text), strategies, or names given as :class:`Name`.

>>> from elevate import rules
>>> str(rules.tile(32, 32) >> rules.default_lowering())
'tile(32, 32) ; defaultLowering'
"""

from __future__ import annotations

import json
import re
from typing import Callable, Dict, List, Tuple, Union

from ._native import Strategy, library

__all__ = ["Name", "names", "strategy"]


class Name(str):
    """A bare name argument (a primitive's, say), written without quotes."""


Argument = Union[int, str, Strategy, Name, List[int]]

_LIBRARY: Dict[str, Tuple[str, str]] = {name: (params, doc) for name, params, doc in library()}


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


_BY_PYTHON_NAME: Dict[str, str] = {}
for _name in _LIBRARY:
    _BY_PYTHON_NAME.setdefault(_name, _name)
    if _name != _name.upper():
        _BY_PYTHON_NAME.setdefault(_snake(_name), _name)


def names() -> List[str]:
    """Every name of the library, as strategy text writes it."""
    return sorted(_LIBRARY)


def _text(argument: Argument) -> str:
    if isinstance(argument, Strategy):
        return str(argument)
    if isinstance(argument, Name):
        return str(argument)
    if isinstance(argument, bool):
        raise TypeError("a strategy argument is a number, a string, a name or a strategy")
    if isinstance(argument, int):
        return str(argument)
    if isinstance(argument, str):
        return json.dumps(argument)
    if isinstance(argument, (list, tuple)):
        return "[" + ", ".join(str(int(a)) for a in argument) + "]"
    raise TypeError(f"cannot pass {type(argument).__name__} to a strategy")


def strategy(name: str, *arguments: Argument) -> Strategy:
    """The library's strategy ``name`` (as strategy text writes it) on ``arguments``."""
    if name not in _LIBRARY:
        raise AttributeError(f"the library has no strategy `{name}`")
    if not arguments:
        return Strategy.parse(name)
    return Strategy.parse(f"{name}({', '.join(_text(a) for a in arguments)})")


def _maker(name: str) -> Callable[..., Strategy]:
    params, doc = _LIBRARY[name]

    def make(*arguments: Argument) -> Strategy:
        return strategy(name, *arguments)

    make.__name__ = name
    make.__qualname__ = name
    make.__doc__ = f"``{name}{params}``: {doc}"
    return make


def __getattr__(attribute: str) -> Callable[..., Strategy]:
    name = _BY_PYTHON_NAME.get(attribute)
    if name is None:
        raise AttributeError(f"the library has no strategy `{attribute}` (see elevate.rules.names())")
    return _maker(name)


def __dir__() -> List[str]:
    return sorted(set(__all__) | set(_BY_PYTHON_NAME))
