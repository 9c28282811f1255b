"""The 14 stages of the staged starship generator (rules/starship.md), one small class each.

A stage is a dataclass of its parameters (defaults as in the spec where it gives them) with an
``enabled`` flag; ``stage.run(ship, rng, detour)`` edits the ship in place, taking every random
choice from ``rng``. Every stage that covers tiles (parts, armor) first asks
``kernels.placement_ok``: the spec's path contiguity check (``kernels.contiguity_ok``, detour
limit ``detour``) plus the access rule below. So, stage by stage, the walkable tiles stay one
connected network and every part keeps a walkable neighbour, which is what makes the finished
ship valid.

Access rule (tablegym's addition to the contiguity check): parts are not walkable, so a part is
reached from a walkable tile next to it. A part's footprint must touch a walkable tile, and no
placement may take the last walkable neighbour of a part already placed.

Where the spec leaves a choice open, the stage's docstring says what tablegym chose. Ties
between equally good locations are broken at random (by ``rng``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np
from numba import njit

from tablegym.envs.limits import LimitError
from tablegym.envs.starship import kernels as K
from tablegym.envs.starship.ship import (
    AMMO, BACKWARD, BUNK, COCKPIT, CORRIDOR, DOOR, DX, DY, EMPTY, FACING, KIND, NUM_VARIANTS, PH, POWER, PW, PX, PY,
    QUARTERS, REACTOR, THRUSTER, WEAPON, Ship, footprint, points,
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


def ship_mask(ship: Ship) -> np.ndarray:
    return ship.tiles != EMPTY


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


def place_first(ship: Ship, kind: int, variant: int, facing: int, ys: np.ndarray, xs: np.ndarray,
                order: np.ndarray, detour: int) -> bool:
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
                disc = np.argwhere((yy[: 2 * r + 1, : 2 * r + 1] - r) ** 2 + (xx[: 2 * r + 1, : 2 * r + 1] - r) ** 2 <= r * r + r) - r
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


# -- 7, 8. thrusters and weapons ---------------------------------------------------------------


@dataclass
class _Mounts(Stage):
    """Points-budgeted parts on the hull (thrusters, weapons), facing out of it."""

    kind: ClassVar[int] = THRUSTER
    min_points: int = 35
    max_points: int = 45
    max_failures: int = 30

    def size_weights(self) -> np.ndarray:
        raise NotImplementedError

    def direction_weights(self) -> np.ndarray:
        return self._weights("forward_weight", "starboard_weight", "backward_weight", "port_weight")

    def check(self) -> None:
        self._range("min_points", "max_points")
        self._positive("max_failures")
        self.size_weights()
        self.direction_weights()

    def order(self, ship: Ship, ys: np.ndarray, xs: np.ndarray, h: int, w: int, facing: int, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def place(self, ship: Ship, variant: int, facing: int, rays: np.ndarray, rng: np.random.Generator, detour: int) -> bool:
        h, w = footprint(self.kind, variant, facing)
        ys, xs = K.corridor_anchors(ship.tiles, h, w, rays, facing)
        return place_first(ship, self.kind, variant, facing, ys, xs, self.order(ship, ys, xs, h, w, facing, rng), detour)

    def run(self, ship: Ship, rng: np.random.Generator, detour: int) -> None:
        rays = K.clear_rays(ship.tiles)  # parts go on ship tiles only, so the rays stay as they are
        sizes = self.size_weights()
        cost = np.array([points(self.kind, v) for v in range(NUM_VARIANTS[self.kind])])
        dirs = self.direction_weights()
        target = int(rng.integers(self.min_points, self.max_points + 1))
        total, failures = 0, 0
        while total < target and failures < self.max_failures:
            p = np.where(cost <= target - total, sizes, 0.0)
            if p.sum() <= 0:
                break
            variant = draw(rng, p)
            facing = draw(rng, dirs)
            if self.place(ship, variant, facing, rays, rng, detour):
                total += int(cost[variant])
            else:
                failures += 1
        self.finish(ship, rays, rng, detour)

    def finish(self, ship: Ship, rays: np.ndarray, rng: np.random.Generator, detour: int) -> None:
        """Hook after the budget is spent."""


@dataclass
class Thrusters(_Mounts):
    """7. Thrusters: ``min_points..max_points`` points of thrusters (small 1, medium 2, big 4
    points; sizes drawn with weights ``small_weight : medium_weight : big_weight`` = 1:2:3,
    directions with ``backward_weight`` 5 and 1 for each other direction: 5/8 backwards).

    A thruster goes on corridor tiles with its exhaust side looking out of the hull: every tile
    beyond that side, to the grid's edge, is empty. Among such locations one is drawn at
    random (the spec does not rank them). Only sizes that fit in the points left are drawn; a
    draw with no location that passes the check counts as a failure, and the stage stops at the
    target or after ``max_failures`` failures. With ``ensure_backward`` (tablegym's addition,
    on by default) a ship left without a backward thruster gets the smallest one that fits, so
    the validity rule "at least one thruster facing backwards" holds whenever it can.
    """

    number: ClassVar[int] = 7
    name: ClassVar[str] = "thrusters"
    kind: ClassVar[int] = THRUSTER
    min_points: int = 35
    max_points: int = 45
    small_weight: float = 1.0
    medium_weight: float = 2.0
    big_weight: float = 3.0
    forward_weight: float = 1.0
    starboard_weight: float = 1.0
    backward_weight: float = 5.0
    port_weight: float = 1.0
    ensure_backward: bool = True

    def size_weights(self) -> np.ndarray:
        return self._weights("small_weight", "medium_weight", "big_weight")

    def order(self, ship: Ship, ys: np.ndarray, xs: np.ndarray, h: int, w: int, facing: int, rng: np.random.Generator) -> np.ndarray:
        return rng.permutation(len(ys))

    def finish(self, ship: Ship, rays: np.ndarray, rng: np.random.Generator, detour: int) -> None:
        backward = (ship.parts[:, KIND] == THRUSTER) & (ship.parts[:, FACING] == BACKWARD)
        if self.ensure_backward and not backward.any():
            for variant in range(NUM_VARIANTS[THRUSTER]):
                if self.place(ship, variant, BACKWARD, rays, rng, detour):
                    return


@dataclass
class Weapons(_Mounts):
    """8. Weapons: ``min_points..max_points`` points of weapons (small 1, large 4 points;
    sizes with weights ``small_weight : large_weight``), facings spread around the ship but
    favouring forward (weights forward 4, starboard 2, port 2, backward 1).

    A weapon needs a clear line of fire (every tile beyond its firing side empty) and takes the
    location farthest from the ship's centre of mass in the direction it faces (its footprint
    centre's projection on that direction; ties at random). The spec gives no weapon budget or
    weights: ``min_points = 12``, ``max_points = 18`` and the weights above are tablegym's.
    """

    number: ClassVar[int] = 8
    name: ClassVar[str] = "weapons"
    kind: ClassVar[int] = WEAPON
    min_points: int = 12
    max_points: int = 18
    small_weight: float = 2.0
    large_weight: float = 1.0
    forward_weight: float = 4.0
    starboard_weight: float = 2.0
    backward_weight: float = 1.0
    port_weight: float = 2.0

    def size_weights(self) -> np.ndarray:
        return self._weights("small_weight", "large_weight")

    def order(self, ship: Ship, ys: np.ndarray, xs: np.ndarray, h: int, w: int, facing: int, rng: np.random.Generator) -> np.ndarray:
        cy, cx = centre_of_mass(ship)
        reach = (ys + (h - 1) / 2.0 - cy) * DY[facing] + (xs + (w - 1) / 2.0 - cx) * DX[facing]
        return best_first(reach, rng)


# -- 9. exterior armor ---------------------------------------------------------------------------


@dataclass
class ExteriorArmor(Stage):
    """9. Exterior armor: one layer of armor on the perimeter (corridor tiles with an empty tile,
    or the grid's edge, among their 8 neighbours), wherever it passes the check: row-major, in
    passes until one armors nothing more (as every armoring stage, ``kernels.armor_tiles``)."""

    number: ClassVar[int] = 9
    name: ClassVar[str] = "exterior_armor"

    def run(self, ship: Ship, rng: np.random.Generator, detour: int) -> None:
        outside = np.pad(ship.tiles == EMPTY, 1, constant_values=True)
        H, W = ship.shape
        near_outside = np.zeros((H, W), bool)
        for dy in (0, 1, 2):
            for dx in (0, 1, 2):
                near_outside |= outside[dy : dy + H, dx : dx + W]
        ys, xs = np.nonzero(near_outside & (ship.tiles == CORRIDOR))
        K.armor_tiles(ship.tiles, ship.part, ship.parts, ys.astype(np.int64), xs.astype(np.int64), detour)


# -- 10, 11. ammo supplies and power storage -----------------------------------------------------


@dataclass
class _Supplies(Stage):
    kind: ClassVar[int] = AMMO
    serves: ClassVar[tuple[int, ...]] = (WEAPON,)
    covered_by: ClassVar[tuple[int, ...]] = (AMMO,)
    min_count: int = 2
    max_count: int = 3
    near: int = 3

    def check(self) -> None:
        self._range("min_count", "max_count")
        self._positive("near")

    def run(self, ship: Ship, rng: np.random.Generator, detour: int) -> None:
        h, w = footprint(self.kind)
        rect = [PY, PX, PH, PW]
        for _ in range(int(rng.integers(self.min_count, self.max_count + 1))):
            ys, xs = K.corridor_anchors(ship.tiles, h, w, _NO_RAYS, -1)
            if len(ys) == 0:
                return
            targets = ship.parts[np.isin(ship.parts[:, KIND], self.serves)][:, rect]
            covers = ship.parts[np.isin(ship.parts[:, KIND], self.covered_by)][:, rect]
            if len(targets) and len(covers):  # drop the targets already served
                targets = targets[(rect_gaps(targets, covers) > self.near).all(axis=1)]
            spots = np.stack([ys, xs, np.full_like(ys, h), np.full_like(xs, w)], axis=1)
            score = (rect_gaps(spots, targets) <= self.near).sum(axis=1) if len(targets) else np.zeros(len(ys))
            place_first(ship, self.kind, 0, 0, ys, xs, best_first(score, rng), detour)


@dataclass
class Ammo(_Supplies):
    """10. Ammo supplies (``min_count..max_count`` = 2..3): each at the corridor location near
    as many weapons as possible that are not already near another ammo supply.

    "Near" (tablegym's choice) is a Manhattan gap of at most ``near`` (3) tiles between the
    footprints (0: touching). Ties, including "near no such weapon", are broken at random.
    """

    number: ClassVar[int] = 10
    name: ClassVar[str] = "ammo"
    kind: ClassVar[int] = AMMO
    serves: ClassVar[tuple[int, ...]] = (WEAPON,)
    covered_by: ClassVar[tuple[int, ...]] = (AMMO,)
    min_count: int = 2
    max_count: int = 3


@dataclass
class Power(_Supplies):
    """11. Power storage (``min_count..max_count`` = 1..2): near as many thrusters and ammo
    supplies as possible that are not already near a power storage or the reactor ("near" as
    for ammo supplies)."""

    number: ClassVar[int] = 11
    name: ClassVar[str] = "power"
    kind: ClassVar[int] = POWER
    serves: ClassVar[tuple[int, ...]] = (THRUSTER, AMMO)
    covered_by: ClassVar[tuple[int, ...]] = (POWER, REACTOR)
    min_count: int = 1
    max_count: int = 2


# -- 12. crew ------------------------------------------------------------------------------------


@dataclass
class Crew(Stage):
    """12. Crew: ``min_quarters..max_quarters`` crew quarters (2 x 2) and ``min_bunks..max_bunks``
    bunk rooms (2 x 3, either way round) in the remaining corridor areas, in random order.

    "Random, preferring aligned edges" (tablegym's reading): each candidate location is drawn
    with weight ``align_bias ** s``, where s (0..4) counts the footprint's sides that lie flush
    against armor or parts along their whole length; candidates are tried in that weighted
    random order until one passes the check. The counts are tablegym's choice.
    """

    number: ClassVar[int] = 12
    name: ClassVar[str] = "crew"
    min_quarters: int = 2
    max_quarters: int = 4
    min_bunks: int = 1
    max_bunks: int = 2
    align_bias: float = 4.0

    def check(self) -> None:
        self._range("min_quarters", "max_quarters")
        self._range("min_bunks", "max_bunks")
        if not self.align_bias > 0:
            raise ConfigError(f"stage {self.name!r}: align_bias must be > 0, got {self.align_bias!r}")

    def run(self, ship: Ship, rng: np.random.Generator, detour: int) -> None:
        rooms = [QUARTERS] * int(rng.integers(self.min_quarters, self.max_quarters + 1))
        rooms += [BUNK] * int(rng.integers(self.min_bunks, self.max_bunks + 1))
        for kind in rng.permutation(np.array(rooms, np.int64)):
            kind = int(kind)
            found = []
            for variant in range(NUM_VARIANTS[kind]):
                h, w = footprint(kind, variant)
                ys, xs = K.corridor_anchors(ship.tiles, h, w, _NO_RAYS, -1)
                found.append((np.full(len(ys), variant), ys, xs, aligned_sides(ship.tiles, ys, xs, h, w)))
            variants, ys, xs, sides = (np.concatenate(a) for a in zip(*found))
            if not len(ys):
                continue
            gumbel = -np.log(-np.log(rng.random(len(ys)) * (1 - 1e-12) + 1e-300))
            for i in np.argsort(-(sides * math.log(self.align_bias) + gumbel), kind="stable"):
                h, w = footprint(kind, int(variants[i]))
                if K.placement_ok(ship.tiles, ship.part, ship.parts, int(ys[i]), int(xs[i]), h, w, detour, True):
                    ship._stamp(kind, int(variants[i]), 0, int(ys[i]), int(xs[i]))
                    break


# -- 13. fill with armor -------------------------------------------------------------------------


@dataclass
class FillArmor(Stage):
    """13. Fill with armor: every remaining corridor tile becomes armor if that passes the check;
    the corridors are the tiles that could not be armored.

    Choices: tiles are tried in random order (``order = "random"``, the default: organic
    corridors) or row-major (``order = "scan"``), in passes over the tiles still corridor until
    a pass armors none (armoring a tile can turn a neighbour into a dead end that may then be
    armored), so no corridor tile left could be armored.
    """

    number: ClassVar[int] = 13
    name: ClassVar[str] = "fill_armor"
    order: str = "random"

    def check(self) -> None:
        if self.order not in ("random", "scan"):
            raise ConfigError(f"stage {self.name!r}: order must be 'random' or 'scan', got {self.order!r}")

    def run(self, ship: Ship, rng: np.random.Generator, detour: int) -> None:
        ys, xs = np.nonzero(ship.tiles == CORRIDOR)
        if self.order == "random":
            perm = rng.permutation(len(ys))
            ys, xs = ys[perm], xs[perm]
        K.armor_tiles(ship.tiles, ship.part, ship.parts, ys.astype(np.int64), xs.astype(np.int64), detour)


# -- 14. extra doors -----------------------------------------------------------------------------


@dataclass
class Doors(Stage):
    """14. Extra doors: an armor tile with walkable tiles on two opposite sides becomes a door
    when the walking path from one side to the other is longer than ``min_path`` (10) steps
    (or there is none). Walls are tried row-major, each seeing the doors added before it.
    """

    number: ClassVar[int] = 14
    name: ClassVar[str] = "doors"
    min_path: int = 10

    def check(self) -> None:
        self._positive("min_path")

    def run(self, ship: Ship, rng: np.random.Generator, detour: int) -> None:
        K.add_doors(ship.tiles, self.min_path)


STAGES: tuple[type[Stage], ...] = (Shape, FillGaps, Cockpit, Reactor, CockpitArmor, ReactorArmor, Thrusters, Weapons,
                                   ExteriorArmor, Ammo, Power, Crew, FillArmor, Doors)
"""The stage classes in running order (``STAGES[i].number == i + 1``)."""
STAGE_NAMES = tuple(s.name for s in STAGES)

