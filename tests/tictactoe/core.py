"""Tic-tac-toe over the rules-core contract of envs/core.py, at Trilobite's pattern and 3x3 size.

Cells are numbered row-major from the top left; an action names an empty cell::

     0 | 1 | 2          a1 | b1 | c1        (column letter, row number from the top)
     3 | 4 | 5          a2 | b2 | c2
     6 | 7 | 8          a3 | b3 | c3

Player 0 plays X, player 1 plays O; ``first_player`` says who starts (X by default). Legal
actions are the empty cells in increasing order. Three own marks in a row, column or diagonal
win; a full board without a line is a draw.

Compact state (an int64 array, see ``Kernels`` in envs/core.py)::

    [0] player to move  [1] ply  [2] outcome (-1 / winner / 2 draw)  [3] Zobrist key
    [4] last cell (-1 before the first move)    (the common header of envs/core.py)
    [5] first player
    [CELLS : CELLS+9]    cells: 0 empty, 1 X (player 0), 2 O (player 1)
    [STACK : STACK+9]    cells played, in order (undo stack)

The key is a Zobrist hash of the marks and the side to move (not the last cell: every
evaluator here reads the whole board). ``k_canonical`` is the smallest base-3 code of the
board over its 8 symmetries, for the exact solver's memo (isomorphic positions share a value).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.core import (
    DRAW,
    HEADER,
    KEY,
    LAST,
    ONGOING,
    OUTCOME,
    PLY,
    TO_MOVE,
    Game,
    GameSpec,
    IllegalActionError,
    Kernels,
    KernelState,
    cell_features,
    k_key,
    k_outcome,
    k_to_move,
)

FIRST = HEADER
CELLS = HEADER + 1
STACK = CELLS + 9
SIZE = STACK + 9
NUM_CELLS = 9
NUM_FEATURES = 2 * NUM_CELLS

LINES = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]], dtype=np.int64)
"""The eight lines of three."""


def _symmetries() -> np.ndarray:
    """The 8 symmetries of the square as cell permutations: board'[i] = board[SYM[k, i]]."""
    grid = np.arange(9).reshape(3, 3)
    out = []
    for flip in (False, True):
        g = grid.T if flip else grid
        for turns in range(4):
            out.append(np.rot90(g, turns).ravel())
    return np.array(out, dtype=np.int64)


SYMMETRIES = _symmetries()
"""Row k: the cell each cell of the k-th transformed board comes from; row 0 is the identity."""

_ZOBRIST = np.random.default_rng(19520101).integers(1, 2**63 - 1, size=(2, NUM_CELLS), dtype=np.int64)
_ZOBRIST_SIDE = np.int64(np.random.default_rng(19520102).integers(1, 2**63 - 1))
_POW3 = 3 ** np.arange(NUM_CELLS, dtype=np.int64)


@njit(cache=True)
def k_moves(s, out):
    if s[OUTCOME] != ONGOING:
        return 0
    n = 0
    for c in range(NUM_CELLS):
        if s[CELLS + c] == 0:
            out[n] = c
            n += 1
    return n


@njit(cache=True)
def k_winner_through(s, cell):
    """The player with a line of three through ``cell``, or -1."""
    v = s[CELLS + cell]
    if v == 0:
        return -1
    for i in range(LINES.shape[0]):
        a = LINES[i, 0]
        b = LINES[i, 1]
        c = LINES[i, 2]
        if (a == cell or b == cell or c == cell) and s[CELLS + a] == v and s[CELLS + b] == v and s[CELLS + c] == v:
            return v - 1
    return -1


@njit(cache=True)
def k_push(s, cell):
    p = s[TO_MOVE]
    s[CELLS + cell] = p + 1
    s[STACK + s[PLY]] = cell
    s[PLY] += 1
    s[LAST] = cell
    s[KEY] ^= _ZOBRIST[p, cell] ^ _ZOBRIST_SIDE
    s[TO_MOVE] = 1 - p
    if k_winner_through(s, cell) == p:
        s[OUTCOME] = p
    elif s[PLY] == NUM_CELLS:
        s[OUTCOME] = DRAW


@njit(cache=True)
def k_pop(s):
    s[PLY] -= 1
    cell = s[STACK + s[PLY]]
    s[STACK + s[PLY]] = 0
    p = s[CELLS + cell] - 1
    s[CELLS + cell] = 0
    s[KEY] ^= _ZOBRIST[p, cell] ^ _ZOBRIST_SIDE
    s[TO_MOVE] = p
    s[OUTCOME] = ONGOING
    s[LAST] = s[STACK + s[PLY] - 1] if s[PLY] > 0 else -1


