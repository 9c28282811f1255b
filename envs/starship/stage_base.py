"""What every stage of the staged starship generator shares (envs/starship/stages.py): the
``Stage`` dataclass (its parameters, ``enabled``, its name and number), the configuration errors,
and the helpers several stages use (a ship's mask and centre of mass, best-first and weighted
draws, placing a part, the gaps between footprints, aligned sides)."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np
from numba import njit

from tablegym.envs.limits import LimitError
from tablegym.envs.starship import kernels as K
from tablegym.envs.starship.ship import (
    CORRIDOR,
    DOOR,
    EMPTY,
    Ship,
    footprint,
)


class ConfigError(ValueError):
    """A stage or pipeline parameter that is unknown or out of range."""


class ConfigLimitError(ConfigError, LimitError):
    """A configuration file refused before it is parsed: larger or more deeply nested than the
    budgets of ``tablegym.envs.limits`` allow (one line naming the file and the limit)."""


def _snake(name: str) -> str:
    """The spec's CamelCase parameter names in Python's spelling.

    >>> _snake("MinModules"), _snake("ScanRange"), _snake("min_modules")
    ('min_modules', 'scan_range', 'min_modules')
    """
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


_NO_RAYS = np.zeros((4, 1, 1), np.bool_)


@dataclass
class Stage:
    """One generator stage: its parameters as fields, ``enabled`` to switch it off."""

    number: ClassVar[int] = 0
    name: ClassVar[str] = ""
    enabled: bool = True

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Raise ``ConfigError`` for a parameter out of range (subclasses add their rules)."""

    def _range(self, low: str, high: str, minimum: float = 0) -> None:
        a, b = getattr(self, low), getattr(self, high)
        if a < minimum or b < a:
            raise ConfigError(f"stage {self.name!r}: need {minimum} <= {low} <= {high}, got {low}={a!r}, {high}={b!r}")

    def _positive(self, *names: str) -> None:
        for n in names:
            if not getattr(self, n) >= 0:
                raise ConfigError(f"stage {self.name!r}: {n} must be >= 0, got {getattr(self, n)!r}")

    def _weights(self, *names: str) -> np.ndarray:
        self._positive(*names)
        w = np.array([float(getattr(self, n)) for n in names])
        if w.sum() <= 0:
            raise ConfigError(f"stage {self.name!r}: the weights {', '.join(names)} are all 0")
        return w / w.sum()

    def params(self) -> dict[str, Any]:
        """Every parameter (``enabled`` included) by name."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def run(self, ship: Ship, rng: np.random.Generator, detour: int) -> None:
        raise NotImplementedError


# -- shared helpers ----------------------------------------------------------------------------


def centre_of_mass(ship: Ship) -> tuple[float, float]:
    """Mean (y, x) of the ship's tiles (the grid's centre for an empty grid)."""
    ys, xs = np.nonzero(ship.tiles != EMPTY)
    if len(ys) == 0:
        h, w = ship.shape
        return (h - 1) / 2.0, (w - 1) / 2.0
    return float(ys.mean()), float(xs.mean())


def best_first(scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Candidate order: highest score first, ties in random order."""
    return np.lexsort((rng.random(len(scores)), -np.asarray(scores, dtype=np.float64)))


def draw(rng: np.random.Generator, weights: np.ndarray) -> int:
    """An index drawn with probabilities proportional to ``weights`` (one uniform number)."""
    cum = np.cumsum(weights)
    return int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))


def place_first(
    ship: Ship, kind: int, variant: int, facing: int, ys: np.ndarray, xs: np.ndarray, order: np.ndarray, detour: int
) -> bool:
    """Stamp the part at the first candidate anchor (in ``order``) that passes ``placement_ok``."""
    h, w = footprint(kind, variant, facing)
    for i in order:
        y, x = int(ys[i]), int(xs[i])
        if K.placement_ok(ship.tiles, ship.part, ship.parts, y, x, h, w, detour, True):
            ship._stamp(kind, variant, facing, y, x)
            return True
    return False


def rect_gaps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Manhattan gaps between every footprint of ``a`` and every one of ``b`` (rows of y, x, h, w):
    the tiles strictly between them along y plus along x (0: touching or overlapping)."""
    ay, ax, ah, aw = (a[:, i, None].astype(np.int64) for i in range(4))
    by, bx, bh, bw = (b[None, :, i].astype(np.int64) for i in range(4))
    dy = np.maximum(0, np.maximum(by - (ay + ah), ay - (by + bh)))
    dx = np.maximum(0, np.maximum(bx - (ax + aw), ax - (bx + bw)))
    return dy + dx


@njit(cache=True)
def aligned_sides(tiles, ys, xs, h, w):
    """For each footprint, how many of its 4 sides lie flush against a wall: every tile just
    outside that side is armor or a part (not walkable, not empty, not off the grid)."""
    H, W = tiles.shape
    out = np.zeros(ys.shape[0], np.int64)
    for i in range(ys.shape[0]):
        y0 = ys[i]
        x0 = xs[i]
        for side in range(4):
            ok = True
            for j in range(h if side % 2 == 0 else w):
                if side == 0:
                    y, x = y0 + j, x0 + w
                elif side == 2:
                    y, x = y0 + j, x0 - 1
                elif side == 1:
                    y, x = y0 + h, x0 + j
                else:
                    y, x = y0 - 1, x0 + j
                if not (0 <= y < H and 0 <= x < W) or tiles[y, x] == EMPTY or tiles[y, x] == CORRIDOR or tiles[y, x] == DOOR:
                    ok = False
                    break
            if ok:
                out[i] += 1
    return out
