"""Sim: colour the edges of K_n, never close a triangle in your own colour (rules/sim.md).

Points 0..n-1; an action names an edge, numbered lexicographically over the pairs i < j::

    K6 (default)          edge ids                      a move colours one uncoloured edge
         0                (0,1)=0  (0,2)=1  (0,3)=2       in the mover's colour; closing a
      5     1             (0,4)=3  (0,5)=4  (1,2)=5       triangle all in your OWN colour loses
      4     2             (1,3)=6  (1,4)=7  (1,5)=8       at once; a full board without one is
         3                (2,3)=9  (2,4)=10 (2,5)=11      a draw (impossible on K6: R(3,3) = 6)
                          (3,4)=12 (3,5)=13 (4,5)=14

Player 0 moves first. Colours: 0 uncoloured, 1 player 0, 2 player 1.

Compact state (an int64 array, see ``Kernels`` in envs/core.py), with E = n(n-1)/2::

    [0] player to move  [1] ply  [2] outcome (-1 / winner / 2 draw)
    [3] key: base-3 code of the labelled board, sum(colour(e) * 3**e)  [4] last edge (-1 at start)
    (the common header of envs/core.py)  [5] n  [6] E
    [HDR : HDR+E]              colour per edge
    [HDR+E : HDR+2E]           edges played, in order (undo stack)
    [HDR+2E : HDR+2E+n]        per point: bitmask of its neighbours by player-0 edges
    [HDR+2E+n : HDR+2E+2n]     per point: bitmask of its neighbours by player-1 edges

The masks make the triangle test one AND (``mask[p][i] & mask[p][j]``) and must stay the last
2n slots: the canonical form (canonical.py) reads them there.
"""

from __future__ import annotations

import re

import numpy as np
from numba import njit

from tablegym.envs import core as common
from tablegym.envs.core import Game, GameSpec, IllegalActionError, Kernels, KernelState, k_key, k_outcome, k_to_move
from tablegym.envs.sim.canonical import EDGE_ID, EDGE_U, EDGE_V, MAX_N, MIN_N, N_, POW3, canonical_code, check_n, edges_of

E_ = N_ + 1
HDR = E_ + 1


@njit(cache=True)
def k_moves(s, out):
    if s[common.OUTCOME] != common.ONGOING:
        return 0
    m = 0
    for e in range(s[E_]):  # (written always, kept where uncoloured: no branch the edges' colours would mispredict)
        out[m] = e
        m += s[HDR + e] == 0
    return m


@njit(cache=True)
def closes_own_triangle(s, e, p):
    """True when player ``p`` colouring edge ``e`` completes a triangle in ``p``'s colour."""
    n = s[N_]
    base = HDR + 2 * s[E_] + p * n
    return (s[base + EDGE_U[n, e]] & s[base + EDGE_V[n, e]]) != 0


@njit(cache=True)
def k_push(s, e):
    n = s[N_]
    ne = s[E_]
    p = s[common.TO_MOVE]
    i = EDGE_U[n, e]
    j = EDGE_V[n, e]
    base = HDR + 2 * ne + p * n
    lost = (s[base + i] & s[base + j]) != 0
    s[HDR + e] = p + 1
    s[HDR + ne + s[common.PLY]] = e
    s[common.PLY] += 1
    s[common.LAST] = e
    s[common.KEY] += (p + 1) * POW3[e]
    s[base + i] |= np.int64(1) << j
    s[base + j] |= np.int64(1) << i
    s[common.TO_MOVE] = 1 - p
    if lost:
        s[common.OUTCOME] = 1 - p
    elif s[common.PLY] == ne:
        s[common.OUTCOME] = common.DRAW


@njit(cache=True)
def k_pop(s):
    n = s[N_]
    ne = s[E_]
    s[common.PLY] -= 1
    e = s[HDR + ne + s[common.PLY]]
    s[HDR + ne + s[common.PLY]] = 0  # so that pop restores the array exactly
    p = s[HDR + e] - 1
    i = EDGE_U[n, e]
    j = EDGE_V[n, e]
    base = HDR + 2 * ne + p * n
    s[base + i] &= ~(np.int64(1) << j)
    s[base + j] &= ~(np.int64(1) << i)
    s[HDR + e] = 0
    s[common.KEY] -= (p + 1) * POW3[e]
    s[common.TO_MOVE] = p
    s[common.OUTCOME] = common.ONGOING
    s[common.LAST] = s[HDR + ne + s[common.PLY] - 1] if s[common.PLY] > 0 else -1


