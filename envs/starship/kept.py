"""The hull distances and the piece count of a ship kept up to date across edits, so that an env
step pays for what an edit changed rather than for two passes over the whole grid.

Both read only which tiles are empty. An edit that empties or fills tiles is replayed one tile at
a time (``replay_occupancy``); each tile updates the numbers locally, with the same results as
``kernels.hull_distance`` and ``kernels.count_pieces`` of the edited grid (tested against them
after every step of random edits, and on random grids and edits with hypothesis).

**Hull distances.** ``kernels.hull_distance_into`` gives each tile a key: (steps, row-major index
of the start, the start's own number) packed in one integer, the smallest over the starts (the
empty tiles, number 0, and the ship's tiles on the grid's edge, number 1); a tile's distance is
its steps plus its start's number. A board keeps the keys (int32, ``fits`` says for which grids)
and reads the distances the score needs from them (``hull_low``, ``hull_top``):

- a tile emptied is a start at 0 steps: its keys spread outwards through the tiles they lower
  (a breadth-first walk from it, each tile lowered once, at its fewest steps from it);
- a tile filled stops being a start (or, on the edge, starts at 1): the tiles whose key came
  from it (its cell: a connected region around it, each tile's key one step more than a
  neighbour's in the cell) are cleared and the two raster passes of ``hull_distance_into`` run
  again over the cell's bounding box only, every tile outside it keeping its key. That is
  exact: a cleared tile's new best start is reached by a shortest path whose last tile outside
  the cell is in the box or next to it, and city-block paths inside a box are what the two
  passes follow.

**The piece count.** A tile that empties or fills changes the count by the pieces next to it: if
its ship neighbours (4-neighbours) are joined around it through the 8 tiles that ring it, it
joins or splits nothing (0, or +-1 where it has no ship neighbour). Otherwise the count is made
again from the grid (``kernels.count_pieces``).

Why the keys take the place of the distances (no second grid a board) and the largest distance
is kept, not looked for unless an emptied tile lowered it: a first form with an int64 key grid
beside the distances stepped 64 boards 1.47x faster than before but 1024 boards only 1.05x,
where the boards' arrays outgrow the caches."""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.starship import kernels as K
from tablegym.envs.starship.ship import EMPTY

_INF = np.int32(2**31 - 1)
_RING_Y = np.array([-1, -1, -1, 0, 1, 1, 1, 0], np.int64)
_RING_X = np.array([-1, 0, 1, 1, 1, 0, -1, -1], np.int64)
"""The 8 tiles around a tile in a cycle, each next to the one before it (the odd ones are its 4-neighbours)."""


def fits(H: int, W: int) -> bool:
    """Whether an H x W grid's keys fit in int32 (with room for ``_INF``, above every key):
    square grids up to 724 x 724."""
    return bool(K.keys_fit_int32(H, W))


@njit(cache=True)
def hull_all(tiles, keys):
    """Every tile's key from scratch (``hull_distance_into``'s passes): at a reset."""
    K._hull_keys(tiles, keys, K.key_shift(tiles.shape[0], tiles.shape[1]))


@njit(cache=True)
def hull_low(keys, y0, x0, h, w):
    """The least hull distance over the tiles of footprint (y0, x0, h, w)."""
    shift = K.key_shift(keys.shape[0], keys.shape[1])
    low = K.key_value(keys[y0, x0], shift)
    for y in range(y0, y0 + h):
        for x in range(x0, x0 + w):
            low = min(low, K.key_value(keys[y, x], shift))
    return low


@njit(cache=True)
def hull_top(keys):
    """The largest hull distance (``hull_distance(tiles).max()``)."""
    shift = K.key_shift(keys.shape[0], keys.shape[1])
    top = 0
    for y in range(keys.shape[0]):
        for x in range(keys.shape[1]):
            top = max(top, K.key_value(keys[y, x], shift))
    return top


@njit(cache=True)
def _start_key(tiles, y, x):
    """A start's key (steps 0), or ``_INF`` for a tile that is not a start."""
    H, W = tiles.shape
    if tiles[y, x] == EMPTY:
        return np.int64(y * W + x) << 1
    if y == 0 or x == 0 or y == H - 1 or x == W - 1:
        return (np.int64(y * W + x) << 1) | 1
    return np.int64(_INF)


@njit(cache=True)
def hull_emptied(tiles, keys, y, x, top, queue):
    """Tile (y, x) has just become empty: its key and the keys it lowers. Returns whether a
    tile at distance ``top`` (the largest before) was lowered. ``queue``: H * W int64 scratch."""
    H, W = tiles.shape
    shift = K.key_shift(H, W)
    step = np.int64(1) << (shift + 1)
    lowered_top = K.key_value(keys[y, x], shift) == top
    keys[y, x] = _start_key(tiles, y, x)
    queue[0] = y * W + x
    head, tail = 0, 1
    while head < tail:
        i = queue[head]
        head += 1
        cy, cx = i // W, i % W
        k = keys[cy, cx] + step
        for d in range(4):
            ny, nx = cy + K._DY[d], cx + K._DX[d]
            # only tiles inside the frame can be lowered: the rest are starts
            if 0 < ny < H - 1 and 0 < nx < W - 1 and tiles[ny, nx] != EMPTY and k < keys[ny, nx]:
                lowered_top |= K.key_value(keys[ny, nx], shift) == top
                keys[ny, nx] = k
                queue[tail] = ny * W + nx
                tail += 1
    return lowered_top


