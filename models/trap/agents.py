"""Trap's players, as data for the one route (tablegym.models.agents.make_agent).

* ``random``, ``easy``, ``medium``, ``hard``: the course's reference opponents
  (envs/trap/opponents.py); ``hard`` is the course's HardAI quirks included, ``hard-sound``
  the cleaned-up, stronger version. ``medium:ties=course|first|random`` picks Medium's tie
  rule (default ``course``), ``hard:depth=D`` and ``hard-sound:depth=D`` the search depth.
* ``search`` (Trap's name for ``expectiminimax``, alias ``emm``): expectiminimax with alpha-beta,
  Star1 chance pruning, a transposition table and iterative deepening (search/expectiminimax_search.py).
  Keys:

  - ``eval``: a hand-made evaluator of envs/trap/heuristics.py (default ``composite``),
    ``learned`` or ``learned:PATH``;
  - ``time``: seconds per TURN (move and throw together, as in the course's 5 s rule), or
    ``depth``: decisions searched (a move and a throw are one decision each);
  - ``recipe``: ``joint`` (default: one tree of moves, throws and landings as the rules play
    them) or ``course`` (the course's two searches: own steps against the opponent's throws,
    then own throws against the opponent's steps);
  - ``cands``: throws tried per throw node (default 10; 0 = every empty cell).

  Example: ``search:eval=flood,time=1``. The last two keys are the move filter's (``MOVE_FILTER``).
"""

from __future__ import annotations

from tablegym.envs.evaluator import Evaluator
from tablegym.envs.trap.core import CAND, COURSE, GAME, MODE, TrapState, k_candidates
from tablegym.envs.trap.heuristics import EVALUATORS  # noqa: F401 (the game's evaluators, by name)
from tablegym.search.agents import ExpectiminimaxAgent
from tablegym.search.searchers import Key, MoveFilter, Searcher

MOVE_SHARE = 0.6
"""Share of a turn's time spent on the move; the throw search starts from the move search's
transposition table, so it needs less."""
DEFAULT_CANDIDATES = 10


def _prepare(state: TrapState, settings) -> TrapState:
    arr = state.array
    arr[CAND] = settings["cands"]
    arr[MODE] = COURSE if settings["recipe"] == "course" else GAME
    return TrapState(state.game, arr)


MOVE_FILTER = MoveFilter(
    k_candidates,
    (Key("recipe", "choice", "joint", choices=("joint", "course")), Key("cands", "int", DEFAULT_CANDIDATES, low=0)),
    prepare=_prepare,
    time_share=lambda state: MOVE_SHARE if state.phase == "move" else 1.0 - MOVE_SHARE,
    turn_starts=lambda state: state.phase == "move",
)
"""Trap's searches try the ``cands`` most promising throws (0: every empty cell) in the
``recipe``'s tree, and split a turn's time: ``MOVE_SHARE`` for the move, the rest for the throw."""


class SearchAgent(ExpectiminimaxAgent):
    """Plays the move, then the throw, of an expectiminimax search with a given leaf evaluator
    (``search:...`` specs build the same through the searcher registry)."""

    def __init__(
        self,
        evaluator: Evaluator,
        *,
        time_limit: float | None = None,
        depth: int = 64,
        recipe: str = "joint",
        candidates: int = DEFAULT_CANDIDATES,
        name: str | None = None,
    ) -> None:
        if recipe not in ("joint", "course"):
            raise ValueError(f"recipe must be 'joint' or 'course', got {recipe!r}")
        if candidates < 0:
            raise ValueError(f"cands must be >= 0, got {candidates!r}")
        budget = f"depth={depth}" if time_limit is None else f"time={time_limit}"
        super().__init__(
            evaluator,
            depth=depth,
            time_limit=time_limit,
            move_filter=MOVE_FILTER,
            settings={"recipe": recipe, "cands": candidates},
            name=name or f"search:eval={evaluator.name},{budget},recipe={recipe}",
        )
        self.recipe = recipe
        self.candidates = candidates


def _opponents() -> dict:
    from tablegym.envs.trap.opponents import OPPONENTS

    return OPPONENTS


def _opponent_entry(name: str, cls) -> Searcher:
    """A reference opponent as a fixed agent of the one route, with the keys it takes."""
    keys = {
        "medium": (Key("ties", "choice", "course", choices=("course", "first", "random")),),
        "hard": (Key("depth", "int", 3),),
        "hard-sound": (Key("depth", "int", 3),),
    }.get(name, ())
    return Searcher(name, keys, lambda game, evaluator, options, *, name: cls(**options), (cls.__doc__ or "").split("\n")[0])


AGENTS = {name: _opponent_entry(name, cls) for name, cls in _opponents().items()}
"""The course's reference opponents, by name (the fixed agents of this game's record)."""
