"""A small speed table for ``tablegym bench tictactoe``: the exact solve and a full-depth
alpha-beta from the empty board (the record's ``bench``)."""

from __future__ import annotations

import time

from tablegym.envs.rates import per_second
from tablegym.search.alphabeta_search import alphabeta
from tablegym.search.solver import solve
from tests.tictactoe.core import TicTacToeGame, k_canonical
from tests.tictactoe.heuristics import EVALUATORS


def bench_tictactoe(repeats: int = 3) -> dict:
    """Best of ``repeats`` runs (after a warm-up that loads the compiled code)."""
    root = TicTacToeGame().new_initial_state()
    out: dict = {}
    for name, key_fn in (("solve", None), ("solve canonical", k_canonical)):
        solve(root, key_fn=key_fn)
        runs = [solve(root, key_fn=key_fn) for _ in range(repeats)]
        best = min(runs, key=lambda r: r.seconds)
        out[name] = {
            "value": best.value,
            "positions": best.positions_stored,
            "nodes": best.nodes,
            "seconds": best.seconds,
            "nodes_per_s": per_second(best.nodes, best.seconds),
        }
    alphabeta(root, EVALUATORS["win-loss"], depth=9)
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = alphabeta(root, EVALUATORS["win-loss"], depth=9)
        runs.append((time.perf_counter() - t0, r))
    seconds, r = min(runs, key=lambda x: x[0])
    out["alphabeta depth 9"] = {
        "value": r.value,
        "nodes": r.nodes,
        "seconds": seconds,
        "nodes_per_s": per_second(r.nodes, seconds),
    }
    return out
