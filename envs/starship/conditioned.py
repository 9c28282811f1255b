"""Starship with targets: the PCGRL env asked for a ship of given thrust, weapons and forward
firepower (controllable PCGRL, Earle et al. 2021).

Why a wrapper and not env options: the targets change the observation (the policy must see
what it is asked for) and the reward (closeness to the targets), and nothing else; the edits,
masks, starts and episode ends are ``StarshipEnv``'s.

Targets (``TARGETS``), drawn at each reset uniformly from their ranges unless given in
``reset(options={"targets": {...}})``:

| target            | measure of the ship                                    | range  |
|-------------------|--------------------------------------------------------|--------|
| thrust_points     | points of every thruster (small 1, medium 2, big 4)    | 8..40  |
| weapon_points     | points of every weapon (small 1, large 4)              | 4..24  |
| forward_firepower | points of forward weapons with a clear line of fire    | 0..12  |
|                   | (the quality term's raw measure)                       |        |

The staged generator's ``thrusters`` and ``weapons`` stages take the first two as parameters
(``min_points = max_points``); forward firepower has no parameter there.

Observation: ``{"grid": the env's (17, H, W) observation, "targets": each target / its range's
top, "deficits": (target - the ship's measure) / the range's top, clipped to [-1, 1]}`` (float32).
Why the deficits: a policy that edits one tile at a time cannot count the points it has placed
from a pooled picture of the grid; controllable PCGRL (Earle et al. 2021) gives its agents the
same difference between the targets and the current metrics.

Reward: the env's (its potential ``phi``) plus ``target_weight`` times the
change of ``closeness``, which is ``1 - mean(|measure - target| / range top)`` while the ship
is valid and 0 while it is not (closeness pays only for valid ships, as quality does under the
gated reward).

``caps=True`` makes the thrust and weapon targets upper bounds the policy cannot break: the
action mask also forbids a thruster or weapon whose points exceed what is left to the target,
and a forward-facing weapon whose points exceed what is left of the forward-firepower target.
Why: a policy trained from an unconditioned generator keeps that generator's habits (about 28
thrust and 20 weapon points a ship) and learns to follow the targets only slowly; with caps it
can no longer overshoot, and training has only to teach it to reach a target from below. The
forward-firepower cap is looser: a later edit that clears a blocked line of fire adds firepower
without placing a weapon.
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Real
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from tablegym.envs.starship.env import BRUSHES, StarshipEnv
from tablegym.envs.starship.ship import FORWARD, KIND, PH, PW, THRUSTER, WEAPON, Ship, footprint

TARGETS: dict[str, tuple[int, int]] = {
    "thrust_points": (8, 40),
    "weapon_points": (4, 24),
    "forward_firepower": (0, 12),
}
"""Each target's range (inclusive), from which resets draw it."""


def _points(kind: int, variant: int, facing: int) -> int:
    h, w = footprint(kind, variant, facing)
    return h * w


_BRUSH_POINTS = [
    (
        _points(*b) if b.kind == THRUSTER else 0,
        _points(*b) if b.kind == WEAPON else 0,
        _points(*b) if b.kind == WEAPON and b.facing == FORWARD else 0,
    )
    for b in BRUSHES
]
"""(thrust, weapon, forward weapon) points each brush places (``caps``)."""


def measures(ship: Ship, forward_firepower: float) -> dict[str, float]:
    """The ship's value of each target (``forward_firepower``: the quality term's raw measure)."""
    kinds, area = ship.parts[:, KIND], ship.parts[:, PH].astype(np.int64) * ship.parts[:, PW]
    return {
        "thrust_points": float(area[kinds == THRUSTER].sum()),
        "weapon_points": float(area[kinds == WEAPON].sum()),
        "forward_firepower": float(forward_firepower),
    }


