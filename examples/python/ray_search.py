"""A search whose candidate evaluations run on a Ray cluster.

    .venv/bin/python examples/python/ray_search.py [--address ray://HOST:10001] [--evals N]

Without an address, Ray starts a local cluster on this machine; with one, the
candidates go to that cluster's workers (each with the elevate package installed).
The search itself (the driver, the log) stays here; prints the report line, and
checks that the log is the one a local search of the same seed writes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import elevate

MATMUL = Path(__file__).resolve().parents[1] / "rise" / "matmul.rise"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default=None, help="a running cluster (ray://HOST:PORT or auto)")
    parser.add_argument("--evals", type=int, default=200)
    parser.add_argument("--driver", default="evolve(16)")
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    program = elevate.Program.load(str(MATMUL))
    common = dict(
        space="auto",
        driver=args.driver,
        cost="model",
        budget={"evals": args.evals},
        seed=args.seed,
        nats={"n": args.size, "k": args.size, "m": args.size},
        jobs=4,
    )
    executor = "ray" if args.address is None else args.address
    report, log = elevate.search(program, executor=executor, **common)
    _, local_log = elevate.search(program, **common)
    report["same_log_as_local"] = log == local_log
    print(json.dumps(report))


if __name__ == "__main__":
    main()
