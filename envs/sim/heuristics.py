"""Sim's hand-made evaluator: how many safe moves each side has left (free edges that do not close
an own triangle), since running out of them is what loses Sim; and the kernel the original
app's "Easy" level plays by (tablegym.models.sim.agents holds the app's opponents).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.core import ONGOING, OUTCOME, terminal_value
from tablegym.envs.evaluator import KernelEvaluator
from tablegym.envs.sim.core import E_, HDR, closes_own_triangle


@njit(cache=True)
def k_safe_moves(s, player):
    """How many free edges ``player`` could colour without closing a triangle of their own."""
    m = 0
    for e in range(s[E_]):
        if s[HDR + e] == 0 and not closes_own_triangle(s, e, player):
            m += 1
    return m


@njit(cache=True)
def k_first_safe(s, player):
    """The first free edge that ``player`` can colour safely, else the first free edge (-1 if none)."""
    first = -1
    for e in range(s[E_]):
        if s[HDR + e] == 0:
            if not closes_own_triangle(s, e, player):
                return e
            if first < 0:
                first = e
    return first


@njit(cache=True)
def safe_moves_kernel(s, player, params):
    """+1/-1/0 once the game is over, else (safe moves of player - of opponent) / E / 2."""
    if s[OUTCOME] != ONGOING:
        return terminal_value(s, player, 1.0)
    diff = k_safe_moves(s, player) - k_safe_moves(s, 1 - player)
    return 0.5 * diff / s[E_]


SAFE_MOVES = KernelEvaluator("safe-moves", safe_moves_kernel, np.zeros(1), game="sim")
EVALUATORS = {"safe-moves": SAFE_MOVES}
