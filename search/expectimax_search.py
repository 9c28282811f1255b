"""Expectimax over the rules-core contract: max nodes for the player, chance nodes averaged.

Game independent: any State with ``chance_outcomes()`` works, and the result is the exact
expectation of the evaluator under the game's own chance model. Depth is counted in player
moves; the chance nodes after the last move are still expanded, so a leaf is always a player
node (or a finished game). Options:

* ``prob_cutoff``: skip chance branches whose probability, multiplied along the path, falls
  below it (the kept branches are renormalised): a cheaper, approximate search;
* ``transpositions``: remember (position key, depth) values within one search (Python path).

On the Python path an evaluator with a ``batch(states, player)`` method (TorchEvaluator) values
all the leaves below a chance node after the last move in one call (one forward pass), through
nested chance nodes (Threes: the new card's row, then the next hint).

With a ``KernelState`` whose kernels have a ``chance`` kernel and a compiled evaluator (a
hand-made kernel, the game's network or an exported one, tablegym.models.export), the search runs
compiled over the game's kernels (``compiled=None`` picks it whenever it can): the same tree, the
same sums in the same order, so the same values as the Python path, which is its reference in
the tests. Threes' Threesus reproduction (envs/threes/expectimax.py) keeps its own board search
with Threesus's approximate chance models.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
from numba import njit, types

from tablegym.envs.core import CHANCE, CHANCE_T, EVAL_T, ONGOING, RULES_T, STATE_T, KernelState, State
from tablegym.envs.evaluator import Evaluator, check_game, check_root

MAX_PLY = 256
"""Decisions plus chance nodes along one path of a compiled search."""

ChanceBranch: TypeAlias = "tuple[float, State, list[ChanceBranch] | None]"
"""(probability, child, the chance nodes below the child or None at a leaf) in a chance tree."""


@dataclass
class ExpectimaxResult:
    action: int
    value: float
    values: dict[int, float]
    nodes: int
    seconds: float


class _Search:
    def __init__(self, evaluator: Evaluator, player: int, prob_cutoff: float, transpositions: bool) -> None:
        self.evaluator = evaluator
        self.player = player
        self.prob_cutoff = prob_cutoff
        self.table: dict[tuple[int, int], float] | None = {} if transpositions else None
        self.nodes = 0
        self.batch = getattr(evaluator, "batch", None)
        """``batch(states, player) -> values`` of an evaluator that values many leaves at once
        (TorchEvaluator: one forward pass per chance layer instead of one per leaf)."""

    def value(self, state: State, depth: int, reach: float) -> float:
        self.nodes += 1
        if state.is_terminal() or (depth == 0 and state.current_player() != CHANCE):
            return self.evaluator(state, self.player)
        key = (state.key(), depth)
        if self.table is not None and key in self.table:
            return self.table[key]
        if state.current_player() == CHANCE and depth == 0 and self.batch is not None:
            leaves: list[State] = []
            tree = self._chance_tree(state, reach, leaves)  # every leaf below: one call (one forward pass)
            v = self._expectation(state, tree, iter(self.batch(leaves, self.player) if leaves else []))
        elif state.current_player() == CHANCE:
            total = weight = 0.0
            for outcome, p in state.chance_outcomes():
                if reach * p < self.prob_cutoff:
                    continue
                total += p * self.value(state.child(outcome), depth, reach * p)
                weight += p
            v = total / weight if weight > 0 else self.evaluator(state, self.player)
        else:
            v = max(self.value(state.child(a), depth - 1, reach) for a in state.legal_actions())
        if self.table is not None:
            self.table[key] = v
        return v

    def _chance_tree(self, state: State, reach: float, leaves: list[State]) -> list[ChanceBranch]:
        """The chance nodes below ``state`` down to the leaves (player nodes, finished games), as
        (probability, child, subtree or None) triples; the leaves are appended to ``leaves``."""
        tree: list[ChanceBranch] = []
        for outcome, p in state.chance_outcomes():
            if reach * p < self.prob_cutoff:
                continue
            child = state.child(outcome)
            self.nodes += 1
            if not child.is_terminal() and child.current_player() == CHANCE:
                tree.append((p, child, self._chance_tree(child, reach * p, leaves)))
            else:
                leaves.append(child)
                tree.append((p, child, None))
        return tree

    def _expectation(self, state: State, tree: list[ChanceBranch], values: Iterator[float]) -> float:
        """The value of chance node ``state`` from its tree and its leaves' values (in order),
        summed as ``value`` sums them."""
        total = weight = 0.0
        for p, child, below in tree:
            total += p * (next(values) if below is None else self._expectation(child, below, values))
            weight += p
        return total / weight if weight > 0 else self.evaluator(state, self.player)


_I, _F = types.int64, types.float64


@njit(cache=True)
def _child(s, action, ply, push, stack, undo):
    """``s`` after ``action``: ``s`` itself (to be popped) or, without undo, a copy one row down."""
    if undo:
        push(s, action)
        return s
    c = stack[ply + 1]
    c[:] = s
    push(c, action)
    return c


_SCRATCH_T = types.Tuple((types.int64[:, ::1], types.float64[:, ::1], types.int64[:, ::1], _I))
KERNELS_T = types.Tuple((RULES_T, CHANCE_T, EVAL_T, types.float64[::1]))
"""Numba type of the search's kernels: ``(kernels.rules(), kernels.chance, evaluator.kernel,
evaluator.params)``."""


@njit(_F(STATE_T, _I, _F, _I, _I, KERNELS_T, _SCRATCH_T, types.int64[::1], _F), cache=True, nogil=True)
def _value(s, depth, reach, ply, me, kernels, scratch, counters, cutoff):
    """The expected value of ``s`` for ``me``, ``depth`` player moves deep (``_Search.value``
    compiled). ``scratch`` is (bufs, probs, stack, undo): without ``undo`` each child is a copy
    of ``s`` in ``stack[ply + 1]``. ``counters``: [0] nodes, [1] set when a path outgrew the
    scratch rows."""
    counters[0] += 1
    (moves, push, pop, to_move, outcome, _), chance, eval_fn, params = kernels
    bufs, probs, stack, undo = scratch
    if outcome(s) != ONGOING:
        return eval_fn(s, me, params)
    mover = to_move(s)
    if depth == 0 and mover != CHANCE:
        return eval_fn(s, me, params)
    if ply + 1 >= bufs.shape[0]:
        counters[1] = 1
        return eval_fn(s, me, params)
    if mover == CHANCE:
        n = chance(s, bufs[ply], probs[ply])
        total = 0.0
        weight = 0.0
        for i in range(n):
            p = probs[ply, i]
            if reach * p < cutoff:
                continue
            c = _child(s, bufs[ply, i], ply, push, stack, undo)
            v = _value(c, depth, reach * p, ply + 1, me, kernels, scratch, counters, cutoff)
            if undo:
                pop(s)
            total += p * v
            weight += p
        return total / weight if weight > 0 else eval_fn(s, me, params)
    n = moves(s, bufs[ply])
    best = -np.inf
    for i in range(n):
        c = _child(s, bufs[ply, i], ply, push, stack, undo)
        v = _value(c, depth - 1, reach, ply + 1, me, kernels, scratch, counters, cutoff)
        if undo:
            pop(s)
        if v > best:
            best = v
    return best


@njit(types.none(STATE_T, types.int64[::1], types.float64[::1], _I, KERNELS_T, _SCRATCH_T, types.int64[::1], _F), cache=True)
def _root_values(s, legal, values, depth, kernels, scratch, counters, cutoff):
    """``values[i]``: the value of ``legal[i]`` for the player to move at ``s``, one call for the
    whole root (a call from Python converts the kernels once)."""
    rules = kernels[0]
    push, pop, me = rules[1], rules[2], rules[3](s)
    stack, undo = scratch[2:]
    for i in range(legal.shape[0]):
        c = _child(s, legal[i], 0, push, stack, undo)
        values[i] = _value(c, depth - 1, 1.0, 1, me, kernels, scratch, counters, cutoff)
        if undo:
            pop(s)


def _compiled(
    state: KernelState, evaluator: Evaluator, depth: int, prob_cutoff: float, start: float, rows: int = 0
) -> ExpectimaxResult:
    k = state.kernels
    spec = state.game.spec
    width = max(spec.num_actions, spec.max_chance_outcomes, 1)
    rows = rows or min(MAX_PLY, 4 * depth + 8)  # room for 3 chance nodes a move; a longer path retries with MAX_PLY
    bufs = np.empty((rows, width), dtype=np.int64)
    probs = np.empty((rows, width))
    counters = np.zeros(2, dtype=np.int64)
    s = state.array
    stack = np.empty((rows if not k.undo else 1, len(s)), dtype=np.int64)
    legal = state.legal_actions()
    found = np.empty(len(legal))
    kernels = (k.rules(), k.chance, evaluator.kernel, evaluator.params)
    _root_values(
        s, np.array(legal, dtype=np.int64), found, depth, kernels, (bufs, probs, stack, int(k.undo)), counters, float(prob_cutoff)
    )
    values = {a: float(v) for a, v in zip(legal, found)}
    best = legal[0]
    for a in legal:
        if values[a] > values[best]:
            best = a
    if counters[1]:
        if rows < MAX_PLY:
            return _compiled(state, evaluator, depth, prob_cutoff, start, MAX_PLY)
        raise ValueError(f"a path of the search is longer than {MAX_PLY} decisions and chance nodes; lower the depth")
    return ExpectimaxResult(best, values[best], values, int(counters[0]), time.perf_counter() - start)


def expectimax(
    state: State,
    evaluator: Evaluator,
    *,
    depth: int,
    prob_cutoff: float = 0.0,
    transpositions: bool = True,
    compiled: bool | None = None,
) -> ExpectimaxResult:
    """The best action at a player node, ``depth`` player moves deep; ties keep the earlier
    action of ``legal_actions()``. ``compiled=None`` runs the compiled search whenever the
    state's kernels have a chance kernel and the evaluator a kernel; ``False`` the Python path."""
    check_root(state, "expectimax", depth)
    start = time.perf_counter()
    check_game(evaluator, state)
    kernel_root = state if isinstance(state, KernelState) and state.kernels.chance is not None and evaluator.compiled else None
    if compiled and kernel_root is None:
        raise ValueError(
            f"no compiled expectimax for {type(state).__name__} with evaluator {evaluator.name!r}: "
            "it needs kernels with a chance kernel and an evaluator with a kernel"
        )
    if kernel_root is not None and compiled is not False:
        return _compiled(kernel_root, evaluator, depth, prob_cutoff, start)
    search = _Search(evaluator, state.current_player(), prob_cutoff, transpositions)
    values: dict[int, float] = {}
    legal = state.legal_actions()
    best = legal[0]
    for a in legal:
        values[a] = search.value(state.child(a), depth - 1, 1.0)
        if values[a] > values[best]:
            best = a
    return ExpectimaxResult(best, values[best], values, search.nodes, time.perf_counter() - start)
