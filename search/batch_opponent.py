"""A compiled search as the other seat of a vector env's batch (envs/vector.py).

``gymnasium.make_vec("tablegym/Trilobite-v0", num_envs=N, opponent="alphabeta:eval=advanced,depth=2")``
plays every board's other seat with the searcher's own compiled root search, inside the step's
one compiled call. This module is the search layer's half of that: the batch kernels of
envs/vector.py take the other seat's move as ``(move, arguments)`` and call ``move(s, arguments)``,
so the rules layer imports no search, and ``SearchOpponent`` builds the arguments from a spec of
the one route (tablegym.models.agents.make_agent).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from tablegym.envs.core import Game, kernel_state
from tablegym.envs.vector_step import DATA_KILLERS, DATA_TT_KEY, MOVER_T, BatchOpponent, CompiledKernel, search_kernels
from tablegym.search.alphabeta_search import search_root as alphabeta_root
from tablegym.search.expectiminimax_search import MAX_OUTCOMES
from tablegym.search.expectiminimax_search import root_search as expectiminimax_root
from tablegym.search.table import MAX_PLY

ALPHABETA, EXPECTIMINIMAX = 0, 1
"""Which compiled search plays the other seat (``kind`` in ``SEARCH_DATA_T``)."""
NO_LIMIT = 2**62
"""The node limit of a depth-limited search."""


@njit(cache=True)
def searched_move(s, moves, push, pop, to_move, outcome, key, chance, evaluate, data):
    """The move of the compiled search over the kernels and ``data`` (``SearchOpponent``) at
    ``s``, whose player to move is the other seat; ``s`` is left as it was (envs/vector.py's
    ``MOVER_T``: the batch kernels call it through that type, so the rules layer imports no search).

    Alpha-beta searches ``depth`` plies at once: its move (the first maximal one in legal
    order) does not depend on the transposition table, the killers or the history, nor on the
    shallower iterations the single env's iterative deepening runs first, so one table a root
    player serves every board. Expectiminimax starts from cleared tables and deepens 1, 2, ...
    ``depth`` as ``expectiminimax()`` does (its root order follows the last iteration's best
    move, and a win's value counts the plies from the root), on the root with the move
    filter's settings written in."""
    kind, depth, bound, params, root, settings_at, settings = data[:DATA_TT_KEY]
    tt_rows = data[DATA_TT_KEY:DATA_KILLERS]
    killers, history, bufs, scores, pv, pv_len, outs, probs, counters, values = data[DATA_KILLERS:]
    root[:] = s
    for j in range(settings_at.shape[0]):
        root[settings_at[j]] = settings[j]
    p = to_move(root)
    tt = (tt_rows[0][p], tt_rows[1][p], tt_rows[2][p], tt_rows[3][p], tt_rows[4][p])
    rules = (moves, push, pop, to_move, outcome, key)
    if kind == ALPHABETA:
        counters[:] = 0
        tables = (tt, killers, history, bufs, scores, pv, pv_len)
        move, _, _ = alphabeta_root(root, depth, (rules, evaluate, params), tables, counters, NO_LIMIT, values)
        return move
    tt_rows[0][p, :] = 0  # SearchTables' empty table
    tt_rows[2][p, :] = -1
    tt_rows[4][p, :] = -1
    history[:] = 0.0
    move = -1
    for d in range(1, depth + 1):
        counters[:] = 0
        tables = (tt, history, bufs, scores, outs, probs)
        move, _, _ = expectiminimax_root(root, d, (rules, chance, evaluate, params), tables, counters, bound, NO_LIMIT, values)
    return move


COMPILED_SEARCHERS = ("alphabeta", "expectiminimax")
"""The searchers a batch runs as the other seat, where a game's record lists them."""
TT_BITS = {"alphabeta": 16, "expectiminimax": 12}
"""Transposition-table slots (log2) a root player: alpha-beta's table serves every search,
expectiminimax's is cleared before each (the cost of a clear grows with it)."""


def _accepted(game: Game, references: Sequence[str] = ()) -> str:
    """What a batch of ``game`` takes as ``opponent``, in words."""
    from tablegym.envs import above, plugin

    game_evaluators = above("game_evaluators")  # the models layer, through the registry
    record = plugin(game.spec.name)
    own = {v: k for k, v in record.aliases.items()}
    forms = [
        f"'{own.get(s, s)}:eval=E,depth=D'" + (f" ({s})" if s in own else "")
        for s in record.searchers
        if s in COMPILED_SEARCHERS and not record.searchers[s]
    ]
    evaluators = [n for n, e in sorted(game_evaluators(game).items()) if e.compiled] + ["learned", "learned:PATH"]
    searches = " or ".join(forms) if forms else "none for this game"
    players = f", or a reference player: {', '.join(references)}" if references else ""
    return (
        f"a vector env's opponent must be 'random' or None (self-play), or a compiled search at a depth: "
        f"{searches}, E one of {', '.join(evaluators)}{players}"
    )


class SearchOpponent(BatchOpponent):
    """A compiled search as the other seat of a batch, from a spec of the one route
    (``tablegym.models.agents.make_agent``: ``alphabeta:eval=advanced,depth=2``, Trap's
    ``search:eval=composite,depth=2``) or from the agent it builds.

    It runs the searcher's own compiled root search (search/alphabeta_search.py,
    search/expectiminimax_search.py) with the agent's evaluator kernel, depth, move filter and settings,
    on tables of its own (``kernels`` and ``data``: the search arguments of the batch kernels).
    A search opponent needs a depth (a time budget would make the moves depend on the machine)
    and a compiled evaluator; anything else is refused with a ``ValueError`` saying what is taken.
    """

    def __init__(self, game: Game, opponent: Any, references: Sequence[str] = ()) -> None:
        from tablegym.envs import above, plugin
        from tablegym.envs.evaluator import check_game
        from tablegym.search.agents import AlphaBetaAgent, ExpectiminimaxAgent, parse_spec
        from tablegym.search.searchers import searcher_named

        record = plugin(game.spec.name)
        allowed = [s for s in record.searchers if s in COMPILED_SEARCHERS and not record.searchers[s]]
        if isinstance(opponent, str):
            name, _ = parse_spec(opponent)
            searcher = searcher_named(record.aliases.get(name, name))
            if searcher is None or searcher.name not in allowed:
                what = "no compiled search" if searcher is None else f"{searcher.name}, not one for {game.spec.name}"
                raise ValueError(f"{_accepted(game, references)}; got {opponent!r} ({what})")
            agent = above("make_agent")(game, opponent)  # the models layer, through the registry
        elif isinstance(opponent, (AlphaBetaAgent, ExpectiminimaxAgent)):
            agent = opponent
        else:
            raise ValueError(f"{_accepted(game, references)}; got {opponent!r}")
        name = "alphabeta" if isinstance(agent, AlphaBetaAgent) else "expectiminimax"
        if name not in allowed:
            raise ValueError(
                f"{_accepted(game, references)}; got {getattr(agent, 'name', agent)!r} ({name} does not play {game.spec.name})"
            )
        if agent.time_limit is not None:
            raise ValueError(
                f"{_accepted(game, references)}; got {agent.name!r} (a time budget: give depth=D, so "
                f"that the moves do not depend on the machine)"
            )
        evaluator = agent.evaluator
        if not evaluator.compiled:
            raise ValueError(
                f"{_accepted(game, references)}; got {agent.name!r} (evaluator {evaluator.name!r} has no compiled kernel)"
            )
        state = kernel_state(game.new_initial_state())
        check_game(evaluator, state)
        self.agent = agent
        """The one route's agent: the single env's opponent with the same spec."""
        self.name = agent.name
        spec, k = game.spec, state.kernels
        move_filter = getattr(agent, "move_filter", None)
        init = state.array
        settings_at = np.zeros(0, dtype=np.int64)
        if move_filter is not None:
            if move_filter.push is not None:
                raise ValueError(f"{game.spec.name}'s move filter plays search-only moves; a batch cannot search it")
            prepared = move_filter.prepare(state, agent.settings).array
            settings_at = np.flatnonzero(prepared != init).astype(np.int64)
            # the words the filter's settings write: play never changes them, so each board holds init's
        if name == "alphabeta":
            kind, depth = ALPHABETA, min(agent.depth, MAX_PLY - 2, spec.max_game_length)
        else:
            kind, depth = EXPECTIMINIMAX, min(agent.depth, MAX_PLY // 2 - 4)
        moves = move_filter.moves if move_filter is not None else k.moves
        self.kernels = search_kernels(state, moves, evaluator.kernel)
        """The kernels in ``SEARCH_KERNELS_T``'s order."""
        self.mover = CompiledKernel(searched_move, MOVER_T)
        """``searched_move`` as the batch kernels call it."""
        size, width = 1 << TT_BITS[name], spec.num_actions
        self.data = (
            kind,
            depth,
            float(getattr(evaluator, "bound", 1e5)),
            np.ascontiguousarray(evaluator.params, dtype=np.float64),
            init.copy(),
            settings_at,
            np.ascontiguousarray(prepared[settings_at]) if move_filter is not None else settings_at.copy(),
            np.zeros((2, size), dtype=np.int64),
            np.zeros((2, size)),
            np.full((2, size), -1, dtype=np.int64),
            np.zeros((2, size), dtype=np.int64),
            np.full((2, size), -1, dtype=np.int64),
            np.full((MAX_PLY, 2), -1, dtype=np.int64),
            np.zeros(width),
            np.zeros((MAX_PLY, width), dtype=np.int64),
            np.zeros((MAX_PLY, width)),
            np.zeros((MAX_PLY, MAX_PLY), dtype=np.int64),
            np.zeros(MAX_PLY, dtype=np.int64),
            np.zeros((MAX_PLY, MAX_OUTCOMES), dtype=np.int64),
            np.zeros((MAX_PLY, MAX_OUTCOMES)),
            np.zeros(4, dtype=np.int64),
            np.zeros(max(width, MAX_OUTCOMES)),
        )
        """``SEARCH_DATA_T``: kind, depth, bound, params, root, settings' words and values, tables."""
