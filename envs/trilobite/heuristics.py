"""The original Trilobite AI's leaf evaluators (Common Lisp, 2015), as compiled kernels.

Every kernel scores a leaf for ``player`` (the searching AI), as the original did: a leaf's
score depends on the LAST move (who made it and where), not on the whole board, and the
"advanced" score is not even antisymmetric. rules/trilobite.md numbers them:

1./2. ``win-loss``: win +1, loss -1, anything else 0 (full minimax on 3x3; depth 5 on 8x7).
3.    ``simplest``: win +L, loss -L; else the last mover's longest contiguous line through
      the last chip, + when the last mover is ``player``.
4.    ``gap-tolerant``: as 3, but the line count skips empty cells (up to L-1 cells each way).
5.    ``advanced``: win/loss +-45; else 4 x (neighbours of the last chip holding the other
      side's chips) + 5 x (+-gap-tolerant count).
A drawn (full) board scores 0 for every evaluator.
"""

from __future__ import annotations

from numba import njit

from tablegym.envs.core import LAST, ONGOING, OUTCOME, TO_MOVE, terminal_value, win_loss
from tablegym.envs.evaluator import KernelEvaluator
from tablegym.envs.trilobite.core import H_, HDR, L_, W_, run_length

ENEMY_WEIGHT = 4
PLAYER_WEIGHT = 5
WIN_WEIGHT = 9 * PLAYER_WEIGHT


@njit(cache=True)
def _line_score(s, player, gaps):
    last = s[LAST]
    if last < 0:
        return 0.0
    mover = 1 - s[TO_MOVE]
    count = run_length(s, last, mover, gaps)
    return float(count) if mover == player else -float(count)


@njit(cache=True)
def simplest(s, player, params):
    if s[OUTCOME] != ONGOING:
        return terminal_value(s, player, float(s[L_]))
    return _line_score(s, player, False)


@njit(cache=True)
def gap_tolerant(s, player, params):
    if s[OUTCOME] != ONGOING:
        return terminal_value(s, player, float(s[L_]))
    return _line_score(s, player, True)


@njit(cache=True)
def enemy_neighbours(s):
    """Chips of the side that did NOT make the last move among the last chip's 8 neighbours."""
    last = s[LAST]
    w = s[W_]
    h = s[H_]
    x0 = last % w
    y0 = last // w
    other = s[TO_MOVE] + 1
    n = 0
    for dy in range(-1, 2):
        for dx in range(-1, 2):
            x = x0 + dx
            y = y0 + dy
            if (dx != 0 or dy != 0) and 0 <= x < w and 0 <= y < h and s[HDR + y * w + x] == other:
                n += 1
    return n


@njit(cache=True)
def advanced(s, player, params):
    if s[OUTCOME] != ONGOING:
        return terminal_value(s, player, params[2])
    if s[LAST] < 0:
        return 0.0
    return params[0] * enemy_neighbours(s) + params[1] * _line_score(s, player, True)


def _make(name: str, kernel, params=None, win_value: float = 1.0) -> KernelEvaluator:
    ev = KernelEvaluator(name, kernel, params, game="trilobite")
    ev.win_value = win_value
    return ev


WIN_LOSS = _make("win-loss", win_loss)
SIMPLEST = _make("simplest", simplest, win_value=4.0)
GAP_TOLERANT = _make("gap-tolerant", gap_tolerant, win_value=4.0)
ADVANCED = _make("advanced", advanced, [ENEMY_WEIGHT, PLAYER_WEIGHT, WIN_WEIGHT], win_value=WIN_WEIGHT)

EVALUATORS = {ev.name: ev for ev in (WIN_LOSS, SIMPLEST, GAP_TOLERANT, ADVANCED)}
"""Hand-made evaluators by the name the command line uses (``--eval advanced``)."""
