"""Negamax alpha-beta with iterative deepening, a transposition table and move ordering.

One algorithm, two executions:

* ``alphabeta(state, evaluator, ...)`` runs the compiled kernel below when the state carries
  ``Kernels`` and the evaluator carries a kernel (millions of nodes per second), and a plain
  Python negamax over the object contract otherwise (any game, any Python evaluator).
* Both visit the same tree and return the same move and value: the Python one is the
  readable reference, and the tests hold the kernel to it.

Values are seen from the player to move (negamax, for games where the players alternate);
the evaluator is asked for the ROOT player's view and the sign flipped at odd plies, so asymmetric hand-made heuristics (the original
Trilobite AI scores every leaf for itself) are searched exactly as their authors did.

Ties at the root go to the first maximal move in ``legal_actions()`` order (the Trilobite
original's rule): the root is searched in that order and a move replaces the best one only
when strictly better. Inside the tree the order is transposition-table move, two killers per
ply, then the history heuristic. A transposition-table entry only stands in for a subtree of
the SAME remaining depth, so the value equals plain depth-limited minimax exactly. The table
and history are search/table.py's, the deepening loop search/deepening.py's, shared with
expectiminimax.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
from numba import njit, types

from tablegym.envs.core import EVAL_T, INT_OF_STATE_T, MOVES_T, ONGOING, POP_T, PUSH_T, RULES_T, STATE_T, KernelState, State
from tablegym.envs.evaluator import Evaluator, check_game
from tablegym.search.deepening import deepen
from tablegym.search.table import EXACT, LOWER, MAX_PLY, NUMBA_TYPES, TT_T, TT_TYPES, UPPER, Tables, order_moves, probe, store

INF = 1e18


@dataclass
class SearchResult:
    """The outcome of one search: the move, its value for the player to move, and the effort."""

    action: int
    value: float
    pv: list[int]
    depth: int
    nodes: int
    seconds: float
    completed: bool = True
    values: dict[int, float] = field(default_factory=dict)

    @property
    def nodes_per_second(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else float("nan")


# --------------------------------------------------------------------------------------------
# Compiled kernel
# --------------------------------------------------------------------------------------------


_I, _F, _I1, _F1, _I2, _F2 = NUMBA_TYPES
_KERNEL_ARGS = (MOVES_T, PUSH_T, POP_T, INT_OF_STATE_T, INT_OF_STATE_T, INT_OF_STATE_T, EVAL_T, _F1)
KERNELS_T = types.Tuple((RULES_T, EVAL_T, _F1))
"""Numba type of a search's kernels: ``(kernels.rules(), evaluator.kernel, evaluator.params)``."""
TABLES_T = types.Tuple((TT_T, _I2, _F1, _I2, _F2, _I2, _I1))
"""Numba type of ``AlphaBetaTables.arrays``: the transposition table, killers, history, bufs,
scores, pv and pv_len, what a compiled caller such as self-play (training/selfplay.py) passes on."""
TABLE_TYPES = (*TT_TYPES, _I2, _F1, _I2, _F2, _I2, _I1, _I1, _I)
"""Numba types of ``root_search``'s table arguments one by one, in order (the transposition
table's arrays, then killers, history, bufs, scores, pv, pv_len, then counters and node limit)."""


@njit(_F(STATE_T, _I, _F, _F, _I, _I, KERNELS_T, TABLES_T, _I1, _I), cache=True)
def _negamax(s, depth, alpha, beta, ply, root, kernels, tables, counters, node_limit):
    counters[0] += 1
    pv_len = tables[6]
    pv_len[ply] = ply
    if counters[0] > node_limit:
        counters[1] = 1
        return 0.0
    rules = kernels[0]  # the tables and evaluator are read only where used: a leaf reads no array
    if depth == 0 or rules[4](s) != ONGOING:
        v = kernels[1](s, root, kernels[2])
        return v if ply % 2 == 0 else -v  # players alternate: even plies are the root player's
    moves, push, pop, _, _, key_fn = rules
    tt, killers, history, bufs, scores, pv, _ = tables
    key = key_fn(s)
    slot, best_move, cut, v = probe(*tt, key, depth, alpha, beta)
    if cut:
        counters[2] += 1
        if best_move >= 0:
            pv[ply, ply] = best_move
            pv_len[ply] = ply + 1
        return v
    buf = bufs[ply]
    n = moves(s, buf)
    order_moves(buf, n, best_move, killers[ply, 0], killers[ply, 1], history, scores[ply])
    alpha0 = alpha
    best = -INF
    for i in range(n):
        m = buf[i]
        push(s, m)
        v = -_negamax(s, depth - 1, -beta, -alpha, ply + 1, root, kernels, tables, counters, node_limit)
        pop(s)
        if counters[1]:
            return 0.0
        if v > best:
            best = v
            best_move = m
            if v > alpha:
                alpha = v
                pv[ply, ply] = m
                for j in range(ply + 1, pv_len[ply + 1]):
                    pv[ply, j] = pv[ply + 1, j]
                pv_len[ply] = max(pv_len[ply + 1], ply + 1)
                if alpha >= beta:
                    if killers[ply, 0] != m:
                        killers[ply, 1] = killers[ply, 0]
                        killers[ply, 0] = m
                    history[m] += depth * depth
                    break
    store(*tt, slot, key, depth, best, best_move, alpha0, beta)
    return best


