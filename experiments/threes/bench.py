"""Threes search speed: seconds per move and leaves evaluated per second, on one core.

Positions come from greedy games (fast, and mid-game-like: 40 to 200 swipes in), so the
benchmark does not depend on how strong the searcher is. The median over positions is the
figure to compare with the issues' targets (Threesus: 0.1 s per move; the learned 3-ply
search: 100 moves per second). ``bench_threes`` times the hand-made and the learned evaluator
in the same searches, in one process, and gives their leaf-rate ratio.

    python -m tablegym.experiments.threes.bench
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from tablegym.envs.rates import per_second
from tablegym.envs.threes.core import ThreesGame, play_random_setup, sample_chance
from tablegym.models.threes.agents import greedy


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
    from tablegym.models.agents import make_agent

    searcher = make_agent(ThreesGame(), agent)
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
        "leaves_per_s": per_second(sum(leaves), sum(times)),
    }


COMPARED = (
    "threesus",
    "expectimax:depth=2",
    "greedy:eval=learned",
    "expectimax:depth=2,eval=learned",
    "expectimax:depth=3,eval=learned",
)


def bench_threes(positions: int = 24, seed: int = 0, learned: str = "learned") -> dict:
    """Every searcher of ``COMPARED`` (``learned`` names the network: ``learned:PATH``) on the
    same positions; the learned evaluator's leaf rate as a ratio of OpennessMatthew's."""
    out = {}
    for spec in COMPARED:
        spec = spec.replace("eval=learned", f"eval={learned}")
        r = bench_threesus(spec, positions, seed)
        out[spec] = {k: v for k, v in r.items() if k != "agent"}
        out[spec]["median_moves_per_s"] = per_second(1, r["median_s_per_move"])
    om = out["expectimax:depth=2"]["leaves_per_s"]
    for spec in out:
        if "learned" in spec:
            out[spec]["leaves_per_s_vs_om_depth2"] = out[spec]["leaves_per_s"] / om
    return out


if __name__ == "__main__":
    for spec, row in bench_threes().items():
        print(spec, " ".join(f"{k}={v:,.4g}" for k, v in row.items() if not isinstance(v, str)))
