"""Friday speed on one core: best-first states per second, and the rules core's step rate.

Positions come from games of the rule-based player (so the benchmark does not depend on the
searcher's strength), sampled at every step of the game. ``bench_friday`` reports medians over
positions of states polled and generated per second by Fridai's best-first search, and the
rules core's decisions per second through the compiled kernels and through the checked object
API in the same process (their ratio is the price of ``child()``'s validation and copies), and
the search with the learned evaluator against Fridai's score in the same run (the price of the
network's forward pass).
The issue's target is 100,000 states per second per core; the Java original did about 550,000.

    python -m tablegym.experiments.friday.bench
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from tablegym.envs.friday.core import KERNELS, FridayGame, sample_chance, state_moves, state_push, state_sample
from tablegym.envs.rates import per_second
from tablegym.models.friday.agents import MOVE_FILTER, rule_action
from tablegym.search.bestfirst import MAX_MOVES, best_first_search


def bench_positions(count: int = 24, seed: int = 0, level: int = 1) -> list:
    """Decision states with at least two legal actions, from rule-based games."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        s = sample_chance(FridayGame(level=level).new_initial_state(), rng)
        stop = int(rng.integers(5, 80))
        k = 0
        while not s.is_terminal() and k < stop:
            s = sample_chance(s.child(rule_action(s, rng)), rng)
            k += 1
        if not s.is_terminal() and len(s.legal_actions()) > 1:
            out.append(s)
    return out


def bench_search(nodes: int = 10_000, positions: int = 24, seed: int = 0, evaluator: str = "fridai") -> dict:
    """Median polled and generated states per second of the best-first search with ``evaluator``
    (Fridai's score, or ``learned``: the shipped network's forward pass at every generated state)."""
    states = bench_positions(positions, seed)
    from tablegym.models.agents import make_evaluator

    ev, kernels = make_evaluator(FridayGame(), evaluator), MOVE_FILTER.kernels(KERNELS)
    rng = np.random.default_rng(seed)

    def search(state):
        return best_first_search(state, ev, nodes=nodes, seed=int(rng.integers(1, 2**62)), kernels=kernels)

    search(states[0])  # load the compiled search outside the timing
    polled_rate, generated_rate, seconds = [], [], []
    for s in states:
        t0 = time.perf_counter()
        result = search(s)
        dt = time.perf_counter() - t0
        polled_rate.append(per_second(result.polled, dt))
        generated_rate.append(per_second(result.generated, dt))
        seconds.append(dt)
    return {
        "nodes": nodes,
        "positions": len(states),
        "polled_per_s": statistics.median(polled_rate),
        "generated_per_s": statistics.median(generated_rate),
        "s_per_decision": statistics.median(seconds),
    }


def bench_core(decisions: int = 20_000, seed: int = 0) -> dict:
    """Random-play decisions per second: compiled kernels vs the checked object API."""
    rng = np.random.default_rng(seed)
    game = FridayGame(level=1)
    buf = np.empty(MAX_MOVES, dtype=np.int64)
    rng_state = np.array([seed + 1], dtype=np.int64)

    def kernels(n: int) -> float:
        s = game.new_initial_state().array
        state_sample(s, rng_state)
        t0 = time.perf_counter()
        for _ in range(n):
            m = state_moves(s, buf)
            if m == 0:
                s = game.new_initial_state().array
                state_sample(s, rng_state)
                continue
            state_push(s, buf[rng.integers(m)])
            state_sample(s, rng_state)
        return per_second(n, time.perf_counter() - t0)

    def objects(n: int) -> float:
        s = sample_chance(game.new_initial_state(), rng)
        t0 = time.perf_counter()
        for _ in range(n):
            if s.is_terminal():
                s = sample_chance(game.new_initial_state(), rng)
                continue
            legal = s.legal_actions()
            s = sample_chance(s.child(legal[rng.integers(len(legal))]), rng)
        return per_second(n, time.perf_counter() - t0)

    kernels(100)
    objects(100)
    k, o = kernels(decisions), objects(decisions // 4)
    return {"kernel_decisions_per_s": k, "object_decisions_per_s": o, "ratio": k / o}


def bench_friday(positions: int = 24, seed: int = 0) -> dict:
    """The figures ``tablegym bench friday`` prints (one core, medians over positions)."""
    out = {f"bestfirst_{nodes // 1000}k": bench_search(nodes, positions, seed) for nodes in (10_000, 100_000)}
    out["bestfirst_10k_learned"] = learned = bench_search(10_000, positions, seed, evaluator="learned")
    learned["generated_ratio_vs_fridai"] = learned["generated_per_s"] / out["bestfirst_10k"]["generated_per_s"]
    out["rules_core"] = bench_core(seed=seed)
    return out


if __name__ == "__main__":
    from tablegym.experiments.cli import format_table

    print(format_table(bench_friday()))
