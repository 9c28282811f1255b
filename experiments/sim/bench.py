"""Sim solve speed (``tablegym bench sim-solve``): the exact solver's wall time on K_n."""

from __future__ import annotations

import statistics
import time

from tablegym.models.sim.agents import solve_sim


def bench_sim_solve(n: int = 6, repeats: int = 20) -> dict[str, float]:
    """Median wall time of ``solve_sim(n)`` after a warm-up solve (which pays JIT/cache loading)."""
    solve_sim(n)
    times = []
    res = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = solve_sim(n)
        times.append(time.perf_counter() - t0)
    assert res is not None
    return dict(
        n=n,
        value=res.value,
        median_seconds=statistics.median(times),
        min_seconds=min(times),
        positions_stored=res.positions_stored,
        nodes=res.nodes,
        repeats=repeats,
    )
