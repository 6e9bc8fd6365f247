"""A policy-gradient agent (REINFORCE) in NumPy alone, on the model cost.

    .venv/bin/python examples/python/policy_gradient.py [--episodes N] [--png FILE]

The policy is a softmax over the legal transformations (and over the legal
parameters) with one row of preferences per state of the decision tree, the state
named by the decisions made so far: the environment's whole tree is small enough to
keep a row per state, and the agent only learns rows it visits. After each episode,
the preferences of the actions taken move along the gradient of the log-probability
times the advantage (the reward less a running mean). It learns to beat the random
agent's average speedup on the matmul; the learning curve goes to a PNG.

Prints one JSON line: the random agent's and the trained agent's mean speedups.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

import elevate.gym
from random_agent import make_env
from random_agent import run as run_random


class TabularSoftmaxPolicy:
    """Preferences per state over transformations and over parameters."""

    def __init__(self, transformations: int, parameters: int, learning_rate: float) -> None:
        self.t = defaultdict(lambda: np.zeros(transformations))
        self.p = defaultdict(lambda: np.zeros(parameters))
        self.learning_rate = learning_rate

    @staticmethod
    def _softmax(preferences: np.ndarray, mask: np.ndarray) -> np.ndarray:
        z = np.where(mask, preferences, -np.inf)
        z = np.exp(z - z[mask].max())
        return z / z.sum()

    def act(self, state: str, env: elevate.gym.ScheduleEnv, rng: np.random.Generator, greedy: bool = False):
        joint = env.joint_mask()
        t_mask = joint.any(axis=1)
        t_probs = self._softmax(self.t[state], t_mask)
        t = int(np.argmax(t_probs)) if greedy else int(rng.choice(len(t_probs), p=t_probs))
        p_mask = joint[t]
        p_probs = self._softmax(self.p[(state, t)], p_mask)
        p = int(np.argmax(p_probs)) if greedy else int(rng.choice(len(p_probs), p=p_probs))
        return (t, p), (t_mask, t_probs, p_mask, p_probs)

    def update(self, trajectory: List[Tuple[str, Tuple[int, int], tuple]], advantage: float) -> None:
        for state, (t, p), (_, t_probs, _, p_probs) in trajectory:
            grad_t = -t_probs
            grad_t[t] += 1.0
            self.t[state] += self.learning_rate * advantage * grad_t
            grad_p = -p_probs
            grad_p[p] += 1.0
            self.p[(state, t)] += self.learning_rate * advantage * grad_p


def episode(env, policy, rng, greedy=False):
    env.reset()
    trajectory = []
    done = False
    while not done:
        state = env.strategy
        action, probs = policy.act(state, env, rng, greedy)
        _, reward, done, _, info = env.step(np.array(action))
        assert not info["illegal"]
        trajectory.append((state, action, probs))
    return trajectory, reward


def train(episodes: int, size: int, seed: int = 0, learning_rate: float = 0.5) -> Dict[str, object]:
    env = make_env(size)
    rng = np.random.default_rng(seed)
    transformations, parameters = env.action_space.nvec
    policy = TabularSoftmaxPolicy(int(transformations), int(parameters), learning_rate)
    baseline, rewards = 0.0, []
    started = time.perf_counter()
    for k in range(episodes):
        trajectory, reward = episode(env, policy, rng)
        baseline = reward if k == 0 else 0.95 * baseline + 0.05 * reward
        policy.update(trajectory, reward - baseline)
        rewards.append(reward)
    seconds = time.perf_counter() - started
    # The trained policy, sampled (as it acts while learning) over 200 episodes.
    final = [episode(env, policy, rng)[1] for _ in range(200)]
    return {"rewards": rewards, "final_rewards": final, "seconds": seconds}


def save_curve(rewards: List[float], random_reward: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    window = 50
    speedups = np.exp(np.array(rewards))
    smooth = np.exp(np.convolve(np.array(rewards), np.ones(window) / window, mode="valid"))
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(np.arange(len(speedups)), speedups, ".", alpha=0.15, label="episode")
    ax.plot(np.arange(window - 1, len(rewards)), smooth, label=f"geometric mean of {window}")
    ax.axhline(np.exp(random_reward), color="gray", linestyle="--", label="random agent")
    ax.set_yscale("log")
    ax.set_xlabel("episode")
    ax.set_ylabel("speedup over the naive matmul (model)")
    ax.set_title("REINFORCE in NumPy on elevate/Schedule-v0")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def run(episodes: int, size: int, seed: int, png: Path) -> dict:
    random = run_random(500, size, seed)
    trained = train(episodes, size, seed)
    save_curve(trained["rewards"], random["mean_reward"], png)
    final = float(np.mean(trained["final_rewards"]))
    return {
        "episodes": episodes,
        "random_speedup": random["speedup"],
        "trained_speedup": float(np.exp(final)),
        "beats_random": final > random["mean_reward"],
        "training_seconds": round(trained["seconds"], 2),
        "png": str(png),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3000)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--png", type=Path, default=Path("policy_gradient.png"))
    args = parser.parse_args()
    print(json.dumps(run(args.episodes, args.size, args.seed, args.png)))


if __name__ == "__main__":
    main()