@njit(cache=True)
def k_features(s, out):
    """Feature ``2 * cell`` is a mark of the player to move, ``2 * cell + 1`` an opponent's."""
    return cell_features(s, CELLS, NUM_CELLS, out)


@njit(cache=True)
def k_canonical(s):
    """The smallest base-3 code of the board over its 8 symmetries (the side to move follows
    from the marks and the first player, which the code also carries)."""
    best = np.int64(-1)
    for k in range(SYMMETRIES.shape[0]):
        code = np.int64(0)
        for i in range(NUM_CELLS):
            code += s[CELLS + SYMMETRIES[k, i]] * _POW3[i]
        if best < 0 or code < best:
            best = code
    return best * 2 + s[FIRST]


@njit(cache=True)
def k_observation(s, player, out):
    """Fill ``out`` (float32, 3 x 3 x 3) with ``player``'s marks, the opponent's, and to-move."""
    own = player + 1
    turn = 1.0 if s[TO_MOVE] == player else 0.0
    for c in range(NUM_CELLS):
        v = s[CELLS + c]
        y = c // 3
        x = c % 3
        out[0, y, x] = 1.0 if v == own else 0.0
        out[1, y, x] = 1.0 if v != 0 and v != own else 0.0
        out[2, y, x] = turn


KERNELS = Kernels(k_moves, k_push, k_pop, k_to_move, k_outcome, k_key, k_features)


class TicTacToeGame(Game):
    """Tic-tac-toe; ``first_player`` (0 = X, 1 = O) moves first.

    >>> s = TicTacToeGame().new_initial_state().child(4)
    >>> s.legal_actions()
    [0, 1, 2, 3, 5, 6, 7, 8]
    """

    def __init__(self, first_player: int = 0) -> None:
        if first_player not in (0, 1):
            raise ValueError(f"tic-tac-toe first_player must be 0 or 1, got {first_player!r}")
        self.first_player = int(first_player)
        self.spec = GameSpec(
            name="tictactoe",
            num_players=2,
            num_actions=NUM_CELLS,
            max_game_length=NUM_CELLS,
            min_utility=-1.0,
            max_utility=1.0,
            observation_shape=(3, 3, 3),
            options={"first_player": self.first_player},
        )

    def new_initial_state(self) -> TicTacToeState:
        s = np.zeros(SIZE, dtype=np.int64)
        s[TO_MOVE] = s[FIRST] = self.first_player
        s[OUTCOME] = ONGOING
        s[LAST] = -1
        s[KEY] = _ZOBRIST_SIDE if self.first_player else 0
        return TicTacToeState(self, s)

    def feature_symmetries(self) -> list[np.ndarray]:
        """The 8 symmetries of the board, identity first: feature 2 * cell + k -> 2 * SYM[cell] + k."""
        perms = []
        for sym in SYMMETRIES:
            perm = np.empty(NUM_FEATURES, dtype=np.int64)
            perm[0::2] = 2 * sym
            perm[1::2] = 2 * sym + 1
            perms.append(perm)
        return perms


def cell_name(cell: int) -> str:
    """``4`` -> ``"b2"`` (column letter, row number from the top)."""
    return "abc"[cell % 3] + str(cell // 3 + 1)


class TicTacToeState(KernelState):
    """A tic-tac-toe position; actions are cell numbers 0-8."""

    kernels = KERNELS
    observe = staticmethod(k_observation)
    num_features = NUM_FEATURES

    @property
    def board(self) -> np.ndarray:
        """3 x 3 array: 0 empty, 1 X (player 0), 2 O (player 1)."""
        return self._s[CELLS : CELLS + NUM_CELLS].reshape(3, 3).copy()

    @property
    def canonical_key(self) -> int:
        return int(k_canonical(self._s))

    def to_text(self) -> str:
        marks = ".XO"
        rows = [f"{r + 1} " + " ".join(marks[v] for v in row) for r, row in enumerate(self.board)]
        rows.insert(0, "  a b c")
        rows.append(self.status_line(marks))
        return "\n".join(rows)

    def action_to_string(self, action: int) -> str:
        return cell_name(int(action))

    def string_to_action(self, text: str) -> int:
        """Parse a cell: ``"b2"`` (column a-c, row 1-3 from the top) or its number ``"4"``."""
        word = text.strip().lower()
        if len(word) == 2 and word[0] in "abc" and word[1] in "123":
            cell = (int(word[1]) - 1) * 3 + "abc".index(word[0])
        else:
            try:
                cell = int(word)
            except ValueError:
                raise IllegalActionError(text, self.legal_actions(), "(give a cell such as b2, or 0-8)") from None
        if cell not in self.legal_actions():
            raise IllegalActionError(cell, self.legal_actions(), "(cell taken or off the board)")
        return cell
