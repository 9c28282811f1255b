"""The audit of a starship: what rules/starship.md asks of a ship beyond validity, each
as a measured statistic and, where the property is a yes/no one, as a rule passed or not.

Validity (``quality.validate``) says a ship works; the quality score rewards a few of its
features. Neither says the ship is built the way the staged generator builds one: "cockpit and
reactor wrapped in armour except where a crew path passes; thrusters and weapons on the
perimeter facing outwards, a weapon placed farthest from the centre in its facing direction so
its line of fire is clear; exterior armour around weapons and thrusters; ammo supplies near
weapons, power storage near thrusters and ammo supplies; crew quarters and bunks; every tile that
a crew path does not need is armour (corridors appear only as what the paths need); extra doors
only where they shorten a path by more than 10 tiles" (read from the spec and its 14 stages).
``audit(ship)`` measures each of these on a finished ship, whoever built it.

    >>> from tablegym.envs.starship.pipeline import generate
    >>> a = audit(generate(seed=7))
    >>> a.rules["thrusters_outward"], a.stats["thrusters_outward"]
    (True, 1.0)

Two tests recur, both the stages' own:

- **needed** (a walkable tile a crew path needs): armoring the tile alone would fail the check
  every stage runs before covering a tile (``kernels.placement_ok`` with the detour limit 5 of
  the path contiguity check, and the access rule that no part loses its last walkable
  neighbour). Stages 5, 6, 9 and 13 leave exactly such tiles unarmored, so on a staged ship an
  "open" (not needed) walkable tile is one those stages would have armored.
- **near** (ammo, power): a Manhattan gap of at most 3 tiles between two footprints, the
  stages' ``near`` (``stages.rect_gaps``).

Conventions: a share of something the spec asks for, taken over nothing, is 1 (a ship with no
doors has every door justified; with no weapons, every weapon has a clear line of fire: the
counts say what is missing), and any other share or mean over nothing is 0 (no corridor: no
open corridor); no statistic is ever NaN, so all of them can feed a classifier. The numbers the rules test against are the stages' own defaults
(``Thrusters().min_points``, ``Ammo().near``, ``Doors().min_path`` ...), read from
``stages.py``, not restated here.

Statistics (``STATISTICS``; the property each one measures is in ``DESCRIPTIONS``):

| statistic | measures |
|---|---|
| ship_tiles | non-empty tiles |
| armor_fraction | armor tiles / ship tiles |
| walkable_fraction | corridor and door tiles / ship tiles |
| open_corridor | corridor tiles no crew path needs / corridor tiles |
| cockpit_depth | hull distance of the cockpit's least protected tile / the ship's largest (stage 3) |
| cockpit_wrap | cockpit's ring (the 12 tiles around its 2 x 2) that is armor, a part or a needed walkable tile |
| cockpit_ring_armor | cockpit's ring that is armor |
| reactor_offset | reactor centre to the centre of mass / the ship's radius about it (stage 4) |
| reactor_wrap, reactor_ring_armor | as for the cockpit |
| thruster_points | thruster points (small 1, medium 2, big 4) |
| backward_thrust | backward thruster points / thruster points |
| thrusters_outward | thrusters whose exhaust leaves the hull (clear ray) / thrusters |
| weapon_points | weapon points (small 1, large 4) |
| forward_weapons | forward weapon points / weapon points |
| weapons_outward | weapons with a clear line of fire / weapons |
| weapon_reach | mean over weapons: how far out in its facing direction it sits (1: the ship's edge, 0: the centre) |
| hull_armor | perimeter tiles that are not parts: armor / all |
| mount_hull_armor | the same, for the perimeter tiles next to (8 neighbours) a thruster or weapon |
| open_hull | perimeter walkable tiles no crew path needs |
| ammo_count | ammo supplies |
| weapons_served | weapons near an ammo supply / weapons |
| ammo_used | ammo supplies near a weapon / ammo supplies |
| power_count | power storages |
| power_used | power storages near a thruster or an ammo supply / power storages |
| quarters_count, bunk_count | crew quarters, bunk rooms |
| crew_aligned | mean over crew rooms of their sides flush against walls or parts / 4 |
| door_count | doors |
| doors_justified | doors whose way round is longer than 10 steps / doors |
| missing_doors | armor tiles between two walkable tiles whose way round is longer than 10 steps |

Rules (``RULES``): see ``RULE_DESCRIPTIONS``; each is one or two statistics against the spec's
words. The staged generator's distribution of every statistic and pass rate of every rule over
seeds 0-999 is experiments/starship/audit_reference.json (``python -m
tablegym.experiments.starship.audit --check`` regenerates and compares it, ``--write`` rewrites it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from tablegym.envs.starship import kernels as K
from tablegym.envs.starship import ship as S
from tablegym.envs.starship.fittings import Ammo, Doors, Power, Thrusters
from tablegym.envs.starship.pipeline import DEFAULT_DETOUR
from tablegym.envs.starship.quality import cockpit_protection, reactor_centrality, validate, working
from tablegym.envs.starship.ship import Ship
from tablegym.envs.starship.stage_base import aligned_sides, centre_of_mass, rect_gaps
from tablegym.envs.starship.stages_hull import ring

DETOUR = DEFAULT_DETOUR
"""The path contiguity check's detour limit that "needed" uses (the pipeline's default, 5)."""
MIN_PATH = Doors().min_path
"""A door is justified when the way round it is longer than this many steps (stage 14: 10)."""
NEAR = Ammo().near
"""Two footprints are near when at most this many tiles lie between them (stages 10-11: 3)."""
THRUSTER_POINTS = (Thrusters().min_points, Thrusters().max_points)
AMMO_COUNT = (Ammo().min_count, Ammo().max_count)
POWER_COUNT = (Power().min_count, Power().max_count)

DESCRIPTIONS: dict[str, str] = {
    "ship_tiles": "non-empty tiles: the hull's size (stages 1-2)",
    "armor_fraction": "armor tiles / ship tiles: a ship is mostly armor where no path runs (stages 5, 6, 9, 13)",
    "walkable_fraction": "corridor and door tiles / ship tiles: how much floor the ship has",
    "open_corridor": "corridor tiles that no crew path needs (armoring one alone passes the placement check) / "
    "corridor tiles; stage 13 armors every such tile, so a staged ship has (nearly) none",
    "cockpit_depth": "hull distance of the cockpit's least protected tile / the ship's largest hull distance: "
    "stage 3 puts it farthest from the perimeter",
    "cockpit_wrap": "tiles of the cockpit's ring (the 12 around its 2 x 2, off-grid ones open) that are armor, a part "
    "or a walkable tile a crew path needs: stage 5 armors every other ring tile",
    "cockpit_ring_armor": "tiles of the cockpit's ring that are armor / 12",
    "reactor_offset": "reactor centre to the ship's centre of mass / the ship's radius about it: stage 4 puts it "
    "closest to the centre of mass (0 best)",
    "reactor_wrap": "as cockpit_wrap, around the reactor (stage 6)",
    "reactor_ring_armor": "tiles of the reactor's ring that are armor / 12",
    "thruster_points": "thruster points (small 1, medium 2, big 4): stage 7 spends 35..45",
    "backward_thrust": "backward thruster points / thruster points: stage 7 draws 5/8 of its directions backwards",
    "thrusters_outward": "thrusters whose exhaust side has a clear ray out of the grid / thrusters: stage 7 places "
    "only such thrusters, on the perimeter facing out",
    "weapon_points": "weapon points (small 1, large 4)",
    "forward_weapons": "forward weapon points / weapon points: stage 8 favours forward",
    "weapons_outward": "weapons with a clear line of fire (clear ray out of the grid) / weapons: stage 8",
    "weapon_reach": "mean over weapons of the footprint centre's distance from the centre of mass along the "
    "weapon's facing / the ship's farthest tile along it: stage 8 takes the location farthest "
    "from the centre in the facing direction (1: at the edge, below 0: on the far side)",
    "hull_armor": "perimeter tiles (an empty tile or the grid's edge among their 8 neighbours) that are not parts: "
    "armor / all; stage 9 armors the perimeter wherever no path needs it",
    "mount_hull_armor": "as hull_armor, for the perimeter tiles 8-next to a thruster or weapon: the exterior armor around them",
    "open_hull": "walkable perimeter tiles that no crew path needs (stage 9 would have armored them)",
    "ammo_count": "ammo supplies: stage 10 places 2..3",
    "weapons_served": "weapons near (gap <= 3) an ammo supply / weapons: stage 10 places each supply near as many "
    "unserved weapons as it can",
    "ammo_used": "ammo supplies near a weapon / ammo supplies",
    "power_count": "power storages: stage 11 places 1..2",
    "power_used": "power storages near a thruster or an ammo supply / power storages (stage 11)",
    "quarters_count": "crew quarters (stage 12)",
    "bunk_count": "bunk rooms (stage 12)",
    "crew_aligned": "mean over crew rooms of their sides lying flush against armor or parts / 4: stage 12 prefers aligned edges",
    "door_count": "doors (stage 14)",
    "doors_justified": "doors between two opposite walkable tiles whose walking path round the door is longer than "
    "10 steps / doors: stage 14 adds a door only there",
    "missing_doors": "armor tiles between two opposite walkable tiles whose way round is longer than 10 steps: "
    "stage 14 makes each a door",
}
"""Each statistic and why it measures its property (the stage it reads)."""
STATISTICS: tuple[str, ...] = tuple(DESCRIPTIONS)

RULE_DESCRIPTIONS: dict[str, str] = {
    "valid": "the spec's four validity rules hold (quality.validate)",
    "cockpit_wrapped": '"cockpit wrapped in armour except where a crew path passes": every tile of its ring is armor, '
    "a part or a walkable tile a path needs (cockpit_wrap = 1)",
    "reactor_wrapped": "the same around the reactor (reactor_wrap = 1)",
    "thrusters_outward": '"thrusters on the perimeter facing outwards": every thruster\'s exhaust leaves the hull, '
    "and there is one (thrusters_outward = 1, thruster_points > 0)",
    "thruster_budget": '"35..45 points of thrusters" (thruster_points in 35..45)',
    "weapons_outward": '"weapons on the perimeter facing outwards ... so its line of fire is clear": every weapon has '
    "a clear line of fire, and there is one (weapons_outward = 1, weapon_points > 0)",
    "weapons_farthest": '"a weapon takes the location farthest from the ship\'s centre in the direction it faces": '
    "every weapon lies beyond the centre of mass in its facing direction (each reach > 0), and "
    "there is one",
    "hull_armored": '"one layer of armor on the perimeter wherever it passes the contiguity check": no perimeter '
    "walkable tile that a path does not need (open_hull = 0)",
    "ammo_near_weapons": '"ammo supplies (2..3) placed near as many weapons as possible": 2..3 of them and at least '
    "one weapon near one (ammo_count in 2..3, weapons_served > 0)",
    "power_near_mounts": '"power storage (1..2) near thrusters and ammo supplies": 1..2 of them, each near a thruster '
    "or an ammo supply (power_count in 1..2, power_used = 1)",
    "crew_rooms": '"crew quarters and bunk rooms": at least one of each',
    "corridors_needed": '"every remaining corridor tile becomes armor if that passes the contiguity check": no '
    "corridor tile that a path does not need (open_corridor = 0)",
    "doors_justified": '"a door is added in a wall where the walking path from one side to the other is longer than '
    '10 tiles": every door is such a one (doors_justified = 1)',
}
"""Each rule and the spec's words it tests."""
RULES: tuple[str, ...] = tuple(RULE_DESCRIPTIONS)


