"""Agents by spec, for every game: the front door that turns ``NAME[:key=value,...]`` into a player.

The grammar and the reading of ``learned[:PATH]`` are ``tablegym.search.agents``'s, shared by
every game. What a name means comes from the game's registry record (``agents``):

* ``random``: uniformly random legal moves, in every game.
* ``alphabeta`` (alias ``ab``), in games whose record has no agent grammar of its own: keys
  ``eval`` (a hand-made evaluator of the game, ``learned`` for the shipped network or
  ``learned:PATH``), ``depth`` (plies) and/or ``time`` (seconds per move), e.g.
  ``alphabeta:eval=advanced,depth=5``.
* the game's own agents: its module's ``AGENTS`` (Sim's Cassis levels ``dumb`` ... ``expert``),
  or its own ``make_agent(spec)`` for a game with its own searchers (Trap's ``search``,
  Threes' ``expectimax``, Friday's ``bestfirst`` and ``mc``; see their modules).
"""

from __future__ import annotations

from tablegym.envs import load, plugin
from tablegym.envs.core import Game
from tablegym.models.learned import load_evaluator
from tablegym.models.sb3_files import trusting
from tablegym.search.agents import (Agent, AlphaBetaAgent, RandomAgent, check_options, int_option, is_learned, learned_path,
                                   parse_spec, seconds_option)
from tablegym.search.evaluator import Evaluator, check_game

__all__ = ["game_evaluators", "make_agent", "make_evaluator"]


def _game_module(game: Game):
    """The module with a game's evaluators and agents (``EVALUATORS``, ``AGENTS``), or one that
    builds agents from specs itself (``make_agent``): the ``agents`` of its registry record."""
    record = plugin(game.spec.name)
    if record.agents is None:
        raise ValueError(f"no agents known for game {game.spec.name!r}")
    return load(record.agents)


def game_evaluators(game: Game) -> dict[str, Evaluator]:
    """The hand-made evaluators of ``game`` by name."""
    return dict(getattr(_game_module(game), "EVALUATORS", {}))


def make_evaluator(game: Game, name: str) -> Evaluator:
    """A hand-made evaluator of ``game`` by name, ``learned`` (the shipped network) or
    ``learned:PATH`` (``tablegym.models.learned.load_evaluator``)."""
    if is_learned(name):
        return load_evaluator(game, learned_path(name))
    evaluators = game_evaluators(game)
    if name not in evaluators:
        known = sorted(evaluators) + ["learned", "learned:PATH"]
        raise ValueError(f"unknown evaluator {name!r} for {game.spec.name}; known: {', '.join(known)}")
    return evaluators[name]


def make_agent(game: Game, spec: str, *, trust_code: bool | None = None) -> Agent:
    """Build the agent named by ``spec`` for ``game`` (see the module docstring). ``trust_code``:
    whether a Stable-Baselines3 zip in the spec may load with SB3's own loader, which runs code
    the file carries (default: the ``--trust-model-code`` setting, off: read as data)."""
    if trust_code is not None:
        with trusting(trust_code):
            return make_agent(game, spec)
    module = _game_module(game)
    if hasattr(module, "make_agent"):  # a game with its own searchers and spec grammar
        agent = module.make_agent(spec)  # built for the game's default rules: are they these?
        evaluator = getattr(agent, "evaluator", None)
        if isinstance(evaluator, Evaluator):
            check_game(evaluator, game.new_initial_state())
        return agent
    name, options = parse_spec(spec)
    if name == "random":
        check_options(spec, options, set())
        return RandomAgent()
    if name in ("alphabeta", "ab"):
        check_options(spec, options, {"eval", "depth", "time"})
        depth = int_option(spec, options, "depth", 64)
        time_limit = seconds_option(spec, options)
        evaluator = make_evaluator(game, options.get("eval", "learned"))
        if "depth" not in options and time_limit is None:
            time_limit = 1.0
        return AlphaBetaAgent(evaluator, depth=depth, time_limit=time_limit, name=spec)
    agents = getattr(module, "AGENTS", {})
    if name in agents:
        check_options(spec, options, set())
        return agents[name]()
    known = ["random", "alphabeta"] + sorted(agents)
    raise ValueError(f"unknown agent {name!r} for {game.spec.name}; known: {', '.join(known)}")
