"""Ship validity (the spec's four rules) and quality (six terms and their weighted sum).

Validity: each rule is a function ``ship -> Check``; a failed check says why in words::

    >>> from tablegym.envs.starship.ship import Ship
    >>> ship = Ship.from_text('''
    ... . # # # # .
    ... < : : C C #
    ... . # # C C #
    ... . # # # # .''')
    >>> validate(ship).reasons
    ['the ship has 0 reactors (it needs exactly one)']

Quality: ``quality(ship)`` measures every term (``Quality.raw``, in tiles or points), maps
each to [0, 1] (``Quality.terms``, 1 is best) and combines them with ``QUALITY_WEIGHTS`` into
``Quality.score``, the weighted mean, in [0, 1]:

| term                | raw measure                                          | term in [0, 1]                       | weight |
|---------------------|------------------------------------------------------|--------------------------------------|--------|
| cockpit_protection  | hull distance of the cockpit's least protected tile  | raw / the ship's largest hull distance | 1.0  |
| reactor_centrality  | reactor centre to the ship's centre of mass (tiles)  | 1 - raw / the ship's radius about it | 1.0    |
| thrust_balance      | lateral offset of the centre of backward thrust from | 1 - raw / half the ship's height;    | 1.0    |
|                     | the centre of mass (tiles)                           | 0 without backward thrust            |        |
| forward_firepower   | points of forward weapons with a clear line of fire  | min(raw / 8, 1)                      | 1.0    |
| crew_walking        | mean walking steps from crew rooms to the cockpit,   | 10 / (10 + raw); 0 without crew      | 1.0    |
|                     | the reactor and each weapon                          | rooms or destinations (raw = nan)    |        |
| armor_fraction      | armor tiles / ship tiles                             | raw                                  | 0.5    |

A "working" thruster or weapon has a clear outward ray: every tile beyond its facing side, to
the grid's edge, is empty (its exhaust leaves the hull, or it has a line of fire). Hull
distance is counted in 4-neighbour steps through any tile to the nearest empty tile (1 on the
perimeter). Walking is in 4-neighbour steps over corridors and doors, between the walkable tiles
next to the two parts; an unreachable destination counts as ``height + width`` steps.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tablegym.envs.starship import kernels as K
from tablegym.envs.starship import ship as S
from tablegym.envs.starship.ship import Ship

# -- validity ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """The outcome of one validity rule: ``ok`` and, when it fails, the ``reason`` in words."""

    rule: str
    ok: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok


@dataclass(frozen=True)
class Validity:
    """Every rule's ``Check``; ``ok`` when all pass."""

    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def reasons(self) -> list[str]:
        return [c.reason for c in self.checks if not c.ok]

    @property
    def passed(self) -> int:
        return sum(c.ok for c in self.checks)

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        return "valid" if self.ok else "invalid: " + "; ".join(self.reasons)


def check_connected(ship: Ship) -> Check:
    """One connected ship: the non-empty tiles form a single 4-connected piece."""
    _, count = K.components(ship.tiles != S.EMPTY)
    if count == 1:
        return Check("connected", True)
    if count == 0:
        return Check("connected", False, "the ship has no tiles")
    return Check("connected", False, f"the ship is in {count} pieces (its tiles must form one 4-connected piece)")


def check_cockpit_and_reactor(ship: Ship) -> Check:
    """Exactly one cockpit and exactly one reactor."""
    bad = []
    for kind in (S.COCKPIT, S.REACTOR):
        n = len(ship.parts_of(kind))
        if n != 1:
            bad.append(f"the ship has {n} {S.TILE_NAMES[kind]}s (it needs exactly one)")
    return Check("cockpit_and_reactor", not bad, "; ".join(bad))


def _access(ship: Ship, p: int) -> tuple[np.ndarray, np.ndarray]:
    """The walkable tiles next to part ``p``'s footprint."""
    H, W = ship.shape
    row = ship.parts[p]
    ys, xs = K.border_tiles(H, W, int(row[S.PY]), int(row[S.PX]), int(row[S.PH]), int(row[S.PW]))
    keep = np.isin(ship.tiles[ys, xs], (S.CORRIDOR, S.DOOR))
    return ys[keep], xs[keep]


def _where(ship: Ship, p: int) -> str:
    row = ship.parts[p]
    return f"{S.TILE_NAMES[int(row[S.KIND])]} at (y={int(row[S.PY])}, x={int(row[S.PX])})"


