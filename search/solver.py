"""Exact solver for two-player win/draw/loss games over the ``Kernels`` contract (envs/core.py).

Negamax with values +1 (win), 0 (draw), -1 (loss) for the player to move, run as one numba
kernel over the game's compact state. Each node first tries every move once and looks only at
the outcome: a move that wins at once ends the node, moves that lose or draw at once are
settled without computing a key or entering the child (in Sim: a move closing an own triangle
never reaches the, costly, canonical key). The remaining moves are searched in the game's
order and the node stops at the first winning move. No alpha-beta bounds are used beyond
that, so every value stored is EXACT and a table can be reused across solves.

The memo is an open-addressing hash table of numpy arrays keyed by ``key_fn(s)``, by default
the game's own ``Kernels.key``; pass a canonical key (Sim: ``k_canonical``) so that isomorphic
positions share one entry. The table grows (rehashing what it holds) when 3/4 full.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit, types

from tablegym.envs.core import DRAW, INT_OF_STATE_T, MOVES_T, ONGOING, POP_T, PUSH_T, STATE_T, KernelState

EMPTY = np.iinfo(np.int64).min
"""Marks a free table slot (a key of exactly this value cannot be stored)."""
NODES, STORED, FULL, BEST = range(4)
"""Slots of the ``counters`` array: nodes entered, entries stored, table-full flag, root's best move."""
ABORTED = -2
"""``solve_kernel``'s return when the table filled up (nothing stored is lost; grow and rerun)."""
_MULT = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def _slot(key, mask):
    h = np.uint64(key) * _MULT
    return np.int64(h >> np.uint64(20)) & mask


@njit(cache=True)
def table_get(table_keys, table_vals, key):
    """The stored value of ``key``, or ``ABORTED`` when it is not in the table."""
    mask = table_keys.shape[0] - 1
    i = _slot(key, mask)
    while True:
        k = table_keys[i]
        if k == key:
            return np.int64(table_vals[i])
        if k == EMPTY:
            return np.int64(ABORTED)
        i = (i + 1) & mask


@njit(cache=True)
def table_put(table_keys, table_vals, key, value, counters):
    mask = table_keys.shape[0] - 1
    i = _slot(key, mask)
    while True:
        k = table_keys[i]
        if k == EMPTY:
            table_keys[i] = key
            table_vals[i] = value
            counters[STORED] += 1
            if 4 * counters[STORED] >= 3 * table_keys.shape[0]:
                counters[FULL] = 1
            return
        if k == key:
            table_vals[i] = value
            return
        i = (i + 1) & mask


@njit(cache=True)
def rehash(old_keys, old_vals, new_keys, new_vals, counters):
    """Copy every entry of the old table into the (larger, empty) new one."""
    counters[STORED] = 0
    counters[FULL] = 0
    for i in range(old_keys.shape[0]):
        if old_keys[i] != EMPTY:
            table_put(new_keys, new_vals, old_keys[i], old_vals[i], counters)


@njit(cache=True)
def _terminal_value(o, p):
    """Value of a finished game with outcome ``o`` for player ``p``."""
    if o == DRAW:
        return 0
    return 1 if o == p else -1


# One explicit signature over first-class function types (envs/core.py explains why): compiled
# once, cached on disk, and shared by every game and key function.
_I = types.int64
_SOLVE_SIG = _I(STATE_T, MOVES_T, PUSH_T, POP_T, INT_OF_STATE_T, INT_OF_STATE_T, INT_OF_STATE_T,
                types.int64[::1], types.int8[::1], types.int64[::1], _I, _I, types.boolean)


@njit(_SOLVE_SIG, cache=True)
def solve_kernel(s, moves, push, pop, to_move, outcome, key_fn, table_keys, table_vals, counters,
                 max_depth, num_actions, root_lookup):
    """Exact value of ``s`` (not over) for the player to move; ``counters[BEST]`` gets the best move.

    Mutates ``s`` during the search and restores it, unless the table fills (returns ``ABORTED``).
    With ``root_lookup`` false the root is searched even when the table knows it, so that its
    best move is found.
    """
    mv = np.empty((max_depth + 1, num_actions), dtype=np.int64)
    nmv = np.zeros(max_depth + 1, dtype=np.int64)
    idx = np.zeros(max_depth + 1, dtype=np.int64)
    best = np.zeros(max_depth + 1, dtype=np.int64)
    bestmv = np.zeros(max_depth + 1, dtype=np.int64)
    keys = np.zeros(max_depth + 1, dtype=np.int64)
    player = np.zeros(max_depth + 1, dtype=np.int64)
    d = 0
    ret = 0
    entering = True
    while True:
        if entering:
            counters[NODES] += 1
            k = key_fn(s)
            keys[d] = k
            v = table_get(table_keys, table_vals, k) if (d > 0 or root_lookup) else ABORTED
            entering = False
            if v != ABORTED:
                ret = v
                bestmv[d] = -1
            else:
                p = to_move(s)
                player[d] = p
                n = moves(s, mv[d])
                b = -2
                bm = -1
                m = 0
                for i in range(n):  # settle the moves that end the game at once
                    a = mv[d, i]
                    push(s, a)
                    o = outcome(s)
                    pop(s)
                    if o == ONGOING:
                        mv[d, m] = a
                        m += 1
                    else:
                        val = _terminal_value(o, p)
                        if val > b:
                            b = val
                            bm = a
                            if b == 1:
                                break
                best[d] = b
                bestmv[d] = bm
                nmv[d] = m
                if b == 1 or m == 0:
                    table_put(table_keys, table_vals, k, b, counters)
                    ret = b
                else:
                    idx[d] = 0
                    push(s, mv[d, 0])
                    d += 1
                    entering = True
            continue
        # a value ``ret`` for the node at depth d, from its mover's point of view
        if d == 0 or counters[FULL]:
            break
        child_player = to_move(s)
        pop(s)
        d -= 1
        val = ret if child_player == player[d] else -ret
        if val > best[d]:
            best[d] = val
            bestmv[d] = mv[d, idx[d]]
        idx[d] += 1
        if best[d] == 1 or idx[d] == nmv[d]:
            table_put(table_keys, table_vals, keys[d], best[d], counters)
            ret = best[d]
        else:
            push(s, mv[d, idx[d]])
            d += 1
            entering = True
    if counters[FULL] and d > 0:
        return ABORTED
    counters[BEST] = bestmv[0]
    return ret


