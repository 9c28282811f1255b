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

import os
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablegym import interop
from tablegym.envs import load, plugin
from tablegym.envs.core import Game
from tablegym.envs.evaluator import Evaluator, WrongGameError, check_game
from tablegym.envs.limits import current as current_limits
from tablegym.models.learned import CHECKPOINT_DIR, default_checkpoint, load_evaluator
from tablegym.models.trust import trust_decision, trusting
from tablegym.search.agents import Agent, RandomAgent, check_options, is_learned, learned_path, parse_spec
from tablegym.search.searchers import Searcher, searcher_named

__all__ = ["AgentPlan", "build_agent", "game_evaluators", "known_agents", "make_agent", "make_evaluator", "plan_agent"]


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
        return _network(game, learned_path(name), CHECKPOINT_DIR / shipped if shipped else None)
    evaluators = game_evaluators(game)
    if name not in evaluators:
        known = sorted(evaluators) + ["learned", "learned:PATH"]
        title = game.spec.name.capitalize()
        raise ValueError(f"unknown {title} evaluator {name!r}; known: {', '.join(known)}")
    return evaluators[name]


_NETWORKS: OrderedDict[tuple, Evaluator] = OrderedDict()
"""Learned evaluators read in this process, by game, rules, file and the loading decisions in
force (``_network``); the most recently used few."""
NETWORKS_KEPT = 8


def _file_identity(path: str | os.PathLike | None, default: Path | None, game: Game) -> tuple | None:
    """What says a network file is the one read before: its real path, inode, size and times
    (as Python's own bytecode cache trusts size and time); None when it cannot be seen."""
    where = path or default or default_checkpoint(game.spec.name)
    try:
        st = os.stat(where)
    except OSError:
        return None
    return os.path.realpath(where), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _network(game: Game, path: str | None, default: Path | None) -> Evaluator:
    """``load_evaluator``'s evaluator, read once a process: a match builds its agents again for
    every game, in every worker, and reading the network again each time is most of what a
    short game costs. A file changed since (another size, time or inode) or other file budgets
    read it anew; a file trusted to run code is never kept (its loader warns at every use).
    Agents that share an evaluator cannot disturb each other's values, in one thread or several:
    each thread's searches write into a copy of the weights of their own
    (``tablegym.envs.evaluator.Evaluator.params``)."""
    identity = _file_identity(path, default, game)
    if identity is None or trust_decision().trusted:  # missing: the loader says so; trusted: it warns each time
        return load_evaluator(game, path, default=default)
    key = (game.spec.name, tuple(sorted(game.spec.options.items())), identity, current_limits())
    if key in _NETWORKS:
        _NETWORKS.move_to_end(key)
        return _NETWORKS[key]
    evaluator = _NETWORKS[key] = load_evaluator(game, path, default=default)
    while len(_NETWORKS) > NETWORKS_KEPT:
        _NETWORKS.popitem(last=False)
    return evaluator


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


@dataclass(frozen=True)
class AgentPlan:
    """A spec read once (``plan_agent``): plain data that pickles to a worker, where
    ``build_agent`` makes the agent from it without reading the spec again. Its typed keys are
    the searcher's, with the game's defaults filled in; ``eval`` names the evaluator."""

    spec: str
    game: str
    options: tuple[tuple[str, Any], ...]
    kind: str
    """``random``, ``fixed`` (a game's own agent), ``policy``, ``plugged`` (a searcher of
    tablegym.interop) or ``searcher``."""
    name: str = ""
    """The fixed agent's or the searcher's name (the registry's, after aliases)."""
    keys: tuple[tuple[str, Any], ...] = ()

    @property
    def typed(self) -> dict[str, Any]:
        return dict(self.keys)


def _plan(game: Game, spec: str, kind: str, name: str = "", keys: dict[str, Any] | None = None) -> AgentPlan:
    return AgentPlan(spec, game.spec.name, tuple(sorted(game.spec.options.items())), kind, name, tuple((keys or {}).items()))


def _searcher_keys(entry: Searcher, spec: str, options: dict[str, str], defaults=None, extra=()) -> dict[str, Any]:
    typed = entry.read(spec, options, defaults=defaults, extra=extra)
    if entry.evaluated:
        typed["eval"] = typed["eval"] or "learned"
    return typed


def _own_build(record, searcher: Searcher):
    """The game's own build of ``searcher`` (its record's ``searchers`` entry) or the generic one,
    and the keyword arguments and extra keys its move filter adds."""
    own = record.searchers[searcher.name]
    build = load(own) if own else searcher.build
    if build is None:
        raise ValueError(f"{searcher.name} has no game-independent search; {record.name}'s record names none")
    extra, kwargs = tuple(getattr(build, "keys", ())), {}
    if searcher.filtered and record.move_filter:
        move_filter = load(record.move_filter)
        extra, kwargs = extra + move_filter.keys, {"move_filter": move_filter}
    return build, extra, kwargs


_PLANS: dict[tuple, AgentPlan] = {}
"""Specs read in this process, by game, rule options and spec (a plan depends on nothing else)."""


