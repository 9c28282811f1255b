"""Agents: policies that pick an action in a state (players for envs, matches and the CLI),
and the one grammar that names them.

Spec grammar, shared by every game: ``NAME[:key=value,key=value...]``. The value of ``eval`` may
itself hold a ':' (``eval=learned:runs/x.pt``). ``learned`` names the network shipped for a
game and ``learned:PATH`` one saved at PATH; ``learned_path`` is the one reading of that.
Building agents from specs needs evaluators and networks, so it lives one layer up, in
``tablegym.models.agents``.
"""

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


class ExpectimaxAgent:
    """Plays the move of the generic compiled expectimax (search/expectimax.py), ``depth`` player
    moves deep, for any game with chance on the common contract."""

    def __init__(self, evaluator, *, depth: int, name: str | None = None) -> None:
        from tablegym.search.expectimax import expectimax

        if depth < 1:
            raise ValueError(f"depth must be >= 1, got {depth!r}")
        self._search = expectimax
        self.evaluator = evaluator
        self.depth = depth
        self.name = name or f"expectimax:eval={evaluator.name},depth={depth}"
        self.last_result = None

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        self.last_result = self._search(state, self.evaluator, depth=self.depth)
        return self.last_result.action


class BestFirstAgent:
    """Plays the move of a best-first search (search/bestfirst.py) polling ``nodes`` states, for any
    game with chance on the common contract; each decision draws its chance stream from ``rng``."""

    def __init__(self, evaluator, *, nodes: int = 1000, name: str | None = None) -> None:
        from tablegym.search.bestfirst import best_first_search

        if nodes < 1:
            raise ValueError(f"the node budget must be at least 1, got {nodes}")
        self._search = best_first_search
        self.evaluator = evaluator
        self.nodes = nodes
        self.name = name or f"bestfirst:eval={evaluator.name},nodes={nodes}"
        self.last_result = None

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        self.last_result = self._search(state, self.evaluator, nodes=self.nodes, seed=int(rng.integers(1, 2**62)))
        return self.last_result.action


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``name:key=value,...`` into the name and its options.

    >>> parse_spec("alphabeta:eval=learned:runs/x.pt,depth=3")
    ('alphabeta', {'eval': 'learned:runs/x.pt', 'depth': '3'})
    """
    name, _, rest = spec.strip().partition(":")
    options: dict[str, str] = {}
    if rest:
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"bad agent option {item!r} in {spec!r}; expected key=value")
            if key.strip() in options:
                raise ValueError(f"agent option {key.strip()!r} given twice in {spec!r}; give each key once")
            options[key.strip()] = value.strip()
    return name.strip(), options


def check_options(spec: str, options: dict[str, str], allowed: set[str]) -> None:
    """Refuse an option the agent does not take, naming the ones it does."""
    extra = set(options) - allowed
    if extra:
        allowed_text = ", ".join(sorted(allowed)) or "none"
        raise ValueError(f"agent {spec!r} takes no option {', '.join(sorted(extra))}; allowed: {allowed_text}")


def is_learned(name: str) -> bool:
    """``name`` asks for a network: ``learned`` or ``learned:PATH``."""
    return name == "learned" or name.startswith("learned:")


def learned_path(name: str) -> str | None:
    """The PATH of ``learned:PATH``; None for ``learned`` (the shipped network).

    >>> learned_path("learned:runs/x.pt"), learned_path("learned")
    ('runs/x.pt', None)
    """
    if not is_learned(name):
        raise ValueError(f"{name!r} names no network; expected learned or learned:PATH")
    return name.partition(":")[2] or None


def int_option(spec: str, options: dict[str, str], key: str, default: int, *, low: int = 1) -> int:
    """The integer option ``key`` (``default`` when absent), refused in one line unless >= ``low``."""
    text = options.get(key, str(default))
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < low:
        what = "positive integers" if low == 1 else f"integers >= {low}"
        raise ValueError(f"{key} takes {what} in {spec!r}, got {text!r}")
    return value


def seconds_option(spec: str, options: dict[str, str], key: str = "time") -> float | None:
    """The time budget ``key`` in seconds (None when absent), refused unless a finite number > 0."""
    if key not in options:
        return None
    try:
        value = float(options[key])
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise ValueError(f"{key} must be a positive (finite) number of seconds in {spec!r}, got {options[key]!r}")
    return value
