"""Trap agents by spec string (the grammar of tablegym.search.agents).

* ``random``, ``easy``, ``medium``, ``hard``: the course's reference opponents
  (envs/trap/opponents.py); ``hard`` is the course's HardAI quirks included, ``hard-sound``
  the cleaned-up, stronger version. ``medium:ties=course|first|random`` picks Medium's tie
  rule (default ``course``), ``hard:depth=D`` and ``hard-sound:depth=D`` the search depth.
* ``search`` (alias ``emm``): expectiminimax with alpha-beta, Star1 chance pruning, a
  transposition table and iterative deepening (search/expectiminimax.py). Keys:

  - ``eval``: a hand-made evaluator of envs/trap/heuristics.py (default ``composite``),
    ``learned`` or ``learned:PATH``;
  - ``time``: seconds per TURN (move and throw together, as in the course's 5 s rule), or
    ``depth``: decisions searched (a move and a throw are one decision each);
  - ``recipe``: ``joint`` (default: one tree of moves, throws and landings as the rules play
    them) or ``course`` (the course's two searches: own steps against the opponent's throws,
    then own throws against the opponent's steps);
  - ``cands``: throws tried per throw node (default 10; 0 = every empty cell).

  Example: ``search:eval=flood,time=1``.
"""

from __future__ import annotations

import numpy as np

from tablegym.envs.trap.core import CAND, COURSE, GAME, MODE, TrapGame, TrapState, k_candidates
from tablegym.search.agents import check_options, int_option, is_learned, learned_path, parse_spec, seconds_option
from tablegym.search.evaluator import Evaluator
from tablegym.search.expectiminimax import ExpectiminimaxResult, SearchTables, expectiminimax

MOVE_SHARE = 0.6
"""Share of a turn's time spent on the move; the throw search starts from the move search's
transposition table, so it needs less."""
DEFAULT_CANDIDATES = 10


class SearchAgent:
    """Plays the move, then the throw, of an expectiminimax search with a given leaf evaluator."""

    def __init__(self, evaluator: Evaluator, *, time_limit: float | None = None, depth: int = 64,
                 recipe: str = "joint", candidates: int = DEFAULT_CANDIDATES, name: str | None = None) -> None:
        if recipe not in ("joint", "course"):
            raise ValueError(f"recipe must be 'joint' or 'course', got {recipe!r}")
        if candidates < 0:
            raise ValueError(f"cands must be >= 0, got {candidates!r}")
        if time_limit is None and depth >= 64:
            raise ValueError("a Trap search needs a budget: give time (seconds per turn) or depth")
        if time_limit is not None and time_limit <= 0:
            raise ValueError(f"time must be positive, got {time_limit!r}")
        self.evaluator = evaluator
        self.time_limit = time_limit
        self.depth = depth
        self.recipe = recipe
        self.candidates = candidates
        budget = f"depth={depth}" if time_limit is None else f"time={time_limit}"
        self.name = name or f"search:eval={evaluator.name},{budget},recipe={recipe}"
        self.tables: SearchTables | None = None
        self._table_player = -1
        self.last_result: ExpectiminimaxResult | None = None

    def search(self, state: TrapState) -> ExpectiminimaxResult:
        """Search ``state`` (a move or throw decision) with this agent's budget."""
        arr = state.array
        arr[CAND] = self.candidates
        arr[MODE] = COURSE if self.recipe == "course" else GAME
        root = TrapState(state.game, arr)
        moving = state.phase == "move"
        if self.tables is None or self._table_player != state.mover:
            # Stored values are seen from the root player (leaves are scored for it), so the
            # tables carry over between this player's searches, never to the other player's.
            # Allocating them (~40 MB) once, not every turn, matters for short searches.
            self.tables = SearchTables(state.game.spec.num_actions)
            self._table_player = state.mover
        elif moving:
            self.tables.age()
        limit = None
        if self.time_limit is not None:
            limit = self.time_limit * (MOVE_SHARE if moving else 1.0 - MOVE_SHARE)
        return expectiminimax(root, self.evaluator, moves=k_candidates, depth=self.depth,
                              time_limit=limit, tables=self.tables)

    def __call__(self, state: TrapState, rng: np.random.Generator) -> int:
        self.last_result = self.search(state)
        return self.last_result.action


def _opponents() -> dict:
    from tablegym.envs.trap.opponents import OPPONENTS

    return OPPONENTS


_OPPONENT_OPTIONS = {"medium": {"ties"}, "hard": {"depth"}, "hard-sound": {"depth"}}
"""The options each reference opponent takes in a spec."""


def _make_opponent(cls, spec: str, name: str, options: dict[str, str]):
    check_options(spec, options, _OPPONENT_OPTIONS.get(name, set()))
    if "depth" in options:
        try:
            return cls(int(options["depth"]))
        except ValueError:
            raise ValueError(f"depth must be a positive integer in {spec!r}") from None
    if "ties" in options:
        return cls(ties=options["ties"])
    return cls()


def make_evaluator(name: str) -> Evaluator:
    """A hand-made evaluator by name, ``learned`` (shipped checkpoint) or ``learned:PATH``."""
    if is_learned(name):
        from tablegym.models.learned import load_evaluator

        return load_evaluator(TrapGame(), learned_path(name))
    from tablegym.envs.trap.heuristics import EVALUATORS

    if name not in EVALUATORS:
        known = sorted(EVALUATORS) + ["learned", "learned:PATH"]
        raise ValueError(f"unknown Trap evaluator {name!r}; known: {', '.join(known)}")
    return EVALUATORS[name]


def make_agent(spec: str):
    """Build the Trap agent named by ``spec`` (see the module docstring)."""
    name, options = parse_spec(spec)
    opponents = _opponents()
    if name in opponents:
        return _make_opponent(opponents[name], spec, name, options)
    if name in ("search", "emm", "expectiminimax"):
        check_options(spec, options, {"eval", "time", "depth", "recipe", "cands"})
        time_limit = seconds_option(spec, options)
        depth = int_option(spec, options, "depth", 64)
        cands = int_option(spec, options, "cands", DEFAULT_CANDIDATES, low=0)  # 0: every empty cell
        if time_limit is None and "depth" not in options:
            time_limit = 1.0
        return SearchAgent(make_evaluator(options.get("eval", "composite")), time_limit=time_limit, depth=depth,
                           recipe=options.get("recipe", "joint"), candidates=cands, name=spec)
    known = sorted(opponents) + ["search"]
    raise ValueError(f"unknown agent {name!r} for trap; known: {', '.join(known)}")
