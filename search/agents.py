"""Agents: policies that pick an action in a state (players for envs, matches and the CLI),
and the one grammar that names them.

Spec grammar, shared by every game: ``NAME[:key=value,key=value...]``. The value of ``eval`` may
itself hold a ':' (``eval=learned:runs/x.pt``). ``learned`` names the network shipped for a
game and ``learned:PATH`` one saved at PATH; ``learned_path`` is the one reading of that.
Building agents from specs needs evaluators and networks, so it lives one layer up, in
``tablegym.models.agents``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np

from tablegym.envs.core import State, kernel_state

if TYPE_CHECKING:  # the searches load compiled code: imported where an agent is made
    from tablegym.search.alphabeta_search import SearchResult
    from tablegym.search.bestfirst import BestFirstResult
    from tablegym.search.expectimax_search import ExpectimaxResult
    from tablegym.search.expectiminimax_search import ExpectiminimaxResult, SearchTables


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
        from tablegym.search.alphabeta_search import alphabeta

        self._search = alphabeta
        self.evaluator = evaluator
        self.depth = depth
        self.time_limit = time_limit
        budget = f"depth={depth}" if time_limit is None else f"time={time_limit}"
        self.name = name or f"alphabeta:eval={evaluator.name},{budget}"
        self.last_result: SearchResult | None = None

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        result = self._search(state, self.evaluator, depth=self.depth, time_limit=self.time_limit)
        self.last_result = result
        return result.action


class ExpectiminimaxAgent:
    """Plays the move of an expectiminimax search (search/expectiminimax_search.py) for two-player games
    with chance, depth decisions deep or ``time_limit`` seconds a turn.

    ``move_filter`` (a game's ``MoveFilter``, tablegym.search.searchers) narrows the moves tried
    with its ``settings`` and splits a turn's time between its decisions. The transposition table
    is kept between this player's decisions, never handed to the other player (stored values are
    seen from the root player); allocating it (~40 MB) once, not every turn, matters for short
    searches."""

    def __init__(
        self,
        evaluator,
        *,
        depth: int = 64,
        time_limit: float | None = None,
        move_filter=None,
        settings: dict | None = None,
        name: str | None = None,
    ) -> None:
        if time_limit is None and depth >= 64:
            raise ValueError("an expectiminimax search needs a budget: give time (seconds per turn) or depth")
        if time_limit is not None and time_limit <= 0:
            raise ValueError(f"time must be positive, got {time_limit!r}")
        self.evaluator = evaluator
        self.depth = depth
        self.time_limit = time_limit
        self.move_filter = move_filter
        self.settings = dict(settings or {})
        budget = f"depth={depth}" if time_limit is None else f"time={time_limit}"
        self.name = name or f"expectiminimax:eval={evaluator.name},{budget}"
        self.tables: SearchTables | None = None
        self._table_player = -1
        self.last_result: ExpectiminimaxResult | None = None

    def search(self, state: State) -> ExpectiminimaxResult:
        """Search the decision ``state`` with this agent's budget."""
        from tablegym.search.expectiminimax_search import SearchTables, expectiminimax

        f = self.move_filter
        root = kernel_state(f.prepare(state, self.settings) if f else state)
        player = state.current_player()
        if self.tables is None or self._table_player != player:
            self.tables = SearchTables(state.game.spec.num_actions)
            self._table_player = player
        elif f is None or f.turn_starts(state):
            self.tables.age()
        limit = None if self.time_limit is None else self.time_limit * (f.time_share(state) if f else 1.0)
        return expectiminimax(
            root, self.evaluator, moves=f.moves if f else None, depth=self.depth, time_limit=limit, tables=self.tables
        )

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        result = self.search(state)
        self.last_result = result
        return result.action


class ExpectimaxAgent:
    """Plays the move of the generic compiled expectimax (search/expectimax_search.py), ``depth`` player
    moves deep, for any game with chance on the common contract."""

    def __init__(self, evaluator, *, depth: int, name: str | None = None) -> None:
        from tablegym.search.expectimax_search import expectimax

        if depth < 1:
            raise ValueError(f"depth must be >= 1, got {depth!r}")
        self._search = expectimax
        self.evaluator = evaluator
        self.depth = depth
        self.name = name or f"expectimax:eval={evaluator.name},depth={depth}"
        self.last_result: ExpectimaxResult | None = None

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        result = self._search(state, self.evaluator, depth=self.depth)
        self.last_result = result
        return result.action


class BestFirstAgent:
    """Plays the move of a best-first search (search/bestfirst.py) polling ``nodes`` states, for any
    game with chance on the common contract; each decision draws its chance stream from ``rng``.

    ``worlds`` > 1 splits the budget over that many sampled worlds and plays the best mean
    (``best_first_search``). ``move_filter`` (a game's ``MoveFilter``) gives the moves searched
    and, where it has search-only moves (Friday's one destroy subset), the push that plays them
    and ``first_step``, the legal action such a move starts with. ``polled``, ``generated``,
    ``decisions`` and ``seconds`` add up over the agent's searches; ``values`` holds the last
    search's value of each move searched."""

    def __init__(self, evaluator, *, nodes: int = 1000, worlds: int = 1, move_filter=None, name: str | None = None) -> None:
        from tablegym.search.bestfirst import best_first_search

        if nodes < 1:
            raise ValueError(f"the node budget must be at least 1, got {nodes}")
        if not 1 <= worlds <= nodes:
            raise ValueError(f"worlds must lie in 1..nodes ({nodes}), got {worlds}")
        self._search = best_first_search
        self.evaluator = evaluator
        self.nodes = nodes
        self.worlds = worlds
        self.move_filter = move_filter
        self.name = name or f"bestfirst:eval={evaluator.name},nodes={nodes}" + (f",worlds={worlds}" if worlds > 1 else "")
        self.last_result: BestFirstResult | None = None
        self.values = np.zeros(0)
        self.polled = self.generated = self.decisions = 0
        self.seconds = 0.0

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        from tablegym.envs.evaluator import check_game

        check_game(self.evaluator, state)
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        f = self.move_filter
        root = kernel_state(state)
        kernels = root.kernels if f is None else f.kernels(root.kernels)
        moves = np.empty(max(state.game.spec.num_actions, 1) + 1, dtype=np.int64)
        if kernels.moves(root._s, moves) == 1:  # nothing to choose after filtering
            action = int(moves[0])
        else:
            result = self._search(
                root, self.evaluator, nodes=self.nodes, seed=int(rng.integers(1, 2**62)), kernels=kernels, worlds=self.worlds
            )
            self.last_result, action = result, result.action
            self.values = np.array(list(result.values.values()))
            self.polled += result.polled
            self.generated += result.generated
            self.seconds += result.seconds
            self.decisions += 1
        return action if action in legal else f.first_step(state, action)


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
