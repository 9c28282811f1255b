"""Search speed benchmark (``tablegym bench search``): compiled alpha-beta nodes per second on
standard 8x7 Trilobite positions, the hand-made evaluator and the learned one in the same run."""

from __future__ import annotations

import statistics

import numpy as np

from tablegym.envs.trilobite.core import TrilobiteGame
from tablegym.envs.trilobite.heuristics import EVALUATORS
from tablegym.models.netkernel import clear_value_cache
from tablegym.search.alphabeta_search import alphabeta


def trilobite_positions(count: int = 5, plies: int = 8, seed: int = 0) -> list:
    """The empty 8x7 board and ``count - 1`` positions after ``plies`` random moves."""
    game = TrilobiteGame()
    rng = np.random.default_rng(seed)
    positions = [game.new_initial_state()]
    while len(positions) < count:
        s = game.new_initial_state()
        for _ in range(plies):
            s = s.child(int(rng.choice(s.legal_actions())))
            if s.is_terminal():
                break
        if not s.is_terminal():
            positions.append(s)
    return positions


def bench_alphabeta(depth: int = 9, evaluator: str = "advanced", repeats: int = 3, learned: str | None = "") -> dict:
    """Median nodes/s of the compiled alpha-beta on 8x7 Trilobite (after JIT warm-up).

    With ``learned`` (a checkpoint path, or "" for the shipped one) the learned evaluator is
    measured in the same run, so the two rates compare directly.
    """
    positions = trilobite_positions()
    evaluators = {evaluator: EVALUATORS[evaluator]}
    if learned is not None:
        from tablegym.models.learned import load_evaluator

        evaluators["learned"] = load_evaluator(TrilobiteGame(), learned or None)
    out: dict = {"positions": len(positions), "depth": depth}
    for name, ev in evaluators.items():
        alphabeta(positions[0], ev, depth=3)  # compile outside the timing
        rates, nodes, seconds = [], 0, 0.0
        for _ in range(repeats):
            for s in positions:
                clear_value_cache(ev.params)  # each search starts cold, as the first search of a game
                r = alphabeta(s, ev, depth=depth)
                rates.append(r.nodes_per_second)
                nodes += r.nodes
                seconds += r.seconds
        out[f"{name}_median_nodes_per_s"] = statistics.median(rates)
        out[f"{name}_nodes"] = nodes // repeats
        out[f"{name}_seconds_per_search"] = seconds / (repeats * len(positions))
    return out


if __name__ == "__main__":
    for k, v in bench_alphabeta().items():
        print(f"{k:40s} {v:,.3f}" if isinstance(v, float) else f"{k:40s} {v}")
