"""The searchers, each declared once: its name, the keys its spec takes (with their types and
allowed ranges) and a constructor ``(game, evaluator, options) -> Agent``.

A spec such as ``alphabeta:eval=advanced,depth=5`` is read here, the same way for every game
(``Searcher.read``); the evaluator named by ``eval`` is resolved one layer up
(``tablegym.models.agents.make_agent``), because learned evaluators are models. A game's
registry record supplies data only: which searchers apply to it (``searchers``), its own names
for them (``aliases``), default keys (``defaults``), the fixed opponents of its module
(``AGENTS``) and a move filter (``move_filter``, Trap's candidate throws). Where a game's
record names its own constructor for a searcher, the searcher runs on a compiled kernel of that
game (Threes' afterstate expectimax, Friday's own state); its keys are still these, plus any
the constructor lists as its ``keys`` attribute (Friday's ``worlds``).

>>> SEARCHERS["alphabeta"].read("alphabeta:depth=5", {"depth": "5"})
{'eval': None, 'depth': 5, 'time': None}
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

from tablegym.envs.core import Game
from tablegym.search.agents import (AlphaBetaAgent, BestFirstAgent, ExpectiminimaxAgent, ExpectimaxAgent, check_options,
                                    is_learned)
from tablegym.search.evaluator import Evaluator, position_evaluator

if TYPE_CHECKING:
    from tablegym.search.montecarlo import MonteCarloAgent


@dataclass(frozen=True)
class Key:
    """One key of a spec: ``int`` (a whole number >= ``low``), ``seconds`` (a finite number > 0),
    ``choice`` (one of ``choices``) or ``eval`` (an evaluator name, resolved by the caller);
    ``accepts`` words what an int key takes when the bare range says too little."""

    name: str
    kind: str
    default: Any = None
    low: int = 1
    choices: tuple[str, ...] = ()
    accepts: str = ""

    def read(self, spec: str, text: str | None) -> Any:
        """The typed value of ``text`` (the default when None); one-line ValueError otherwise."""
        if text is None:
            return self.default
        if self.kind == "int":
            try:
                value = int(text)
            except ValueError:
                value = None
            if value is None or value < self.low:
                accepts = self.accepts or ("a positive integer" if self.low == 1 else f"an integer >= {self.low}")
                raise ValueError(f"{self.name} must be {accepts} in {spec!r}, got {text!r}")
            return value
        if self.kind == "seconds":
            try:
                value = float(text)
            except ValueError:
                value = math.nan
            if not 0 < value < math.inf:
                raise ValueError(f"{self.name} must be a positive (finite) number of seconds in {spec!r}, got {text!r}")
            return value
        if self.kind == "choice":
            if text not in self.choices:
                quoted = [repr(c) for c in self.choices]
                allowed = ", ".join(quoted[:-1]) + f" or {quoted[-1]}" if len(quoted) > 1 else quoted[0]
                raise ValueError(f"{self.name} must be {allowed} in {spec!r}, got {text!r}")
            return text
        if not text:
            raise ValueError(f"{self.name} needs a value in {spec!r}")
        return text


EVAL = Key("eval", "eval")
DEPTH = Key("depth", "int")
TIME = Key("time", "seconds")

Constructor = Callable[..., Any]
"""``(game, evaluator, options, *, name) -> Agent``: ``options`` are the typed keys."""


@dataclass(frozen=True)
class Searcher:
    """A player built from a spec: a searcher of search/, or a fixed opponent of a game (its
    record's ``AGENTS``), which may take keys too (Trap's ``medium:ties=random``)."""

    name: str
    keys: tuple[Key, ...]
    build: Constructor | None
    """The game-independent constructor; None where only games with their own kernel run it."""
    doc: str = ""
    aliases: tuple[str, ...] = ()
    filtered: bool = False
    """Whether it takes a game's ``MoveFilter`` (its record's ``move_filter``) and the filter's keys."""

    @property
    def evaluated(self) -> bool:
        """Whether it takes a leaf evaluator (``eval``)."""
        return any(k.kind == "eval" for k in self.keys)

    def read(self, spec: str, options: Mapping[str, str], *, defaults: Mapping[str, str] | None = None,
             extra: tuple[Key, ...] = ()) -> dict[str, Any]:
        """The typed keys of ``spec`` (``options`` as parsed), the game's ``defaults`` filling
        the keys not given; ``extra``: keys a game's move filter adds."""
        keys = self.keys + extra
        check_options(spec, dict(options), {k.name for k in keys})
        given = {**(defaults or {}), **options}
        return {k.name: k.read(spec, given.get(k.name)) for k in keys}


def _budget(options: Mapping[str, Any]) -> tuple[int, float | None]:
    """(depth, seconds) of a depth- or time-limited search: one second a move when neither is given."""
    depth, seconds = options["depth"], options["time"]
    if depth is None and seconds is None:
        seconds = 1.0
    return (64 if depth is None else depth), seconds


def _alphabeta(game: Game, evaluator: Evaluator, options: Mapping[str, Any], *, name: str) -> AlphaBetaAgent:
    depth, seconds = _budget(options)
    return AlphaBetaAgent(evaluator, depth=depth, time_limit=seconds, name=name)


