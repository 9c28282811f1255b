"""Agents by spec, for every game: the one route from ``NAME[:key=value,...]`` to a player.

The grammar and the reading of ``learned[:PATH]`` are ``tablegym.search.agents``'s; the
searchers, with their keys, are ``tablegym.search.searchers``'s. What a name means for a game
comes from its registry record, which holds data only:

* ``random``: uniformly random legal moves, in every game (unless the game's own ``random``
  says otherwise: Trap's course opponent).
* the game's fixed agents (``AGENTS`` of its ``agents`` module: Sim's Cassis levels, Trap's
  course opponents, Threesus, Friday's rule players), some with keys (``medium:ties=random``);
* a searcher the record lists (``searchers``), by its name, an alias (``ab``, ``emm``) or the
  game's own name for it (``aliases``: Trap's ``search``), with its keys; ``eval`` names a
  hand-made evaluator of the game (``EVALUATORS``), ``learned`` (the shipped network) or
  ``learned:PATH`` (any network file ``tablegym.models.learned.load_evaluator`` reads).
  e.g. ``alphabeta:eval=advanced,depth=5``, ``search:eval=flood,time=1``;
* a searcher of ``tablegym.interop`` where its framework is installed, in every game it plays
  (``openspiel-mcts:sims=200``, OpenSpiel's MCTS);
* ``policy:path=RUN/checkpoint.pt``: a PPO policy alone, no search (``tablegym.models.policy``),
  in every game with a vector env to train it on.

Every evaluator is checked against the game and rule options it was made for before a search
is built (``tablegym.envs.evaluator.check_game``: a one-line ``WrongGameError``).
"""

from __future__ import annotations

from tablegym import interop
from tablegym.envs import load, plugin
from tablegym.envs.core import Game
from tablegym.models.learned import CHECKPOINT_DIR, load_evaluator
from tablegym.models.trust import trusting
from tablegym.search.agents import Agent, RandomAgent, check_options, is_learned, learned_path, parse_spec
from tablegym.envs.evaluator import Evaluator, check_game
from tablegym.search.searchers import Searcher, searcher_named

__all__ = ["game_evaluators", "known_agents", "make_agent", "make_evaluator"]


def _game_module(game: Game):
    """The module with a game's ``EVALUATORS`` and ``AGENTS`` (its record's ``agents``)."""
    record = plugin(game.spec.name)
    if record.agents is None:
        raise ValueError(f"no agents known for game {game.spec.name!r}")
    return load(record.agents)


def game_evaluators(game: Game) -> dict[str, Evaluator]:
    """The hand-made evaluators of ``game`` by name."""
    return dict(getattr(_game_module(game), "EVALUATORS", {}))


def make_evaluator(game: Game, name: str, *, searcher: str | None = None) -> Evaluator:
    """A hand-made evaluator of ``game`` by name, ``learned`` (the network shipped for the game,
    or for its ``searcher`` where the record names one: ``checkpoints``) or ``learned:PATH``
    (``tablegym.models.learned.load_evaluator``)."""
    if is_learned(name):
        shipped = plugin(game.spec.name).checkpoints.get(searcher or "")
        return load_evaluator(game, learned_path(name), default=CHECKPOINT_DIR / shipped if shipped else None)
    evaluators = game_evaluators(game)
    if name not in evaluators:
        known = sorted(evaluators) + ["learned", "learned:PATH"]
        title = game.spec.name.capitalize()
        raise ValueError(f"unknown {title} evaluator {name!r}; known: {', '.join(known)}")
    return evaluators[name]


def _checked(evaluator, game: Game):
    """The evaluator, refused in one line if it was made for another game or rules."""
    if isinstance(evaluator, Evaluator):
        check_game(evaluator, game.new_initial_state())
    return evaluator


def _fixed_agents(game: Game) -> dict:
    """The game's fixed agents by name (``AGENTS`` of its module; none without one)."""
    return getattr(_game_module(game), "AGENTS", {}) if plugin(game.spec.name).agents else {}


def known_agents(game: Game) -> list[str]:
    """The agent names ``make_agent`` takes for ``game``: random, its fixed agents, its searchers."""
    record = plugin(game.spec.name)
    fixed = _fixed_agents(game)
    own = {v: k for k, v in record.aliases.items()}
    searchers = [f"{s} ({own[s]})" if s in own else s for s in record.searchers]
    policy = ["policy:path=PATH"] if record.vector else []
    return ["random", *sorted(n for n in fixed if n != "random"), *searchers, *interop.searchers(game), *policy]


def _build(game: Game, entry: Searcher, spec: str, options: dict[str, str], build=None, *,
           defaults=None, extra=(), searcher: str | None = None, **kwargs) -> Agent:
    typed = entry.read(spec, options, defaults=defaults, extra=extra)
    evaluator = None
    if entry.evaluated:
        typed["eval"] = typed["eval"] or "learned"
        evaluator = _checked(make_evaluator(game, typed["eval"], searcher=searcher), game)
    return (build or entry.build)(game, evaluator, typed, name=spec, **kwargs)


def make_agent(game: Game, spec: str, *, trust_code: bool | None = None) -> Agent:
    """Build the agent named by ``spec`` for ``game`` (see the module docstring). ``trust_code``:
    whether a Stable-Baselines3 zip in the spec may load with SB3's own loader, which runs code
    the file carries (default: the decision in force, tablegym.models.trust; unset: read as data)."""
    if trust_code is not None:
        with trusting(trust_code, f"trust_code={bool(trust_code)}"):
            return make_agent(game, spec)
    record = plugin(game.spec.name)
    name, options = parse_spec(spec)
    fixed = _fixed_agents(game)
    if name in fixed:
        entry = fixed[name]
        if isinstance(entry, Searcher):
            return _build(game, entry, spec, options, defaults=record.defaults.get(name))
        check_options(spec, options, set())
        return entry()
    if name == "random":
        check_options(spec, options, set())
        return RandomAgent()
    if name == "policy" and record.vector:
        from tablegym.models.policy import PolicyAgent, load_actor_critic

        check_options(spec, options, {"path"})
        if not options.get("path"):
            raise ValueError(f"agent {spec!r} needs path=RUN/checkpoint.pt (a tablegym train --algo ppo run)")
        return PolicyAgent(load_actor_critic(options["path"], game), game, name=spec)
    plugged = interop.searchers(game)
    if name in plugged:  # a searcher declared outside search/ (OpenSpiel's MCTS), for every game it plays
        return _build(game, plugged[name], spec, options)
    searcher = searcher_named(record.aliases.get(name, name))
    if searcher is None or searcher.name not in record.searchers:
        why = "" if searcher is None else f" ({searcher.name} does not play it)"
        raise ValueError(f"unknown agent {name!r} for {game.spec.name}{why}; known: {', '.join(known_agents(game))}")
    own = record.searchers[searcher.name]
    build = load(own) if own else searcher.build
    if build is None:
        raise ValueError(f"{searcher.name} has no game-independent search; {game.spec.name}'s record names none")
    extra, kwargs = tuple(getattr(build, "keys", ())), {}
    if searcher.filtered and record.move_filter:
        move_filter = load(record.move_filter)
        extra, kwargs = extra + move_filter.keys, {"move_filter": move_filter}
    return _build(game, searcher, spec, options, build, defaults=record.defaults.get(searcher.name), extra=extra,
                  searcher=searcher.name, **kwargs)