@njit(cache=True)
def k_features(s, out):
    """On the CANONICAL relabelling: feature 2e if edge e is the mover's, 2e+1 if the opponent's.

    Isomorphic boards give the same features, so a value network sees one input per class.
    """
    n = s[N_]
    perm = np.empty(MAX_N, dtype=np.int64)
    code = canonical_code(n, s, s.shape[0] - 2 * n, perm)
    me = s[common.TO_MOVE] + 1
    m = 0
    for e in range(s[E_]):
        d = code % 3
        code //= 3
        if d != 0:
            out[m] = 2 * e + (0 if d == me else 1)
            m += 1
    return m


@njit(cache=True)
def k_observation(s, player, out):
    """Fill ``out`` (float32, 3 x E) with ``player``'s edges, the opponent's, and to-move."""
    turn = 1.0 if s[common.TO_MOVE] == player else 0.0
    for e in range(s[E_]):
        c = s[HDR + e]
        out[0, e] = 1.0 if c == player + 1 else 0.0
        out[1, e] = 1.0 if c == 2 - player else 0.0
        out[2, e] = turn


KERNELS = Kernels(k_moves, k_push, k_pop, k_to_move, k_outcome, k_key, k_features)


class SimGame(Game):
    """Sim on K_n (n = 3..8 points, default 6).

    >>> g = SimGame()
    >>> s = g.new_initial_state()
    >>> s = s.child(s.string_to_action("0-1"))
    >>> s.current_player(), s.action_to_string(s.last_edge)
    (1, '0-1')
    """

    def __init__(self, n: int = 6) -> None:
        self.n = check_n(n)
        self.edges: list[tuple[int, int]] = edges_of(self.n)
        self.num_edges = len(self.edges)
        self.spec = GameSpec(
            name="sim",
            num_players=2,
            num_actions=self.num_edges,
            max_game_length=self.num_edges,
            min_utility=-1.0,
            max_utility=1.0,
            observation_shape=(3, self.num_edges),
            options=dict(n=self.n),
        )

    def new_initial_state(self) -> SimState:
        n, ne = self.n, self.num_edges
        s = np.zeros(HDR + 2 * ne + 2 * n, dtype=np.int64)
        s[N_], s[E_] = n, ne
        s[common.OUTCOME] = common.ONGOING
        s[common.LAST] = -1
        return SimState(self, s)

    def edge(self, i: int, j: int) -> int:
        """The edge id of the pair (i, j), in either order."""
        if not (0 <= i < self.n and 0 <= j < self.n and i != j):
            raise ValueError(f"({i!r}, {j!r}) is not an edge of K{self.n}")
        return int(EDGE_ID[self.n, i, j])

    def parse_edge(self, text: str) -> tuple[int | None, str]:
        """Read "i-j", "i j", "(i, j)" or a plain edge id: (edge, "") or (None, why not)."""
        t = str(text).strip()
        if re.fullmatch(r"\d+", t):
            e = int(t)
            return (e, "") if e < self.num_edges else (None, f"(K{self.n} has edges 0..{self.num_edges - 1})")
        pair = re.fullmatch(r"\(?\s*(\d+)\s*(?:-|,|\s)\s*(\d+)\s*\)?", t)
        if pair is None:
            return None, "(write an edge as 'i-j' or an edge id)"
        i, j = int(pair[1]), int(pair[2])
        if not (i < self.n and j < self.n and i != j):
            return None, f"(points are 0..{self.n - 1}, two different ones)"
        return int(EDGE_ID[self.n, i, j]), ""

    def from_colours(self, colours) -> SimState:
        """The position with this colouring (0 none, 1 player 0, 2 player 1), moves replayed in edge order.

        The board must be reachable without a finished game: player 0 has as many edges as
        player 1 or one more, and neither colour has a triangle.
        """
        c = np.asarray(colours)
        if c.shape != (self.num_edges,) or not np.isin(c, (0, 1, 2)).all():
            raise ValueError(f"need {self.num_edges} colours in {{0, 1, 2}}, got {colours!r}")
        first = [e for e in range(self.num_edges) if c[e] == 1]
        second = [e for e in range(self.num_edges) if c[e] == 2]
        if len(first) - len(second) not in (0, 1):
            raise ValueError(f"player 0 must have as many edges as player 1 or one more: {len(first)} vs {len(second)}")
        s = self.new_initial_state()._s
        for ply in range(len(first) + len(second)):
            e = first[ply // 2] if ply % 2 == 0 else second[ply // 2]
            if s[common.OUTCOME] != common.ONGOING or closes_own_triangle(s, e, s[common.TO_MOVE]):
                raise ValueError(f"colouring {c.tolist()} has a triangle in one colour")
            k_push(s, e)
        return SimState(self, s)


class SimState(KernelState):
    """A Sim position; actions are edge ids (``SimGame.edges`` gives their points)."""

    kernels = KERNELS
    observe = staticmethod(k_observation)

    def __init__(self, game: SimGame, array: np.ndarray) -> None:
        super().__init__(game, array)
        self.num_features = 2 * game.num_edges

    @property
    def colours(self) -> np.ndarray:
        """Colour per edge (int8): 0 uncoloured, 1 player 0, 2 player 1."""
        return self._s[HDR : HDR + self.game.num_edges].astype(np.int8)

    @property
    def ply(self) -> int:
        return int(self._s[common.PLY])

    @property
    def last_edge(self) -> int:
        """The edge coloured last, -1 before the first move."""
        return int(self._s[common.LAST])

    @property
    def history(self) -> list[int]:
        """The edges coloured so far, in order."""
        ne = self.game.num_edges
        return self._s[HDR + ne : HDR + ne + self.ply].tolist()

    def losing_triangle(self) -> tuple[int, int, int] | None:
        """The points of the triangle that ended the game, if one did."""
        if self.winner() is None:
            return None
        g = self.game
        i, j = g.edges[self.last_edge]
        colour = self._s[HDR + self.last_edge]
        for k in range(g.n):
            if k not in (i, j) and self._s[HDR + EDGE_ID[g.n, i, k]] == colour == self._s[HDR + EDGE_ID[g.n, j, k]]:
                return tuple(sorted((i, j, k)))  # type: ignore[return-value]
        raise AssertionError("a won game without a triangle")

    def to_text(self) -> str:
        """Adjacency matrix (X player 0, O player 1, . uncoloured) and whose move it is."""
        g = self.game
        marks = ".XO"
        c = self.colours
        rows = ["   " + " ".join(str(j) for j in range(g.n))]
        for i in range(g.n):
            cells = ["-" if i == j else marks[c[EDGE_ID[g.n, i, j]]] for j in range(g.n)]
            rows.append(f"{i}  " + " ".join(cells))
        rows.append("X = player 0, O = player 1, . = uncoloured")
        out = int(self._s[common.OUTCOME])
        if out in (0, 1):
            tri = "-".join(map(str, self.losing_triangle()))
            rows.append(f"{marks[2 - out]} (player {1 - out}) closed triangle {tri}: {marks[out + 1]} (player {out}) wins")
        elif out == common.DRAW:
            rows.append("draw: board full, no triangle in one colour")
        else:
            p = int(self._s[common.TO_MOVE])
            rows.append(f"{marks[p + 1]} (player {p}) to move")
        return "\n".join(rows)

    def action_to_string(self, action: int) -> str:
        i, j = self.game.edges[int(action)]
        return f"{i}-{j}"

    def string_to_action(self, text: str) -> int:
        """Parse "0-1", "0 1" or an edge id; raises ``IllegalActionError`` unless the edge is free."""
        e, why = self.game.parse_edge(text)
        if e is None:
            raise IllegalActionError(text, self.legal_actions(), why)
        if e not in self.legal_actions():
            why = "(the game is over)" if self.is_terminal() else f"(edge {self.action_to_string(e)} is already coloured)"
            raise IllegalActionError(text, self.legal_actions(), why)
        return e


__all__ = ["SimGame", "SimState", "KERNELS", "closes_own_triangle", "MIN_N", "MAX_N"]


@njit(cache=True)
def flat_observation(s, player, out):
    """``State.observation(player)`` of the compact state ``s`` flattened into the float32 vector
    ``out``: what exported networks (models/export.py) and the vector env (envs/vector.py) read."""
    k_observation(s, player, out.reshape(3, s[E_]))
