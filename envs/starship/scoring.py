"""Validity and quality of a ship in one compiled pass, so that an env step costs little more
than its edit.

``score(tiles, parts)`` returns which of the four validity rules hold and the six quality terms,
raw and in [0, 1], with the weighted score: the numbers of ``quality.validate`` and
``quality.quality`` (their reference in the tests, equal to 1e-9), without the words. The
env asks the Python rules for the words only for rules that fail, and only when they are read.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from tablegym.envs.starship import kernels as K
from tablegym.envs.starship import ship as S
from tablegym.envs.starship.quality import CREW_SCALE, FIREPOWER_TARGET, QUALITY_WEIGHTS, VALIDITY_RULES, Check, Quality, Validity
from tablegym.envs.starship.ship import Ship

TERMS = tuple(QUALITY_WEIGHTS)
"""The quality terms in ``score``'s order (``quality.QUALITY_WEIGHTS``'s)."""
_WEIGHTS = np.array([QUALITY_WEIGHTS[k] for k in TERMS])
NUM_RULES = 4
RULE_NAMES = ("connected", "cockpit_and_reactor", "reachable", "backward_thruster")
"""The names of ``quality.VALIDITY_RULES``' checks, in their order."""
assert len(VALIDITY_RULES) == NUM_RULES


@njit(cache=True)
def _access(tiles, parts, p):
    """The walkable tiles next to part ``p``'s footprint (``quality._access``)."""
    H, W = tiles.shape
    ys, xs = K.border_tiles(H, W, parts[p, S.PY], parts[p, S.PX], parts[p, S.PH], parts[p, S.PW])
    keep = 0
    for i in range(ys.shape[0]):
        t = tiles[ys[i], xs[i]]
        if t == S.CORRIDOR or t == S.DOOR:
            ys[keep] = ys[i]
            xs[keep] = xs[i]
            keep += 1
    return ys[:keep], xs[:keep]


@njit(cache=True)
def _count(parts, kind):
    n = 0
    first = -1
    for p in range(parts.shape[0]):
        if parts[p, S.KIND] == kind:
            if first < 0:
                first = p
            n += 1
    return n, first


@njit(cache=True)
def _has_door(tiles):
    H, W = tiles.shape
    for y in range(H):
        for x in range(W):
            if tiles[y, x] == S.DOOR:
                return True
    return False


@njit(cache=True)
def _reachable(tiles, parts, n_cockpits, cockpit, lost_parts, lost_doors):
    """The reachability rule; the parts and doors not reached go to ``lost_parts`` / ``lost_doors``
    (in the Python rule's order). Returns (ok, parts lost, doors lost, cockpit without access)."""
    H, W = tiles.shape
    others = parts.shape[0] - n_cockpits
    if n_cockpits != 1:
        return others == 0 and not _has_door(tiles), 0, 0, False
    ys, xs = _access(tiles, parts, cockpit)
    if ys.shape[0] == 0:
        return others == 0 and not _has_door(tiles), 0, 0, True
    dist = K.walk_distances(tiles, ys, xs, 0, 0, 0, 0)
    n_parts = 0
    for p in range(parts.shape[0]):  # an access tile reached: a reached tile next to it (only walkable ones are)
        if parts[p, S.KIND] != S.COCKPIT and not border_reached(
            dist, parts[p, S.PY], parts[p, S.PX], parts[p, S.PH], parts[p, S.PW]
        ):
            lost_parts[n_parts] = p
            n_parts += 1
    n_lost_doors = 0
    for y in range(H):
        for x in range(W):
            if tiles[y, x] == S.DOOR and dist[y, x] < 0:
                lost_doors[n_lost_doors, 0] = y
                lost_doors[n_lost_doors, 1] = x
                n_lost_doors += 1
    return n_parts == 0 and n_lost_doors == 0, n_parts, n_lost_doors, False


@njit(cache=True)
def border_reached(dist, y0, x0, h, w):
    """Whether a tile next to the footprint (not diagonal) has been reached (``dist >= 0``: only
    walkable tiles are)."""
    H, W = dist.shape
    for yy in range(max(y0 - 1, 0), min(y0 + h + 1, H)):
        for xx in range(max(x0 - 1, 0), min(x0 + w + 1, W)):
            if (y0 <= yy < y0 + h) != (x0 <= xx < x0 + w) and dist[yy, xx] >= 0:
                return True
    return False


