"""Trilobite: gravity N-in-a-row on a W x H board (rules/trilobite.md).

Cells are numbered row-major from the TOP row, as in the original::

    standard 8 x 7, L = 4          an action names a column; the chip falls to the
     0  1  2  3  4  5  6  7         lowest empty cell of that column
     8  9 10 11 12 13 14 15
    ...                             actions:  0  1  2  3  4  5  6  7
    48 49 50 51 52 53 54 55  <- bottom row

Legal actions are listed in the original's order: by increasing landing-cell index, i.e. the
columns with the tallest stacks first, ties by column. Searches break ties by that order
("first maximal move in legal-cell order").

Compact state (an int64 array, see ``Kernels`` in envs/core.py)::

    [0] player to move  [1] ply  [2] outcome (-1 / winner / 2 draw)  [3] Zobrist key
    [4] last cell (-1 before the first move)    (the common header of envs/core.py)
    [5] W  [6] H  [7] L  [8] first player
    [9], [10]                    each player's chips as bits (where W * (H + 1) <= 64): bit
                                 x * (H + 1) + y for column x, y up from the bottom row; the
                                 bit above each column stays 0, so lines do not wrap
    [HDR : HDR+W*H]              cells: 0 empty, 1 player 0, 2 player 1
    [HDR+W*H : HDR+W*H+W]        column heights
    [HDR+W*H+W : HDR+2*W*H+W]    cells played, in order (undo stack)
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from tablegym.envs import core as common
from tablegym.envs.core import Game, GameSpec, IllegalActionError, Kernels, KernelState, cell_features, k_outcome, k_to_move

HDR = 16
MAX_SIDE = 16
W_, H_, L_, FIRST, BITS = range(common.HEADER, common.HEADER + 5)

# Zobrist numbers for (player, cell) and the side to move: fixed so keys repeat across runs.
_ZOBRIST = np.random.default_rng(20150611).integers(1, 2**63 - 1, size=(2, MAX_SIDE * MAX_SIDE + 1), dtype=np.int64)
# The key also names the last cell: the original heuristics score a leaf by its last move, so
# two boards reached by different last moves are different leaves for a transposition table.
_ZOBRIST_LAST = np.random.default_rng(20150612).integers(1, 2**63 - 1, size=MAX_SIDE * MAX_SIDE + 1, dtype=np.int64)
_DIRS = np.array([[1, 0], [0, 1], [1, 1], [1, -1]], dtype=np.int64)


@njit(cache=True)
def k_moves(s, out):
    if s[common.OUTCOME] != common.ONGOING:
        return 0
    w = s[W_]
    h = s[H_]
    heights = HDR + w * h
    n = 0
    # Increasing landing-cell index ((h - 1 - height) * w + column).
    if w <= 8 and h <= 8:
        # Each open column's bit at (h - 1 - height) * 8 + column of one word, read back lowest
        # first: the same order without the sort's unpredictable branches (a full column's bit
        # is 0, its shift wrapped into range).
        b = np.uint64(0)
        for x in range(w):
            height = s[heights + x]
            b |= np.uint64(height < h) << np.uint64(((h - 1 - height) * 8 + x) & 63)
        while b != 0:
            out[n] = trailing_zeros(b) & 7
            n += 1
            b &= b - np.uint64(1)
        return n
    # Wider boards: each open column inserted into place, w steps and a few shifts instead of a
    # scan of every cell.
    for x in range(w):
        height = s[heights + x]
        if height < h:
            j = n
            while j > 0 and s[heights + out[j - 1]] < height:  # a lower stack lands lower: later
                out[j] = out[j - 1]
                j -= 1
            out[j] = x
            n += 1
    return n


@njit(cache=True)
def run_length(s, cell, player, gaps):
    """Longest line through ``cell`` for ``player``: 1 + own chips along each side.

    With ``gaps`` the walk goes up to L-1 cells each way, skips empty cells and stops at an
    opponent chip (the original's gap-tolerant heuristic); without, it stops at any non-own cell.
    """
    w = s[W_]
    h = s[H_]
    lim = s[L_] - 1
    x0 = cell % w
    y0 = cell // w
    own = player + 1
    best = 0
    for d in range(4):
        dx = _DIRS[d, 0]
        dy = _DIRS[d, 1]
        count = 1
        for sign in (1, -1):
            x = x0 + sign * dx
            y = y0 + sign * dy
            steps = 0
            while 0 <= x < w and 0 <= y < h and (not gaps or steps < lim):
                v = s[HDR + y * w + x]
                if v == own:
                    count += 1
                elif v == 0 and gaps:
                    pass
                else:
                    break
                x += sign * dx
                y += sign * dy
                steps += 1
        if count > best:
            best = count
    return best


@njit(cache=True)
def k_push(s, col):
    w = s[W_]
    h = s[H_]
    p = s[common.TO_MOVE]
    height = s[HDR + w * h + col]
    cell = (h - 1 - height) * w + col
    s[HDR + cell] = p + 1
    s[HDR + w * h + col] = height + 1
    s[HDR + w * h + w + s[common.PLY]] = cell
    s[common.PLY] += 1
    s[common.LAST] = cell
    s[common.KEY] ^= _ZOBRIST[p, cell] ^ _ZOBRIST[0, MAX_SIDE * MAX_SIDE]
    s[common.TO_MOVE] = 1 - p
    if _bits_fit(w, h, s[L_]):
        s[BITS + p] |= np.int64(1) << (col * (h + 1) + height)
        won = _line_of_bits(s[BITS + p], h, s[L_])
    else:
        won = run_length(s, cell, p, False) >= s[L_]
    if won:
        s[common.OUTCOME] = p
    elif s[common.PLY] == w * h:
        s[common.OUTCOME] = common.DRAW


@njit(cache=True, inline="always")
def _bits_fit(w, h, length):
    """Whether the chips are kept as bits (``BITS``): every cell and the row above each column in
    64 bits, and a line's longest shift under 64 (push sets the bits and pop clears them only then)."""
    return w * (h + 1) <= 64 and (length - 1) * (h + 2) < 64


@njit(cache=True, inline="always")
def _line_of_bits(b, h, length):
    """Whether the bits ``b`` (``BITS``' layout) hold ``length`` in a row in some direction: up
    (shift 1), across (h + 1) and the two diagonals (h, h + 2). No line stood before the move,
    so a line now runs through the new chip: what ``run_length`` would have found from it, in a
    few shifts instead of a walk of up to eight branches a direction."""
    for d in (1, h + 1, h, h + 2):
        m = b
        for k in range(1, length):
            m &= b >> (k * d)
        if m != 0:
            return True
    return False


@njit(cache=True)
def k_pop(s):
    w = s[W_]
    h = s[H_]
    s[common.PLY] -= 1
    cell = s[HDR + w * h + w + s[common.PLY]]
    s[HDR + w * h + w + s[common.PLY]] = 0
    p = s[HDR + cell] - 1
    s[HDR + cell] = 0
    s[HDR + w * h + cell % w] -= 1
    if _bits_fit(w, h, s[L_]):
        s[BITS + p] &= ~(np.int64(1) << ((cell % w) * (h + 1) + h - 1 - cell // w))
    s[common.KEY] ^= _ZOBRIST[p, cell] ^ _ZOBRIST[0, MAX_SIDE * MAX_SIDE]
    s[common.TO_MOVE] = p
    s[common.OUTCOME] = common.ONGOING
    s[common.LAST] = s[HDR + w * h + w + s[common.PLY] - 1] if s[common.PLY] > 0 else -1


@njit(cache=True)
def k_key(s):
    return s[common.KEY] ^ _ZOBRIST_LAST[s[common.LAST]]


@njit(cache=True)
def k_features(s, out):
    """Feature ``2 * cell`` is a chip of the player to move, ``2 * cell + 1`` an opponent's."""
    return cell_features(s, HDR, s[W_] * s[H_], out)


@njit(cache=True)
def k_observation(s, player, out):
    """Fill ``out`` (float32, 3 x H x W) with ``player``'s chips, the opponent's, and to-move."""
    flat_observation(s, player, out.reshape(out.size))


KERNELS = Kernels(k_moves, k_push, k_pop, k_to_move, k_outcome, k_key, k_features)


class TrilobiteGame(Game):
    """Trilobite with board ``width`` x ``height``, win length ``win_length``.

    >>> g = TrilobiteGame.tiny()
    >>> s = g.new_initial_state().child(0)
    >>> s.legal_actions()
    [0, 1, 2]
    """

    def __init__(self, width: int = 8, height: int = 7, win_length: int = 4, first_player: int = 0) -> None:
        for name, v in (("width", width), ("height", height)):
            if not (isinstance(v, (int, np.integer)) and 1 <= v <= MAX_SIDE):
                raise ValueError(f"Trilobite {name} must be an integer in 1..{MAX_SIDE}, got {v!r}")
        if not (isinstance(win_length, (int, np.integer)) and 2 <= win_length <= max(width, height)):
            raise ValueError(f"Trilobite win_length must be in 2..{max(width, height)}, got {win_length!r}")
        if first_player not in (0, 1):
            raise ValueError(f"Trilobite first_player must be 0 or 1, got {first_player!r}")
        self.width, self.height, self.win_length, self.first_player = int(width), int(height), int(win_length), int(first_player)
        self.spec = GameSpec(
            name="trilobite",
            num_players=2,
            num_actions=self.width,
            max_game_length=self.width * self.height,
            min_utility=-1.0,
            max_utility=1.0,
            observation_shape=(3, self.height, self.width),
            options=dict(width=self.width, height=self.height, win_length=self.win_length, first_player=self.first_player),
        )

    @classmethod
    def tiny(cls, first_player: int = 0) -> TrilobiteGame:
        """The 3x3, three-in-a-row puzzle of the original."""
        return cls(3, 3, 3, first_player)

    def feature_symmetries(self) -> list[np.ndarray]:
        """The identity and the mirror of the columns: feature 2 * cell + k -> 2 * mirrored
        cell + k."""
        identity = np.arange(self.new_initial_state().num_features)
        w, h = self.width, self.height
        cells = np.arange(w * h)
        mirrored = (cells // w) * w + (w - 1 - cells % w)
        perm = np.empty_like(identity)
        perm[0::2] = 2 * mirrored
        perm[1::2] = 2 * mirrored + 1
        return [identity, perm]

    def new_initial_state(self) -> TrilobiteState:
        w, h = self.width, self.height
        s = np.zeros(HDR + 2 * w * h + w, dtype=np.int64)
        s[W_], s[H_], s[L_] = w, h, self.win_length
        s[common.TO_MOVE] = s[FIRST] = self.first_player
        s[common.OUTCOME] = common.ONGOING
        s[common.LAST] = -1
        s[common.KEY] = _ZOBRIST[1, MAX_SIDE * MAX_SIDE] if self.first_player else 0
        return TrilobiteState(self, s)


class TrilobiteState(KernelState):
    """A Trilobite position; actions are column numbers."""

    kernels = KERNELS
    observe = staticmethod(k_observation)

    def __init__(self, game: TrilobiteGame, array: np.ndarray) -> None:
        super().__init__(game, array)
        self.num_features = 2 * game.width * game.height

    @property
    def board(self) -> np.ndarray:
        """H x W array: 0 empty, 1 player 0's chip, 2 player 1's chip (row 0 is the top)."""
        g = self.game
        return self._s[HDR : HDR + g.width * g.height].reshape(g.height, g.width).copy()

    @property
    def last_cell(self) -> int:
        """The cell of the last chip dropped, -1 before the first move."""
        return int(self._s[common.LAST])

    @property
    def ply(self) -> int:
        return int(self._s[common.PLY])

    def to_text(self) -> str:
        g = self.game
        marks = ".XO"
        rows = [" ".join(marks[v] for v in row) for row in self.board]
        rows.append(" ".join(str(x % 10) for x in range(g.width)))
        rows.append(self.status_line(marks))
        return "\n".join(rows)

    def action_to_string(self, action: int) -> str:
        return f"column {action}"

    def string_to_action(self, text: str) -> int:
        """Parse a column number ("3" or "column 3")."""
        word = text.strip().lower().removeprefix("column").strip()
        col = self._number(text, word, "(give a column number)")
        if col not in self.legal_actions():
            raise IllegalActionError(col, self.legal_actions(), "(column full or off the board)")
        return col


@njit(cache=True)
def flat_observation(s, player, out):
    """``State.observation(player)`` of the compact state ``s`` flattened into the float32 vector
    ``out``: what exported networks (models/export.py) and the vector env (envs/vector.py) read.
    The three planes are written cell by cell in one flat pass, without branches (the vector
    env's step writes one a board: this way costs a third of a loop over 3-D indices)."""
    cells = s[W_] * s[H_]
    own = player + 1
    turn = np.float32(1.0 if s[common.TO_MOVE] == player else 0.0)
    for c in range(cells):
        v = s[HDR + c]
        out[c] = np.float32(v == own)
        out[cells + c] = np.float32(v != 0 and v != own)
        out[2 * cells + c] = turn