@dataclass(frozen=True)
class SolveResult:
    """An exact game value and how much work it took."""

    value: int
    """+1 win, 0 draw, -1 loss for the player to move at the solved position."""
    best_action: int
    """A move reaching ``value`` (the first winning one found); -1 if the game is over."""
    positions_stored: int
    """Entries in the memo table after the solve."""
    nodes: int
    """Positions entered (each costs one ``key_fn`` call)."""
    seconds: float


class Solver:
    """An exact solver with a memo table that persists across calls (values stored are exact)."""

    def __init__(self, kernels: Any, *, key_fn: Any = None, table_bits: int = 16) -> None:
        self.kernels = kernels
        self.key_fn = kernels.key if key_fn is None else key_fn
        self.table_keys = np.full(1 << table_bits, EMPTY, dtype=np.int64)
        self.table_vals = np.zeros(1 << table_bits, dtype=np.int8)
        self.counters = np.zeros(4, dtype=np.int64)

    @property
    def positions_stored(self) -> int:
        return int(self.counters[STORED])

    def items(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, values) of every stored position."""
        used = self.table_keys != EMPTY
        return self.table_keys[used].copy(), self.table_vals[used].astype(np.int64)

    def _grow(self) -> None:
        size = 2 * self.table_keys.shape[0]
        keys = np.full(size, EMPTY, dtype=np.int64)
        vals = np.zeros(size, dtype=np.int8)
        rehash(self.table_keys, self.table_vals, keys, vals, self.counters)
        self.table_keys, self.table_vals = keys, vals

    def _run(self, state: KernelState, root_lookup: bool) -> tuple[int, int, int]:
        k = self.kernels
        spec = state.game.spec
        nodes = 0
        while True:
            if self.counters[FULL]:
                self._grow()
            self.counters[NODES] = 0
            s = state.array
            v = solve_kernel(s, k.moves, k.push, k.pop, k.to_move, k.outcome, self.key_fn,
                             self.table_keys, self.table_vals, self.counters,
                             spec.max_game_length, spec.num_actions, root_lookup)
            nodes += int(self.counters[NODES])
            if v != ABORTED:
                return int(v), int(self.counters[BEST]), nodes

    def solve(self, state: KernelState) -> SolveResult:
        """The exact value of ``state`` for its player to move, and a move that reaches it."""
        t0 = time.perf_counter()
        if state.is_terminal():
            o = int(state.kernels.outcome(state._s))
            v = 0 if o == DRAW else (1 if o == int(state.kernels.to_move(state._s)) else -1)
            return SolveResult(v, -1, self.positions_stored, 0, time.perf_counter() - t0)
        v, a, nodes = self._run(state, root_lookup=False)
        return SolveResult(v, a, self.positions_stored, nodes, time.perf_counter() - t0)

    def value(self, state: KernelState, player: int | None = None) -> int:
        """The exact value of ``state`` for ``player`` (default: the player to move)."""
        mover = int(state.kernels.to_move(state._s))
        if state.is_terminal():
            o = int(state.kernels.outcome(state._s))
            v = 0 if o == DRAW else (1 if o == mover else -1)
        else:
            v = self._run(state, root_lookup=True)[0]
        return v if player is None or player == mover else -v

    def action_values(self, state: KernelState, player: int | None = None) -> dict[int, int]:
        """The exact value of each legal action, for ``player`` (default: the player to move)."""
        p = int(state.kernels.to_move(state._s)) if player is None else player
        return {a: self.value(state._unchecked_child(a), p) for a in state.legal_actions()}


def solve(state: KernelState, *, key_fn: Any = None, table_bits: int = 16) -> SolveResult:
    """Solve ``state`` exactly with a fresh table (``key_fn`` defaults to ``kernels.key``)."""
    return Solver(state.kernels, key_fn=key_fn, table_bits=table_bits).solve(state)


def solved_values(state: KernelState, *, key_fn: Any = None, player: int | None = None) -> dict[int, int]:
    """Exact value of every legal action of ``state`` for ``player`` (default: the player to move)."""
    return Solver(state.kernels, key_fn=key_fn).action_values(state, player)