@dataclass(frozen=True)
class Audit:
    """A ship's ``stats`` (every name of ``STATISTICS``, a float) and ``rules`` (every name of ``RULES``)."""

    stats: dict[str, float]
    rules: dict[str, bool]

    def vector(self) -> np.ndarray:
        """The statistics in ``STATISTICS`` order (float64)."""
        return np.array([self.stats[k] for k in STATISTICS], np.float64)


# -- kernels -----------------------------------------------------------------------------------


@njit(cache=True)
def open_tiles(tiles, part, parts, detour):
    """``out[y, x]``: walkable tile (y, x) is one no crew path needs: armoring it alone passes
    ``kernels.placement_ok`` (the contiguity check with ``detour`` and the access rule). The
    hot loop of the audit (a contiguity check per walkable tile), hence compiled."""
    H, W = tiles.shape
    out = np.zeros((H, W), np.bool_)
    for y in range(H):
        for x in range(W):
            if K.walkable(tiles[y, x]) and K.placement_ok(tiles, part, parts, y, x, 1, 1, detour, False):
                out[y, x] = True
    return out


@njit(cache=True)
def _way_round(tiles, y, x, min_path, block):
    """Whether tile (y, x) lies between two walkable tiles on opposite sides (either axis) whose
    walking path avoiding (y, x) (if ``block``) is longer than ``min_path`` steps or missing."""
    H, W = tiles.shape
    src_y = np.empty(1, np.int64)
    src_x = np.empty(1, np.int64)
    for k in range(2):
        ay, ax = y + S.DY[k], x + S.DX[k]
        by, bx = y - S.DY[k], x - S.DX[k]
        if not (0 <= ay < H and 0 <= ax < W and 0 <= by < H and 0 <= bx < W):
            continue
        if K.walkable(tiles[ay, ax]) and K.walkable(tiles[by, bx]):
            src_y[0] = ay
            src_x[0] = ax
            dist = K.walk_distances(tiles, src_y, src_x, y, x, 1 if block else 0, 1)
            if dist[by, bx] < 0 or dist[by, bx] > min_path:
                return True
    return False


