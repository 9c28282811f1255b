"""Threesus speed: seconds per move and leaves evaluated per second, on one core.

Positions come from greedy games (fast, and mid-game-like: 40 to 200 swipes in), so the
benchmark does not depend on how strong the searcher is. The median over positions is the
figure to compare with the issue's 0.1 s per move.

    python -m tablegym.experiments.bench_threes
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from tablegym.envs.threes.agents import greedy, make_threes_agent
from tablegym.envs.threes.core import ThreesGame, play_random_setup, sample_chance


def bench_positions(count: int = 24, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    player = greedy()
    out = []
    while len(out) < count:
        s = play_random_setup(ThreesGame(), rng)
        stop = int(rng.integers(40, 200))
        while not s.is_terminal() and s.moves < stop:
            s = sample_chance(s.child(player(s)), rng)
        if not s.is_terminal():
            out.append(s)
    return out


def bench_threesus(agent: str = "threesus", positions: int = 24, seed: int = 0) -> dict:
    """Median seconds per move of ``agent`` over benchmark positions (after JIT warm-up)."""
    states = bench_positions(positions, seed)
    searcher = make_threes_agent(agent)
    searcher(states[0])  # load the compiled search outside the timing
    times, leaves = [], []
    for s in states:
        searcher.leaves = 0
        t0 = time.perf_counter()
        searcher(s)
        times.append(time.perf_counter() - t0)
        leaves.append(searcher.leaves)
    return {
        "agent": agent,
        "positions": len(states),
        "median_s_per_move": statistics.median(times),
        "mean_s_per_move": statistics.fmean(times),
        "max_s_per_move": max(times),
        "median_leaves": statistics.median(leaves),
        "leaves_per_s": sum(leaves) / sum(times),
    }


if __name__ == "__main__":
    for key, value in bench_threesus().items():
        print(f"{key:20s} {value:,.4f}" if isinstance(value, float) else f"{key:20s} {value}")
