"""A worker process of a measured search: ``python -m elevate.worker``.

A measured cost (``elevate.search(cost="measured")``, the environment's measured
reward, a Ray executor's tasks) never compiles or runs a candidate in the process
that searches: it starts workers with this module, which serve the same protocol as
``elevate``'s own workers (one JSON request per line on standard input, one reply per
line on standard output), under the search's limits. A worker ends when its input
does (the search ended, or died).
"""

from __future__ import annotations

from ._native import _serve_worker

if __name__ == "__main__":
    _serve_worker()