NO_PART = np.zeros(4, np.int64)
"""``all_reached``'s extra footprint where there is none."""


@njit(cache=True)
def all_reached(tiles, parts, extra, dist, qy, qx):
    """The reachability rule on ``tiles`` with ``parts`` and one more part's footprint ``extra``
    (y, x, h, w; h = 0 for none), without allocating: ``dist``, ``qy`` and ``qx`` are the walk's
    scratch (H x W int32, H * W int64 each). What ``env.seal_mask`` asks of every trial write."""
    H, W = tiles.shape
    n_cockpits, cockpit = _count(parts, S.COCKPIT)
    others = parts.shape[0] - n_cockpits + (extra[2] > 0)
    doors = 0
    for y in range(H):
        for x in range(W):
            dist[y, x] = -1
            doors += tiles[y, x] == S.DOOR
    if n_cockpits != 1:
        return others == 0 and doors == 0
    tail = _queue_access(
        tiles, dist, qy, qx, parts[cockpit, S.PY], parts[cockpit, S.PX], parts[cockpit, S.PH], parts[cockpit, S.PW]
    )
    if tail == 0:
        return others == 0 and doors == 0
    head = 0
    while head < tail:
        tail = K._expand(tiles, dist, qy, qx, head, tail, 0, 0, 0, 0)
        head += 1
    for y in range(H):
        for x in range(W):
            if tiles[y, x] == S.DOOR and dist[y, x] < 0:
                return False
    for p in range(parts.shape[0]):
        if p != cockpit and not border_reached(dist, parts[p, S.PY], parts[p, S.PX], parts[p, S.PH], parts[p, S.PW]):
            return False
    return extra[2] == 0 or border_reached(dist, extra[0], extra[1], extra[2], extra[3])


@njit(cache=True)
def _working(first_x, last_x, parts, p):
    """``kernels.face_clear`` for a part facing forward or backward, from each row's first and
    last ship tile (a row's tiles beyond the part are empty when the part's side is past them):
    the score asks only these two facings, and the extents come from the pass it makes anyway."""
    x0, w = parts[p, S.PX], parts[p, S.PW]
    for y in range(parts[p, S.PY], parts[p, S.PY] + parts[p, S.PH]):
        if (last_x[y] >= x0 + w) if parts[p, S.FACING] == S.FORWARD else (first_x[y] < x0):
            return False
    return True


@njit(cache=True)
def _is_room(k):
    return k == S.QUARTERS or k == S.BUNK


@njit(cache=True)
def _is_destination(k):
    return k == S.COCKPIT or k == S.REACTOR or k == S.WEAPON


@njit(cache=True)
def crew_kind(k):
    """A part kind ``crew_walking`` reads: a crew room or a destination."""
    return _is_room(k) or _is_destination(k)


@njit(cache=True)
def _queue_access(tiles, dist, qy, qx, y0, x0, h, w):
    """Start a walk from the walkable tiles next to footprint (y0, x0, h, w): each at step 0, queued;
    returns the queue's length."""
    H, W = tiles.shape
    tail = 0
    for yy in range(max(y0 - 1, 0), min(y0 + h + 1, H)):
        for xx in range(max(x0 - 1, 0), min(x0 + w + 1, W)):
            if (
                (y0 <= yy < y0 + h) != (x0 <= xx < x0 + w)
                and (tiles[yy, xx] == S.CORRIDOR or tiles[yy, xx] == S.DOOR)
                and dist[yy, xx] < 0
            ):
                dist[yy, xx] = 0
                qy[tail] = yy
                qx[tail] = xx
                tail += 1
    return tail


@njit(cache=True)
def _bits(v):
    """How many bits of ``v`` are set (``v >= 0``)."""
    n = 0
    while v != 0:
        v &= v - 1
        n += 1
    return n


@njit(cache=True)
def _start_at(i, walk, dist, queue, tail):
    """Start a walk at flat tile ``i`` (step 0, queued) if it is walkable and not yet started;
    returns the queue's new length."""
    if walk[i] and dist[i] < 0:
        dist[i] = 0
        queue[tail] = i
        tail += 1
    return tail


