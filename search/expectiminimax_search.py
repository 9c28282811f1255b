"""Expectiminimax with alpha-beta, Star1 chance-node pruning, a transposition table and
iterative deepening, for two-player games with chance nodes (Trap's landing cell).

Players need not alternate (a Trap turn is a move, then a throw by the same player), so the
search is negamax over the MOVER: every decision node is searched from its mover's point of
view, and a child whose mover differs is negated with its window. A chance node belongs to the
player who was to decide just before it (its values are in that player's view) and averages its
children over the FULL outcome distribution.

Depth counts decisions; chance nodes cost no depth, and a chance node reached with no depth
left is still expanded, so every leaf is a decision node or a finished game and a throw's
value always includes where the trap can land.

Star1 (Ballard 1983): with every value known to lie in ``[-bound, bound]``, the i-th outcome of
a chance node is searched with the window that would let the node's expectation leave
``(alpha, beta)``; once the expectation is certain to fall outside, the node returns that bound.
This is exact: the root value equals plain expectiminimax (the tests hold it to a reference
over the object contract). A win is worth ``bound + MAX_PLY - ply`` (sooner is better) and an
evaluator's values are clamped to ``[-bound, bound]``, which keeps the bounds sound.

The ``moves`` kernel may be a candidate generator narrower than the legal moves (Trap's
``SEARCH_KERNELS`` try only promising throws); ``chance(s, outcomes, probs) -> n`` lists the
outcomes of a chance node (the state's ``kernels.chance`` unless given). The transposition
table and history are search/table.py's, the deepening loop search/deepening.py's, shared with
alpha-beta.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit, types

from tablegym.envs.core import CHANCE, CHANCE_T, DRAW, EVAL_T, ONGOING, RULES_T, STATE_T, KernelState, State
from tablegym.envs.evaluator import Evaluator, check_game, check_root
from tablegym.search.deepening import deepen
from tablegym.search.table import MAX_PLY, NUMBA_TYPES, TT_T, Tables, order_moves, probe, store, store_move, stored_move

MAX_OUTCOMES = 64

_I, _F, _I1, _F1, _I2, _F2 = NUMBA_TYPES
KERNELS_T = types.Tuple((RULES_T, CHANCE_T, EVAL_T, _F1))
"""Numba type of a search's kernels: ``(kernels.rules(moves), chance, evaluator.kernel, evaluator.params)``."""
TABLES_T = types.Tuple((TT_T, _F1, _I2, _F2, _I2, _F2))
"""Numba type of ``SearchTables.arrays``: the transposition table, history, bufs, scores, and
the outcomes and probabilities of chance nodes."""


