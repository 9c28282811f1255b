"""Threesus's hand-made board evaluators (rules/threes.md), compiled over the 64-bit board.

``openness_matthew`` is the evaluator of the published Threesus results; ``openness`` is its
first version. Both sum terms over the 16 cells (an off-board neighbour counts as rank 0):

==========================  ==============  ========
term (per cell)             OpennessMatthew Openness
==========================  ==============  ========
empty cell                  +3              +2
per mergeable neighbour     +2              +1
trapped, per axis           -5              -1
next to its double (>= 3)   +2              +1
highest-card placement      yes             no
==========================  ==============  ========

Speed: all but the placement terms depend on one row or one column, so they come from
65,536-entry line tables (four rows + four columns = eight lookups); "next to its double" is
an OR over both axes, so the tables give a per-cell bit mask and the board ORs them.
tests/test_threes_heuristics.py holds a cell-by-cell implementation the tables must match.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.core import ONGOING, OUTCOME
from tablegym.envs.evaluator import Evaluator
from tablegym.envs.threes.board import can_merge, column, row
from tablegym.envs.threes.core import BOARD

OPENNESS, OPENNESS_MATTHEW = 0, 1
EVALUATOR_IDS = {"openness": OPENNESS, "openness-matthew": OPENNESS_MATTHEW}
_WEIGHTS = np.array([[2, 1, 1, 1], [3, 2, 5, 2]], dtype=np.int64)  # empty, merge, trap, double


@njit(cache=True)
def _build_line_tables(weights):
    """Per line: axis score (merges and traps along it), empty cells, the 'double' bit mask."""
    n_eval = weights.shape[0]
    # Small dtypes keep each table under numba's 1 MB limit for constants it can cache.
    axis = np.zeros((n_eval, 65536), dtype=np.int32)
    empty = np.zeros(65536, dtype=np.int8)
    double = np.zeros(65536, dtype=np.int8)
    c = np.zeros(6, dtype=np.int64)  # c[1..4] the line, c[0] and c[5] off-board zeros
    for line in range(65536):
        for i in range(4):
            c[i + 1] = (line >> (4 * i)) & 0xF
        mask = 0
        for i in range(1, 5):
            own = c[i]
            if own == 0:
                empty[line] += 1
                continue
            merges = int(can_merge(own, c[i - 1])) + int(can_merge(own, c[i + 1]))
            lo = i == 1 or (c[i - 1] >= 3 and own < c[i - 1])
            hi = i == 4 or (c[i + 1] >= 3 and own < c[i + 1])
            for e in range(n_eval):
                axis[e, line] += weights[e, 1] * merges - weights[e, 2] * int(lo and hi)
            if own >= 3 and (c[i - 1] == own + 1 or c[i + 1] == own + 1):
                mask |= 1 << (i - 1)
        double[line] = mask
    return axis, empty, double


_AXIS, _EMPTY, _DOUBLE = _build_line_tables(_WEIGHTS)


@njit(cache=True)
def _spread_column_bits(bits, x):
    """Column bits (bit y) -> board-cell bits (bit 4y + x)."""
    out = 0
    for y in range(4):
        if (bits >> y) & 1:
            out |= 1 << (4 * y + x)
    return out


@njit(cache=True)
def _popcount16(v):
    n = 0
    while v:
        v &= v - 1
        n += 1
    return n


@njit(cache=True)
def _neighbour_with(board, cell, rank):
    """The first orthogonal neighbour (left, right, up, down) of ``cell`` holding ``rank``, or -1."""
    x = cell % 4
    y = cell // 4
    if x > 0 and (board >> (4 * (cell - 1))) & 0xF == rank:
        return cell - 1
    if x < 3 and (board >> (4 * (cell + 1))) & 0xF == rank:
        return cell + 1
    if y > 0 and (board >> (4 * (cell - 4))) & 0xF == rank:
        return cell - 4
    if y < 3 and (board >> (4 * (cell + 4))) & 0xF == rank:
        return cell + 4
    return -1


@njit(cache=True)
def _placement(board, h):
    """OpennessMatthew's bonus for keeping the highest cards in corners and chains (h > 4)."""
    score = 0
    for cell in range(16):
        own = (board >> (4 * cell)) & 0xF
        if own < h - 2:
            continue
        x = cell % 4
        y = cell // 4
        edges = int(x == 0 or x == 3) + int(y == 0 or y == 3)
        if own == h:
            score += 3 * edges
        elif own == h - 1:
            if _neighbour_with(board, cell, h) >= 0:
                score += 1 + edges
        else:
            first = _neighbour_with(board, cell, h - 1)
            if first >= 0 and _neighbour_with(board, first, h) >= 0:
                score += 1
    return score


@njit(cache=True)
def evaluate_board(board, evaluator):
    """Score of ``board`` by evaluator id (``OPENNESS`` or ``OPENNESS_MATTHEW``)."""
    w = _WEIGHTS[evaluator]
    score = 0
    doubles = 0
    h = 0
    for k in range(4):  # row k and column k
        r = row(board, k)
        col = column(board, k)
        score += _AXIS[evaluator, r] + w[0] * np.int64(_EMPTY[r]) + _AXIS[evaluator, col]
        doubles |= (np.int64(_DOUBLE[r]) << (4 * k)) | _spread_column_bits(np.int64(_DOUBLE[col]), k)
        for i in range(4):
            v = (r >> (4 * i)) & 0xF
            if v > h:
                h = v
    score += w[3] * _popcount16(doubles)
    if evaluator == OPENNESS_MATTHEW and h > 4:
        score += _placement(board, h)
    return float(score)


def openness_matthew(board: int) -> int:
    """OpennessMatthew of a board word (Python entry point, for tests and tools)."""
    return int(evaluate_board(np.int64(board), OPENNESS_MATTHEW))


def openness(board: int) -> int:
    """The original Openness evaluator of a board word."""
    return int(evaluate_board(np.int64(board), OPENNESS))


@njit(cache=True)
def board_value(s, player, params):
    """A board evaluator as a search kernel over the compact state: ``params`` = (evaluator id,
    terminal penalty)."""
    v = evaluate_board(s[BOARD], np.int64(params[0]))
    return v - params[1] if s[OUTCOME] != ONGOING else v


class BoardEvaluator(Evaluator):
    """One of the board evaluators as a search ``Evaluator`` over ``ThreesState`` objects, in
    Python and as a kernel (so the generic compiled expectimax runs it).

    ``terminal_penalty`` is subtracted at a finished game (Threesus itself uses none).
    """

    def __init__(self, name: str, terminal_penalty: float = 0.0) -> None:
        if name not in EVALUATOR_IDS:
            raise ValueError(f"unknown Threes evaluator {name!r}; known: {', '.join(EVALUATOR_IDS)}")
        self.name = name
        self.game = "threes"
        self._id = EVALUATOR_IDS[name]
        self.terminal_penalty = terminal_penalty
        self.kernel = board_value
        self.params = np.array([self._id, terminal_penalty], dtype=np.float64)

    def evaluate(self, state, player: int = 0) -> float:
        v = evaluate_board(np.int64(state.board), self._id)
        return v - self.terminal_penalty if state.is_terminal() else v


EVALUATORS = {name: BoardEvaluator(name) for name in EVALUATOR_IDS}
