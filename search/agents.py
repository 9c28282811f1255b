"""Agents: policies that pick an action in a state (players for envs, matches and the CLI)."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from tablegym.envs.core import State


class Agent(Protocol):
    """Anything with a ``name`` that maps (state, rng) to a legal action."""

    name: str

    def __call__(self, state: State, rng: np.random.Generator) -> int: ...


class RandomAgent:
    """Uniformly random legal action."""

    name = "random"

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        legal = state.legal_actions()
        return int(legal[rng.integers(len(legal))])


class FunctionAgent:
    """Wraps a plain function ``f(state, rng) -> action`` as a named agent."""

    def __init__(self, name: str, fn) -> None:
        self.name = name
        self._fn = fn

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        return int(self._fn(state, rng))


class AlphaBetaAgent:
    """Plays the move of an alpha-beta search with a given leaf evaluator and budget."""

    def __init__(self, evaluator, *, depth: int = 64, time_limit: float | None = None, name: str | None = None) -> None:
        # Imported here: loading the compiled search costs a second, and envs import this module
        # for RandomAgent alone.
        from tablegym.search.alphabeta import alphabeta

        self._search = alphabeta
        self.evaluator = evaluator
        self.depth = depth
        self.time_limit = time_limit
        budget = f"depth={depth}" if time_limit is None else f"time={time_limit}"
        self.name = name or f"alphabeta:eval={evaluator.name},{budget}"
        self.last_result = None

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        self.last_result = self._search(state, self.evaluator, depth=self.depth, time_limit=self.time_limit)
        return self.last_result.action