@njit(types.Tuple((_I, _F, _I))(STATE_T, _I, KERNELS_T, TABLES_T, _I1, _I, _F1), cache=True, nogil=True)
def search_root(s, depth, kernels, tables, counters, node_limit, root_values):
    """Search the root in legal order, replacing the best move only on a strictly better value;
    returns (best move, its value, number of legal moves). Public for compiled callers that
    search inside their own loop (self-play); Python callers use ``alphabeta``.

    ``kernels`` is ``(kernels.rules(), evaluator.kernel, evaluator.params)`` and ``tables``
    ``AlphaBetaTables.arrays``; ``root_values[i]`` gets the value of the i-th legal move (exact
    for the best move, an upper bound for the others).
    """
    counters[0] += 1
    moves, push, pop, to_move = kernels[0][:4]
    pv, pv_len = tables[5:]
    root = to_move(s)
    buf = tables[3][0]
    n = moves(s, buf)
    alpha = -INF
    best_move = -1
    for i in range(n):
        m = buf[i]
        push(s, m)
        v = -_negamax(s, depth - 1, -INF, -alpha, 1, root, kernels, tables, counters, node_limit)
        pop(s)
        if counters[1]:
            return best_move, alpha, n
        root_values[i] = v
        if v > alpha:
            alpha = v
            best_move = m
            pv[0, 0] = m
            for j in range(1, pv_len[1]):
                pv[0, j] = pv[1, j]
            pv_len[0] = max(pv_len[1], 1)
    return best_move, alpha, n


@njit(types.Tuple((_I, _F, _I))(STATE_T, _I, *_KERNEL_ARGS, *TABLE_TYPES, _F1), cache=True, nogil=True)
def root_search(
    s,
    depth,
    moves,
    push,
    pop,
    to_move,
    outcome,
    key_fn,
    eval_fn,
    params,
    tt_key,
    tt_val,
    tt_depth,
    tt_flag,
    tt_move,
    killers,
    history,
    bufs,
    scores,
    pv,
    pv_len,
    counters,
    node_limit,
    root_values,
):
    """``search_root`` with the kernels and the tables one by one, the form a call from Python
    converts fastest (a tuple of kernels costs some 0.6 ms more to convert)."""
    kernels = ((moves, push, pop, to_move, outcome, key_fn), eval_fn, params)
    tables = ((tt_key, tt_val, tt_depth, tt_flag, tt_move), killers, history, bufs, scores, pv, pv_len)
    return search_root(s, depth, kernels, tables, counters, node_limit, root_values)