def _expectiminimax(game: Game, evaluator: Evaluator, options: Mapping[str, Any], *, name: str,
                    move_filter=None) -> ExpectiminimaxAgent:
    depth, seconds = _budget(options)
    settings = {k.name: options[k.name] for k in move_filter.keys} if move_filter else {}
    return ExpectiminimaxAgent(evaluator, depth=depth, time_limit=seconds, move_filter=move_filter,
                               settings=settings, name=name)


def _expectimax(game: Game, evaluator: Evaluator, options: Mapping[str, Any], *, name: str) -> ExpectimaxAgent:
    return ExpectimaxAgent(position_evaluator(evaluator), depth=options["depth"], name=name)


def _greedy(game: Game, evaluator: Evaluator, options: Mapping[str, Any], *, name: str) -> ExpectimaxAgent:
    return ExpectimaxAgent(position_evaluator(evaluator), depth=1, name=name)


def _mc(game: Game, evaluator: Evaluator, options: Mapping[str, Any], *, name: str) -> "MonteCarloAgent":
    from tablegym.envs import load, plugin
    from tablegym.search.montecarlo import MonteCarloAgent  # here: it loads compiled code

    record = plugin(game.spec.name)
    if record.rollout is None:
        raise ValueError(f"mc needs a rollout policy, and {game.spec.name}'s record names none")
    rollout = load(record.rollout)
    horizon = options["horizon"]
    if horizon is None:
        horizon = rollout.learned_horizon if options["eval"] and is_learned(options["eval"]) else 0
    return MonteCarloAgent(evaluator, rollout, rollouts=options["rollouts"], horizon=horizon, name=name)


def _bestfirst(game: Game, evaluator: Evaluator, options: Mapping[str, Any], *, name: str,
               move_filter=None) -> BestFirstAgent:
    return BestFirstAgent(position_evaluator(evaluator), nodes=options["nodes"], worlds=options["worlds"],
                          move_filter=move_filter, name=name)


SEARCHERS: dict[str, Searcher] = {s.name: s for s in (
    Searcher("alphabeta", (EVAL, DEPTH, TIME), _alphabeta, "alpha-beta with a transposition table and iterative "
             "deepening, to depth plies or for time seconds a move (one second when neither is given)",
             aliases=("ab",)),
    Searcher("expectiminimax", (EVAL, DEPTH, TIME), _expectiminimax, "expectiminimax with alpha-beta and Star1 "
             "chance pruning, depth decisions or time seconds a turn (one second when neither is given)",
             aliases=("emm",), filtered=True),
    Searcher("expectimax", (EVAL, Key("depth", "int", 2)), _expectimax,
             "expectimax over the full chance distribution, depth player moves deep"),
    Searcher("greedy", (EVAL,), _greedy, "the move whose outcome the evaluator values best (1-ply expectimax)"),
    Searcher("bestfirst", (EVAL, Key("nodes", "int", 1000), Key("worlds", "int", 1)), _bestfirst,
             "best-first search polling nodes states a decision, split over worlds sampled worlds (the best "
             "mean plays)", filtered=True),
    Searcher("mc", (EVAL, Key("rollouts", "int", 256),
                    Key("horizon", "int", None, low=0, accepts="0 (play to the end) or a number of turns")), _mc,
             "flat Monte-Carlo: each move valued over rollouts playouts of the game's rollout policy, cut after "
             "horizon turns (0: to the end; with a network, the game's learned horizon)"),
)}
"""Every searcher by name."""


def searcher_named(name: str) -> Searcher | None:
    """The searcher called ``name`` or one of its aliases; None when there is none."""
    for searcher in SEARCHERS.values():
        if name == searcher.name or name in searcher.aliases:
            return searcher
    return None


@dataclass(frozen=True)
class MoveFilter:
    """Which moves a game's searches try, as data of its record (``move_filter``): a compiled
    moves kernel narrower than the legal moves, the keys that tune it, and how a turn's time
    splits between its decisions (Trap: a move, then a throw, under one time budget)."""

    moves: Any
    """Compiled ``moves(s, out) -> n``."""
    keys: tuple[Key, ...] = ()
    push: Any = None
    """Compiled ``push(s, a)`` that also plays the filter's search-only moves (None: the game's)."""
    first_step: Callable[[Any, int], int] = field(default=lambda state, action: action)
    """``(state, move) -> action``: the legal action a search-only move starts with."""
    prepare: Callable[[Any, Mapping[str, Any]], Any] = field(default=lambda state, settings: state)
    """``(state, settings) -> root``: the root of a search with the filter's settings written in."""
    time_share: Callable[[Any], float] = field(default=lambda state: 1.0)
    """The share of a turn's time budget a decision at ``state`` may spend."""
    turn_starts: Callable[[Any], bool] = field(default=lambda state: True)
    """Whether ``state`` starts a turn (the search's history ages there)."""

    def kernels(self, game_kernels: Any) -> Any:
        """The game's ``Kernels`` with this filter's moves (and push) in their place."""
        return game_kernels._replace(moves=self.moves, push=self.push or game_kernels.push)
