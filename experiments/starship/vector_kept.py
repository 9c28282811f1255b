"""The hull distances and piece count of a Starship board after an edit that empties or fills
tiles: kept up to date (``kept.replay_occupancy``, what a step does) against made from scratch
(``kernels.count_pieces`` and ``hull_distance_into`` over the whole board), microseconds an
edit, on the edits of 20 random steps of 1024 boards after 300 warm-up steps, each from a copy of
the grid and keys before it (the copy timed alone and taken off). Both give the same numbers
(checked here on every edit). `python -m tablegym.experiments.starship.vector_kept`"""

import argparse
import statistics
import time

import gymnasium
import numpy as np
from numba import njit

import tablegym.envs  # noqa: F401 (registers the ids)
from tablegym.envs.starship import kept
from tablegym.envs.starship import kernels as K
from tablegym.envs.starship.ship import EMPTY
from tablegym.experiments.vector_bench import random_legal

N = 1024


def edits() -> tuple[np.ndarray, ...]:
    """(grids before, grids after, changed rectangle y, x, h, w) of every edit that emptied or filled a tile."""
    env = gymnasium.make_vec("tablegym/Starship-v0", num_envs=N, threads=1).unwrapped
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    a = np.empty(N, np.int64)
    for _ in range(300):
        random_legal(env._masks, rng.random(N), a)
        env.step(a)
    before, after, rects = [], [], []
    for _ in range(20):
        old = env._tiles.copy()
        random_legal(env._masks, rng.random(N), a)
        env.step(a)
        for i in np.flatnonzero(((old == EMPTY) != (env._tiles == EMPTY)).reshape(N, -1).any(1)):
            changed = np.argwhere(old[i] != env._tiles[i])
            (y0, x0), (y1, x1) = changed.min(0), changed.max(0)
            before.append(old[i])
            after.append(env._tiles[i].copy())
            rects.append((y0, x0, y1 - y0 + 1, x1 - x0 + 1))
    return np.stack(before), np.stack(after), np.array(rects, np.int64)


@njit
def _run(way, before, after, rects, keys0, pieces0):
    H, W = before.shape[1:]
    keys, hull, tiles = np.empty((H, W), np.int32), np.empty((H, W), np.int32), np.empty((H, W), np.int8)
    queue, old = np.empty(H * W, np.int64), np.empty(H * W, np.int8)
    s = 0
    for m in range(before.shape[0]):
        keys[:] = keys0[m]
        tiles[:] = after[m]
        if way == 1:
            y0, x0, h, w = rects[m]
            for k in range(h * w):
                old[k] = before[m, y0 + k // w, x0 + k % w]
            pieces, top = kept.replay_occupancy(tiles, keys, pieces0[m], kept.hull_top(keys0[m]), y0, x0, h, w, old, queue)
            s += pieces * 1000 + top
        elif way == 2:
            K.hull_distance_into(tiles, hull)
            s += K.count_pieces(tiles) * 1000 + hull.max()
    return s


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    before, after, rects = edits()
    keys0 = np.zeros(before.shape, np.int32)
    pieces0 = np.array([K.count_pieces(t) for t in before], np.int64)
    for m in range(len(before)):
        kept.hull_all(before[m], keys0[m])
    assert _run(1, before, after, rects, keys0, pieces0) == _run(2, before, after, rects, keys0, pieces0)

    def per_edit(way: int) -> float:
        slices = []
        for _ in range(5):
            start, k = time.perf_counter(), 0
            while time.perf_counter() - start < 0.5:
                _run(way, before, after, rects, keys0, pieces0)
                k += 1
            slices.append((time.perf_counter() - start) / k / len(before) * 1e6)
        return statistics.median(slices)

    copy = per_edit(0)
    print(f"{len(before)} edits that empty or fill tiles; us an edit (the copy, {copy:.2f} us, taken off)")
    print(f"| kept (replay_occupancy) | {per_edit(1) - copy:.2f} |")
    print(f"| from scratch (count_pieces + hull_distance_into + max) | {per_edit(2) - copy:.2f} |")


if __name__ == "__main__":
    main()
