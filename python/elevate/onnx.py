"""ONNX models as networks (``spec/networks.md``, "From Python").

:func:`load` imports a model in memory, as ``elevate import`` does without writing
anything: a :class:`~elevate.Network` of one RISE program (a definition per layer
kind, the network's last) and its weights, which compiles layer by layer into one
callable of the input::

    >>> import numpy as np, elevate
    >>> net = elevate.onnx.load("tests/onnx/fixtures/resnet_block.onnx")  # doctest: +SKIP
    >>> net.input_shape, [layer["kind"] for layer in net.layers][:3]      # doctest: +SKIP
    ((1, 4, 8, 8), ['conv', 'batchnorm', 'relu'])
    >>> run = net.compile("network", threads=4)                           # doctest: +SKIP
    >>> y = run(np.zeros(net.input_shape, np.float32))                    # doctest: +SKIP

A model that uses anything the importer does not support is refused as a whole: a
:class:`~elevate.ModelError` whose message names the file and the node (its index,
name and operator) and attribute, with ``.node``, ``.attribute`` and ``.tensor`` as
attributes where there is one; a file that cannot be read is an ``OSError``.
"""

from __future__ import annotations

import os
from typing import Optional, Union

from ._native import ModelError, Network

__all__ = ["ModelError", "load"]


def load(path: Union[str, "os.PathLike[str]"], batch: Optional[int] = None) -> Network:
    """Imports the ONNX model at ``path`` (opsets 13 to 21, ``float32``, static
    shapes): a :class:`~elevate.Network`.

    A symbolic batch size becomes ``batch`` (1 where it is ``None``, as ``elevate
    import`` without ``--batch``); a model whose batch is fixed keeps it, and giving
    it another is a :class:`~elevate.ModelError`.
    """
    return Network.from_onnx(os.fspath(path), batch)
