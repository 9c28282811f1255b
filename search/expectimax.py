"""Expectimax over the rules-core contract: max nodes for the player, chance nodes averaged.

Game independent and written for clarity: any State with ``chance_outcomes()`` works, and the
result is the exact expectation of the evaluator under the game's own chance model. Depth is
counted in player moves; the chance nodes after the last move are still expanded, so a leaf is
always a player node (or a finished game). Options:

* ``prob_cutoff``: skip chance branches whose probability, multiplied along the path, falls
  below it (the kept branches are renormalised): a cheaper, approximate search;
* ``transpositions``: remember (position key, depth) values within one search.

Games with a compiled board search (Threes: envs/threes/expectimax.py) use it for speed; this
one is their reference in the tests.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from tablegym.envs.core import CHANCE, State
from tablegym.search.evaluator import Evaluator


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

    def value(self, state: State, depth: int, reach: float) -> float:
        self.nodes += 1
        if state.is_terminal() or (depth == 0 and state.current_player() != CHANCE):
            return self.evaluator(state, self.player)
        key = (state.key(), depth)
        if self.table is not None and key in self.table:
            return self.table[key]
        if state.current_player() == CHANCE:
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


def expectimax(state: State, evaluator: Evaluator, *, depth: int, prob_cutoff: float = 0.0,
               transpositions: bool = True) -> ExpectimaxResult:
    """The best action at a player node, ``depth`` player moves deep; ties keep the earlier
    action of ``legal_actions()``."""
    if state.is_terminal():
        raise ValueError("cannot search a finished game")
    if state.current_player() == CHANCE:
        raise ValueError("expectimax chooses actions at player nodes; this is a chance node")
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth!r}")
    start = time.perf_counter()
    search = _Search(evaluator, state.current_player(), prob_cutoff, transpositions)
    values: dict[int, float] = {}
    best = None
    for a in state.legal_actions():
        values[a] = search.value(state.child(a), depth - 1, 1.0)
        if best is None or values[a] > values[best]:
            best = a
    return ExpectimaxResult(best, values[best], values, search.nodes, time.perf_counter() - start)