@njit(cache=True)
def door_counts(tiles, min_path):
    """(doors, justified doors, missing doors): a door is justified when ``_way_round`` holds
    for it (stage 14's test, the door itself not walked through); a missing door is an armor
    tile for which it holds."""
    H, W = tiles.shape
    doors = 0
    justified = 0
    missing = 0
    for y in range(H):
        for x in range(W):
            if tiles[y, x] == S.DOOR:
                doors += 1
                if _way_round(tiles, y, x, min_path, True):
                    justified += 1
            elif tiles[y, x] == S.ARMOR and _way_round(tiles, y, x, min_path, False):
                missing += 1
    return doors, justified, missing


# -- statistics ----------------------------------------------------------------------------------


def _fraction(count: float, total: float) -> float:
    return float(count) / float(total) if total else 1.0


def _perimeter(tiles: np.ndarray) -> np.ndarray:
    """Ship tiles with an empty tile or the grid's edge among their 8 neighbours (stage 9's)."""
    H, W = tiles.shape
    outside = np.pad(tiles == S.EMPTY, 1, constant_values=True)
    near = np.zeros((H, W), bool)
    for dy in range(3):
        for dx in range(3):
            near |= outside[dy : dy + H, dx : dx + W]
    return near & (tiles != S.EMPTY)