def asked_targets(options: dict[str, Any] | None) -> dict[str, float]:
    """The targets ``reset(options={"targets": {...}})`` asks for (the single env's and the vector
    env's), checked: a dict of target name -> number within its range (``TARGETS``)."""
    given = (options or {}).get("targets", {})
    if not isinstance(given, Mapping):
        raise ValueError(f"options['targets'] must be a dict of target -> number (targets {list(TARGETS)}), got {given!r}")
    unknown = set(given) - set(TARGETS)
    if unknown:
        raise ValueError(f"unknown targets {sorted(map(str, unknown))}: the targets are {list(TARGETS)}")
    out = {}
    for k, (lo, hi) in TARGETS.items():
        if k in given:
            value = given[k]
            if isinstance(value, bool) or not isinstance(value, Real) or not lo <= value <= hi:
                raise ValueError(f"target {k} must be in {lo}..{hi}, got {value!r}")
            out[k] = float(value)
    return out


def closeness(got: dict[str, float], targets: dict[str, float]) -> float:
    """1 - the mean distance of the measures from the targets, each over its range's top."""
    return 1.0 - float(np.mean([abs(got[k] - targets[k]) / TARGETS[k][1] for k in TARGETS]))


class TargetStarshipEnv(gymnasium.Env[dict, Any]):
    """``StarshipEnv`` asked for targets (see the module docstring); keyword arguments other than
    ``target_weight`` go to ``StarshipEnv``.

    ``info`` adds "targets", "measures" and "closeness" (of the ship, valid or not).
    """

    metadata = StarshipEnv.metadata

    def __init__(self, *, target_weight: float = 1.0, caps: bool = False, **kwargs: Any) -> None:
        self.env = StarshipEnv(**kwargs)
        self.target_weight = float(target_weight)
        self.caps = bool(caps)
        if self.caps and self.env.masks == "none":
            raise ValueError("caps=True needs action masks (masks='repairable', 'build' or 'safe')")
        self.action_space = self.env.action_space
        self.observation_space = spaces.Dict(
            {
                "grid": self.env.observation_space,
                "targets": spaces.Box(0.0, 1.0, (len(TARGETS),), np.float32),
                "deficits": spaces.Box(-1.0, 1.0, (len(TARGETS),), np.float32),
            }
        )
        self.render_mode = self.env.render_mode
        self.targets = {k: float(lo) for k, (lo, _) in TARGETS.items()}
        self._phi = 0.0
        self._got = {k: 0.0 for k in TARGETS}

    def _observation(self, grid: np.ndarray) -> dict[str, np.ndarray]:
        top = np.array([TARGETS[k][1] for k in TARGETS], np.float32)
        asked = np.array([self.targets[k] for k in TARGETS], np.float32)
        got = np.array([self._got[k] for k in TARGETS], np.float32)
        return {"grid": grid, "targets": asked / top, "deficits": np.clip((asked - got) / top, -1.0, 1.0)}

    def _measured(self, info: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        """``phi``'s target part (closeness while valid, else 0) and ``info`` with the targets,
        the measures and their closeness, from one measurement of the ship."""
        got = self._got = measures(self.env._ship, self.env.quality.raw["forward_firepower"])
        near = closeness(got, self.targets)
        phi = self.target_weight * near if self.env.validity.ok else 0.0
        return phi, {**info, "targets": dict(self.targets), "measures": got, "closeness": near}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict[str, Any]]:
        super().reset(seed=seed)
        grid, info = self.env.reset(seed=seed)
        given = asked_targets(options)
        for k, (lo, hi) in TARGETS.items():
            self.targets[k] = given[k] if k in given else float(self.np_random.integers(lo, hi + 1))
        self._phi, info = self._measured(info)
        return self._observation(grid), info

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict[str, Any]]:
        grid, reward, terminated, truncated, info = self.env.step(action)
        phi, info = self._measured(info)
        reward += phi - self._phi
        self._phi = phi
        return self._observation(grid), float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        mask = self.env.action_masks()
        if self.caps:
            left = {k: self.targets[k] - self._got[k] for k in TARGETS}
            first = self.env.brush_offset
            for b, (thrust, weapon, forward) in enumerate(_BRUSH_POINTS):
                if thrust > left["thrust_points"] or weapon > left["weapon_points"] or forward > left["forward_firepower"]:
                    mask[first + b] = False
        return mask

    @property
    def ship(self) -> Ship:
        return self.env.ship

    @property
    def masks(self) -> str:
        return self.env.masks

    def render(self) -> Any:
        return self.env.render()
