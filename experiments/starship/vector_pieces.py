"""Where Starship's compiled vector step goes: each piece alone over every board (microseconds a
board, medians of three 0.5 s slices, one thread), and how often a random step needs it.
`python -m tablegym.experiments.starship.vector_pieces` (the table in results/bench/vec/table.md, "Where
Starship's step goes")."""

import argparse
import statistics
import time

import gymnasium
import numpy as np
from numba import njit

import tablegym.envs  # noqa: F401 (registers the ids)
from tablegym.envs.starship import kernels as K
from tablegym.envs.starship import vector as V
from tablegym.envs.starship.scoring import crew_counts, crew_mean, crew_total, score_from
from tablegym.envs.starship.ship import CORRIDOR, DOOR, EMPTY
from tablegym.experiments.vector_bench import random_legal

N = 1024


@njit
def _scores(tiles, parts, iv, fv):
    s = 0.0
    for i in range(tiles.shape[0]):
        n = iv[i, V.I_NPARTS]
        crew_raw, crew_value = crew_mean(fv[i, V.F_CREW], *crew_counts(parts[i, :n]))
        s += score_from(tiles[i], parts[i, :n], iv[i, V.I_PIECES], 1, iv[i, V.I_HULL_MAX], crew_raw, crew_value)[3]
    return s


@njit
def _crews(tiles, parts, iv):
    s = 0.0
    for i in range(tiles.shape[0]):
        s += crew_total(tiles[i], parts[i, : iv[i, V.I_NPARTS]], np.zeros(0, np.uint8))
    return s


@njit
def _pieces_and_hulls(tiles, hull):
    s = 0
    for i in range(tiles.shape[0]):
        s += K.count_pieces(tiles[i])
        K.hull_distance_into(tiles[i], hull[i])
    return s  # (made from scratch; a step keeps them up to date with kept.py: vector_kept times both)


def per_board(f) -> float:
    """Microseconds a board of ``f()`` (every board), the median of three slices of 0.5 s (the
    clock may advance in steps of milliseconds, so each slice repeats ``f``)."""
    f()
    slices = []
    for _ in range(3):
        start, k = time.perf_counter(), 0
        while time.perf_counter() - start < 0.5:
            f()
            k += 1
        slices.append((time.perf_counter() - start) / k)
    return statistics.median(slices) * 1e6 / N


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    env = gymnasium.make_vec("tablegym/Starship-v0", num_envs=N, threads=1).unwrapped
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    a = np.empty(N, np.int64)
    changed = emptied = walked = 0
    for _ in range(300):
        before = env._tiles.copy()
        random_legal(info["action_mask"], rng.random(N), a)
        _, _, _, _, info = env.step(a)
        after = env._tiles
        walk_before, walk_after = (before == CORRIDOR) | (before == DOOR), (after == CORRIDOR) | (after == DOOR)
        changed += (before != after).reshape(N, -1).any(1).sum()
        emptied += ((before == EMPTY) != (after == EMPTY)).reshape(N, -1).any(1).sum()
        walked += (walk_before != walk_after).reshape(N, -1).any(1).sum()
    steps = 300 * N

    def step() -> None:
        random_legal(env._masks, rng.random(N), a)
        env.step(a)

    hull = np.zeros(env._keys.shape, np.int32)
    out = np.empty_like(env._obs)
    print(f"{env._iv[:, V.I_NPARTS].mean():.0f} parts a ship on average")
    print("| piece (us a board) | alone | steps that need it |")
    print("|---|---|---|")
    print(f"| the whole step | {per_board(step):.1f} | 100% |")
    print(f"| score_from | {per_board(lambda: _scores(env._tiles, env._parts, env._iv, env._fv)):.1f} | {changed / steps:.0%} |")
    print(f"| crew_total | {per_board(lambda: _crews(env._tiles, env._parts, env._iv)):.1f} | {walked / steps:.0%} |")
    print(
        f"| count_pieces and hull_distance_into | {per_board(lambda: _pieces_and_hulls(env._tiles, hull)):.1f} | "
        f"{emptied / steps:.0%} |"
    )
    print(f"| the observation copy | {per_board(lambda: np.copyto(out, env._obs)):.1f} | 100% |")


if __name__ == "__main__":
    main()