def _wrap(ship: Ship, kind: int, open_: np.ndarray) -> tuple[float, float]:
    """(wrap, ring armor) of the first part of ``kind``: the share of its Chebyshev-1 ring (off-grid
    tiles count as open) that is armor, a part or a needed walkable tile, and the share that is
    armor; (0, 0) without one."""
    found = ship.parts_of(kind)
    if not len(found):
        return 0.0, 0.0
    _, _, _, y, x, h, w = (int(v) for v in ship.parts[found[0]])
    H, W = ship.shape
    ys, xs = ring(y, x, h, w, 1, H, W)
    t = ship.tiles[ys, xs]
    closed = (t == S.ARMOR) | (ship.part[ys, xs] >= 0) | (np.isin(t, (S.CORRIDOR, S.DOOR)) & ~open_[ys, xs])
    size = 2 * (h + w) + 4
    return float(closed.sum()) / size, float((t == S.ARMOR).sum()) / size


def _points(ship: Ship, rows: np.ndarray) -> float:
    return float((ship.parts[rows, S.PH].astype(np.int64) * ship.parts[rows, S.PW]).sum()) if len(rows) else 0.0


def _reach(ship: Ship, weapons: np.ndarray) -> np.ndarray:
    """Each weapon's footprint centre along its facing from the centre of mass, over the ship's
    farthest tile along it (1: at the edge)."""
    cy, cx = centre_of_mass(ship)
    ys, xs = np.nonzero(ship.tiles != S.EMPTY)
    out = np.zeros(len(weapons))
    for i, p in enumerate(weapons):
        _, _, f, y, x, h, w = (int(v) for v in ship.parts[p])
        along = (y + (h - 1) / 2.0 - cy) * S.DY[f] + (x + (w - 1) / 2.0 - cx) * S.DX[f]
        edge = float(((ys - cy) * S.DY[f] + (xs - cx) * S.DX[f]).max())
        out[i] = along / edge if edge > 0 else 0.0
    return out


