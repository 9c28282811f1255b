"""The searchers, each declared once: its name, the keys its spec takes (with their types and
allowed ranges) and a constructor ``(game, evaluator, options) -> Agent``.

A spec such as ``alphabeta:eval=advanced,depth=5`` is read here, the same way for every game
(``Searcher.read``); the evaluator named by ``eval`` is resolved one layer up
(``tablegym.models.agents.make_agent``), because learned evaluators are models. A game's
registry record supplies data only: which searchers apply to it (``searchers``), its own names
for them (``aliases``), default keys (``defaults``), the fixed opponents of its module
(``AGENTS``) and a move filter (``move_filter``, Trap's candidate throws). Where a game's
record names its own constructor for a searcher, the searcher runs on a compiled kernel of that
game (Threes' afterstate expectimax and greedy player); its keys are still these, plus any the
constructor lists as its ``keys`` attribute.

Every key has a range, checked when the spec is read (before any game or worker starts): a
budget beyond what a searcher supports (a depth its compiled stack cannot hold, an hour a move
and more, a node budget that would not fit in memory) is a one-line ``BudgetError``.

>>> SEARCHERS["alphabeta"].read("alphabeta:depth=5", {"depth": "5"})
{'eval': None, 'depth': 5, 'time': None}
>>> SEARCHERS["alphabeta"].read("alphabeta:depth=64", {"depth": "64"})
Traceback (most recent call last):
...
tablegym.search.searchers.BudgetError: depth must be at most 63 in 'alphabeta:depth=64', got '64': alpha-beta reads a depth of 64 or more as no depth limit at all, a search without end; give time=SECONDS to search as deep as the time allows (up to its stack of 126 plies)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tablegym.envs.core import Game
from tablegym.envs.evaluator import Evaluator, position_evaluator
from tablegym.search.agents import AlphaBetaAgent, BestFirstAgent, ExpectimaxAgent, ExpectiminimaxAgent, check_options, is_learned
from tablegym.search.table import MAX_PLY

if TYPE_CHECKING:
    from tablegym.search.montecarlo import MonteCarloAgent


class BudgetError(ValueError):
    """A spec key above the range its searcher supports (a depth, a time, a count): refused when
    the spec is read, in one line that names the bound and why it is there."""


MAX_COUNT = 1_000_000_000
"""The largest value of an int key without a bound of its own: a count well inside the int64 of
the compiled searches (a value past 2**63 would overflow there, in a worker, as a traceback)."""

_COUNT_WHY = "no count a spec takes is meant to be larger (a compiled search counts in 64 bits)"

MAX_SECONDS = 3600.0
"""The longest time budget a spec takes: an hour a move. A game is tens to hundreds of moves, so
more is a tournament that ends after the user does (``time=1e300`` searched forever, silently)."""

ALPHABETA_MAX_DEPTH = 63
"""alpha-beta's deepest depth limit. ``alphabeta()`` reads a depth of 64 or more as no depth
limit at all (its default: a search then needs a time budget, else it has no end), and deepens
at most to ``MAX_PLY - 2`` = 126 plies, the size of its compiled stack, whatever is asked."""

EXPECTIMINIMAX_MAX_DEPTH = MAX_PLY // 2 - 4
"""expectiminimax's deepest depth (60 decisions): it clamps deeper requests there, because the
chance plies between decisions share its compiled stack of ``MAX_PLY`` = 128 plies."""

EXPECTIMAX_MAX_DEPTH = 7
"""expectimax's deepest depth. Expectimax has no time budget and grows 15-30 times a level
(measured, Threes' kernel: 0.5 s a move at depth 4, 1-14 s at 5, 100-140 s at 6; Friday's
generic search: up to 100 s at 5, 140 s at 7), so depth 7 already takes the hour a move that
``MAX_SECONDS`` allows; the generic kernel's stack (256 rows, 4 a level) would hold 62."""

BESTFIRST_MAX_NODES = 5_000_000
"""best-first's largest node budget: its search keeps every state it generates (measured on
Friday: 840 MB and 8 s a decision at 1,000,000 nodes), so 5 million is about 4 GB a search,
what one worker can hold beside the others."""

MC_MAX_ROLLOUTS = 1_000_000
"""flat Monte-Carlo's largest playout count a candidate: measured on Friday, 10,000 take 3-5 s
a decision, so a million take about 7 minutes a decision, past any use."""