def check_reachable(ship: Ship) -> Check:
    """Every part (room or system) and every door is reachable from the cockpit over walkable
    tiles: a part through a walkable tile next to it. With no single cockpit this rule has
    nothing to start from and passes only if there is nothing else to reach."""
    cockpits = ship.parts_of(S.COCKPIT)
    others = [p for p in range(len(ship.parts)) if ship.parts[p, S.KIND] != S.COCKPIT]
    doors = np.argwhere(ship.tiles == S.DOOR)
    if len(cockpits) != 1:
        if not others and not len(doors):
            return Check("reachable", True)
        return Check("reachable", False, f"reachability is measured from the one cockpit, and there are {len(cockpits)}")
    ys, xs = _access(ship, int(cockpits[0]))
    if len(ys) == 0:
        if not others and not len(doors):
            return Check("reachable", True)
        return Check("reachable", False, "the cockpit has no walkable tile next to it")
    dist = K.walk_distances(ship.tiles, ys, xs, 0, 0, 0, 0)
    lost = [_where(ship, p) for p in others if not (dist[_access(ship, p)] >= 0).any()]
    lost += [f"door at (y={y}, x={x})" for y, x in doors if dist[y, x] < 0]
    if lost:
        more = f" and {len(lost) - 5} more" if len(lost) > 5 else ""
        return Check("reachable", False, f"not reachable from the cockpit: {', '.join(lost[:5])}{more}")
    return Check("reachable", True)


def working(ship: Ship, kind: int, rays: np.ndarray | None = None) -> np.ndarray:
    """Indices of the parts of ``kind`` whose facing side looks out of the hull (clear ray)."""
    rays = K.clear_rays(ship.tiles) if rays is None else rays
    out = [
        p for p in ship.parts_of(kind) if K.face_clear(rays, *(int(v) for v in ship.parts[p, [S.PY, S.PX, S.PH, S.PW, S.FACING]]))
    ]
    return np.array(out, np.int64)


def check_backward_thruster(ship: Ship) -> Check:
    """At least one thruster facing backwards (exhaust towards -x) whose exhaust leaves the hull."""
    back = [p for p in working(ship, S.THRUSTER) if ship.parts[p, S.FACING] == S.BACKWARD]
    if back:
        return Check("backward_thruster", True)
    blocked = [p for p in ship.parts_of(S.THRUSTER) if ship.parts[p, S.FACING] == S.BACKWARD]
    why = f" ({len(blocked)} face backwards but their exhaust is blocked by the ship)" if blocked else ""
    return Check("backward_thruster", False, f"no thruster facing backwards{why}")


VALIDITY_RULES: tuple[Callable[[Ship], Check], ...] = (
    check_connected,
    check_cockpit_and_reactor,
    check_reachable,
    check_backward_thruster,
)
"""The spec's validity rules, in its order."""


def validate(ship: Ship) -> Validity:
    """Every rule of ``VALIDITY_RULES`` on ``ship``."""
    return Validity(tuple(rule(ship) for rule in VALIDITY_RULES))


# -- quality -----------------------------------------------------------------------------------

QUALITY_WEIGHTS: dict[str, float] = {
    "cockpit_protection": 1.0,
    "reactor_centrality": 1.0,
    "thrust_balance": 1.0,
    "forward_firepower": 1.0,
    "crew_walking": 1.0,
    "armor_fraction": 0.5,
}
"""Weights of the quality terms in ``Quality.score`` (the weighted mean of the [0, 1] terms)."""
FIREPOWER_TARGET = 8.0
"""Forward weapon points at which ``forward_firepower`` reaches 1."""
CREW_SCALE = 10.0
"""Mean walking steps at which ``crew_walking`` is 1/2."""


@dataclass(frozen=True)
class Quality:
    """``raw`` measures, ``terms`` in [0, 1] and the weighted ``score`` (see the module docstring)."""

    raw: dict[str, float] = field(default_factory=dict)
    terms: dict[str, float] = field(default_factory=dict)
    score: float = 0.0

    def __str__(self) -> str:
        parts = [f"{k} {self.terms[k]:.3f} (raw {self.raw[k]:.3g})" for k in QUALITY_WEIGHTS]
        return f"quality {self.score:.4f}: " + ", ".join(parts)


def _centre(row: np.ndarray) -> tuple[float, float]:
    return float(row[S.PY]) + (float(row[S.PH]) - 1) / 2.0, float(row[S.PX]) + (float(row[S.PW]) - 1) / 2.0


