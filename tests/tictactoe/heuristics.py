"""Tic-tac-toe's hand-made leaf evaluators (compiled kernels) and its ``perfect`` agent.

Every kernel scores a position for ``player`` (the searching side), like Trilobite's:

- ``win-loss``: a win +1, a loss -1, anything else 0.
- ``lines``: a win +100, a loss -100, a draw 0; else, over the eight lines, +10 for each line
  holding two of ``player``'s marks and no other, +1 for one, and the same negated for the
  opponent's open lines.

``AGENTS["perfect"]`` plays the exact solver's move (search/solver.py, with the canonical key).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.core import ONGOING, terminal_value, win_loss
from tablegym.envs.evaluator import KernelEvaluator
from tests.tictactoe.core import CELLS, KERNELS, LINES, OUTCOME, k_canonical

WIN = 100.0


@njit(cache=True)
def lines(s, player, params):
    if s[OUTCOME] != ONGOING:
        return terminal_value(s, player, params[0])
    own = player + 1
    score = 0.0
    for i in range(LINES.shape[0]):
        mine = 0
        theirs = 0
        for j in range(3):
            v = s[CELLS + LINES[i, j]]
            if v == own:
                mine += 1
            elif v != 0:
                theirs += 1
        if theirs == 0:
            score += 10.0 if mine == 2 else (1.0 if mine == 1 else 0.0)
        elif mine == 0:
            score -= 10.0 if theirs == 2 else (1.0 if theirs == 1 else 0.0)
    return score


def _make(name: str, kernel, params=None, win_value: float = 1.0) -> KernelEvaluator:
    ev = KernelEvaluator(name, kernel, params)
    ev.win_value = win_value
    return ev


WIN_LOSS = _make("win-loss", win_loss)
LINES_EVAL = _make("lines", lines, [WIN], win_value=WIN)

EVALUATORS = {ev.name: ev for ev in (WIN_LOSS, LINES_EVAL)}
"""Hand-made evaluators by the name the command line uses (``alphabeta:eval=lines``)."""


class PerfectAgent:
    """Plays the move the exact solver finds (the first of the best moves); never loses."""

    name = "perfect"

    def __init__(self) -> None:
        from tablegym.search.solver import Solver

        self.solver = Solver(KERNELS, key_fn=k_canonical, table_bits=12)

    def __call__(self, state, rng: np.random.Generator) -> int:
        return int(self.solver.solve(state).best_action)


AGENTS = {"perfect": PerfectAgent}
"""Agents beyond ``random`` and ``alphabeta`` (``tablegym eval tictactoe perfect random``)."""
