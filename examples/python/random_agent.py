"""A random agent in the Gymnasium environment: legal actions drawn under the masks.

    .venv/bin/python examples/python/random_agent.py [--episodes N] [--size S]

Prints one JSON line: the episodes, their mean reward (the log of the speedup by the
model cost) and the geometric mean speedup over the naive program.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import gymnasium
import numpy as np

import elevate.gym

MATMUL = Path(__file__).resolve().parents[1] / "rise" / "matmul.rise"


def make_env(size: int) -> elevate.gym.ScheduleEnv:
    """The matmul at `size`^3 in the environment, with the model cost."""
    env = gymnasium.make(
        elevate.gym.ENV_ID,
        program=str(MATMUL),
        cost="model",
        nats={"n": size, "k": size, "m": size},
    )
    return env.unwrapped


def masked_random_action(env: elevate.gym.ScheduleEnv, rng: np.random.Generator) -> np.ndarray:
    """A legal action, uniform over the legal pairs."""
    legal = env.legal_actions()
    return np.array(legal[rng.integers(len(legal))])


def run(episodes: int, size: int, seed: int = 0) -> dict:
    env = make_env(size)
    rng = np.random.default_rng(seed)
    rewards = []
    started = time.perf_counter()
    for episode in range(episodes):
        env.reset(seed=seed + episode)
        done = False
        while not done:
            _, reward, done, _, _ = env.step(masked_random_action(env, rng))
        rewards.append(reward)
    return {
        "agent": "random",
        "episodes": episodes,
        "mean_reward": float(np.mean(rewards)),
        "speedup": float(np.exp(np.mean(rewards))),
        "seconds": round(time.perf_counter() - started, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=500)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(json.dumps(run(args.episodes, args.size, args.seed)))


if __name__ == "__main__":
    main()