def cockpit_protection(ship: Ship, hull: np.ndarray) -> tuple[float, float]:
    cockpits = ship.parts_of(S.COCKPIT)
    if not len(cockpits):
        return 0.0, 0.0
    y, x, h, w = (int(v) for v in ship.parts[cockpits[0], [S.PY, S.PX, S.PH, S.PW]])
    raw = float(hull[y : y + h, x : x + w].min())
    return raw, raw / max(float(hull.max()), 1.0)


def reactor_centrality(ship: Ship, com: tuple[float, float], ys: np.ndarray, xs: np.ndarray) -> tuple[float, float]:
    reactors = ship.parts_of(S.REACTOR)
    if not len(reactors) or not len(ys):
        return math.nan, 0.0
    cy, cx = _centre(ship.parts[reactors[0]])
    raw = math.hypot(cy - com[0], cx - com[1])
    radius = max(float(np.hypot(ys - com[0], xs - com[1]).max()), 1.0)
    return raw, max(0.0, 1.0 - raw / radius)


def thrust_balance(ship: Ship, com: tuple[float, float], ys: np.ndarray, rays: np.ndarray) -> tuple[float, float]:
    back = [p for p in working(ship, S.THRUSTER, rays) if ship.parts[p, S.FACING] == S.BACKWARD]
    if not back:
        return math.nan, 0.0
    thrust = np.array([float(ship.parts[p, S.PH] * ship.parts[p, S.PW]) for p in back])
    centre = np.array([_centre(ship.parts[p])[0] for p in back])
    raw = abs(float((thrust * centre).sum() / thrust.sum()) - com[0])
    half = max((float(ys.max()) - float(ys.min()) + 1.0) / 2.0, 1.0)
    return raw, max(0.0, 1.0 - raw / half)


def forward_firepower(ship: Ship, rays: np.ndarray) -> tuple[float, float]:
    raw = float(
        sum(
            int(ship.parts[p, S.PH] * ship.parts[p, S.PW])
            for p in working(ship, S.WEAPON, rays)
            if ship.parts[p, S.FACING] == S.FORWARD
        )
    )
    return raw, min(raw / FIREPOWER_TARGET, 1.0)


def crew_walking(ship: Ship) -> tuple[float, float]:
    rooms = [p for p in range(len(ship.parts)) if ship.parts[p, S.KIND] in (S.QUARTERS, S.BUNK)]
    dests = [p for p in range(len(ship.parts)) if ship.parts[p, S.KIND] in (S.COCKPIT, S.REACTOR, S.WEAPON)]
    if not rooms or not dests:
        return math.nan, 0.0
    H, W = ship.shape
    access = [_access(ship, p) for p in dests]
    steps = []
    for r in rooms:
        ys, xs = _access(ship, r)
        dist = K.walk_distances(ship.tiles, ys, xs, 0, 0, 0, 0)
        for dy, dx in access:
            d = dist[dy, dx]
            d = d[d >= 0]
            steps.append(float(d.min()) if len(d) else float(H + W))
    raw = float(np.mean(steps))
    return raw, CREW_SCALE / (CREW_SCALE + raw)


def armor_fraction(ship: Ship) -> tuple[float, float]:
    n = int((ship.tiles != S.EMPTY).sum())
    raw = float((ship.tiles == S.ARMOR).sum()) / n if n else 0.0
    return raw, raw


def quality(ship: Ship) -> Quality:
    """Every quality term of ``ship``, raw and in [0, 1], and their weighted mean."""
    ys, xs = np.nonzero(ship.tiles != S.EMPTY)
    com = (float(ys.mean()), float(xs.mean())) if len(ys) else (0.0, 0.0)
    rays = K.clear_rays(ship.tiles)
    measured = {
        "cockpit_protection": cockpit_protection(ship, K.hull_distance(ship.tiles)),
        "reactor_centrality": reactor_centrality(ship, com, ys, xs),
        "thrust_balance": thrust_balance(ship, com, ys, rays) if len(ys) else (math.nan, 0.0),
        "forward_firepower": forward_firepower(ship, rays),
        "crew_walking": crew_walking(ship),
        "armor_fraction": armor_fraction(ship),
    }
    raw = {k: v[0] for k, v in measured.items()}
    terms = {k: v[1] for k, v in measured.items()}
    score = sum(QUALITY_WEIGHTS[k] * terms[k] for k in QUALITY_WEIGHTS) / sum(QUALITY_WEIGHTS.values())
    return Quality(raw, terms, float(score))
