"""Benchmarks of the Python package, one JSON line each:

- ``env``: steps per second of the search environment from Python on the matmul with
  the model cost (no compilation), native (``elevate.Environment``) and through the
  Gymnasium wrapper with masks, as an agent steps it (with the state's features, and
  with the program's loop-nest features); steps that end an episode ask the
  model for the end's cost (cached per program), the others do not. Goal: 10,000 steps
  per second (the MLIR RL environment takes 0.089 s per sample).
- ``call``: a compiled function called from Python on NumPy arrays, against the same
  call from Rust (``rust_call_ns``): the overhead in microseconds. Goal: under 5.

    .venv/bin/python python/benches/python_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np

import elevate
import elevate.gym

ROOT = Path(__file__).resolve().parents[2]
MATMUL = ROOT / "examples" / "rise" / "matmul.rise"
SCAL = ROOT / "examples" / "rise" / "scal.rise"
SIZES = {"n": 256, "k": 256, "m": 256}


def episodes(step, reset, legal, seconds: float, seed: int = 0) -> dict:
    """Random legal episodes for `seconds`: steps per second over all steps, over the
    steps that do not end an episode, and the mean milliseconds of an ending step."""
    rng = random.Random(seed)
    steps = ends = 0
    inner = final = 0.0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        reset()
        done = False
        while not done:
            action = legal(rng)
            t = time.perf_counter()
            done = step(action)
            elapsed = time.perf_counter() - t
            if done:
                final += elapsed
            else:
                inner += elapsed
            steps += 1
        ends += 1
    total = time.perf_counter() - started
    return {
        "steps_per_s": round(steps / total),
        "non_final_steps_per_s": round((steps - ends) / max(inner, 1e-9)),
        "final_step_ms": round(final / max(ends, 1) * 1e3, 3),
        "episodes": ends,
    }


def env_native(seconds: float) -> dict:
    env = elevate.Environment(elevate.Program.load(str(MATMUL)), "auto", "model", SIZES)

    def legal(rng):
        actions = env.legal_actions()
        return actions[rng.randrange(len(actions))]

    return episodes(lambda a: env.step(*a)[1], env.reset, legal, seconds)


def env_gym(seconds: float, features: str = "state") -> dict:
    env = elevate.gym.ScheduleEnv(str(MATMUL), cost="model", nats=SIZES, features=features)
    transformations = env.action_space.nvec[0]

    def legal(rng):
        # As an agent under MaskablePPO's masks would draw.
        mask = env.action_masks()
        legal_t = np.flatnonzero(mask[:transformations])
        legal_p = np.flatnonzero(mask[transformations:])
        return (legal_t[rng.randrange(len(legal_t))], legal_p[rng.randrange(len(legal_p))])

    result = episodes(lambda a: env.step(a)[2], env.reset, legal, seconds)
    prefix = "gym" if features == "state" else f"gym_{features}"
    return {f"{prefix}_{key}": value for key, value in result.items()}


def call_overhead(runs: int) -> dict:
    program = elevate.Program.load(str(SCAL))
    f = program.compile(nats={"n": 16})
    x = np.ones(16, dtype=np.float32)
    out = np.empty(16, dtype=np.float32)
    for _ in range(1000):
        f(2.0, x, out=out)
    times = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(runs):
            f(2.0, x, out=out)
        times.append((time.perf_counter() - started) / runs * 1e6)
    fresh = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(runs):
            f(2.0, x)
        fresh.append((time.perf_counter() - started) / runs * 1e6)
    rust_us = min(f.rust_call_ns(runs, 2.0, x) for _ in range(5)) / 1e3
    python_us = min(times)
    return {
        "python_call_us": round(python_us, 3),
        "python_call_new_output_us": round(min(fresh), 3),
        "rust_call_us": round(rust_us, 3),
        "overhead_us": round(python_us - rust_us, 3),
        "goal_overhead_us": 5.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="benchmarks of the Python package")
    parser.add_argument("--quick", action="store_true", help="short runs (for CI)")
    args = parser.parse_args()
    seconds = 0.5 if args.quick else 3.0
    runs = 5_000 if args.quick else 100_000
    env = {
        "bench": "python_env",
        **env_native(seconds),
        **env_gym(seconds),
        **env_gym(seconds, "loops"),
        "goal_steps_per_s": 10_000,
    }
    print(json.dumps(env))
    print(json.dumps({"bench": "python_call", **call_overhead(runs)}))


if __name__ == "__main__":
    main()
