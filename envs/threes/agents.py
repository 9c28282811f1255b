"""Threes players: random swipes, greedy, full-chance expectimax and Threesus "6, 3".

Each agent maps a player-node ``ThreesState`` to a swipe (0 left, 1 right, 2 up, 3 down).
The searching ones read only what a player may know: the board, the hint and the deck counts.
Their leaf evaluator is a hand-made one (``openness``, ``openness-matthew``) or the learned
n-tuple network (``learned``: the shipped checkpoint, ``learned:PATH``), which scores
afterstates, so its searches end on a swipe whose card has not entered yet (``LEAF``).
"""

from __future__ import annotations

import time

import numpy as np

from tablegym.envs.threes.core import ThreesState
from tablegym.envs.threes.expectimax import (LEAF, LEARNED, NO_NETWORK, NONE, THREESUS_6_3, afterstate_chance,
                                             full_chance, search_root)
from tablegym.envs.threes.heuristics import EVALUATOR_IDS, EVALUATORS  # noqa: F401 (the game's evaluators, by name)
from tablegym.search.agents import BestFirstAgent, RandomAgent, check_options, int_option, is_learned, learned_path, parse_spec
from tablegym.search.agents import ExpectimaxAgent as GenericExpectimaxAgent


class ExpectimaxAgent:
    """Expectimax over the board with one chance model per ply (envs/threes/expectimax.py)."""

    def __init__(self, models, *, evaluator: str = "openness-matthew", terminal_penalty: float = 0.0,
                 name: str | None = None, network=None) -> None:
        self.models = np.ascontiguousarray(models, dtype=np.int64)
        self.evaluator = evaluator
        self.network = NO_NETWORK
        if is_learned(evaluator):
            if network is None:
                network = _learned(evaluator)
            if not _is_ntuple(network):
                raise ValueError(f"{evaluator!r} is not an n-tuple network, which this search scores afterstates "
                                 "with; other networks search with expectimax:depth=D or bestfirst:nodes=N")
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
        action = search_root(np.int64(board), n1, n2, n3, hint, bonus_hi, self.models, self._eval_id,
                             self.terminal_penalty, *self.network, self.values, counters)
        self.seconds += time.perf_counter() - t0
        self.leaves += int(counters[0])
        if action < 0:
            raise ValueError("no legal swipe: the game is over")
        return int(action)


def _learned(evaluator: str):
    """The network ``learned[:PATH]`` names, loaded for Threes (n-tuple tables, or an exported
    network or SB3 critic: tablegym.models.learned.load_evaluator)."""
    from tablegym.envs.threes.core import ThreesGame
    from tablegym.models.learned import load_evaluator

    return load_evaluator(ThreesGame(), learned_path(evaluator))


def _is_ntuple(evaluator) -> bool:
    from tablegym.envs.threes.ntuple import NTupleEvaluator  # here: it loads torch, which the others need not

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


def state_evaluator(name: str):
    """Evaluator ``name`` as the generic searchers take it (a position evaluator with a kernel):
    a board heuristic, or the n-tuple network valuing the best afterstate under the hint."""
    from tablegym.envs.threes.core import ThreesGame
    from tablegym.models.agents import make_evaluator

    evaluator = make_evaluator(ThreesGame(), name)
    return evaluator.state_evaluator() if hasattr(evaluator, "state_evaluator") else evaluator


def make_agent(spec: str):
    """``random``, ``greedy``, ``threesus``, ``expectimax:depth=2`` (each takes ``eval=``), and the
    game-independent best-first search, ``bestfirst:nodes=N`` (search/bestfirst.py)."""
    name, options = parse_spec(spec)
    known = "random, greedy, threesus, expectimax:depth=D, bestfirst:nodes=N"
    if name == "random":
        check_options(spec, options, set())
        return RandomAgent()
    if name == "bestfirst":
        check_options(spec, options, {"eval", "nodes"})
        evaluator = options.get("eval", "openness-matthew")
        return BestFirstAgent(state_evaluator(evaluator), nodes=int_option(spec, options, "nodes", 1000),
                              name=f"bestfirst:eval={evaluator},nodes={options.get('nodes', 1000)}")
    if name not in ("greedy", "threesus", "expectimax"):
        raise ValueError(f"unknown Threes agent {name!r}; known: {known}")
    check_options(spec, options, {"eval", "depth"} if name == "expectimax" else {"eval"})
    evaluator = options.get("eval", "openness-matthew")
    depth = int_option(spec, options, "depth", 2) if name == "expectimax" else 1
    if is_learned(evaluator):
        network = _learned(evaluator)
        if not _is_ntuple(network):  # an exported network or SB3 critic: the generic search
            if name == "threesus":
                raise ValueError(f"threesus searches with n-tuple or hand-made evaluators, not {evaluator!r}; "
                                 "use expectimax:depth=D,eval=... (or greedy) for other networks")
            return GenericExpectimaxAgent(network, depth=depth, name=spec)
        if name == "greedy":
            return greedy(evaluator, network=network)
        if name == "threesus":
            return threesus(evaluator, network=network)
        return expectimax(depth, evaluator, network=network)
    if name == "greedy":
        return greedy(evaluator)
    if name == "threesus":
        return threesus(evaluator)
    return expectimax(depth, evaluator)


make_threes_agent = make_agent
