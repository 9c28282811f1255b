"""The tables the compiled searches keep (alpha-beta, expectiminimax): one transposition table
with its probe and store kernels, the move-ordering tables, and scratch buffers.

The transposition table is five parallel arrays of ``2**tt_bits`` slots; a position's slot is
the low bits of its 64-bit key and the full key is kept to recognise it::

    key[slot]    the position's key            val[slot]   its value, fail-soft
    depth[slot]  the remaining depth searched  flag[slot]  EXACT, LOWER or UPPER bound
    move[slot]   the best move found (-1: none)

An entry stands in for a subtree only at the SAME remaining depth, so a search with the table
returns exactly the value of plain depth-limited search; at any other depth its move is only
the first move tried. Replacement: always replace, the newest result takes the slot. Aging:
entries need none (a stored value stays exact for its depth, and newer searches overwrite old
slots), while the history scores are halved between decisions (``Tables.age``), so cut-offs
of old positions fade.

The searches take the five arrays as one tuple (``TT_T``); ``probe`` and ``store`` take them
one by one (``probe(*tt, ...)``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

EXACT, LOWER, UPPER = 0, 1, 2
MAX_PLY = 128

_I = types.int64
_F = types.float64
_I1 = types.int64[::1]
_F1 = types.float64[::1]
_I2 = types.int64[:, ::1]
_F2 = types.float64[:, ::1]
NUMBA_TYPES = (_I, _F, _I1, _F1, _I2, _F2)
"""Shorthands of the searches' explicit signatures: int64, float64, their 1-d and 2-d C arrays."""
TT_TYPES = (_I1, _F1, _I1, _I1, _I1)
"""Numba types of the transposition table's arrays: key, val, depth, flag, move."""
TT_T = types.Tuple(TT_TYPES)
"""Numba type of ``Tables.tt``, the transposition table as one search argument."""


@njit(cache=True)
def stored_move(tt_key, tt_move, key):
    """(slot of ``key``, the move stored for it or -1 if the slot holds another position)."""
    slot = key & (tt_key.shape[0] - 1)
    return slot, tt_move[slot] if tt_key[slot] == key else -1


@njit(cache=True)
def probe(tt_key, tt_val, tt_depth, tt_flag, tt_move, key, depth, alpha, beta):
    """(slot, stored move or -1, whether the entry decides the node in (alpha, beta), its value).

    The entry decides the node when it was searched to ``depth`` and is exact or a bound that
    falls outside the window.
    """
    slot = key & (tt_key.shape[0] - 1)
    if tt_key[slot] != key:
        return slot, -1, False, 0.0
    v = tt_val[slot]
    f = tt_flag[slot]
    cut = tt_depth[slot] == depth and (f == EXACT or (f == LOWER and v >= beta) or (f == UPPER and v <= alpha))
    return slot, tt_move[slot], cut, v


@njit(cache=True)
def store(tt_key, tt_val, tt_depth, tt_flag, tt_move, slot, key, depth, value, move, alpha, beta):
    """Store a node searched with window (alpha, beta) to ``depth`` in ``slot`` (always replace):
    a value at most alpha is an upper bound, at least beta a lower bound, else exact."""
    tt_key[slot] = key
    tt_val[slot] = value
    tt_depth[slot] = depth
    tt_move[slot] = move
    tt_flag[slot] = UPPER if value <= alpha else (LOWER if value >= beta else EXACT)


@njit(cache=True)
def store_move(tt_key, tt_depth, tt_move, slot, key, move):
    """Store only a move to try first (depth -1: the entry never decides a node)."""
    tt_key[slot] = key
    tt_move[slot] = move
    tt_depth[slot] = -1


@njit(cache=True)
def order_moves(buf, n, first, k1, k2, history, scores):
    """Sort ``buf[:n]``: ``first`` (the table's move), killers ``k1``, ``k2``, then by history
    score, ties in generation order (insertion sort: n is small)."""
    for i in range(n):
        m = buf[i]
        if m == first:
            scores[i] = 4e18
        elif m == k1:
            scores[i] = 3e18
        elif m == k2:
            scores[i] = 2e18
        else:
            scores[i] = history[m]
    for i in range(1, n):
        m = buf[i]
        sc = scores[i]
        j = i - 1
        while j >= 0 and scores[j] < sc:
            buf[j + 1] = buf[j]
            scores[j + 1] = scores[j]
            j -= 1
        buf[j + 1] = m
        scores[j + 1] = sc


class Tables:
    """A transposition table of ``2**tt_bits`` slots, history scores over ``num_actions`` and
    per-ply move buffers, kept across iterations (and, by an agent, across decisions)."""

    def __init__(self, num_actions: int, tt_bits: int = 20) -> None:
        size = 1 << tt_bits
        self.key = np.zeros(size, dtype=np.int64)
        self.val = np.zeros(size, dtype=np.float64)
        self.depth = np.full(size, -1, dtype=np.int64)
        self.flag = np.zeros(size, dtype=np.int64)
        self.move = np.full(size, -1, dtype=np.int64)
        self.history = np.zeros(num_actions, dtype=np.float64)
        self.bufs = np.zeros((MAX_PLY, num_actions), dtype=np.int64)
        self.scores = np.zeros((MAX_PLY, num_actions), dtype=np.float64)

    @property
    def tt(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The transposition table's arrays in kernel order (``TT_TYPES``)."""
        return self.key, self.val, self.depth, self.flag, self.move

    def age(self) -> None:
        """Halve the history scores (between decisions, so old cut-offs fade)."""
        self.history *= 0.5