_CHUNK = 62
"""Targets one walk looks for at a time: each has a bit in an int64 (``crew_walking``)."""


@njit(cache=True)
def crew_walking(tiles, parts):
    """``quality.crew_walking``: the mean over (crew room, destination) pairs of the walking steps
    between their access tiles (H + W where there is no way), and its term.

    A pair's steps are the same searched from either end, so the walks start from the side with
    fewer parts (one multi-source walk each) and look for the other side's parts
    (``_steps_to``). The steps are whole numbers, so their sum is exact in any order."""
    return crew_mean(crew_total(tiles, parts, np.zeros(0, np.uint8)), *crew_counts(parts))


@njit(cache=True)
def crew_total(tiles, parts, seen):
    """The walking steps summed over every (crew room, destination) pair (0.0 without pairs).
    ``seen``: see ``_steps_to`` (empty where nobody keeps it); cleared first."""
    seen[:] = 0
    n_rooms, n_dests = crew_counts(parts)
    if n_rooms == 0 or n_dests == 0:
        return 0.0
    return _steps_to(tiles, parts, n_rooms <= n_dests, -1, seen)


@njit(cache=True)
def crew_steps_of(tiles, parts, p, seen):
    """The walking steps summed over the pairs crew part ``p`` makes with the other side (its
    share of ``crew_walking``'s sum): what one more room or destination adds where the walkable
    tiles stay as they were. ``seen``: see ``_steps_to``; its walk's tiles are added."""
    return _steps_to(tiles, parts, _is_room(parts[p, S.KIND]), p, seen)


def seen_size(H: int, W: int) -> int:
    """The length of a ``seen`` array (``_steps_to``) for an H x W grid: its tiles and the frame around it."""
    return (H + 2) * (W + 2)


@njit(cache=True)
def walks_read(seen, W, y, x):
    """Whether the walks that marked ``seen`` may have read tile (y, x): it, or a tile next to
    it, was queued, or it borders a part a walk started from. If not, the walks run the same
    whatever the tile is, so their steps stand after an edit of it."""
    i = (y + 1) * (W + 2) + x + 1
    return (seen[i] | seen[i + 1] | seen[i - 1] | seen[i + W + 2] | seen[i - W - 2]) != 0


@njit(cache=True)
def crew_mean(total, n_rooms, n_dests):
    """``crew_walking``'s (mean steps, term) from the summed steps of all pairs."""
    if n_rooms == 0 or n_dests == 0:
        return math.nan, 0.0
    raw = total / (n_rooms * n_dests)
    return raw, CREW_SCALE / (CREW_SCALE + raw)


@njit(cache=True)
def crew_counts(parts):
    """(crew rooms, destinations) among ``parts``."""
    n_rooms = 0
    n_dests = 0
    for p in range(parts.shape[0]):
        k = parts[p, S.KIND]
        if _is_room(k):
            n_rooms += 1
        elif _is_destination(k):
            n_dests += 1
    return n_rooms, n_dests


