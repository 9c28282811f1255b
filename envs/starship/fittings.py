"""Stages 7-14 of the staged starship generator: what fits the hull once the cockpit and reactor
are placed and armoured (thrusters and weapons, exterior armour, ammo supplies and power storage,
crew rooms, the remaining armour, extra doors). envs/starship/stages.py runs them in order."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from tablegym.envs.starship import kernels as K
from tablegym.envs.starship import ship as S
from tablegym.envs.starship.ship import Ship, footprint, points
from tablegym.envs.starship.stage_base import (
    _NO_RAYS,
    ConfigError,
    Stage,
    aligned_sides,
    best_first,
    centre_of_mass,
    draw,
    place_first,
    rect_gaps,
)

# -- 7, 8. thrusters and weapons ---------------------------------------------------------------


@dataclass
class _Mounts(Stage):
    """Points-budgeted parts on the hull (thrusters, weapons), facing out of it."""

    kind: ClassVar[int] = S.THRUSTER
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

    def order(
        self, ship: Ship, ys: np.ndarray, xs: np.ndarray, h: int, w: int, facing: int, rng: np.random.Generator
    ) -> np.ndarray:
        raise NotImplementedError

    def place(self, ship: Ship, variant: int, facing: int, rays: np.ndarray, rng: np.random.Generator, detour: int) -> bool:
        h, w = footprint(self.kind, variant, facing)
        ys, xs = K.corridor_anchors(ship.tiles, h, w, rays, facing)
        return place_first(ship, self.kind, variant, facing, ys, xs, self.order(ship, ys, xs, h, w, facing, rng), detour)

    def run(self, ship: Ship, rng: np.random.Generator, detour: int) -> None:
        rays = K.clear_rays(ship.tiles)  # parts go on ship tiles only, so the rays stay as they are
        sizes = self.size_weights()
        cost = np.array([points(self.kind, v) for v in range(S.NUM_VARIANTS[self.kind])])
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
    kind: ClassVar[int] = S.THRUSTER
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

    def order(
        self, ship: Ship, ys: np.ndarray, xs: np.ndarray, h: int, w: int, facing: int, rng: np.random.Generator
    ) -> np.ndarray:
        return rng.permutation(len(ys))

    def finish(self, ship: Ship, rays: np.ndarray, rng: np.random.Generator, detour: int) -> None:
        backward = (ship.parts[:, S.KIND] == S.THRUSTER) & (ship.parts[:, S.FACING] == S.BACKWARD)
        if self.ensure_backward and not backward.any():
            for variant in range(S.NUM_VARIANTS[S.THRUSTER]):
                if self.place(ship, variant, S.BACKWARD, rays, rng, detour):
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
    kind: ClassVar[int] = S.WEAPON
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

    def order(
        self, ship: Ship, ys: np.ndarray, xs: np.ndarray, h: int, w: int, facing: int, rng: np.random.Generator
    ) -> np.ndarray:
        cy, cx = centre_of_mass(ship)
        reach = (ys + (h - 1) / 2.0 - cy) * S.DY[facing] + (xs + (w - 1) / 2.0 - cx) * S.DX[facing]
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
        outside = np.pad(ship.tiles == S.EMPTY, 1, constant_values=True)
        H, W = ship.shape
        near_outside = np.zeros((H, W), bool)
        for dy in (0, 1, 2):
            for dx in (0, 1, 2):
                near_outside |= outside[dy : dy + H, dx : dx + W]
        ys, xs = np.nonzero(near_outside & (ship.tiles == S.CORRIDOR))
        K.armor_tiles(ship.tiles, ship.part, ship.parts, ys.astype(np.int64), xs.astype(np.int64), detour)


# -- 10, 11. ammo supplies and power storage -----------------------------------------------------


@dataclass
class _Supplies(Stage):
    kind: ClassVar[int] = S.AMMO
    serves: ClassVar[tuple[int, ...]] = (S.WEAPON,)
    covered_by: ClassVar[tuple[int, ...]] = (S.AMMO,)
    min_count: int = 2
    max_count: int = 3
    near: int = 3

    def check(self) -> None:
        self._range("min_count", "max_count")
        self._positive("near")

    def run(self, ship: Ship, rng: np.random.Generator, detour: int) -> None:
        h, w = footprint(self.kind)
        rect = [S.PY, S.PX, S.PH, S.PW]
        for _ in range(int(rng.integers(self.min_count, self.max_count + 1))):
            ys, xs = K.corridor_anchors(ship.tiles, h, w, _NO_RAYS, -1)
            if len(ys) == 0:
                return
            targets = ship.parts[np.isin(ship.parts[:, S.KIND], self.serves)][:, rect]
            covers = ship.parts[np.isin(ship.parts[:, S.KIND], self.covered_by)][:, rect]
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
    kind: ClassVar[int] = S.AMMO
    serves: ClassVar[tuple[int, ...]] = (S.WEAPON,)
    covered_by: ClassVar[tuple[int, ...]] = (S.AMMO,)
    min_count: int = 2
    max_count: int = 3


@dataclass
class Power(_Supplies):
    """11. Power storage (``min_count..max_count`` = 1..2): near as many thrusters and ammo
    supplies as possible that are not already near a power storage or the reactor ("near" as
    for ammo supplies)."""

    number: ClassVar[int] = 11
    name: ClassVar[str] = "power"
    kind: ClassVar[int] = S.POWER
    serves: ClassVar[tuple[int, ...]] = (S.THRUSTER, S.AMMO)
    covered_by: ClassVar[tuple[int, ...]] = (S.POWER, S.REACTOR)
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
        rooms = [S.QUARTERS] * int(rng.integers(self.min_quarters, self.max_quarters + 1))
        rooms += [S.BUNK] * int(rng.integers(self.min_bunks, self.max_bunks + 1))
        for kind in rng.permutation(np.array(rooms, np.int64)):
            kind = int(kind)
            found = []
            for variant in range(S.NUM_VARIANTS[kind]):
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
        ys, xs = np.nonzero(ship.tiles == S.CORRIDOR)
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