class AlphaBetaTables(Tables):
    """The shared tables (search/table.py) plus killer moves and principal variations."""

    def __init__(self, num_actions: int, tt_bits: int = 20) -> None:
        super().__init__(num_actions, tt_bits)
        self.killers = np.full((MAX_PLY, 2), -1, dtype=np.int64)
        self.pv = np.zeros((MAX_PLY, MAX_PLY), dtype=np.int64)
        self.pv_len = np.zeros(MAX_PLY, dtype=np.int64)

    @property
    def arrays(self) -> tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The tables as ``search_root`` takes them (``TABLES_T``)."""
        return self.tt, self.killers, self.history, self.bufs, self.scores, self.pv, self.pv_len


def _compiled_iteration(
    state: KernelState, evaluator: Evaluator, tables: AlphaBetaTables, depth: int, node_limit: int
) -> tuple[bool, int, tuple]:
    """One iteration of the kernel: (completed, nodes, (move, value, pv, values by move))."""
    counters = np.zeros(3, dtype=np.int64)
    root_values = np.full(state.game.spec.num_actions, np.nan)
    kernels = (*state.kernels.rules(), evaluator.kernel, evaluator.params)
    best, value, _ = root_search(state.array, depth, *kernels, *tables.tt, *tables.arrays[1:], counters, node_limit, root_values)
    pv = tables.pv[0, : tables.pv_len[0]].tolist()
    values = {a: float(v) for a, v in zip(state.legal_actions(), root_values) if not np.isnan(v)}
    return not counters[1], int(counters[0]), (int(best), float(value), pv, values)


# --------------------------------------------------------------------------------------------
# Python reference over the object contract
# --------------------------------------------------------------------------------------------


class _PySearch:
    """The kernel's algorithm over ``State`` objects, for games or evaluators without kernels."""

    def __init__(self, evaluator: Evaluator, root: int, num_actions: int, node_limit: int) -> None:
        self.evaluator = evaluator
        self.root = root
        self.tt: dict[int, tuple[float, int, int, int]] = {}
        self.killers = [[-1, -1] for _ in range(MAX_PLY)]
        self.history = np.zeros(num_actions)
        self.nodes = 0
        self.node_limit = node_limit
        self.aborted = False

    def leaf(self, state: State, ply: int) -> float:
        v = self.evaluator(state, self.root)
        return v if ply % 2 == 0 else -v  # players alternate: even plies are the root player's

    def negamax(self, state: State, depth: int, alpha: float, beta: float, ply: int) -> tuple[float, list[int]]:
        self.nodes += 1
        if self.nodes > self.node_limit:
            self.aborted = True
            return 0.0, []
        if depth == 0 or state.is_terminal():
            return self.leaf(state, ply), []
        key = state.key()
        entry = self.tt.get(key)
        tt_move = -1
        if entry is not None:
            v, d, flag, tt_move = entry
            if d == depth and (flag == EXACT or (flag == LOWER and v >= beta) or (flag == UPPER and v <= alpha)):
                return v, ([tt_move] if tt_move >= 0 else [])
        k1, k2 = self.killers[ply]
        rank = {tt_move: 4e18, k1: 3e18, k2: 2e18}
        legal = state.legal_actions()
        order = sorted(legal, key=lambda m: -rank.get(m, self.history[m]))
        alpha0, best, best_move, best_pv = alpha, -INF, -1, []
        for m in order:
            v, child_pv = self.negamax(state.child(m), depth - 1, -beta, -alpha, ply + 1)
            v = -v
            if self.aborted:
                return 0.0, []
            if v > best:
                best, best_move = v, m
                if v > alpha:
                    alpha, best_pv = v, [m] + child_pv
                    if alpha >= beta:
                        if self.killers[ply][0] != m:
                            self.killers[ply] = [m, self.killers[ply][0]]
                        self.history[m] += depth * depth
                        break
        flag = UPPER if best <= alpha0 else (LOWER if best >= beta else EXACT)
        self.tt[key] = (best, depth, flag, best_move)
        return best, best_pv

    def root_search(self, state: State, depth: int):
        self.nodes += 1
        alpha, best_move, best_pv, values = -INF, -1, [], {}
        for m in state.legal_actions():
            v, child_pv = self.negamax(state.child(m), depth - 1, -INF, -alpha, 1)
            if self.aborted:
                break
            values[m] = -v
            if -v > alpha:
                alpha, best_move, best_pv = -v, m, [m] + child_pv
        return best_move, alpha, best_pv, values

    def iteration(self, state: State, depth: int, node_limit: int) -> tuple[bool, int, tuple]:
        """One iteration: (completed, nodes, (move, value, pv, values by move)), as the kernel's."""
        self.nodes, self.node_limit, self.aborted = 0, node_limit, False
        found = self.root_search(state, depth)
        return not self.aborted, self.nodes, found


# --------------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------------


def alphabeta(
    state: State,
    evaluator: Evaluator,
    *,
    depth: int = 64,
    time_limit: float | None = None,
    node_limit: int | None = None,
    tt_bits: int = 20,
    compiled: bool | None = None,
) -> SearchResult:
    """Search ``state`` to ``depth`` plies (iterative deepening) within the optional budgets.

    With ``time_limit`` (seconds) the deepest COMPLETED iteration's move is returned; the
    running iteration gets a node budget estimated from the measured speed, because compiled
    code cannot read the clock. ``compiled=None`` picks the kernel whenever it can.
    """
    if state.is_terminal():
        raise ValueError("cannot search a finished game")
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth!r}")
    check_game(evaluator, state)
    if time_limit is None and depth >= 64 and node_limit is None:
        raise ValueError("give a depth, a time_limit or a node_limit: the search needs a budget")
    kernel_root = state if isinstance(state, KernelState) and evaluator.compiled else None
    if compiled and kernel_root is None:
        raise ValueError(f"no compiled path for {type(state).__name__} with evaluator {evaluator.name!r}")
    if compiled is False:
        kernel_root = None
    depth = min(depth, MAX_PLY - 2, state.game.spec.max_game_length)
    num_actions = state.game.spec.num_actions
    if kernel_root is not None:
        tables = AlphaBetaTables(num_actions, tt_bits=tt_bits)
        iterate = functools.partial(_compiled_iteration, kernel_root, evaluator, tables)
    else:
        iterate = functools.partial(_PySearch(evaluator, state.current_player(), num_actions, 0).iteration, state)
    rate = 2e6 if kernel_root is not None else 2e4  # nodes/s guess until the first iteration measures it
    run = deepen(iterate, depth=depth, time_limit=time_limit, node_limit=node_limit, rate=rate)
    if run.found is None:
        legal = state.legal_actions()
        return SearchResult(legal[0], 0.0, [legal[0]], 0, run.nodes, run.seconds, completed=False)
    move, value, pv, values = run.found
    return SearchResult(move, value, pv, run.depth, run.nodes, run.seconds, True, values)