@njit(cache=True)
def _steps_to(tiles, parts, from_rooms, only, seen):
    """The steps summed over the pairs whose room (``from_rooms``) or destination walks start
    from, every such part or only part ``only`` (>= 0), to each part of the other side.

    ``seen`` (flat over the framed grid, ``seen_size``; or empty): set at the tiles around each
    start footprint and at every tile a walk queued. A walk reads no other tile's walkability
    but those next to the tiles it takes from the queue, so an edit of a tile that is not next
    to a set one leaves every pair's steps as they are (``walks_read``).

    Each tile next to a target part carries that target's bit, and a walk ends as soon as it has
    reached every target (a breadth-first walk reaches a tile at its fewest steps, so the first
    access tile it reaches gives the pair's steps). The walks run on the grid framed by one tile
    that is never walkable, as flat indices: no step needs a bounds check."""
    H, W = tiles.shape
    targets = np.empty(parts.shape[0], np.int64)
    n_targets = 0
    for p in range(parts.shape[0]):
        if crew_kind(parts[p, S.KIND]) and _is_room(parts[p, S.KIND]) != from_rooms:
            targets[n_targets] = p
            n_targets += 1
    Wf = W + 2
    walk = np.zeros((H + 2) * Wf, np.bool_)
    for y in range(H):
        row = (y + 1) * Wf + 1
        for x in range(W):
            t = tiles[y, x]
            walk[row + x] = (t == S.CORRIDOR) | (t == S.DOOR)
    dist = np.full((H + 2) * Wf, -1, np.int32)
    ring = np.zeros((H + 2) * Wf, np.int64)
    queue = np.empty(H * W + 1, np.int32)  # (one more: a walk writes each neighbour before it counts it)
    marking = seen.size > 0
    total = 0.0
    for first in range(0, n_targets, _CHUNK):  # (one chunk unless a ship has more than 62 targets)
        m = min(_CHUNK, n_targets - first)
        ring[:] = 0
        for b in range(m):  # (the four sides of each footprint)
            t = targets[first + b]
            y0, x0, h, w = parts[t, S.PY] + 1, parts[t, S.PX] + 1, parts[t, S.PH], parts[t, S.PW]
            bit = np.int64(1) << b
            for xx in range(x0, x0 + w):
                ring[(y0 - 1) * Wf + xx] |= bit
                ring[(y0 + h) * Wf + xx] |= bit
            for yy in range(y0, y0 + h):
                ring[yy * Wf + x0 - 1] |= bit
                ring[yy * Wf + x0 + w] |= bit
        every = (np.int64(1) << m) - 1
        for p in range(parts.shape[0]):
            if not (crew_kind(parts[p, S.KIND]) and _is_room(parts[p, S.KIND]) == from_rooms) or (only >= 0 and p != only):
                continue
            tail = 0
            y0, x0, h, w = parts[p, S.PY] + 1, parts[p, S.PX] + 1, parts[p, S.PH], parts[p, S.PW]
            for xx in range(x0, x0 + w):  # (the four sides of its footprint)
                tail = _start_at((y0 - 1) * Wf + xx, walk, dist, queue, tail)
                tail = _start_at((y0 + h) * Wf + xx, walk, dist, queue, tail)
                if marking:
                    seen[(y0 - 1) * Wf + xx] = seen[(y0 + h) * Wf + xx] = 1
            for yy in range(y0, y0 + h):
                tail = _start_at(yy * Wf + x0 - 1, walk, dist, queue, tail)
                tail = _start_at(yy * Wf + x0 + w, walk, dist, queue, tail)
                if marking:
                    seen[yy * Wf + x0 - 1] = seen[yy * Wf + x0 + w] = 1
            found = np.int64(0)
            for k in range(tail):
                found |= ring[queue[k]]  # these targets are 0 steps away
            steps = 0.0
            head = 0
            while head < tail and found != every:
                i = queue[head]
                head += 1
                d = dist[i] + 1
                for j in (i + 1, i + Wf, i - 1, i - Wf):  # (without branches: the grid's are unpredictable)
                    ok = walk[j] & (dist[j] < 0)
                    dist[j] = d if ok else dist[j]
                    queue[tail] = j
                    tail += ok
                    new = ring[j] & ~found & -np.int64(ok)
                    if new != 0:
                        found |= new
                        steps += d * _bits(new)  # d steps for each target newly reached
            steps += (H + W) * (m - _bits(found))
            total += steps
            for k in range(tail):
                dist[queue[k]] = -1
                if marking:
                    seen[queue[k]] = 1
    return total


@njit(cache=True)
def score(tiles, parts):
    """(rules: bool[4] in ``quality.VALIDITY_RULES``' order, raw: float[6], terms: float[6],
    score, detail, lost parts, lost doors) of the ship ``tiles`` / ``parts`` (``Ship.tiles``,
    ``Ship.parts``). ``detail``: pieces, cockpits, reactors, thrusters facing backwards, the
    cockpit has no walkable tile next to it; the lost parts and doors are the reachability rule's
    (what ``describe`` words)."""
    crew_raw, crew_value = crew_walking(tiles, parts)
    hull = K.hull_distance(tiles)
    n_cockpits, cockpit = _count(parts, S.COCKPIT)
    low = 0
    if n_cockpits:
        y0, x0, h, w = parts[cockpit, S.PY], parts[cockpit, S.PX], parts[cockpit, S.PH], parts[cockpit, S.PW]
        low = hull[y0 : y0 + h, x0 : x0 + w].min()
    return score_from(tiles, parts, K.count_pieces(tiles), low, hull.max(), crew_raw, crew_value)


