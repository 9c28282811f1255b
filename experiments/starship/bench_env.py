"""Env steps per second of tablegym/Starship-v0 with a random policy, against the same env scored
by the Python rules, in the same run (``tablegym bench starship-env``).

The reference (``ReferenceStarshipEnv``) scores every step with the Python rules and terms of
quality.py and builds the observation with numpy; the env itself scores in one compiled pass
(scoring.py) and observes with a numba kernel. Both play the same seeded random actions, so the
ratio is the speed-up per step. Timed on one core after a warm-up. Last, the narrow env under the
"build" and "safe" masks (random allowed actions, one-sweep episodes), as the learned generator
trains.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from tablegym.envs.starship.env import OBS_CHANNELS, StarshipEnv
from tablegym.envs.starship.quality import quality, validate
from tablegym.envs.starship.ship import FACED, FACING, NUM_TILE_KINDS, PH, PW, PX, PY, Ship


def reference_observe(ship: Ship, cursor: tuple[int, int] | None) -> np.ndarray:
    """The observation as numpy built it before the compiled kernel (the kernel's reference)."""
    H, W = ship.shape
    obs = np.zeros((OBS_CHANNELS, H, W), np.uint8)
    obs[:NUM_TILE_KINDS] = np.arange(NUM_TILE_KINDS)[:, None, None] == ship.tiles[None]
    for row in ship.parts:
        if row[0] in FACED:
            y, x, h, w = int(row[PY]), int(row[PX]), int(row[PH]), int(row[PW])
            obs[NUM_TILE_KINDS + int(row[FACING]), y : y + h, x : x + w] = 1
    if cursor is not None:
        obs[-1, cursor[0], cursor[1]] = 1
    return obs


class ReferenceStarshipEnv(StarshipEnv):
    """The env scored by the Python rules and terms and observed with numpy."""

    def _score(self) -> None:
        self._validity = validate(self._ship)
        self._quality = quality(self._ship)

    def _observation(self) -> np.ndarray:
        return reference_observe(self._ship, None if self.representation == "wide" else self._cursor)


def steps_per_second(env: StarshipEnv, seconds: float, seed: int = 0) -> float:
    """Random actions (among the allowed ones when the env masks) for ``seconds``."""
    env.reset(seed=seed)
    env.action_space.seed(seed)
    masked = env.masks != "none"
    n = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        action = env.action_space.sample(env.action_masks().astype(np.int8)) if masked else env.action_space.sample()
        _, _, terminated, truncated, _ = env.step(action)
        n += 1
        if terminated or truncated:
            env.reset()
    return n / (time.perf_counter() - start)


def bench_env_steps(seconds: float = 2.0) -> dict[str, Any]:
    """Steps/s of the env and of the reference for each representation, and their ratio."""
    out: dict[str, Any] = {}
    for rep in ("narrow", "turtle", "wide"):
        fast, slow = StarshipEnv(representation=rep), ReferenceStarshipEnv(representation=rep)
        steps_per_second(fast, 0.2)  # warm-up: compiled kernels load outside the timing
        steps_per_second(slow, 0.2)
        a, b = steps_per_second(fast, seconds), steps_per_second(slow, seconds)
        out[f"{rep} steps/s"] = a
        out[f"{rep} reference steps/s"] = b
        out[f"{rep} ratio"] = a / b
    for masks in ("build", "safe"):  # the masks the learned generator trains under: one mask per step
        env = StarshipEnv(masks=masks, reward="gated", max_steps=1024)
        steps_per_second(env, 0.2)
        out[f"narrow {masks}-masked steps/s"] = steps_per_second(env, seconds)
    return out