def _near(ship: Ship, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each part of ``a``: whether some part of ``b`` is near it (gap <= ``NEAR``)."""
    if not len(a) or not len(b):
        return np.zeros(len(a), bool)
    rect = [S.PY, S.PX, S.PH, S.PW]
    return (rect_gaps(ship.parts[a][:, rect], ship.parts[b][:, rect]) <= NEAR).any(axis=1)


def audit(ship: Ship) -> Audit:
    """Every statistic of ``STATISTICS`` and every rule of ``RULES`` for ``ship``."""
    tiles, kinds, facing = ship.tiles, ship.parts[:, S.KIND], ship.parts[:, S.FACING]
    n_tiles = int((tiles != S.EMPTY).sum())
    walkable = (tiles == S.CORRIDOR) | (tiles == S.DOOR)
    open_ = open_tiles(tiles, ship.part, ship.parts, DETOUR)
    s: dict[str, float] = {"ship_tiles": float(n_tiles)}
    s["armor_fraction"] = float((tiles == S.ARMOR).sum()) / n_tiles if n_tiles else 0.0
    s["walkable_fraction"] = float(walkable.sum()) / n_tiles if n_tiles else 0.0
    s["open_corridor"] = float((open_ & (tiles == S.CORRIDOR)).sum()) / max(int((tiles == S.CORRIDOR).sum()), 1)
    ys, xs = np.nonzero(tiles != S.EMPTY)
    s["cockpit_depth"] = cockpit_protection(ship, K.hull_distance(tiles))[1]
    s["cockpit_wrap"], s["cockpit_ring_armor"] = _wrap(ship, S.COCKPIT, open_)
    centrality = reactor_centrality(ship, centre_of_mass(ship), ys, xs)[1] if len(ship.parts_of(S.REACTOR)) else 0.0
    s["reactor_offset"] = 1.0 - centrality
    s["reactor_wrap"], s["reactor_ring_armor"] = _wrap(ship, S.REACTOR, open_)

    rays = K.clear_rays(tiles)
    thrusters, weapons = ship.parts_of(S.THRUSTER), ship.parts_of(S.WEAPON)
    s["thruster_points"] = _points(ship, thrusters)
    s["backward_thrust"] = _points(ship, thrusters[facing[thrusters] == S.BACKWARD]) / max(s["thruster_points"], 1.0)
    s["thrusters_outward"] = _fraction(len(working(ship, S.THRUSTER, rays)), len(thrusters))
    s["weapon_points"] = _points(ship, weapons)
    s["forward_weapons"] = _points(ship, weapons[facing[weapons] == S.FORWARD]) / max(s["weapon_points"], 1.0)
    s["weapons_outward"] = _fraction(len(working(ship, S.WEAPON, rays)), len(weapons))
    reach = _reach(ship, weapons)
    s["weapon_reach"] = float(reach.mean()) if len(reach) else 0.0

    hull = _perimeter(tiles) & (ship.part < 0)
    s["hull_armor"] = _fraction((hull & (tiles == S.ARMOR)).sum(), hull.sum())
    mounts = np.pad(np.isin(tiles, (S.THRUSTER, S.WEAPON)), 1)
    H, W = ship.shape
    by_mount = np.zeros((H, W), bool)
    for dy in range(3):
        for dx in range(3):
            by_mount |= mounts[dy : dy + H, dx : dx + W]
    s["mount_hull_armor"] = _fraction((hull & by_mount & (tiles == S.ARMOR)).sum(), (hull & by_mount).sum())
    s["open_hull"] = float((hull & walkable & open_).sum())

    ammo, power = ship.parts_of(S.AMMO), ship.parts_of(S.POWER)
    s["ammo_count"] = float(len(ammo))
    s["weapons_served"] = _fraction(_near(ship, weapons, ammo).sum(), len(weapons))
    s["ammo_used"] = _fraction(_near(ship, ammo, weapons).sum(), len(ammo))
    s["power_count"] = float(len(power))
    s["power_used"] = _fraction(_near(ship, power, np.concatenate([thrusters, ammo])).sum(), len(power))
    s["quarters_count"] = float(len(ship.parts_of(S.QUARTERS)))
    s["bunk_count"] = float(len(ship.parts_of(S.BUNK)))
    flush = [
        aligned_sides(
            tiles,
            ship.parts[p, S.PY : S.PY + 1].astype(np.int64),
            ship.parts[p, S.PX : S.PX + 1].astype(np.int64),
            int(ship.parts[p, S.PH]),
            int(ship.parts[p, S.PW]),
        )[0]
        for p in np.flatnonzero(np.isin(kinds, (S.QUARTERS, S.BUNK)))
    ]
    s["crew_aligned"] = float(np.mean(flush)) / 4.0 if flush else 0.0

    doors, justified, missing = door_counts(tiles, MIN_PATH)
    s["door_count"] = float(doors)
    s["doors_justified"] = _fraction(justified, doors)
    s["missing_doors"] = float(missing)
    assert tuple(s) == STATISTICS, "the statistics are measured in STATISTICS order"

    r = {
        "valid": validate(ship).ok,
        "cockpit_wrapped": s["cockpit_wrap"] == 1.0,
        "reactor_wrapped": s["reactor_wrap"] == 1.0,
        "thrusters_outward": s["thrusters_outward"] == 1.0 and s["thruster_points"] > 0,
        "thruster_budget": THRUSTER_POINTS[0] <= s["thruster_points"] <= THRUSTER_POINTS[1],
        "weapons_outward": s["weapons_outward"] == 1.0 and s["weapon_points"] > 0,
        "weapons_farthest": bool((reach > 0).all()) and s["weapon_points"] > 0,
        "hull_armored": s["open_hull"] == 0,
        "ammo_near_weapons": AMMO_COUNT[0] <= s["ammo_count"] <= AMMO_COUNT[1] and bool(_near(ship, weapons, ammo).any()),
        "power_near_mounts": POWER_COUNT[0] <= s["power_count"] <= POWER_COUNT[1] and s["power_used"] == 1.0,
        "crew_rooms": s["quarters_count"] >= 1 and s["bunk_count"] >= 1,
        "corridors_needed": s["open_corridor"] == 0,
        "doors_justified": s["doors_justified"] == 1.0,
    }
    assert tuple(r) == RULES, "the rules are tested in RULES order"
    return Audit(s, {k: bool(v) for k, v in r.items()})


# -- quality that counts the audit ---------------------------------------------------------------


def layout_quality(ship: Ship, result: Audit | None = None, score: float | None = None) -> float:
    """Quality v2: the old quality score (``quality.quality``) times the share of the audit's
    ``RULES`` the ship passes, in [0, 1].

    Why a product: the old score's terms were written for ships the staged generator builds, and
    an optimiser found ships that score as well while breaking nearly every layout rule (open
    corridor floors, weapons inside the hull, no crew quarters). Multiplied, every broken rule
    costs a 13th of the score and no quality term pays for it; a staged ship passes nearly all
    13 (12.96 on average), so among staged ships the order stays the old score's (rank
    correlation in results/starship/audit.md). ``result`` and ``score``, when the caller has
    them, save measuring them again."""
    result = audit(ship) if result is None else result
    if score is None:
        from tablegym.envs.starship.quality import quality

        score = quality(ship).score
    return float(score) * sum(result.rules.values()) / len(RULES)
