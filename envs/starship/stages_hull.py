"""Stages 1-6 of the staged starship generator: the hull's shape, its gaps filled, the cockpit and
the reactor placed (``STRATEGIES``), and the armour around each. envs/starship/stages.py runs
them in order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from tablegym.envs.starship import kernels as K
from tablegym.envs.starship.ship import (
    COCKPIT,
    CORRIDOR,
    EMPTY,
    REACTOR,
    Ship,
    footprint,
)
from tablegym.envs.starship.stage_base import _NO_RAYS, ConfigError, Stage, best_first, centre_of_mass, place_first

# -- 1. shape ----------------------------------------------------------------------------------


@dataclass
class Shape(Stage):
    """1. Shape: ``min_modules..max_modules`` shape modules, painted as corridor.

    Each module is a CircleModule (a blocky disc: tiles within ``r^2 + r`` squared distance of
    its centre, ``r`` in ``min_radius..max_radius``) or a RectangleModule (``min_width..
    max_width`` x ``min_height..max_height``, wider than tall by default as the ship faces +x),
    chosen with probabilities ``circle_weight : rectangle_weight``. The first module is centred
    on the grid; each later one is joined at a random tile of the ship so far, which becomes a
    random tile of the new module (so modules overlap, spread, and the ship stays one
    4-connected piece).
    Tiles closer than ``margin`` to the grid's edge stay empty. Module sizes are tablegym's
    choice (the spec gives only the module count).
    """

    number: ClassVar[int] = 1
    name: ClassVar[str] = "shape"
    min_modules: int = 8
    max_modules: int = 8
    circle_weight: float = 1.0
    rectangle_weight: float = 1.0
    min_radius: int = 3
    max_radius: int = 5
    min_width: int = 6
    max_width: int = 16
    min_height: int = 3
    max_height: int = 7
    margin: int = 1

    def check(self) -> None:
        self._range("min_modules", "max_modules")
        self._range("min_radius", "max_radius", 1)
        self._range("min_width", "max_width", 1)
        self._range("min_height", "max_height", 1)
        self._positive("margin")
        self._weights("circle_weight", "rectangle_weight")

    def run(self, ship: Ship, rng: np.random.Generator, detour: int) -> None:
        H, W = ship.shape
        m = self.margin
        window = np.zeros((H, W), bool)
        window[m : H - m, m : W - m] = True
        if not window.any():
            return
        weights = self._weights("circle_weight", "rectangle_weight")
        yy, xx = np.mgrid[0:H, 0:W]
        mask = ship.tiles != EMPTY
        for _ in range(int(rng.integers(self.min_modules, self.max_modules + 1))):
            cells = np.argwhere(mask & window)
            if len(cells):
                cy, cx = map(int, cells[rng.integers(len(cells))])
            else:
                cy, cx = (m + H - m - 1) // 2, (m + W - m - 1) // 2
            if rng.random() < weights[0]:
                r = int(rng.integers(self.min_radius, self.max_radius + 1))
                disc = (
                    np.argwhere((yy[: 2 * r + 1, : 2 * r + 1] - r) ** 2 + (xx[: 2 * r + 1, : 2 * r + 1] - r) ** 2 <= r * r + r)
                    - r
                )
                oy, ox = disc[rng.integers(len(disc))] if len(cells) else (0, 0)
                module = (yy - (cy - oy)) ** 2 + (xx - (cx - ox)) ** 2 <= r * r + r
            else:
                w = int(rng.integers(self.min_width, self.max_width + 1))
                h = int(rng.integers(self.min_height, self.max_height + 1))
                if len(cells):  # the joint is a random tile of the new module
                    y0, x0 = cy - int(rng.integers(h)), cx - int(rng.integers(w))
                else:
                    y0, x0 = cy - (h - 1) // 2, cx - (w - 1) // 2
                module = (yy >= y0) & (yy < y0 + h) & (xx >= x0) & (xx < x0 + w)
            mask |= module & window
        ship.tiles[mask & (ship.tiles == EMPTY)] = CORRIDOR


# -- 2. fill gaps ------------------------------------------------------------------------------


@dataclass
class FillGaps(Stage):
    """2. Fill gaps: an empty tile with a corridor tile within ``scan_range`` tiles on 2 or more
    of its 4 sides becomes corridor; ``iterations`` passes, each decided on the grid before it.

    Choices: "sides" are the 4 straight directions; tiles within the shape stage's margin
    (``margin``) stay empty. A pass can fill a tile that touches no corridor (corridor 2 tiles
    away on both sides); if the last pass leaves such a detached piece, the corridor tiles
    outside the ship's largest 4-connected piece are emptied again, so the ship stays one piece.
    """

    number: ClassVar[int] = 2
    name: ClassVar[str] = "fill_gaps"
    scan_range: int = 2
    iterations: int = 3
    margin: int = 1

    def check(self) -> None:
        self._positive("scan_range", "iterations", "margin")

    def run(self, ship: Ship, rng: np.random.Generator, detour: int) -> None:
        H, W = ship.shape
        m = self.margin
        for _ in range(self.iterations):
            if K.fill_gaps_once(ship.tiles, self.scan_range, m, H - m, m, W - m) == 0:
                break
        label, count = K.components(ship.tiles != EMPTY)
        if count > 1:
            biggest = np.bincount(label[label >= 0]).argmax()
            ship.tiles[(label != biggest) & (ship.tiles == CORRIDOR)] = EMPTY


# -- 3, 4. cockpit and reactor -------------------------------------------------------------------

STRATEGIES = ("protected", "centralized", "random")


def _spot_scores(ship: Ship, strategy: str, ys: np.ndarray, xs: np.ndarray, h: int, w: int) -> np.ndarray:
    if strategy == "protected":  # the footprint's least protected tile, as far from the hull as can be
        dist = K.hull_distance(ship.tiles)
        return np.min([dist[ys + dy, xs + dx] for dy in range(h) for dx in range(w)], axis=0).astype(float)
    if strategy == "centralized":
        cy, cx = centre_of_mass(ship)
        return -np.hypot(ys + (h - 1) / 2.0 - cy, xs + (w - 1) / 2.0 - cx)
    return np.zeros(len(ys))


@dataclass
class _Spot(Stage):
    """Place the stage's one part at the best corridor location under ``strategy``."""

    kind: ClassVar[int] = COCKPIT
    strategy: str = "protected"

    def check(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ConfigError(f"stage {self.name!r}: strategy must be one of {STRATEGIES}, got {self.strategy!r}")

    def run(self, ship: Ship, rng: np.random.Generator, detour: int) -> None:
        if len(ship.parts_of(self.kind)):
            return
        h, w = footprint(self.kind)
        ys, xs = K.corridor_anchors(ship.tiles, h, w, _NO_RAYS, -1)
        order = best_first(_spot_scores(ship, self.strategy, ys, xs, h, w), rng)
        place_first(ship, self.kind, 0, 0, ys, xs, order, detour)


@dataclass
class Cockpit(_Spot):
    """3. Cockpit: the corridor location that is best under ``strategy`` and passes the check.

    "protected" (the default): as far from the ship's perimeter as possible, scoring a location
    by the hull distance (steps to the nearest empty tile, ``kernels.hull_distance``) of its
    least protected tile. "centralized" and "random" are the other strategies. Does nothing if
    the ship already has a cockpit.
    """

    number: ClassVar[int] = 3
    name: ClassVar[str] = "cockpit"
    kind: ClassVar[int] = COCKPIT
    strategy: str = "protected"


@dataclass
class Reactor(_Spot):
    """4. Reactor: like the cockpit, under the "centralized" strategy by default: the footprint
    centre closest (Euclidean) to the centre of mass of the ship's tiles.

    The cockpit has priority: it is placed first, and the reactor only goes on corridor tiles,
    so when the best spots overlap the reactor takes its next best one.
    """

    number: ClassVar[int] = 4
    name: ClassVar[str] = "reactor"
    kind: ClassVar[int] = REACTOR
    strategy: str = "centralized"


# -- 5, 6. armor around cockpit and reactor ----------------------------------------------------


def ring(y0: int, x0: int, h: int, w: int, r: int, H: int, W: int) -> tuple[np.ndarray, np.ndarray]:
    """In-grid tiles at Chebyshev distance exactly ``r`` from a footprint, clockwise from its top-left."""
    top = [(y0 - r, x) for x in range(x0 - r, x0 + w + r)]
    right = [(y, x0 + w - 1 + r) for y in range(y0 - r + 1, y0 + h + r)]
    bottom = [(y0 + h - 1 + r, x) for x in range(x0 + w + r - 2, x0 - r - 1, -1)]
    left = [(y, x0 - r) for y in range(y0 + h + r - 2, y0 - r, -1)]
    cells = [(y, x) for y, x in top + right + bottom + left if 0 <= y < H and 0 <= x < W]
    arr = np.array(cells, np.int64).reshape(-1, 2)
    return arr[:, 0].copy(), arr[:, 1].copy()


@dataclass
class _PartArmor(Stage):
    kind: ClassVar[int] = COCKPIT
    layers: int = 1

    def check(self) -> None:
        self._positive("layers")

    def run(self, ship: Ship, rng: np.random.Generator, detour: int) -> None:
        H, W = ship.shape
        for p in ship.parts_of(self.kind):
            _, _, _, y, x, h, w = map(int, ship.parts[p])
            for r in range(1, self.layers + 1):
                ys, xs = ring(y, x, h, w, r, H, W)
                K.armor_tiles(ship.tiles, ship.part, ship.parts, ys, xs, detour)


@dataclass
class CockpitArmor(_PartArmor):
    """5. Cockpit armor: ``layers`` rings of armor around the cockpit (a ring is the tiles at
    Chebyshev distance r, corners included, tried clockwise from the top-left, in passes until
    one armors nothing more); a corridor tile whose armoring fails the check stays corridor
    (that is the way in). Only corridor tiles are armored. ``layers`` (default 1) is
    tablegym's choice.
    """

    number: ClassVar[int] = 5
    name: ClassVar[str] = "cockpit_armor"
    kind: ClassVar[int] = COCKPIT


@dataclass
class ReactorArmor(_PartArmor):
    """6. Reactor armor: as cockpit armor, around the reactor."""

    number: ClassVar[int] = 6
    name: ClassVar[str] = "reactor_armor"
    kind: ClassVar[int] = REACTOR
