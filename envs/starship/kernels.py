"""Compiled grid kernels of the starship generator: walking searches, the path contiguity check,
gap filling, armoring and doors.

Every function takes the ship's arrays (``tiles`` int8, ``part`` int16, ``parts`` int16; see
``ship.py``) and never validates its input. Walking is in 4-neighbour steps over walkable tiles
(corridor, door). A footprint is a rectangle ``y0, x0, h, w``; ``h = 0`` means none.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.starship.ship import ARMOR, CORRIDOR, DOOR, EMPTY, PH, PW, PX, PY

_DY = np.array([0, 1, 0, -1], dtype=np.int64)
_DX = np.array([1, 0, -1, 0], dtype=np.int64)


@njit(cache=True)
def walkable(t):
    return t == CORRIDOR or t == DOOR


@njit(cache=True)
def _inside(y, x, y0, x0, h, w):
    return y0 <= y < y0 + h and x0 <= x < x0 + w


@njit(cache=True)
def border_tiles(H, W, y0, x0, h, w):
    """The in-grid 4-neighbours of a footprint that lie outside it: (ys, xs), each at most once."""
    ys = np.empty(2 * (h + w), np.int64)
    xs = np.empty(2 * (h + w), np.int64)
    n = 0
    for x in range(x0, x0 + w):
        if y0 - 1 >= 0:
            ys[n] = y0 - 1
            xs[n] = x
            n += 1
        if y0 + h < H:
            ys[n] = y0 + h
            xs[n] = x
            n += 1
    for y in range(y0, y0 + h):
        if x0 - 1 >= 0:
            ys[n] = y
            xs[n] = x0 - 1
            n += 1
        if x0 + w < W:
            ys[n] = y
            xs[n] = x0 + w
            n += 1
    return ys[:n], xs[:n]


@njit(cache=True)
def walk_distances(tiles, src_y, src_x, by0, bx0, bh, bw):
    """Steps from the nearest source tile to every tile over walkable tiles outside the block
    footprint (-1: unreachable). Sources are walkable tiles; the rest are ignored."""
    H, W = tiles.shape
    dist = np.full((H, W), -1, np.int32)
    qy = np.empty(H * W, np.int64)
    qx = np.empty(H * W, np.int64)
    head = 0
    tail = 0
    for i in range(src_y.shape[0]):
        y = src_y[i]
        x = src_x[i]
        if walkable(tiles[y, x]) and not _inside(y, x, by0, bx0, bh, bw) and dist[y, x] < 0:
            dist[y, x] = 0
            qy[tail] = y
            qx[tail] = x
            tail += 1
    while head < tail:
        tail = _expand(tiles, dist, qy, qx, head, tail, by0, bx0, bh, bw)
        head += 1
    return dist


@njit(cache=True)
def _expand(tiles, dist, qy, qx, head, tail, by0, bx0, bh, bw):
    """Queue the unvisited walkable neighbours (outside the block) of queue entry ``head``, one
    step further than it; returns the new queue end. The BFS step both walking searches share."""
    H, W = tiles.shape
    y = qy[head]
    x = qx[head]
    d = dist[y, x] + 1
    for k in range(4):
        ny = y + _DY[k]
        nx = x + _DX[k]
        if 0 <= ny < H and 0 <= nx < W and dist[ny, nx] < 0 and walkable(tiles[ny, nx]) and not _inside(ny, nx, by0, bx0, bh, bw):
            dist[ny, nx] = d
            qy[tail] = ny
            qx[tail] = nx
            tail += 1
    return tail


@njit(cache=True)
def _distances_to(tiles, sy, sx, ty, tx, by0, bx0, bh, bw, limit):
    """Walking steps from (sy, sx) to each target (ty[i], tx[i]) avoiding the block footprint;
    -1 for a target not reached within ``limit`` steps. Stops as soon as every target is found."""
    H, W = tiles.shape
    n = ty.shape[0]
    out = np.full(n, -1, np.int64)
    target = np.full((H, W), -1, np.int64)
    for i in range(n):
        target[ty[i], tx[i]] = i
    dist = np.full((H, W), -1, np.int32)
    qy = np.empty(H * W, np.int64)
    qx = np.empty(H * W, np.int64)
    dist[sy, sx] = 0
    qy[0] = sy
    qx[0] = sx
    head = 0
    tail = 1
    found = 0
    if target[sy, sx] >= 0:
        out[target[sy, sx]] = 0
        found += 1
    while head < tail and found < n:
        if dist[qy[head], qx[head]] + 1 > limit:
            break
        old_tail = tail
        tail = _expand(tiles, dist, qy, qx, head, tail, by0, bx0, bh, bw)
        head += 1
        for q in range(old_tail, tail):
            t = target[qy[q], qx[q]]
            if t >= 0:
                out[t] = dist[qy[q], qx[q]]
                found += 1
    return out


@njit(cache=True)
def contiguity_ok(tiles, y0, x0, h, w, detour):
    """The spec's path contiguity check for covering footprint (y0, x0, h, w).

    Take the walkable tiles 4-adjacent to the footprint (in ``border_tiles`` order); from the
    first of them, search the shortest walking path to each of the others, first over the grid
    as it is, then avoiding the footprint. The placement is allowed when each is still
    reachable and its path got at most ``detour`` steps longer. Neighbours the first could not
    reach even before (another walkable piece touching the footprint: never the case inside the
    generator, whose walkable tiles stay one piece) are checked the same way from the first of
    them. Every walking path through the footprint enters and leaves it through two such tiles,
    so an allowed placement never disconnects walkable tiles that were connected.
    """
    H, W = tiles.shape
    ys, xs = border_tiles(H, W, y0, x0, h, w)
    keep = np.zeros(ys.shape[0], np.bool_)
    for i in range(ys.shape[0]):
        keep[i] = walkable(tiles[ys[i], xs[i]])
    ys = ys[keep]
    xs = xs[keep]
    n = ys.shape[0]
    done = np.zeros(n, np.bool_)
    big = H * W + 1
    for s in range(n - 1):
        if done[s]:
            continue
        rest = np.flatnonzero(~done[s + 1 :]) + s + 1
        if rest.shape[0] == 0:
            break
        ty = ys[rest]
        tx = xs[rest]
        before = _distances_to(tiles, ys[s], xs[s], ty, tx, 0, 0, 0, 0, big)
        limit = -1
        for i in range(rest.shape[0]):
            if before[i] > limit:
                limit = before[i]
        if limit < 0:
            continue
        after = _distances_to(tiles, ys[s], xs[s], ty, tx, y0, x0, h, w, limit + detour)
        for i in range(rest.shape[0]):
            if before[i] >= 0:
                if after[i] < 0 or after[i] > before[i] + detour:
                    return False
                done[rest[i]] = True
    return True


@njit(cache=True)
def _part_keeps_access(tiles, parts, p, y0, x0, h, w):
    """Whether part ``p`` still has a walkable neighbour outside footprint (y0, x0, h, w)."""
    H, W = tiles.shape
    ys, xs = border_tiles(H, W, parts[p, PY], parts[p, PX], parts[p, PH], parts[p, PW])
    for i in range(ys.shape[0]):
        if walkable(tiles[ys[i], xs[i]]) and not _inside(ys[i], xs[i], y0, x0, h, w):
            return True
    return False


@njit(cache=True)
def access_ok(tiles, part, parts, y0, x0, h, w, need_access):
    """Whether covering footprint (y0, x0, h, w) leaves every neighbouring part a walkable
    neighbour, and (if ``need_access``) the footprint itself touches a walkable tile."""
    H, W = tiles.shape
    ys, xs = border_tiles(H, W, y0, x0, h, w)
    has_access = False
    for i in range(ys.shape[0]):
        t = tiles[ys[i], xs[i]]
        if walkable(t):
            has_access = True
        p = part[ys[i], xs[i]]
        if p >= 0 and not _part_keeps_access(tiles, parts, p, y0, x0, h, w):
            return False
    return has_access or not need_access


@njit(cache=True)
def placement_ok(tiles, part, parts, y0, x0, h, w, detour, need_access):
    """THE check every stage runs before covering a footprint: ``access_ok`` and ``contiguity_ok``."""
    return access_ok(tiles, part, parts, y0, x0, h, w, need_access) and contiguity_ok(tiles, y0, x0, h, w, detour)


@njit(cache=True)
def armor_tiles(tiles, part, parts, ys, xs, detour):
    """Turn each listed corridor tile, in order, into armor where ``placement_ok`` allows it, in
    passes until a pass armors none (armoring a tile can leave a neighbour a dead end that may
    then go too). Returns how many were armored."""
    n = 0
    changed = True
    while changed:
        changed = False
        for i in range(ys.shape[0]):
            y = ys[i]
            x = xs[i]
            if tiles[y, x] == CORRIDOR and placement_ok(tiles, part, parts, y, x, 1, 1, detour, False):
                tiles[y, x] = ARMOR
                n += 1
                changed = True
    return n


@njit(cache=True)
def fill_gaps_once(tiles, scan, y_lo, y_hi, x_lo, x_hi):
    """One pass of stage 2: every empty tile in the window with a corridor within ``scan`` tiles
    on 2 or more of its 4 sides becomes corridor (decided on the grid before the pass)."""
    H, W = tiles.shape
    fill = np.zeros((H, W), np.bool_)
    for y in range(y_lo, y_hi):
        for x in range(x_lo, x_hi):
            if tiles[y, x] != EMPTY:
                continue
            sides = 0
            for k in range(4):
                for r in range(1, scan + 1):
                    ny = y + _DY[k] * r
                    nx = x + _DX[k] * r
                    if not (0 <= ny < H and 0 <= nx < W):
                        break
                    if tiles[ny, nx] == CORRIDOR:
                        sides += 1
                        break
            fill[y, x] = sides >= 2
    n = 0
    for y in range(H):
        for x in range(W):
            if fill[y, x]:
                tiles[y, x] = CORRIDOR
                n += 1
    return n


@njit(cache=True)
def components(mask):
    """4-connected component labels of a bool grid (-1 off the mask) and the component count."""
    H, W = mask.shape
    label = np.full((H, W), -1, np.int32)
    qy = np.empty(H * W, np.int64)
    qx = np.empty(H * W, np.int64)
    count = 0
    for sy in range(H):
        for sx in range(W):
            if not mask[sy, sx] or label[sy, sx] >= 0:
                continue
            label[sy, sx] = count
            qy[0] = sy
            qx[0] = sx
            head = 0
            tail = 1
            while head < tail:
                y = qy[head]
                x = qx[head]
                head += 1
                for k in range(4):
                    ny = y + _DY[k]
                    nx = x + _DX[k]
                    if 0 <= ny < H and 0 <= nx < W and mask[ny, nx] and label[ny, nx] < 0:
                        label[ny, nx] = count
                        qy[tail] = ny
                        qx[tail] = nx
                        tail += 1
            count += 1
    return label, count


@njit(cache=True)
def hull_distance(tiles):
    """Steps (4-neighbour, through any tile) from each ship tile to the nearest empty tile or
    the grid's edge: 1 on the perimeter, 0 on empty tiles.

    As the generator has always measured it: one breadth-first walk from the empty tiles (0) and
    the ship's tiles on the grid's edge (1), queued together in row-major order, each tile taking
    one more than the tile it was first reached from. So a tile's number is its step count to the
    nearest of those starts plus that start's own number, where among the nearest starts the
    first in row-major order counts (the walk reaches a tile first from the earliest start); a
    tile next to an edge tile and an empty tile can read one more than its distance (about 2%
    of the tiles of random ships). The generator's stages and the published scores rest on these
    numbers; ``hull_distance_into`` gets them without a walk."""
    dist = np.empty(tiles.shape, np.int32)
    hull_distance_into(tiles, dist)
    return dist


@njit(cache=True)
def hull_distance_into(tiles, dist):
    """``hull_distance`` written into ``dist`` (H x W int32).

    Steps through any tile are city-block distances, which two raster passes give exactly (each
    tile one more than its best neighbour above and to the left, then below and to the right).
    Each tile keeps (steps, row-major index of the start, the start's own number) packed in one
    integer in that order, so the smallest is the nearest start and, among equals, the first:
    the walk's numbers, at a fraction of its cost (no queue, no division)."""
    H, W = tiles.shape
    shift = key_shift(H, W)
    if keys_fit_int32(H, W):  # the keys fit in ``dist`` itself
        _hull_keys(tiles, dist, shift)
        _hull_values(dist, dist, shift)
    else:
        key = np.empty((H, W), np.int64)
        _hull_keys(tiles, key, shift)
        _hull_values(key, dist, shift)


@njit(cache=True)
def key_shift(H, W):
    """The bits of a row-major index of an H x W grid: where a hull key's steps start, above the
    index and the start's own number."""
    shift = 1
    while (1 << shift) < H * W:
        shift += 1
    return shift


@njit(cache=True)
def keys_fit_int32(H, W):
    """Whether every hull key of an H x W grid fits in int32 (square grids up to 724 x 724)."""
    return (H + W + 1) << (key_shift(H, W) + 1) < 2**31


@njit(cache=True)
def key_value(k, shift):
    """A hull key's distance: its steps plus its start's number."""
    return (k >> (shift + 1)) + (k & 1)


@njit(cache=True)
def _hull_keys(tiles, key, shift):
    """``hull_distance_into``'s two passes: (steps, start index, start number) packed in ``key``."""
    H, W = tiles.shape
    step = 1 << (shift + 1)  # one step more; the index sits above the start's own number
    for y in range(H):
        for x in range(W):
            if tiles[y, x] == EMPTY:
                key[y, x] = (y * W + x) << 1
            elif y == 0 or x == 0 or y == H - 1 or x == W - 1:
                key[y, x] = ((y * W + x) << 1) | 1  # an edge tile of the ship starts at 1
            else:
                key[y, x] = min(key[y - 1, x], key[y, x - 1]) + step  # (the edge tiles all start)
    for y in range(H - 2, 0, -1):
        for x in range(W - 2, 0, -1):
            if tiles[y, x] != EMPTY:
                key[y, x] = min(key[y, x], key[y + 1, x] + step, key[y, x + 1] + step)


@njit(cache=True)
def _hull_values(key, dist, shift):
    H, W = key.shape
    for y in range(H):
        for x in range(W):
            dist[y, x] = key_value(key[y, x], shift)


@njit(cache=True)
def count_pieces(tiles):
    """The number of 4-connected pieces of the ship's tiles (``components(tiles != EMPTY)[1]``),
    without a walk: each row's runs of ship tiles start a piece each and join the pieces of the
    runs above them that they touch (union-find with path halving); each join of two pieces
    takes one from the count. A grid has far fewer runs than tiles."""
    H, W = tiles.shape
    most = (W + 1) // 2  # runs a row can hold
    parent = np.empty(H * most, np.int32)
    above = np.empty((most, 3), np.int32)  # the previous row's runs: first x, last x, label
    here = np.empty((most, 3), np.int32)
    n_above = 0
    labels = 0
    count = 0
    for y in range(H):
        n_here = 0
        x = 0
        while x < W:
            if tiles[y, x] == EMPTY:
                x += 1
                continue
            start = x
            while x < W and tiles[y, x] != EMPTY:
                x += 1
            label = labels
            labels += 1
            parent[label] = label
            count += 1
            for r in range(n_above):  # the runs above that share a column with this one
                if above[r, 0] < x and above[r, 1] >= start:
                    a = _root(parent, label)
                    b = _root(parent, above[r, 2])
                    if a != b:
                        parent[a] = b
                        count -= 1
            here[n_here, 0] = start
            here[n_here, 1] = x - 1
            here[n_here, 2] = label
            n_here += 1
        above, here = here, above
        n_above = n_here
    return count


@njit(cache=True)
def _root(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@njit(cache=True)
def add_doors(tiles, min_path):
    """Stage 14: each armor tile (row-major order) between two walkable tiles on opposite sides
    whose walking path around it is longer than ``min_path`` steps becomes a door; the grid is
    updated as doors appear. Returns the number of doors added."""
    H, W = tiles.shape
    n = 0
    one_y = np.empty(1, np.int64)
    one_x = np.empty(1, np.int64)
    for y in range(1, H - 1):
        for x in range(1, W - 1):
            if tiles[y, x] != ARMOR:
                continue
            for k in range(2):
                ay = y + _DY[k]
                ax = x + _DX[k]
                by = y - _DY[k]
                bx = x - _DX[k]
                if walkable(tiles[ay, ax]) and walkable(tiles[by, bx]):
                    one_y[0] = by
                    one_x[0] = bx
                    d = _distances_to(tiles, ay, ax, one_y, one_x, 0, 0, 0, 0, min_path)
                    if d[0] < 0:  # not within min_path steps: the way round is longer
                        tiles[y, x] = DOOR
                        n += 1
                        break
    return n


@njit(cache=True)
def clear_rays(tiles):
    """``out[d, y, x]``: tile (y, x) and every tile beyond it in direction d (to the grid's
    edge) are empty. Directions as in ``ship.DX/DY``: forward (+x), starboard (+y), backward, port."""
    H, W = tiles.shape
    out = np.zeros((4, H, W), np.bool_)
    for y in range(H):
        run = True
        for x in range(W - 1, -1, -1):  # forward: look towards +x
            run = run and tiles[y, x] == EMPTY
            out[0, y, x] = run
        run = True
        for x in range(W):
            run = run and tiles[y, x] == EMPTY
            out[2, y, x] = run
    for x in range(W):
        run = True
        for y in range(H - 1, -1, -1):
            run = run and tiles[y, x] == EMPTY
            out[1, y, x] = run
        run = True
        for y in range(H):
            run = run and tiles[y, x] == EMPTY
            out[3, y, x] = run
    return out


@njit(cache=True)
def face_clear(rays, y0, x0, h, w, facing):
    """Whether every tile just outside the footprint on its ``facing`` side has a clear ray
    out of the grid (true at the grid's edge)."""
    H = rays.shape[1]
    W = rays.shape[2]
    if facing == 0:
        if x0 + w >= W:
            return True
        for y in range(y0, y0 + h):
            if not rays[0, y, x0 + w]:
                return False
    elif facing == 2:
        if x0 - 1 < 0:
            return True
        for y in range(y0, y0 + h):
            if not rays[2, y, x0 - 1]:
                return False
    elif facing == 1:
        if y0 + h >= H:
            return True
        for x in range(x0, x0 + w):
            if not rays[1, y0 + h, x]:
                return False
    else:
        if y0 - 1 < 0:
            return True
        for x in range(x0, x0 + w):
            if not rays[3, y0 - 1, x]:
                return False
    return True


@njit(cache=True)
def corridor_anchors(tiles, h, w, rays, facing):
    """Anchors (ys, xs), row-major, whose h x w footprint is all corridor and, if ``facing``
    >= 0, whose ``facing`` side looks out of the hull (``face_clear``)."""
    H, W = tiles.shape
    ys = np.empty(H * W, np.int64)
    xs = np.empty(H * W, np.int64)
    n = 0
    for y0 in range(H - h + 1):
        for x0 in range(W - w + 1):
            ok = True
            for y in range(y0, y0 + h):
                for x in range(x0, x0 + w):
                    if tiles[y, x] != CORRIDOR:
                        ok = False
                        break
                if not ok:
                    break
            if ok and (facing < 0 or face_clear(rays, y0, x0, h, w, facing)):
                ys[n] = y0
                xs[n] = x0
                n += 1
    return ys[:n], xs[:n]
