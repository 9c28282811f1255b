"""Threes players: random swipes, greedy, full-chance expectimax and Threesus "6, 3".

Each agent maps a player-node ``ThreesState`` to a swipe (0 left, 1 right, 2 up, 3 down).
The searching ones read only what a player may know: the board, the hint and the deck counts.
Their leaf evaluator is a hand-made one (``openness``, ``openness-matthew``) or the learned
n-tuple network (``learned``: the shipped checkpoint, ``learned:PATH``), which scores
afterstates, so its searches end on a swipe whose card has not entered yet (``LEAF``).

Specs are read by the one route (tablegym.models.agents.make_agent): ``greedy`` and
``expectimax:depth=D`` run on this game's compiled kernel (``greedy_searcher``,
``expectimax_searcher``, named by its record) with a board heuristic or an n-tuple network, and
on the generic searches with any other network; ``threesus`` is the original AI (``AGENTS``).
"""

from __future__ import annotations

import time

import numpy as np

from tablegym.envs.threes.core import ThreesGame, ThreesState
from tablegym.envs.threes.expectimax import (
    LEAF,
    LEARNED,
    NO_NETWORK,
    NONE,
    THREESUS_6_3,
    afterstate_chance,
    full_chance,
    search_root,
)
from tablegym.envs.threes.heuristics import EVALUATOR_IDS, EVALUATORS  # noqa: F401 (the game's evaluators, by name)
from tablegym.search.agents import is_learned, learned_path
from tablegym.search.searchers import EVAL, Searcher


class ExpectimaxAgent:
    """Expectimax over the board with one chance model per ply (envs/threes/expectimax.py)."""

    def __init__(
        self, models, *, evaluator: str = "openness-matthew", terminal_penalty: float = 0.0, name: str | None = None, network=None
    ) -> None:
        self.models = np.ascontiguousarray(models, dtype=np.int64)
        self.evaluator = evaluator
        self.network = NO_NETWORK
        if is_learned(evaluator):
            if network is None:
                from tablegym.models.learned import load_evaluator

                network = load_evaluator(ThreesGame(), learned_path(evaluator))
            if not _is_ntuple(network):
                raise ValueError(
                    f"{evaluator!r} is not an n-tuple network, which this search scores afterstates "
                    "with; other networks search with expectimax:depth=D or bestfirst:nodes=N"
                )
            self.network = network.network
            self._eval_id = LEARNED
            if self.models[-1] != LEAF:
                self.models = np.append(self.models, LEAF)  # scores afterstates: end on a swipe
        elif evaluator in EVALUATOR_IDS:
            self._eval_id = EVALUATOR_IDS[evaluator]
        else:
            known = ", ".join([*EVALUATOR_IDS, "learned", "learned:PATH"])
            raise ValueError(f"unknown Threes evaluator {evaluator!r}; known: {known}")
        self.terminal_penalty = float(terminal_penalty)
        self.name = name or f"expectimax:{self.models.tolist()},{evaluator}"
        self.values = np.zeros(4)
        self.leaves = 0
        self.seconds = 0.0

    def __call__(self, state: ThreesState, rng: np.random.Generator | None = None) -> int:
        board, n1, n2, n3, hint, bonus_hi = state.search_inputs()
        counters = np.zeros(2, dtype=np.int64)
        t0 = time.perf_counter()
        action = search_root(
            np.int64(board),
            n1,
            n2,
            n3,
            hint,
            bonus_hi,
            self.models,
            self._eval_id,
            self.terminal_penalty,
            *self.network,
            self.values,
            counters,
        )
        self.seconds += time.perf_counter() - t0
        self.leaves += int(counters[0])
        if action < 0:
            raise ValueError("no legal swipe: the game is over")
        return int(action)


def _is_ntuple(evaluator) -> bool:
    from tablegym.models.threes.ntuple_net import NTupleEvaluator  # here: it loads torch, which the others need not

    return isinstance(evaluator, NTupleEvaluator)


def threesus(evaluator: str = "openness-matthew", **kwargs) -> ExpectimaxAgent:
    """Threesus "6, 3": hint at move 1, card counting at moves 2-3, no card at moves 4-6."""
    return ExpectimaxAgent(THREESUS_6_3, evaluator=evaluator, name=f"threesus-6-3:{evaluator}", **kwargs)


def greedy(evaluator: str = "openness-matthew", **kwargs) -> ExpectimaxAgent:
    """1-ply greedy: the swipe whose shifted board (before the new card) scores best."""
    models = np.array([LEAF if is_learned(evaluator) else NONE])
    return ExpectimaxAgent(models, evaluator=evaluator, name=f"greedy:{evaluator}", **kwargs)


def expectimax(depth: int, evaluator: str = "openness-matthew", **kwargs) -> ExpectimaxAgent:
    """Expectimax ``depth`` swipes deep with the full, true chance distribution at every ply."""
    models = afterstate_chance(depth) if is_learned(evaluator) else full_chance(depth)
    return ExpectimaxAgent(models, evaluator=evaluator, name=f"expectimax-{depth}:{evaluator}", **kwargs)


def _kernel_evaluator(evaluator, options) -> tuple[str, object] | None:
    """(evaluator name, n-tuple network or None) when this game's own search kernel scores with
    ``evaluator`` (a board heuristic or the n-tuple network); None for any other network, which
    the generic searches take."""
    if _is_ntuple(evaluator):
        return options["eval"], evaluator
    if getattr(evaluator, "name", None) in EVALUATOR_IDS:
        return evaluator.name, None
    return None


def _searcher(game, evaluator, options, *, name: str, searcher: str):
    from tablegym.search.searchers import SEARCHERS

    known = _kernel_evaluator(evaluator, options)
    if known is None:  # an exported network or SB3 critic: the generic search
        return SEARCHERS[searcher].build(game, evaluator, options, name=name)
    text, network = known
    if searcher == "greedy":
        return greedy(text, network=network)
    return expectimax(options["depth"], text, network=network)


def greedy_searcher(game, evaluator, options, *, name: str):
    """``greedy:eval=E`` on this game's compiled kernel (the searcher of tablegym.search.searchers)."""
    return _searcher(game, evaluator, options, name=name, searcher="greedy")


def expectimax_searcher(game, evaluator, options, *, name: str):
    """``expectimax:depth=D,eval=E`` on this game's compiled kernel: chance at every ply, the
    n-tuple network scoring afterstates (tablegym.search.searchers declares the keys)."""
    return _searcher(game, evaluator, options, name=name, searcher="expectimax")


def _threesus(game, evaluator, options, *, name: str) -> ExpectimaxAgent:
    known = _kernel_evaluator(evaluator, options)
    if known is None:
        raise ValueError(
            f"threesus searches with n-tuple or hand-made evaluators, not {options['eval']!r}; "
            "use expectimax:depth=D,eval=... (or greedy) for other networks"
        )
    text, network = known
    return threesus(text, network=network)


def _agents() -> dict:
    return {"threesus": Searcher("threesus", (EVAL,), _threesus, 'Threesus "6, 3" (the original AI), eval= its evaluator')}


AGENTS = _agents()
"""The original AI, by name (the fixed opponents of tablegym.models.agents.make_agent)."""
