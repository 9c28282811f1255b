"""Threes! board arithmetic on a 64-bit word: 16 cells x 4-bit ranks, compiled.

Cell (x, y) (x = column 0..3 left to right, y = row 0..3 top to bottom) is the nibble at bit
``4 * (4 * y + x)``. Ranks: 0 empty, 1 -> card 1, 2 -> card 2, r >= 3 -> card 3 * 2**(r - 3)
(3 -> 3, 4 -> 6, ..., 14 -> 6144, 15 -> 12288). Two 12288s do not merge (no rank 16).

A swipe moves each line independently; a 65,536-entry table per direction maps a row to its
swiped row, so a whole swipe is four lookups (up and down read columns through the same tables).
"""

from __future__ import annotations

import numpy as np
from numba import njit

LEFT, RIGHT, UP, DOWN = 0, 1, 2, 3
DIRECTION_NAMES = ("left", "right", "up", "down")
MAX_RANK = 15


@njit(cache=True)
def can_merge(a, b):
    """Whether a card of rank ``b`` can slide into one of rank ``a`` (1+2, or equal ranks >= 3)."""
    if a == 0 or b == 0:
        return False
    if a + b == 3:
        return True
    return a == b and 3 <= a < MAX_RANK


@njit(cache=True)
def swipe_line(c):
    """Swipe ``c`` (4 ranks, ``c[0]`` at the wall) in place; True if it moved.

    The first card that can move or merge does so, and every card behind it moves one step:
    cards move at most one cell and a line merges at most once.
    """
    for i in range(1, 4):
        if c[i] == 0:
            continue
        if c[i - 1] == 0 or can_merge(c[i - 1], c[i]):
            c[i - 1] = c[i] if c[i - 1] == 0 else (3 if c[i - 1] + c[i] == 3 else c[i] + 1)
            for j in range(i + 1, 4):
                c[j - 1] = c[j]
            c[3] = 0
            return True
    return False


@njit(cache=True)
def _build_tables():
    left = np.zeros(65536, dtype=np.int64)
    right = np.zeros(65536, dtype=np.int64)
    c = np.zeros(4, dtype=np.int64)
    for row in range(65536):
        # LEFT: the wall is x = 0, the low nibble.
        for i in range(4):
            c[i] = (row >> (4 * i)) & 0xF
        swipe_line(c)
        left[row] = c[0] | (c[1] << 4) | (c[2] << 8) | (c[3] << 12)
        # RIGHT: the wall is x = 3, the high nibble.
        for i in range(4):
            c[i] = (row >> (4 * (3 - i))) & 0xF
        swipe_line(c)
        right[row] = c[3] | (c[2] << 4) | (c[1] << 8) | (c[0] << 12)
    return left, right


ROW_LEFT, ROW_RIGHT = (table.astype(np.uint16) for table in _build_tables())
"""A 16-bit row -> the row swiped left / right, as 16-bit words: 128 kB a table (as int64 the two
took 1 MB, and a swipe's four lookups at random rows missed the cache on most steps)."""


@njit(cache=True)
def spread(line):
    """A 16-bit column line (c0 at the top) -> its four nibbles at bits 0, 16, 32, 48."""
    v = np.int64(line)
    return (v & 0xF) | ((v & 0xF0) << 12) | ((v & 0xF00) << 24) | ((v & 0xF000) << 36)


@njit(cache=True)
def column(board, x):
    """Column ``x`` as a 16-bit line, the top cell in the low nibble."""
    v = board >> (4 * x)
    return (v & 0xF) | ((v >> 12) & 0xF0) | ((v >> 24) & 0xF00) | ((v >> 36) & 0xF000)


@njit(cache=True)
def row(board, y):
    return (board >> (16 * y)) & 0xFFFF


@njit(cache=True)
def set_rank(board, cell, rank):
    shift = 4 * cell
    return (board & ~(np.int64(0xF) << shift)) | (np.int64(rank) << shift)


@njit(cache=True)
def swipe(board, direction):
    """(new board, moved-lines mask): bit k set when line k moved (row k for left/right, column k
    for up/down). Up and down use the row tables on columns (the top cell is the low nibble)."""
    table = ROW_LEFT if direction == LEFT or direction == UP else ROW_RIGHT
    out = np.int64(0)
    moved = 0
    if direction <= RIGHT:
        for k in range(4):
            line = row(board, k)
            new = np.int64(table[line])
            if new != line:
                moved |= 1 << k
            out |= new << (16 * k)
    else:
        for k in range(4):
            line = column(board, k)
            new = np.int64(table[line])
            if new != line:
                moved |= 1 << k
            out |= spread(new) << (4 * k)
    return out, moved


@njit(cache=True)
def insert_cell(direction, line):
    """The far-end cell of ``line`` where the new card enters after a swipe in ``direction``."""
    if direction == LEFT:
        return 4 * line + 3
    if direction == RIGHT:
        return 4 * line
    if direction == UP:
        return 12 + line
    return line


@njit(cache=True)
def highest_rank(board):
    h = 0
    for cell in range(16):
        r = (board >> (4 * cell)) & 0xF
        if r > h:
            h = r
    return h


RANK_SCORES = np.array([0 if r < 3 else 3 ** (r - 2) for r in range(MAX_RANK + 1)], dtype=np.int64)
"""``rank_score`` of every rank, looked up (an integer power in the loop of ``board_score`` cost
more than the rest of it: every vector env step scores its board)."""


@njit(cache=True)
def rank_score(r):
    """3 ** (r - 2) for a card of rank r >= 3 (3 -> 3, 6 -> 9, ...); 0 for 1, 2 and empty."""
    return RANK_SCORES[r]


@njit(cache=True)
def board_score(board):
    total = 0
    for cell in range(16):
        total += rank_score((board >> (4 * cell)) & 0xF)
    return total


@njit(cache=True)
def any_move(board):
    for d in range(4):
        _, moved = swipe(board, d)
        if moved:
            return True
    return False


def rank_value(rank: int) -> int:
    """The card value of a rank (0 for an empty cell)."""
    return 0 if rank == 0 else (rank if rank < 3 else 3 * 2 ** (rank - 3))


def value_rank(value: int) -> int:
    """The rank of a card value; ValueError for a value that is not a Threes card."""
    if value in (0, 1, 2):
        return value
    if value >= 3 and value % 3 == 0 and (value // 3) & (value // 3 - 1) == 0:
        r = (value // 3).bit_length() + 2
        if r <= MAX_RANK:
            return r
    raise ValueError(f"{value!r} is not a Threes card value (1, 2, 3, 6, 12, ..., 12288)")


def board_from_ranks(ranks) -> int:
    """Pack a 4x4 (or 16-long) array of ranks, row-major from the top-left, into a board word."""
    flat = np.asarray(ranks, dtype=np.int64).reshape(16)
    if flat.min() < 0 or flat.max() > MAX_RANK:
        raise ValueError(f"ranks must lie in 0..{MAX_RANK}, got {flat.tolist()}")
    b = 0
    for cell, r in enumerate(flat.tolist()):
        b |= r << (4 * cell)
    return int(np.array(b, dtype=np.uint64).view(np.int64)) if b >= 2**63 else b


def ranks_of(board: int) -> np.ndarray:
    """The 4x4 array of ranks of a board word."""
    u = int(board) & (2**64 - 1)
    return np.array([(u >> (4 * c)) & 0xF for c in range(16)], dtype=np.int64).reshape(4, 4)
