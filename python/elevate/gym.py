"""A Gymnasium environment over the search's decisions: ``elevate/Schedule-v0``.

>>> import gymnasium, elevate.gym
>>> env = gymnasium.make("elevate/Schedule-v0", program="examples/rise/matmul.rise",
...                      nats={"n": 256, "k": 256, "m": 256})        # doctest: +SKIP

An episode makes the decisions of a space of strategies (``auto`` by default: the
space derived from the program's loop nests) one at a time. The action space is
``MultiDiscrete([transformations, parameters])`` as in the MLIR RL environment: which
option of the current choice (for a ``steps`` choice: 0 stops, ``1 + k`` takes the
``k``-th alternative) and its parameter (the location, for a step; 0 otherwise).
The observation is the state's features (decisions made, options now, log10 of the
space left) and, with ``features="loops"``, the program's loop nests (per nest, heaviest
first: log2 trip count and kind of each loop down the heaviest path, vector lanes,
parallel loops, log2 bytes read and written, arithmetic intensity, log10 operations;
the program is lowered and its loop program read for them, once per program). The reward is 0 until the end, then the log of the speedup over the
start program by the chosen cost (``model``: the analytical model, no compilation;
``measured``: compiled and timed), or -1 for a point whose strategy fails.

``action_masks()`` follows sb3-contrib's MaskablePPO for multi-discrete spaces: one
mask per dimension, concatenated (the transformations legal now; the parameters legal
for some legal transformation). A parameter beyond the chosen transformation's
locations wraps around them, so every action drawn under the masks is legal. An
action whose transformation is not legal ends the episode with reward -1 and
``info["illegal"] = True``; an action outside the action space (a negative index, say)
is a ``ValueError`` that names it. ``undo()`` goes back one decision in constant time,
for tree-search agents; ``legal_actions()`` and ``joint_mask()`` give the exact pairs.

A space without decisions (``space="id"``, or ``auto`` for a program without loops)
has one point: its episodes are one step long, with one legal action, the no-op
``(0, 0)``, whose reward is that point's (0 for ``id``: the start program itself).
So every state an agent sees has a legal action in each dimension of the mask, as
MaskablePPO needs, and an environment per program of a corpus works for each.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

import gymnasium
import numpy as np
from gymnasium import spaces

from ._checks import integer as _index
from ._native import Environment, Program

__all__ = ["ScheduleEnv", "ENV_ID"]

#: The id the environment is registered under.
ENV_ID = "elevate/Schedule-v0"

#: The reward of an illegal action, and of a point whose strategy fails.
FAILED_REWARD = -1.0


class ScheduleEnv(gymnasium.Env):
    """The search environment of ``spec/search.md`` as a ``gymnasium.Env``."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        program: Union[Program, str, os.PathLike],
        space: str = "auto",
        cost: str = "model",
        nats: Optional[Mapping[str, int]] = None,
        threads: Optional[int] = None,
        render_mode: Optional[str] = None,
        features: str = "state",
    ) -> None:
        if not isinstance(program, Program):
            if not isinstance(program, (str, os.PathLike)):
                raise TypeError(f"program must be a Program or a path, found {type(program).__name__}")
            program = Program.load(os.fspath(program))
        if render_mode not in (None, "ansi"):
            raise ValueError(f"unknown render mode {render_mode!r} (ansi)")
        self.program = program
        self.render_mode = render_mode
        self._env = Environment(program, space, cost, nats, threads, features)
        # A space without decisions starts done: its one action is the no-op (0, 0).
        self._no_decisions = self._env.done
        transformations, parameters = self._env.shape
        self._shape = (transformations, parameters)
        self.action_space = spaces.MultiDiscrete([transformations, parameters])
        self.observation_space = spaces.Box(
            low=0.0,
            high=np.finfo(np.float32).max,
            shape=(self._env.feature_len,),
            dtype=np.float32,
        )
        self._ended = False

    # The episode.

    def reset(
        self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None
    ) -> Tuple[np.ndarray, Dict[str, Any]]:
        if seed is not None:
            seed = _index(seed, "seed", 0, None)
        super().reset(seed=seed)
        features = self._env.reset()
        self._ended = False
        return features, {"baseline": self._env.baseline}

    def step(self, action) -> Tuple[np.ndarray, float, bool, bool, Dict[str, Any]]:
        if self._ended:
            raise RuntimeError("the episode has ended: call reset()")
        transformation, parameter = self._action(action)
        if self._no_decisions:
            count = 1 if transformation == 0 else 0
        else:
            count = self._env.parameter_count(transformation)
        if count == 0:
            self._ended = True
            illegal = {"illegal": True, "strategy": self._env.strategy}
            return self._env.features(), FAILED_REWARD, True, False, illegal
        reward, done, cost = self._env.step(transformation, parameter % count)
        self._ended = done
        observation = self._env.features()
        info: Dict[str, Any] = {"illegal": False}
        if done:
            info["strategy"] = self._env.strategy
            info["cost"] = cost
            info["baseline"] = self._env.baseline
        return observation, float(reward), bool(done), False, info

    def _action(self, action: Any) -> Tuple[int, int]:
        """``action`` as ``(transformation, parameter)``, checked against the action space."""
        try:
            pair = list(action)
        except TypeError:
            raise TypeError(
                f"action must be two integers (transformation, parameter), found {type(action).__name__}"
            ) from None
        if len(pair) != 2:
            raise ValueError(f"action must be two integers (transformation, parameter), found {len(pair)} values")
        transformations, parameters = self._shape
        return (
            _index(pair[0], "action[0] (the transformation)", 0, transformations - 1),
            _index(pair[1], "action[1] (the parameter)", 0, parameters - 1),
        )

    def render(self) -> Optional[str]:
        if self.render_mode == "ansi":
            return self._env.strategy
        return None

    # Masks, for agents that take only legal actions.

    def action_masks(self) -> np.ndarray:
        """One mask per dimension, concatenated (MaskablePPO's multi-discrete form)."""
        if self._no_decisions:
            mask = np.zeros(sum(self._shape), dtype=bool)
            if not self._ended:
                mask[0] = mask[self._shape[0]] = True
            return mask
        return self._env.action_masks()

    def joint_mask(self) -> np.ndarray:
        """The exact legal pairs: a ``transformations x parameters`` boolean array."""
        if self._no_decisions:
            mask = np.zeros(self._shape, dtype=bool)
            mask[0, 0] = not self._ended
            return mask
        return self._env.mask().reshape(self._shape)

    def legal_actions(self) -> List[Tuple[int, int]]:
        """The legal ``(transformation, parameter)`` pairs now."""
        if self._no_decisions:
            return [] if self._ended else [(0, 0)]
        return self._env.legal_actions()

    # For tree-search agents.

    def undo(self) -> bool:
        """Goes back one decision (constant time); ``False`` at the start."""
        if self._no_decisions:
            undone, self._ended = self._ended, False
            return undone
        undone = self._env.undo()
        if undone:
            self._ended = False
        return undone

    @property
    def strategy(self) -> str:
        """The decisions so far, as strategy text."""
        return self._env.strategy

    @property
    def current_program(self) -> Program:
        """The program at this state."""
        return self._env.program

    @property
    def environment(self) -> Environment:
        """The native environment underneath."""
        return self._env


def register() -> None:
    """Registers ``elevate/Schedule-v0`` with Gymnasium (done on import)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="elevate.gym:ScheduleEnv")


register()

