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
