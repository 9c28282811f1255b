"""Bridges between tablegym and other game frameworks.

- ``tablegym.interop.openspiel`` (the optional extra ``openspiel``): every tablegym game as a
  pyspiel game (``pyspiel.load_game("python_tablegym_trilobite")``), and OpenSpiel's Python
  MCTS as a tablegym agent.

The searchers declared here play through the one route from a spec to an agent
(``tablegym.models.agents.make_agent``) in every game, where their framework is installed
(``searchers``); this module imports none of them, so it costs nothing without them.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.util import find_spec
from typing import Any

from tablegym.envs.core import Game
from tablegym.search.searchers import TIME, Key, Searcher

__all__ = ["OPENSPIEL_MCTS", "searchers"]


def _openspiel_mcts(game: Game, evaluator: Any, options: Mapping[str, Any], *, name: str):
    from tablegym.envs.evaluator import Evaluator, check_game, position_evaluator
    from tablegym.interop.openspiel import MCTSAgent
    from tablegym.models.agents import make_evaluator

    sims, rollouts, value, scale, seconds = (options[k] for k in ("sims", "rollouts", "eval", "scale", "time"))
    if value is not None and rollouts is not None:
        raise ValueError(
            f"rollouts and eval exclude each other in {name!r}: the leaves are valued by random playouts or by the evaluator"
        )
    if scale is not None and value is None:
        raise ValueError(f"scale needs an eval in {name!r}: it converts the evaluator's values")
    if value is not None:
        evaluator = make_evaluator(game, value)
        if isinstance(evaluator, Evaluator):
            check_game(evaluator, game.new_initial_state())
        evaluator = position_evaluator(evaluator)
    if sims is None and seconds is None:
        sims = 1000
    return MCTSAgent(game, sims=sims, rollouts=rollouts or 1, evaluator=evaluator, scale=scale, time_limit=seconds, name=name)


OPENSPIEL_MCTS = Searcher(
    "openspiel-mcts",
    (Key("sims", "int"), Key("rollouts", "int"), Key("eval", "name"), Key("scale", "int"), TIME),
    _openspiel_mcts,
    "OpenSpiel's Python MCTS (MCTSBot, UCT c=2): sims simulations and/or time seconds a move (1000 "
    "simulations when neither is given), leaves valued by rollouts random playouts (1) or by the "
    "evaluator eval (a hand-made one, learned, learned:PATH), scale of its units making one unit of "
    "the game's utility (default: its win value, else 1); needs the openspiel extra",
)
"""``openspiel-mcts:sims=N[,rollouts=R][,eval=E[,scale=S]][,time=T]`` (tablegym.interop.openspiel.MCTSAgent)."""


def searchers(game: Game) -> dict[str, Searcher]:
    """The searchers declared here that play ``game`` in this installation, by name: OpenSpiel's
    MCTS wherever pyspiel imports (every game is sequential with terminal rewards)."""
    return {OPENSPIEL_MCTS.name: OPENSPIEL_MCTS} if find_spec("pyspiel") is not None else {}
