"""The start ship of the batched Starship envs, compiled: the brushes' edits of a ship's arrays
(stamp a part, remove one, paint a tile) and stages 1-6 of the staged generator (the hull's
shape, its gaps filled, the cockpit and reactor placed and armoured), so that a batch's reset
builds each board's start in one compiled call, the same ship ``generate_start`` gives (a test
checks seed by seed against the pipeline)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from tablegym.envs.starship import kernels as K
from tablegym.envs.starship.env import BRUSHES, FIRST_BRUSH_PART, NUM_BRUSHES
from tablegym.envs.starship.ship import COCKPIT, CORRIDOR, EMPTY, FACED, FIRST_PART, KIND, PART_FIELDS, REACTOR, Ship, footprint
from tablegym.envs.starship.stages_hull import STRATEGIES
from tablegym.envs.streams import integers, next_double, stream_rows

_BRUSH = np.array(
    [
        [
            b.kind,
            b.variant,
            b.facing if b.kind in FACED else 0,
            *(footprint(b.kind, b.variant, b.facing) if b.kind >= FIRST_PART else (1, 1)),
        ]
        for b in BRUSHES
    ],
    np.int64,
)
"""Per brush: kind, variant, facing as stamped (0 for unfaced parts), footprint h, w."""
_RANDOM_P = np.array([0.35, 0.5, 0.15])
_RANDOM_CDF = _RANDOM_P.cumsum() / _RANDOM_P.cumsum()[-1]
"""``Generator.choice``'s cumulative probabilities of the random start's tiles (empty, corridor, armor)."""
_NO_RAYS = np.zeros((4, 1, 1), np.bool_)
MAX_STAGES = 6
"""The generator stages compiled here: a partial start may stop after any of them."""

# the generator's parameters, one int64 array (``_generator_params``)
(
    G_UNTIL,
    G_DETOUR,
    G_SHAPE,
    G_MIN_MOD,
    G_MAX_MOD,
    G_MIN_R,
    G_MAX_R,
    G_MIN_W,
    G_MAX_W,
    G_MIN_H,
    G_MAX_H,
    G_MARGIN,
    G_FILL,
    G_SCAN,
    G_ITERS,
    G_FILL_MARGIN,
    G_COCKPIT,
    G_COCKPIT_STRATEGY,
    G_REACTOR,
    G_REACTOR_STRATEGY,
    G_COCKPIT_ARMOR,
    G_COCKPIT_LAYERS,
    G_REACTOR_ARMOR,
    G_REACTOR_LAYERS,
    G_RANDOM_START,
    G_SIZE,
) = range(26)


# -- the ship's edits ----------------------------------------------------------------------------


@njit(cache=True)
def _stamp(tiles, part, parts, n, kind, variant, facing, y, x, h, w):
    """``Ship._stamp``: part ``n`` appended; returns the new part count."""
    parts[n, 0] = kind
    parts[n, 1] = variant
    parts[n, 2] = facing
    parts[n, 3] = y
    parts[n, 4] = x
    parts[n, 5] = h
    parts[n, 6] = w
    for yy in range(y, y + h):
        for xx in range(x, x + w):
            tiles[yy, xx] = kind
            part[yy, xx] = n
    return n + 1


@njit(cache=True)
def _remove(tiles, part, parts, n, index, floor):
    """``Ship.remove_part``: the later parts shift down one; returns the new part count."""
    y, x, h, w = parts[index, 3], parts[index, 4], parts[index, 5], parts[index, 6]
    for yy in range(y, y + h):
        for xx in range(x, x + w):
            tiles[yy, xx] = floor
            part[yy, xx] = -1
    for q in range(index, n - 1):  # (the tiles numbered above it are these parts' footprints)
        parts[q, :] = parts[q + 1, :]
        for yy in range(parts[q, 3], parts[q, 3] + parts[q, 5]):
            for xx in range(parts[q, 4], parts[q, 4] + parts[q, 6]):
                part[yy, xx] = q
    return n - 1


@njit(cache=True)
def _apply_edit(tiles, part, parts, n, b, y, x):
    """``env.apply_edit`` of brush ``b`` at (y, x): (new part count, whether the ship changed)."""
    kind = _BRUSH[b, 0]
    if kind < FIRST_PART:
        p = part[y, x]
        if p >= 0:
            n = _remove(tiles, part, parts, n, p, CORRIDOR)
        elif tiles[y, x] == kind:
            return n, False
        tiles[y, x] = kind
        return n, True
    h, w = _BRUSH[b, 3], _BRUSH[b, 4]
    H, W = tiles.shape
    if y + h > H or x + w > W:
        return n, False
    for yy in range(y, y + h):
        for xx in range(x, x + w):
            if part[yy, xx] >= 0:
                return n, False
    return _stamp(tiles, part, parts, n, kind, _BRUSH[b, 1], _BRUSH[b, 2], y, x, h, w), True


# -- the generator, stages 1-6 -------------------------------------------------------------------


@njit(cache=True)
def _shape(tiles, row, g, circle):
    """Stage 1 (``stages.Shape.run``), drawing as it draws: modules, joints, kinds and sizes."""
    H, W = tiles.shape
    m = g[G_MARGIN]
    if H <= 2 * m or W <= 2 * m:
        return
    mask = tiles != EMPTY
    cys, cxs = np.empty(H * W, np.int64), np.empty(H * W, np.int64)
    for _ in range(g[G_MIN_MOD] + integers(row, g[G_MAX_MOD] - g[G_MIN_MOD] + 1)):
        nc = 0
        for y in range(m, H - m):
            for x in range(m, W - m):
                if mask[y, x]:
                    cys[nc] = y
                    cxs[nc] = x
                    nc += 1
        if nc:
            k = integers(row, nc)
            cy, cx = cys[k], cxs[k]
        else:
            cy, cx = (H - 1) // 2, (W - 1) // 2
        if next_double(row) < circle:
            r = g[G_MIN_R] + integers(row, g[G_MAX_R] - g[G_MIN_R] + 1)
            oy = ox = 0
            if nc:  # the joint: a random tile of the disc (as numpy slices it: cut at the grid's size)
                side_y, side_x = min(2 * r + 1, H), min(2 * r + 1, W)
                count = 0
                for dy in range(side_y):
                    for dx in range(side_x):
                        if (dy - r) ** 2 + (dx - r) ** 2 <= r * r + r:
                            count += 1
                k = integers(row, count)
                for dy in range(side_y):
                    for dx in range(side_x):
                        if (dy - r) ** 2 + (dx - r) ** 2 <= r * r + r:
                            if k == 0:
                                oy, ox = dy - r, dx - r
                            k -= 1
            ay, ax = cy - oy, cx - ox
            for y in range(m, H - m):
                for x in range(m, W - m):
                    if (y - ay) ** 2 + (x - ax) ** 2 <= r * r + r:
                        mask[y, x] = True
        else:
            w = g[G_MIN_W] + integers(row, g[G_MAX_W] - g[G_MIN_W] + 1)
            h = g[G_MIN_H] + integers(row, g[G_MAX_H] - g[G_MIN_H] + 1)
            if nc:
                y0 = cy - integers(row, h)
                x0 = cx - integers(row, w)
            else:
                y0, x0 = cy - (h - 1) // 2, cx - (w - 1) // 2
            for y in range(max(y0, m), min(y0 + h, H - m)):
                for x in range(max(x0, m), min(x0 + w, W - m)):
                    mask[y, x] = True
    for y in range(H):
        for x in range(W):
            if mask[y, x] and tiles[y, x] == EMPTY:
                tiles[y, x] = CORRIDOR


@njit(cache=True)
def _fill_gaps(tiles, g):
    """Stage 2 (``stages.FillGaps.run``)."""
    H, W = tiles.shape
    m = g[G_FILL_MARGIN]
    for _ in range(g[G_ITERS]):
        if K.fill_gaps_once(tiles, g[G_SCAN], m, H - m, m, W - m) == 0:
            break
    label, count = K.components(tiles != EMPTY)
    if count > 1:
        sizes = np.zeros(count, np.int64)
        for y in range(H):
            for x in range(W):
                if label[y, x] >= 0:
                    sizes[label[y, x]] += 1
        biggest = np.argmax(sizes)
        for y in range(H):
            for x in range(W):
                if label[y, x] != biggest and tiles[y, x] == CORRIDOR:
                    tiles[y, x] = EMPTY


@njit(cache=True)
def _best_first(scores, row):
    """``stages.best_first``: highest score first, ties in the order of one double each
    (``np.lexsort((rng.random(n), -scores))``: stable sorts, last key first)."""
    n = scores.shape[0]
    u = np.empty(n)
    for i in range(n):
        u[i] = next_double(row)
    by_u = np.argsort(u, kind="mergesort")
    neg = np.empty(n)
    for i in range(n):
        neg[i] = -scores[by_u[i]]
    return by_u[np.argsort(neg, kind="mergesort")]


@njit(cache=True)
def _spot(tiles, part, parts, n, row, kind, strategy, detour):
    """Stages 3 and 4 (``stages._Spot.run``): the part at the best corridor location that passes
    the check; returns the new part count."""
    for p in range(n):
        if parts[p, KIND] == kind:
            return n
    H, W = tiles.shape
    h, w = 2, 2
    ys, xs = K.corridor_anchors(tiles, h, w, _NO_RAYS, -1)
    count = ys.shape[0]
    scores = np.zeros(count)
    if strategy == 0:  # protected
        dist = K.hull_distance(tiles)
        for i in range(count):
            low = dist[ys[i], xs[i]]
            for dy in range(h):
                for dx in range(w):
                    low = min(low, dist[ys[i] + dy, xs[i] + dx])
            scores[i] = float(low)
    elif strategy == 1:  # centralized: the centre of mass of the ship's tiles
        tiles_n, sy, sx = 0, 0, 0
        for y in range(H):
            for x in range(W):
                if tiles[y, x] != EMPTY:
                    tiles_n += 1
                    sy += y
                    sx += x
        cy = sy / tiles_n if tiles_n else (H - 1) / 2.0
        cx = sx / tiles_n if tiles_n else (W - 1) / 2.0
        for i in range(count):
            scores[i] = -np.hypot(ys[i] + (h - 1) / 2.0 - cy, xs[i] + (w - 1) / 2.0 - cx)
    for i in _best_first(scores, row):
        if K.placement_ok(tiles, part, parts[:n], ys[i], xs[i], h, w, detour, True):
            return _stamp(tiles, part, parts, n, kind, 0, 0, ys[i], xs[i], h, w)
    return n


@njit(cache=True)
def _ring(y0, x0, h, w, r, H, W):
    """``stages.ring``: in-grid tiles at Chebyshev distance ``r`` from a footprint, clockwise."""
    ys = np.empty(2 * (h + w) + 8 * r, np.int64)
    xs = np.empty(2 * (h + w) + 8 * r, np.int64)
    n = 0
    for x in range(x0 - r, x0 + w + r):
        ys[n], xs[n] = y0 - r, x
        n += 1
    for y in range(y0 - r + 1, y0 + h + r):
        ys[n], xs[n] = y, x0 + w - 1 + r
        n += 1
    for x in range(x0 + w + r - 2, x0 - r - 1, -1):
        ys[n], xs[n] = y0 + h - 1 + r, x
        n += 1
    for y in range(y0 + h + r - 2, y0 - r, -1):
        ys[n], xs[n] = y, x0 - r
        n += 1
    keep = 0
    for i in range(n):
        if 0 <= ys[i] < H and 0 <= xs[i] < W:
            ys[keep], xs[keep] = ys[i], xs[i]
            keep += 1
    return ys[:keep], xs[:keep]


@njit(cache=True)
def _part_armor(tiles, part, parts, n, kind, layers, detour):
    """Stages 5 and 6 (``stages._PartArmor.run``): rings of armor round each part of ``kind``."""
    H, W = tiles.shape
    for p in range(n):
        if parts[p, KIND] != kind:
            continue
        for r in range(1, layers + 1):
            ys, xs = _ring(parts[p, 3], parts[p, 4], parts[p, 5], parts[p, 6], r, H, W)
            K.armor_tiles(tiles, part, parts[:n], ys, xs, detour)


@njit(cache=True)
def _start_ship(tiles, part, parts, row, g, circle):
    """``StarshipEnv._start_ship``: the generator up to ``g[G_UNTIL]`` or the random start, on
    an empty grid; returns the part count."""
    tiles[:] = EMPTY
    part[:] = -1
    n = 0
    H, W = tiles.shape
    if g[G_RANDOM_START]:
        for y in range(H):
            for x in range(W):
                u = next_double(row)
                k = 0
                for j in range(3):
                    if _RANDOM_CDF[j] <= u:
                        k = j + 1
                tiles[y, x] = k
        for _ in range(H * W // 32):
            b = FIRST_BRUSH_PART + integers(row, NUM_BRUSHES - FIRST_BRUSH_PART)
            y = integers(row, H)
            x = integers(row, W)
            n, _ = _apply_edit(tiles, part, parts, n, b, y, x)
        return n
    until, detour = g[G_UNTIL], g[G_DETOUR]
    if until >= 1 and g[G_SHAPE]:
        _shape(tiles, row, g, circle)
    if until >= 2 and g[G_FILL]:
        _fill_gaps(tiles, g)
    if until >= 3 and g[G_COCKPIT]:
        n = _spot(tiles, part, parts, n, row, COCKPIT, g[G_COCKPIT_STRATEGY], detour)
    if until >= 4 and g[G_REACTOR]:
        n = _spot(tiles, part, parts, n, row, REACTOR, g[G_REACTOR_STRATEGY], detour)
    if until >= 5 and g[G_COCKPIT_ARMOR]:
        _part_armor(tiles, part, parts, n, COCKPIT, g[G_COCKPIT_LAYERS], detour)
    if until >= 6 and g[G_REACTOR_ARMOR]:
        _part_armor(tiles, part, parts, n, REACTOR, g[G_REACTOR_LAYERS], detour)
    return n


def generate_start(pipeline: Any, seed: int, *, start: str = "partial", partial_stages: int = 6) -> Ship:
    """The start ship ``StarshipEnv(start=start)`` deals on its first reset with ``seed`` (the
    compiled path; its reference is the single env)."""
    g, circle = _generator_params(pipeline, start, partial_stages)
    H, W = pipeline.size
    tiles, part, parts = np.zeros((H, W), np.int8), np.full((H, W), -1, np.int16), np.zeros((H * W, PART_FIELDS), np.int16)
    n = _start_ship(tiles, part, parts, stream_rows([seed])[0], g, circle)
    return Ship(tiles, part, parts[:n].copy())


def _generator_params(pipeline: Any, start: str, partial_stages: int) -> tuple[np.ndarray, float]:
    """The int64 parameters of the compiled start (``G_*``) and the shape stage's circle weight."""
    if start == "partial" and partial_stages > MAX_STAGES:
        raise ValueError(
            f"the compiled Starship vector env runs the generator's stages 1-{MAX_STAGES} only "
            f"(start='partial' with partial_stages <= {MAX_STAGES}), got partial_stages={partial_stages!r}"
        )
    shape, fill, cockpit, reactor, cockpit_armor, reactor_armor = pipeline.stages[:MAX_STAGES]
    g = np.zeros(G_SIZE, np.int64)
    g[G_UNTIL] = 2 if start == "empty" else partial_stages
    g[G_DETOUR] = pipeline.detour
    g[G_RANDOM_START] = start == "random"
    g[G_SHAPE], g[G_FILL], g[G_COCKPIT], g[G_REACTOR] = shape.enabled, fill.enabled, cockpit.enabled, reactor.enabled
    g[G_COCKPIT_ARMOR], g[G_REACTOR_ARMOR] = cockpit_armor.enabled, reactor_armor.enabled
    g[G_MIN_MOD], g[G_MAX_MOD] = shape.min_modules, shape.max_modules
    g[G_MIN_R], g[G_MAX_R] = shape.min_radius, shape.max_radius
    g[G_MIN_W], g[G_MAX_W] = shape.min_width, shape.max_width
    g[G_MIN_H], g[G_MAX_H] = shape.min_height, shape.max_height
    g[G_MARGIN] = shape.margin
    g[G_SCAN], g[G_ITERS], g[G_FILL_MARGIN] = fill.scan_range, fill.iterations, fill.margin
    g[G_COCKPIT_STRATEGY] = STRATEGIES.index(cockpit.strategy)
    g[G_REACTOR_STRATEGY] = STRATEGIES.index(reactor.strategy)
    g[G_COCKPIT_LAYERS], g[G_REACTOR_LAYERS] = cockpit_armor.layers, reactor_armor.layers
    return g, float(shape._weights("circle_weight", "rectangle_weight")[0])
