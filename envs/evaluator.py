"""Leaf evaluators: the value of a position for one player, hand-made or learned.

Searches take an ``Evaluator``, never a network (OpenSpiel's ``value_function`` idea); the
adapter that turns a PyTorch model into one lives in tablegym.models.

An evaluator is called on every leaf of a search, terminal positions included, so it owns its
win/loss scale (the original Trilobite heuristics score a win +45, a learned network +1).
A compiled evaluator also carries ``kernel(s, player, params) -> float`` over the game's
compact state; the compiled searches use it and never call back into Python.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

import numpy as np

from tablegym.envs.core import CHANCE, KernelState, State


class WrongGameError(ValueError):
    """An evaluator made for one game given a position of another."""


def input_size(state: State, kind: str) -> int:
    """How many inputs of ``kind`` a network reads in ``state``'s game: "observation" (the
    flattened observation) or "features" (the kernel's binary features)."""
    if kind == "observation":
        return int(np.prod(state.game.spec.observation_shape))
    return int(getattr(state, "num_features", -1))


@functools.lru_cache(maxsize=16)
def _made_for(game: str, options: tuple) -> State:
    from tablegym.envs import make_game

    return make_game(game, **dict(options)).new_initial_state()


def check_game(evaluator: Evaluator, state: State) -> None:
    """Refuse a state of another game than the one the evaluator was made for (its ``game``
    attribute, when it has one), or of the same game under rule options that change what its
    network reads (its ``options`` and ``inputs`` kind: a 7x7 Trap network on a 5x5 board), or
    under other rule options than its ``check_rules`` accepts."""
    game = getattr(evaluator, "game", None)
    if game is not None and game != state.game.spec.name:
        raise WrongGameError(f"evaluator {evaluator.name!r} was made for {game!r}, not {state.game.spec.name!r}")
    rules = getattr(evaluator, "check_rules", None)
    if rules is not None:  # an evaluator whose values hold under its own rule options only (Friday's)
        rules(state)
    made, kind = getattr(evaluator, "options", None), getattr(evaluator, "inputs", None)
    if game is None or made is None or kind is None or made == state.game.spec.options:
        return
    made_state = _made_for(game, tuple(sorted(made.items())))
    if input_size(made_state, kind) != input_size(state, kind):
        what = "feature count differs" if kind == "features" else "observation differs"
        raise WrongGameError(
            f"evaluator {evaluator.name!r} was made for {game} {made}, whose {what} from "
            f"this {game} {state.game.spec.options}'s: load a network made for these rules"
        )


def check_root(state: State, searcher: str, depth: int | None = None) -> None:
    """Refuse what no searcher can search from: a finished game, a chance node (a searcher
    chooses actions at player nodes), and a ``depth`` below 1 where the searcher has one."""
    if state.is_terminal():
        raise ValueError("cannot search a finished game")
    if state.current_player() == CHANCE:
        raise ValueError(f"{searcher} chooses actions at player nodes; this is a chance node")
    if depth is not None and depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth!r}")


class Evaluator:
    """Value of a position from ``player``'s point of view (higher is better for ``player``).

    Subclasses either override ``evaluate`` (Python only) or set ``kernel`` and ``params``
    (compiled; ``evaluate`` then calls the kernel).
    """

    name: str = "evaluator"
    kernel: Any = None
    weights: np.ndarray = np.zeros(1)
    """The vector set as ``params``: a network's layout and weights, a heuristic's constants.
    No search writes into it."""
    kernel_writes: bool = True
    """False for a kernel that only reads its vector (an n-tuple network's 50 MB of tables): every
    thread is then given ``weights`` itself."""

    @property
    def params(self) -> np.ndarray:
        """The vector this thread's kernels are given: a copy of ``weights`` of this thread's own,
        made at its first use and kept. A network kernel writes its scratch and value cache into the
        vector it reads (tablegym.models.netkernel), so with a copy each, threads that search with
        one evaluator get the values each gets alone, and a pickled evaluator carries its weights,
        never a search's cache. The copy is whole rather than a scratch array beside shared weights
        because the kernels index one vector: a second array argument through every recursive
        search call made learned searches 9-27% slower."""
        if not self.kernel_writes:
            return self.weights
        copies = self.__dict__.get("_copies")
        if copies is None:
            copies = self.__dict__.setdefault("_copies", threading.local())
        try:
            return copies.params
        except AttributeError:
            copies.params = self.weights.copy()
            return copies.params

    @params.setter
    def params(self, value: np.ndarray) -> None:
        self.weights = np.ascontiguousarray(value, dtype=np.float64)
        self.__dict__.pop("_copies", None)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_copies", None)  # each thread's working copies stay with the process
        return state

    def __call__(self, state: State, player: int) -> float:
        return self.evaluate(state, player)

    def evaluate(self, state: State, player: int) -> float:
        if self.kernel is None or not isinstance(state, KernelState):
            raise NotImplementedError(f"{self.name} has no evaluation for {type(state).__name__}")
        return float(self.kernel(state._s, player, self.params))

    @property
    def compiled(self) -> bool:
        return self.kernel is not None

    def __repr__(self) -> str:
        return f"<Evaluator {self.name}>"


class KernelEvaluator(Evaluator):
    """An evaluator that is one compiled kernel and its parameter vector; ``game``: the game it
    is made for (searchers refuse another's states; any rule options of that game are fine)."""

    def __init__(self, name: str, kernel: Any, params: np.ndarray | None = None, *, game: str | None = None) -> None:
        self.name = name
        self.game = game
        self.kernel = kernel
        self.params = np.zeros(1) if params is None else params


def position_evaluator(evaluator):
    """The evaluator as searchers of positions take it: an afterstate evaluator (Threes' n-tuple
    network, which values the board after a swipe, before its card) offers a ``state_evaluator()``
    valuing a position by its best afterstate; any other evaluator is itself."""
    to_state = getattr(evaluator, "state_evaluator", None)
    return to_state() if callable(to_state) else evaluator