@njit(cache=True)
def hull_filled(tiles, keys, y, x, queue):
    """Tile (y, x) has just stopped being empty: the keys of its cell found again. Returns the
    largest distance in the cell's box (distances only grow)."""
    H, W = tiles.shape
    shift = K.key_shift(H, W)
    step = np.int64(1) << (shift + 1)
    mine = np.int64(y * W + x)
    low = (np.int64(1) << shift) - 1
    queue[0] = y * W + x
    head, tail = 0, 1
    y0, y1, x0, x1 = y, y, x, x
    while head < tail:  # the cell: the tiles whose key's start is (y, x), each next to another
        i = queue[head]
        head += 1
        cy, cx = i // W, i % W
        for d in range(4):
            ny, nx = cy + K._DY[d], cx + K._DX[d]
            if (
                0 <= ny < H
                and 0 <= nx < W
                and (keys[ny, nx] >> 1) & low == mine
                and keys[ny, nx] != _INF
                and (ny != y or nx != x)
            ):
                keys[ny, nx] = _INF  # (so it is queued once)
                queue[tail] = ny * W + nx
                tail += 1
                y0, y1, x0, x1 = min(y0, ny), max(y1, ny), min(x0, nx), max(x1, nx)
    keys[y, x] = _start_key(tiles, y, x)
    for y_ in range(y0, y1 + 1):  # the two passes over the cell's box, the tiles around it as they are
        for x_ in range(x0, x1 + 1):
            if keys[y_, x_] == _INF:  # (the cleared tiles; (y, x) too where it is no start now)
                k = np.int64(keys[y_, x_])
                if y_ > 0:
                    k = min(k, keys[y_ - 1, x_] + step)
                if x_ > 0:
                    k = min(k, keys[y_, x_ - 1] + step)
                keys[y_, x_] = k
    top = 0
    for y_ in range(y1, y0 - 1, -1):
        for x_ in range(x1, x0 - 1, -1):
            k = np.int64(keys[y_, x_])
            if _start_key(tiles, y_, x_) == _INF:
                if y_ < H - 1:
                    k = min(k, keys[y_ + 1, x_] + step)
                if x_ < W - 1:
                    k = min(k, keys[y_, x_ + 1] + step)
                keys[y_, x_] = k
            top = max(top, K.key_value(k, shift))
    return top


@njit(cache=True)
def pieces_change(tiles, y, x):
    """How the piece count changed when tile (y, x) was just emptied or filled: (known, change);
    not known where its ship neighbours are not joined around it."""
    H, W = tiles.shape
    ring = np.zeros(8, np.bool_)
    for r in range(8):
        ny, nx = y + _RING_Y[r], x + _RING_X[r]
        ring[r] = 0 <= ny < H and 0 <= nx < W and tiles[ny, nx] != EMPTY
    if not (ring[1] or ring[3] or ring[5] or ring[7]):
        return True, -1 if tiles[y, x] == EMPTY else 1
    start = 0
    while ring[start]:  # the runs are counted from an empty ring tile
        start += 1
        if start == 8:
            return True, 0  # the ring is whole: one run
    runs = 0
    inside = False
    touches = False
    for s in range(1, 9):  # (ending on the empty one: every run is closed)
        r = (start + s) % 8
        if ring[r]:
            if not inside:
                inside = True
                touches = False
            touches |= r % 2 == 1
        elif inside:
            inside = False
            runs += touches
    return runs <= 1, 0


@njit(cache=True)
def replay_occupancy(tiles, keys, pieces, top, y0, x0, h, w, before, queue):
    """The edit of rectangle (y0, x0, h, w), whose tiles were ``before`` (row-major), replayed one
    tile at a time: the hull keys updated; returns the piece count and the largest hull distance
    (from ``pieces`` and ``top``, the numbers before)."""
    after = np.empty(h * w, np.int8)
    for k in range(h * w):
        after[k] = tiles[y0 + k // w, x0 + k % w]
        tiles[y0 + k // w, x0 + k % w] = before[k]
    known = True
    again = False
    for k in range(h * w):
        yy, xx = y0 + k // w, x0 + k % w
        tiles[yy, xx] = after[k]
        if (before[k] == EMPTY) == (after[k] == EMPTY):
            continue
        if after[k] == EMPTY:
            again |= hull_emptied(tiles, keys, yy, xx, top, queue)
        else:
            top = max(top, hull_filled(tiles, keys, yy, xx, queue))
        if known:
            known, change = pieces_change(tiles, yy, xx)
            pieces += change
    return pieces if known else K.count_pieces(tiles), hull_top(keys) if again else top