@dataclass
class ExpectiminimaxResult:
    """One search: the move, its value for the player to move, and the effort."""

    action: int
    value: float
    depth: int
    nodes: int
    seconds: float
    completed: bool = True
    values: dict[int, float] = field(default_factory=dict)
    depths: list[tuple[int, int, float]] = field(default_factory=list)
    """(depth, nodes, seconds) of every completed iteration."""

    @property
    def nodes_per_second(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else float("nan")


@njit(_F(STATE_T, _I, _F, _F, _I, _I, _I, KERNELS_T, TABLES_T, _I1, _F, _I), cache=True)
def _value(s, depth, alpha, beta, ply, root, me, kernels, tables, counters, bound, node_limit):
    """The value of ``s`` for player ``me`` within the window (alpha, beta) (fail-soft).

    Leaves are evaluated for the ``root`` player and negated for the other: asymmetric
    hand-made heuristics (AIS) are searched the way their authors scored them.
    """
    counters[0] += 1
    if counters[0] > node_limit:
        counters[1] = 1
        return 0.0
    rules = kernels[0]  # the tables and evaluator are read only where used: a leaf reads no array
    res = rules[4](s)
    if res != ONGOING:
        if res == DRAW:
            return 0.0
        win = bound + MAX_PLY - ply
        return win if res == me else -win
    mover = rules[3](s)
    if mover == CHANCE:
        push, pop, outs, probs = rules[1], rules[2], tables[4], tables[5]
        n = kernels[1](s, outs[ply], probs[ply])
        lo = -(bound + MAX_PLY)
        hi = bound + MAX_PLY
        total = 0.0
        rest = 1.0
        for i in range(n):
            p = probs[ply, i]
            rest -= p
            a = (alpha - total - hi * rest) / p
            b = (beta - total - lo * rest) / p
            push(s, outs[ply, i])
            v = _value(s, depth, max(a, lo), min(b, hi), ply + 1, root, me, kernels, tables, counters, bound, node_limit)
            pop(s)
            if counters[1]:
                return 0.0
            total += p * v
            if v <= a:
                counters[2] += 1
                return total + hi * max(rest, 0.0)  # the expectation cannot rise above alpha
            if v >= b:
                counters[2] += 1
                return total + lo * max(rest, 0.0)  # nor fall below beta
        return total
    if mover != me:
        counters[0] -= 1  # the same node, seen from its mover
        return -_value(s, depth, -beta, -alpha, ply, root, mover, kernels, tables, counters, bound, node_limit)
    if depth <= 0:
        v = min(max(kernels[2](s, root, kernels[3]), -bound), bound)
        return v if me == root else -v
    moves, push, pop, _, _, key_fn = rules
    tt, history, bufs, scores = tables[:4]
    key = key_fn(s)
    slot, best_move, cut, v = probe(*tt, key, depth, alpha, beta)
    if cut:
        counters[3] += 1
        return v
    buf = bufs[ply]
    n = moves(s, buf)
    order_moves(buf, n, best_move, -1, -1, history, scores[ply])  # no killers: chance nodes break ply parity
    alpha0 = alpha
    best = -np.inf
    for i in range(n):
        m = buf[i]
        push(s, m)
        v = _value(s, depth - 1, alpha, beta, ply + 1, root, me, kernels, tables, counters, bound, node_limit)
        pop(s)
        if counters[1]:
            return 0.0
        if v > best:
            best = v
            best_move = m
            if v > alpha:
                alpha = v
                if alpha >= beta:
                    history[m] += depth * depth
                    break
    store(*tt, slot, key, depth, best, best_move, alpha0, beta)
    return best


@njit(types.Tuple((_I, _F, _I))(STATE_T, _I, KERNELS_T, TABLES_T, _I1, _F, _I, _F1), cache=True, nogil=True)
def root_search(s, depth, kernels, tables, counters, bound, node_limit, root_values):
    """Search the root moves, the previous iteration's best first; ties keep the earlier move;
    returns (best move, its value, number of moves). Public for compiled callers that search
    inside their own loop (Trap's TD self-play); Python callers use ``expectiminimax``.

    ``kernels`` is ``KERNELS_T``, ``tables`` ``SearchTables.arrays``; ``root_values[i]`` gets the
    value of the move generator's i-th move in generation order (exact for the best move, an
    upper bound for the others).
    """
    counters[0] += 1
    moves, push, pop, to_move, _, key_fn = kernels[0]
    tt = tables[0]
    me = to_move(s)
    buf = tables[2][0]
    n = moves(s, buf)
    order = np.arange(n)
    key = key_fn(s)
    slot, first = stored_move(tt[0], tt[4], key)
    for i in range(1, n):
        if buf[i] == first:
            order[0] = i
            order[i] = 0
            break
    lo = -(bound + MAX_PLY)
    alpha = lo - 1.0
    best_move = -1
    for j in range(n):
        i = order[j]
        m = buf[i]
        push(s, m)
        v = _value(s, depth - 1, alpha, bound + MAX_PLY + 1.0, 1, me, me, kernels, tables, counters, bound, node_limit)
        pop(s)
        if counters[1]:
            return best_move, alpha, n
        root_values[i] = v
        if v > alpha:  # strictly: a fail-soft tie is only an upper bound
            alpha = v
            best_move = m
    store_move(tt[0], tt[2], tt[4], slot, key, best_move)  # the root value is not stored as a bound
    return best_move, alpha, n


class SearchTables(Tables):
    """The shared tables (search/table.py) plus the outcomes and probabilities of chance nodes."""

    def __init__(self, num_actions: int, tt_bits: int = 20) -> None:
        super().__init__(num_actions, tt_bits)
        self.outs = np.zeros((MAX_PLY, MAX_OUTCOMES), dtype=np.int64)
        self.probs = np.zeros((MAX_PLY, MAX_OUTCOMES), dtype=np.float64)

    @property
    def arrays(self) -> tuple:
        """The tables as ``root_search`` takes them (``TABLES_T``)."""
        return self.tt, self.history, self.bufs, self.scores, self.outs, self.probs


def expectiminimax(
    state: KernelState,
    evaluator: Evaluator,
    *,
    chance=None,
    moves=None,
    depth: int = 64,
    time_limit: float | None = None,
    node_limit: int | None = None,
    bound: float | None = None,
    tables: SearchTables | None = None,
) -> ExpectiminimaxResult:
    """Search ``state`` by iterative deepening to ``depth`` decisions within the budgets.

    ``chance`` (default: the state's ``chance`` kernel) lists a chance node's outcomes; ``moves``
    (default: the state's ``moves`` kernel)
    generates the moves searched. ``bound`` caps |evaluator value| (default: the evaluator's
    ``bound`` attribute, else 1e5): the tighter it is, the more Star1 prunes. With
    ``time_limit`` the deepest completed iteration's move is returned; the running iteration gets
    a node budget from the measured speed, because compiled code cannot read the clock.
    """
    check_root(state, "expectiminimax", depth)
    if time_limit is None and node_limit is None and depth >= 64:
        raise ValueError("give a depth, a time_limit or a node_limit: the search needs a budget")
    check_game(evaluator, state)
    k = state.kernels
    gen = moves or k.moves
    chance = chance or k.chance
    if chance is None:
        raise ValueError(f"{state.game.spec.name} has no chance kernel; search it with alphabeta")
    bound = float(bound if bound is not None else getattr(evaluator, "bound", 1e5))
    depth = min(depth, MAX_PLY // 2 - 4)  # chance plies come on top of the decisions
    s = state.array
    buf = np.empty(max(state.game.spec.num_actions, MAX_OUTCOMES), dtype=np.int64)
    root_moves = buf[: gen(s, buf)].tolist()
    if not evaluator.compiled:  # a network only Python runs (a CNN): the reference search, no pruning
        return _python_search(state, evaluator, gen, buf, bound, depth, time_limit, node_limit)
    tables = tables or SearchTables(state.game.spec.num_actions)
    kernels = (k.rules(gen), chance, evaluator.kernel, evaluator.params)

    def iterate(d: int, budget: int) -> tuple[bool, int, tuple[int, float, dict[int, float]]]:
        counters = np.zeros(4, dtype=np.int64)
        root_values = np.full(len(root_moves), np.nan)
        best, value, _ = root_search(s, d, kernels, tables.arrays, counters, bound, budget, root_values)
        values = {m: float(v) for m, v in zip(root_moves, root_values) if not np.isnan(v)}
        return not counters[1], int(counters[0]), (int(best), float(value), values)

    run = deepen(iterate, depth=depth, time_limit=time_limit, node_limit=node_limit, rate=5e5)
    if run.found is None:
        return ExpectiminimaxResult(root_moves[0], 0.0, 0, run.nodes, run.seconds, completed=False)
    move, value, values = run.found
    return ExpectiminimaxResult(move, value, run.depth, run.nodes, run.seconds, True, values, run.depths)


class _OutOfNodes(Exception):
    """An iteration of the Python search ran past its node budget."""


def _python_search(
    state: KernelState,
    evaluator: Evaluator,
    gen,
    buf: np.ndarray,
    bound: float,
    depth: int,
    time_limit: float | None,
    node_limit: int | None,
) -> ExpectiminimaxResult:
    """``reference_expectiminimax`` under the budgets, for an evaluator without a kernel: each
    root move's value, the moves ``gen`` (the game's or a move filter's kernel) writes to ``buf``."""

    def moves(node: KernelState) -> list[int]:
        return buf[: gen(node.array, buf)].tolist()

    me = state.current_player()

    def iterate(d: int, budget: int) -> tuple[bool, int, tuple[int, float, dict[int, float]] | None]:
        nodes = [1]
        values: dict[int, float] = {}
        try:
            for m in moves(state):
                values[m] = reference_expectiminimax(
                    state.child(m),
                    evaluator,
                    d - 1,
                    bound=bound,
                    ply=1,
                    me=me,
                    root=me,
                    nodes=nodes,
                    node_limit=budget,
                    moves=moves,
                )
        except _OutOfNodes:
            return False, nodes[0], None
        best = max(values, key=values.__getitem__)
        return True, nodes[0], (best, values[best], values)

    run = deepen(iterate, depth=depth, time_limit=time_limit, node_limit=node_limit, rate=2e3)
    if run.found is None:
        return ExpectiminimaxResult(moves(state)[0], 0.0, 0, run.nodes, run.seconds, completed=False)
    move, value, values = run.found
    return ExpectiminimaxResult(move, value, run.depth, run.nodes, run.seconds, True, values, run.depths)


def reference_expectiminimax(
    state: State,
    evaluator: Evaluator,
    depth: int,
    *,
    bound: float = 1e5,
    ply: int = 0,
    me: int | None = None,
    root: int | None = None,
    nodes: list[int] | None = None,
    node_limit: int | None = None,
    moves=None,
) -> float:
    """Plain expectiminimax over the object contract, no pruning: the tests' ground truth, and
    the search of an evaluator that only Python runs.

    Same conventions as the compiled search: depth counts decisions, chance nodes are always
    expanded, wins are worth ``bound + MAX_PLY - ply``, leaf values are clamped to ``bound``.
    ``nodes[0]``, if given, counts the positions visited (the benchmarks' Python baseline);
    past ``node_limit`` of them the search stops (``_OutOfNodes``). ``moves(state)`` lists the
    moves searched at a decision (default: ``legal_actions``).
    """
    if nodes is not None:
        nodes[0] += 1
        if node_limit is not None and nodes[0] > node_limit:
            raise _OutOfNodes
    if me is None:
        me = root = state.current_player()
    if root is None:
        root = me
    if state.is_terminal():
        r = state.returns()[me]
        return 0.0 if r == 0 else (1 if r > 0 else -1) * (bound + MAX_PLY - ply)
    player = state.current_player()

    def value(child: State, d: int, mover: int) -> float:
        return reference_expectiminimax(
            child, evaluator, d, bound=bound, ply=ply + 1, me=mover, root=root, nodes=nodes, node_limit=node_limit, moves=moves
        )

    if player == CHANCE:
        return sum(p * value(state.child(o), depth, me) for o, p in state.chance_outcomes())
    if depth <= 0:
        v = min(max(evaluator(state, root), -bound), bound)
        return v if me == root else -v
    values = [value(state.child(a), depth - 1, player) for a in (moves(state) if moves is not None else state.legal_actions())]
    best = max(values)
    return best if player == me else -best