@njit(cache=True)
def score_from(tiles, parts, pieces, cockpit_low, hull_max, crew_raw, crew_value):
    """``score`` given its three whole-grid walks: the piece count and the hull distances (the
    least over the (first) cockpit's tiles and the most over the grid), which depend only on
    which tiles are empty, and the crew's walking term (``crew_walking``), which depends only on
    the walkable tiles and the crew rooms and destinations. An env that knows what an edit
    changed passes the ones it kept (``vector.py``); the numbers are ``score``'s."""
    H, W = tiles.shape
    lost_parts = np.empty(parts.shape[0], np.int64)
    lost_doors = np.empty((H * W, 2), np.int64)
    n_cockpits, cockpit = _count(parts, S.COCKPIT)
    reachable, n_lost, n_lost_doors, no_access = _reachable(tiles, parts, n_cockpits, cockpit, lost_parts, lost_doors)
    rules, raw, terms, total, detail = score_given(tiles, parts, pieces, cockpit_low, hull_max, crew_raw, crew_value, reachable)
    detail[4] = no_access
    return rules, raw, terms, total, detail, lost_parts[:n_lost], lost_doors[:n_lost_doors]


@njit(cache=True)
def score_given(tiles, parts, pieces, cockpit_low, hull_max, crew_raw, crew_value, reachable):
    """``score_from`` given the reachability rule as well, without the parts and doors it lost:
    (rules, raw, terms, score, detail with detail[4] left 0). The vector env asks the rule of
    ``all_reached``, which stops at the first part or door the cockpit's walk missed (most
    random ships miss one early) and needs no words."""
    H, W = tiles.shape
    rules = np.zeros(NUM_RULES, np.bool_)
    detail = np.zeros(5, np.int64)
    raw = np.full(6, np.nan)
    terms = np.zeros(6)
    rules[0] = pieces == 1
    n_cockpits, cockpit = _count(parts, S.COCKPIT)
    n_reactors, reactor = _count(parts, S.REACTOR)
    rules[1] = n_cockpits == 1 and n_reactors == 1
    rules[2] = reachable
    # the ship's tiles, their centre of mass and extent, each row's first and last (the row sums
    # branch-free, so that they compile to vector instructions)
    n = 0
    sy = 0.0
    sx = 0.0
    armor = 0
    y_lo = H
    y_hi = -1
    first_x = np.full(H, W, np.int64)
    last_x = np.full(H, -1, np.int64)
    for y in range(H):
        row = 0
        row_x = 0
        row_armor = 0
        for x in range(W):
            t = tiles[y, x]
            row += t != S.EMPTY
            row_x += x * (t != S.EMPTY)
            row_armor += t == S.ARMOR
        if row:  # (the sums are of whole numbers: exact in any grouping)
            n += row
            sy += y * row
            sx += row_x
            armor += row_armor
            y_lo = min(y_lo, y)
            y_hi = y
            x = 0
            while tiles[y, x] == S.EMPTY:
                x += 1
            first_x[y] = x
            x = W - 1
            while tiles[y, x] == S.EMPTY:
                x -= 1
            last_x[y] = x
    cy = sy / n if n else 0.0
    cx = sx / n if n else 0.0
    # cockpit_protection
    if n_cockpits:
        raw[0] = float(cockpit_low)
        terms[0] = raw[0] / max(float(hull_max), 1.0)
    else:
        raw[0] = 0.0
    # reactor_centrality
    if n_reactors and n:
        ry = parts[reactor, S.PY] + (parts[reactor, S.PH] - 1) / 2.0
        rx = parts[reactor, S.PX] + (parts[reactor, S.PW] - 1) / 2.0
        raw[1] = math.hypot(ry - cy, rx - cx)
        radius = 0.0
        for y in range(y_lo, y_hi + 1):  # a row's farthest tile from the centre is its first or last
            if last_x[y] >= 0:  # (the one farther across: hypot reads only its arguments' sizes)
                radius = max(radius, math.hypot(y - cy, max(abs(first_x[y] - cx), abs(last_x[y] - cx))))
        terms[1] = max(0.0, 1.0 - raw[1] / max(radius, 1.0))
    # thrust_balance, the backward-thruster rule and forward_firepower's points: one pass over the parts
    thrust = 0.0
    moment = 0.0
    backward = 0
    points = 0.0
    for p in range(parts.shape[0]):
        if parts[p, S.KIND] == S.THRUSTER and parts[p, S.FACING] == S.BACKWARD:
            backward += 1
            if _working(first_x, last_x, parts, p):
                a = float(parts[p, S.PH] * parts[p, S.PW])
                thrust += a
                moment += a * (parts[p, S.PY] + (parts[p, S.PH] - 1) / 2.0)
        elif parts[p, S.KIND] == S.WEAPON and parts[p, S.FACING] == S.FORWARD and _working(first_x, last_x, parts, p):
            points += parts[p, S.PH] * parts[p, S.PW]
    rules[3] = thrust > 0
    detail[0] = pieces
    detail[1] = n_cockpits
    detail[2] = n_reactors
    detail[3] = backward
    if thrust > 0 and n:
        raw[2] = abs(moment / thrust - cy)
        terms[2] = max(0.0, 1.0 - raw[2] / max((y_hi - y_lo + 1.0) / 2.0, 1.0))
    # forward_firepower
    raw[3] = points
    terms[3] = min(points / FIREPOWER_TARGET, 1.0)
    raw[4], terms[4] = crew_raw, crew_value
    raw[5] = armor / n if n else 0.0
    terms[5] = raw[5]
    total = 0.0
    for i in range(6):
        total += _WEIGHTS[i] * terms[i]
    return rules, raw, terms, total / _WEIGHTS.sum(), detail