@dataclass(frozen=True)
class Key:
    """One key of a spec: ``int`` (a whole number in ``low..high``), ``seconds`` (a number in
    (0, ``high``]), ``choice`` (one of ``choices``) or ``eval`` (an evaluator name, resolved by
    the caller); ``accepts`` words what an int key takes when the bare range says too little,
    ``why`` why its upper bound is where it is."""

    name: str
    kind: str
    default: Any = None
    low: int = 1
    choices: tuple[str, ...] = ()
    accepts: str = ""
    high: float | None = None
    """The largest value taken (None: ``MAX_COUNT`` for an int, ``MAX_SECONDS`` for seconds)."""
    why: str = ""

    @property
    def upper(self) -> float:
        """The largest value this key takes."""
        if self.high is not None:
            return self.high
        return MAX_SECONDS if self.kind == "seconds" else MAX_COUNT

    def _too_big(self, spec: str, text: str, unit: str = "") -> BudgetError:
        bound = f"{self.upper:,g}" if self.kind == "seconds" else f"{int(self.upper):,}"
        why = f": {self.why or _COUNT_WHY}"
        return BudgetError(f"{self.name} must be at most {bound}{unit} in {spec!r}, got {text!r}{why}")

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
            if value > self.upper:
                raise self._too_big(spec, text)
            return value
        if self.kind == "seconds":
            try:
                seconds = float(text)
            except ValueError:
                seconds = math.nan
            if not 0 < seconds < math.inf:
                raise ValueError(f"{self.name} must be a positive (finite) number of seconds in {spec!r}, got {text!r}")
            if seconds > self.upper:
                raise self._too_big(spec, text, " seconds a move")
            return seconds
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
DEPTH = Key(
    "depth",
    "int",
    high=ALPHABETA_MAX_DEPTH,
    why="alpha-beta reads a depth of 64 or more as no depth limit at all, a search without end; give "
    f"time=SECONDS to search as deep as the time allows (up to its stack of {MAX_PLY - 2} plies)",
)
"""alpha-beta's depth (``ALPHABETA_MAX_DEPTH``)."""
TIME = Key("time", "seconds", why="an hour a move is the longest budget a search takes (a game is tens to hundreds of moves)")
EMM_DEPTH = Key(
    "depth",
    "int",
    high=EXPECTIMINIMAX_MAX_DEPTH,
    why=f"expectiminimax searches at most {EXPECTIMINIMAX_MAX_DEPTH} decisions deep, the chance plies "
    f"between them filling the rest of its compiled stack of {MAX_PLY} plies; give time=SECONDS to "
    "search as deep as the time allows",
)
EXPECTIMAX_DEPTH = Key(
    "depth",
    "int",
    2,
    high=EXPECTIMAX_MAX_DEPTH,
    why="expectimax has no time budget and costs 15-30 times more a level (measured: about 2 "
    f"minutes a Threes move at depth 6); at depth {EXPECTIMAX_MAX_DEPTH} a move takes about an hour",
)

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

    def read(
        self, spec: str, options: Mapping[str, str], *, defaults: Mapping[str, str] | None = None, extra: tuple[Key, ...] = ()
    ) -> dict[str, Any]:
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


def _expectiminimax(
    game: Game, evaluator: Evaluator, options: Mapping[str, Any], *, name: str, move_filter=None
) -> ExpectiminimaxAgent:
    depth, seconds = _budget(options)
    settings = {k.name: options[k.name] for k in move_filter.keys} if move_filter else {}
    return ExpectiminimaxAgent(evaluator, depth=depth, time_limit=seconds, move_filter=move_filter, settings=settings, name=name)


def _expectimax(game: Game, evaluator: Evaluator, options: Mapping[str, Any], *, name: str) -> ExpectimaxAgent:
    return ExpectimaxAgent(position_evaluator(evaluator), depth=options["depth"], name=name)


def _greedy(game: Game, evaluator: Evaluator, options: Mapping[str, Any], *, name: str) -> ExpectimaxAgent:
    return ExpectimaxAgent(position_evaluator(evaluator), depth=1, name=name)


def _mc(game: Game, evaluator: Evaluator, options: Mapping[str, Any], *, name: str) -> MonteCarloAgent:
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


def _bestfirst(game: Game, evaluator: Evaluator, options: Mapping[str, Any], *, name: str, move_filter=None) -> BestFirstAgent:
    return BestFirstAgent(
        position_evaluator(evaluator), nodes=options["nodes"], worlds=options["worlds"], move_filter=move_filter, name=name
    )


_NODES_WHY = (
    "best-first keeps every state it generates: about 840 MB a million nodes (measured on Friday), "
    "so more does not fit beside the other workers"
)
_ROLLOUTS_WHY = "a million playouts a candidate already take minutes a decision (measured: 3-5 s at 10,000 on Friday)"

SEARCHERS: dict[str, Searcher] = {
    s.name: s
    for s in (
        Searcher(
            "alphabeta",
            (EVAL, DEPTH, TIME),
            _alphabeta,
            "alpha-beta with a transposition table and iterative "
            "deepening, to depth plies or for time seconds a move (one second when neither is given)",
            aliases=("ab",),
        ),
        Searcher(
            "expectiminimax",
            (EVAL, EMM_DEPTH, TIME),
            _expectiminimax,
            "expectiminimax with alpha-beta and Star1 "
            "chance pruning, depth decisions or time seconds a turn (one second when neither is given)",
            aliases=("emm",),
            filtered=True,
        ),
        Searcher(
            "expectimax",
            (EVAL, EXPECTIMAX_DEPTH),
            _expectimax,
            "expectimax over the full chance distribution, depth player moves deep",
        ),
        Searcher("greedy", (EVAL,), _greedy, "the move whose outcome the evaluator values best (1-ply expectimax)"),
        Searcher(
            "bestfirst",
            (
                EVAL,
                Key("nodes", "int", 1000, high=BESTFIRST_MAX_NODES, why=_NODES_WHY),
                Key("worlds", "int", 1, high=BESTFIRST_MAX_NODES, why="worlds split the node budget"),
            ),
            _bestfirst,
            "best-first search polling nodes states a decision, split over worlds sampled worlds (the best mean plays)",
            filtered=True,
        ),
        Searcher(
            "mc",
            (
                EVAL,
                Key("rollouts", "int", 256, high=MC_MAX_ROLLOUTS, why=_ROLLOUTS_WHY),
                Key("horizon", "int", None, low=0, accepts="0 (play to the end) or a number of turns"),
            ),
            _mc,
            "flat Monte-Carlo: each move valued over rollouts playouts of the game's rollout policy, cut after "
            "horizon turns (0: to the end; with a network, the game's learned horizon)",
        ),
    )
}
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