def plan_agent(game: Game, spec: str) -> AgentPlan:
    """Read ``spec`` for ``game`` (see the module docstring): its name resolved, its keys typed and
    checked, in one line a ValueError naming what is wrong and what is accepted. Nothing is
    built and no file is read here; ``build_agent`` does that. A spec is read once a process."""
    if not isinstance(spec, str):
        raise TypeError(f"agent specs are strings, got {spec!r}")
    key = (game.spec.name, tuple(sorted(game.spec.options.items())), spec)
    if key not in _PLANS:
        if len(_PLANS) >= 256:  # a long-lived process reading many specs forgets the oldest
            _PLANS.pop(next(iter(_PLANS)))
        _PLANS[key] = _read_plan(game, spec)
    return _PLANS[key]


def _read_plan(game: Game, spec: str) -> AgentPlan:
    record = plugin(game.spec.name)
    name, options = parse_spec(spec)
    fixed = _fixed_agents(game)
    if name in fixed:
        entry = fixed[name]
        if isinstance(entry, Searcher):
            return _plan(game, spec, "fixed", name, _searcher_keys(entry, spec, options, record.defaults.get(name)))
        check_options(spec, options, set())
        return _plan(game, spec, "fixed", name)
    if name == "random":
        check_options(spec, options, set())
        return _plan(game, spec, "random")
    if name == "policy" and record.vector:
        check_options(spec, options, {"path"})
        if not options.get("path"):
            raise ValueError(f"agent {spec!r} needs path=RUN/checkpoint.pt (a tablegym train --algo ppo run)")
        return _plan(game, spec, "policy", keys={"path": options["path"]})
    plugged = interop.searchers(game)
    if name in plugged:  # a searcher declared outside search/ (OpenSpiel's MCTS), for every game it plays
        return _plan(game, spec, "plugged", name, _searcher_keys(plugged[name], spec, options))
    searcher = searcher_named(record.aliases.get(name, name))
    if searcher is None or searcher.name not in record.searchers:
        why = "" if searcher is None else f" ({searcher.name} does not play it)"
        raise ValueError(f"unknown agent {name!r} for {game.spec.name}{why}; known: {', '.join(known_agents(game))}")
    _, extra, _ = _own_build(record, searcher)
    typed = _searcher_keys(searcher, spec, options, record.defaults.get(searcher.name), extra)
    return _plan(game, spec, "searcher", searcher.name, typed)


def build_agent(plan: AgentPlan, game: Game) -> Agent:
    """The agent ``plan`` names, for ``game`` (the game and rule options it was planned for).
    Evaluators are shared within a process (``make_evaluator``): building the agent of a plan
    again, once a game, costs no file read; the agent itself is new, so nothing one game's
    search keeps (a transposition table) reaches the next."""
    if (plan.game, plan.options) != (game.spec.name, tuple(sorted(game.spec.options.items()))):
        raise WrongGameError(
            f"agent {plan.spec!r} was planned for {plan.game} {dict(plan.options)}, not {game.spec.name} {game.spec.options}"
        )
    typed = plan.typed
    if plan.kind == "random":
        return RandomAgent()
    if plan.kind == "policy":
        from tablegym.models.policy import PolicyAgent, load_actor_critic

        return PolicyAgent(load_actor_critic(typed["path"], game), game, name=plan.spec)
    if plan.kind == "fixed":
        entry = _fixed_agents(game)[plan.name]
        return _searched(game, entry, plan.spec, typed) if isinstance(entry, Searcher) else entry()
    if plan.kind == "plugged":
        return _searched(game, interop.searchers(game)[plan.name], plan.spec, typed)
    searcher = searcher_named(plan.name)
    if searcher is None:  # plan_agent resolved the name; a plan made by hand may not have
        raise ValueError(f"agent {plan.spec!r}: no searcher is called {plan.name!r}")
    build, _, kwargs = _own_build(plugin(game.spec.name), searcher)
    return _searched(game, searcher, plan.spec, typed, build, searcher=searcher.name, **kwargs)


def _searched(
    game: Game, entry: Searcher, spec: str, typed: dict[str, Any], build=None, *, searcher: str | None = None, **kwargs
) -> Agent:
    make = build or entry.build
    if make is None:
        raise ValueError(f"{entry.name} has no game-independent search; {game.spec.name}'s record names none")
    evaluator = _checked(make_evaluator(game, typed["eval"], searcher=searcher), game) if entry.evaluated else None
    return make(game, evaluator, typed, name=spec, **kwargs)


def make_agent(game: Game, spec: str, *, trust_code: bool | None = None) -> Agent:
    """Build the agent named by ``spec`` for ``game`` (see the module docstring): ``plan_agent``
    then ``build_agent``. ``trust_code``: whether a Stable-Baselines3 zip in the spec may load
    with SB3's own loader, which runs code the file carries (default: the decision in force,
    tablegym.models.trust; unset: read as data)."""
    if trust_code is not None:
        with trusting(trust_code, f"trust_code={bool(trust_code)}"):
            return make_agent(game, spec)
    return build_agent(plan_agent(game, spec), game)