def scored(ship: Ship) -> tuple[Validity, Quality]:
    """``(validate(ship), quality(ship))`` from one compiled pass: the same checks, reasons and
    numbers (the reasons worded here from what the pass found)."""
    rules, raw, terms, total, detail, lost_parts, lost_doors = score(ship.tiles, ship.parts)
    pieces, n_cockpits, n_reactors, backward, no_access = (int(v) for v in detail)
    checks = []
    for rule, ok in zip(RULE_NAMES, rules):
        checks.append(
            Check(rule, True)
            if ok
            else Check(
                rule, False, _reason(ship, rule, pieces, n_cockpits, n_reactors, backward, no_access, lost_parts, lost_doors)
            )
        )
    quality = Quality(
        {k: float(raw[i]) for i, k in enumerate(TERMS)}, {k: float(terms[i]) for i, k in enumerate(TERMS)}, float(total)
    )
    return Validity(tuple(checks)), quality


def _reason(
    ship: Ship,
    rule: str,
    pieces: int,
    n_cockpits: int,
    n_reactors: int,
    backward: int,
    no_access: int,
    lost_parts: np.ndarray,
    lost_doors: np.ndarray,
) -> str:
    """A failed rule's words, as the Python rule (quality.py) gives them."""
    if rule == "connected":
        return (
            "the ship has no tiles"
            if pieces == 0
            else f"the ship is in {pieces} pieces (its tiles must form one 4-connected piece)"
        )
    if rule == "cockpit_and_reactor":
        return "; ".join(
            f"the ship has {n} {S.TILE_NAMES[kind]}s (it needs exactly one)"
            for kind, n in ((S.COCKPIT, n_cockpits), (S.REACTOR, n_reactors))
            if n != 1
        )
    if rule == "reachable":
        if n_cockpits != 1:
            return f"reachability is measured from the one cockpit, and there are {n_cockpits}"
        if no_access:
            return "the cockpit has no walkable tile next to it"
        lost = [
            f"{S.TILE_NAMES[int(ship.parts[p, S.KIND])]} at (y={int(ship.parts[p, S.PY])}, x={int(ship.parts[p, S.PX])})"
            for p in lost_parts
        ]
        lost += [f"door at (y={int(y)}, x={int(x)})" for y, x in lost_doors]
        more = f" and {len(lost) - 5} more" if len(lost) > 5 else ""
        return f"not reachable from the cockpit: {', '.join(lost[:5])}{more}"
    why = f" ({backward} face backwards but their exhaust is blocked by the ship)" if backward else ""
    return f"no thruster facing backwards{why}"
