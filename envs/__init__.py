"""tablegym's games: the registry of their records, and their envs registered with Gymnasium
and PettingZoo under "tablegym/<Name>-vN".

Every game is one record, a ``GamePlugin``: what the generic layers (the command line, agent
specs, matches; later search, models and training) need to know about it, as import strings
("module:attribute"). tablegym's own games keep theirs in their folder as ``game.toml``
(``BUILTIN``); a new game is registered in one line, ``register(GamePlugin(...))``, which also
registers its env ids.

Entry points are strings, so ``import tablegym.envs`` imports no game (and compiles no kernel);
a game's module loads on the first ``make`` of one of its ids. Every keyword of the env class
passes through ``gymnasium.make``::

    >>> import gymnasium, tablegym.envs
    >>> env = gymnasium.make("tablegym/TrilobiteTiny-v0", opponent="random", agent_seat=1)
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape
    (3, 3, 3)

``gymnasium.make("tablegym.envs:tablegym/Trilobite-v0")`` works without the explicit import.
The single-player games (``SINGLE_AGENT_ENV_IDS``: "tablegym/Threes-v0", "tablegym/Friday-v1",
"tablegym/Starship-v0", the PCGRL starship designer) are Gymnasium envs only; the two-player
ids (``ENV_IDS``) also give the PettingZoo AEC envs:
``pettingzoo.make("aec", "tablegym/Sim-v0", n=5)``.

An id whose record names a ``vector`` entry point also steps many copies in one compiled call:
``gymnasium.make_vec("tablegym/Trilobite-v0", num_envs=1024)`` builds it (Gymnasium's default
mode for such an id; ``vectorization_mode="sync"`` still gives ``SyncVectorEnv``).
"""

from __future__ import annotations

import importlib
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium
import pettingzoo

from tablegym.kernel_cache import use_source_keyed_cache

# before any kernel of the package is defined (numba picks each one's cache folder then); the
# sources are the folders beside this one, wherever the package is installed
use_source_keyed_cache(Path(__file__).resolve().parent.parent)

BUILTIN = ("trilobite", "sim", "trap", "threes", "friday", "starship")
"""The folders of tablegym's own games, each with its records in ``game.toml``."""

_TYPES = {"int": int, "str": str, "float": float, "bool": bool}
"""The option types a ``game.toml`` may name."""


@dataclass(frozen=True)
class GamePlugin:
    """What the generic layers need to know about one game. Every reference is an import
    string ("module:attribute") resolved by ``load`` on first use, so collecting the records
    imports no game and compiles nothing."""

    name: str
    """The game's name on the command line and in ``make_game`` ("trap")."""
    doc: str
    """One line for listings."""
    game: str | None = None
    """Factory of the ``Game`` (called with the typed options); None for a generator that is
    not a turn-based game (the starship designer)."""
    options: Mapping[str, type] = field(default_factory=dict)
    """The factory's keyword options and their types (command-line strings are converted)."""
    searcher: str = "alphabeta"
    """The agent that ``--eval/--depth/--time`` set up when no ``--agent`` is named."""
    agents: str | None = None
    """Module with the game's hand-made ``EVALUATORS`` and fixed ``AGENTS`` (its original AIs),
    by name; an agent is a zero-argument class or a ``tablegym.search.searchers.Searcher`` with keys."""
    searchers: Mapping[str, str] = field(default_factory=lambda: {"alphabeta": ""})
    """The searchers of tablegym.search.searchers that play this game, each mapped to "" (the
    searcher's own constructor) or to the game's constructor on a compiled kernel of its own."""
    aliases: Mapping[str, str] = field(default_factory=dict)
    """The game's own names for searchers (Trap's ``search`` is ``expectiminimax``)."""
    defaults: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Searcher -> the values of its keys when a spec gives none (``eval`` defaults to ``learned``)."""
    move_filter: str | None = None
    """A ``tablegym.search.searchers.MoveFilter``: the moves its filtered searches (expectiminimax,
    best-first) try, with keys, and any search-only moves (Friday's one destroy subset)."""
    rollout: str | None = None
    """A ``tablegym.search.montecarlo.Rollout``: the compiled playout policy of its Monte-Carlo
    planning (``mc``), which applies to a game only where it names one."""
    checkpoints: Mapping[str, str] = field(default_factory=dict)
    """Searcher -> the file of models/checkpoints/ that ``eval=learned`` means for it, when not
    ``<game>.pt`` (Friday's Monte-Carlo planner has its own network)."""
    gym: Mapping[str, tuple[str, dict]] = field(default_factory=dict)
    """Gymnasium id -> (entry point, default keyword arguments)."""
    aec: Mapping[str, tuple[str, dict]] = field(default_factory=dict)
    """PettingZoo AEC id -> (entry point, default keyword arguments)."""
    vector: Mapping[str, str] = field(default_factory=dict)
    """Gymnasium id -> its ``vector_entry_point``: a ``gymnasium.vector.VectorEnv`` stepping
    ``num_envs`` copies in one compiled call (envs/vector.py), what ``gymnasium.make_vec`` builds
    by default; it takes the id's keyword arguments."""
    move_hint: str | None = None
    """How a person may type a move at ``tablegym play``, beyond the move names listed."""
    numbered_moves: bool = False
    """Whether ``tablegym play`` lists the legal moves one a line with their numbers."""
    bench: str | None = None
    """The game's speed benchmark: a function returning a table (dict of rows)."""
    bench_name: str | None = None
    """Its name after ``tablegym bench`` when not the game's name ("search", "sim-solve")."""
    benches: Mapping[str, str] = field(default_factory=dict)
    """Further benchmarks of the game by their ``tablegym bench`` names (Trilobite's env steps
    against PettingZoo's connect_four_v3: "envs")."""
    learned: str | None = None
    """``(kernel, scale)`` of its ValueMLP leaf evaluator (``eval=learned``): a compiled
    ``kernel(s, player, params)`` and the search units per unit of network value."""
    observation: str | None = None
    """Compiled ``observation(s, player, out)``: ``State.observation(player)`` flattened into the
    float32 vector ``out`` (what a network trained on the Gymnasium env reads)."""
    network_value: str | None = None
    """Compiled ``kernel(s, player, params)`` of a network exported by tablegym.models.export over
    that observation: the leaf evaluator a user's own network becomes in the game's searches."""
    loader: str | None = None
    """``(game, path) -> evaluator``: how ``tablegym.models.learned.load_evaluator`` rebuilds the
    game's networks when they are not ValueMLPs read by ``learned`` (an n-tuple network, a
    network over hand-made features)."""
    trainer: str | None = None
    """``tablegym train GAME ...``: ``main(argv) -> int | None`` given the arguments as typed,
    the game's name first."""
    solver: str | None = None
    """``(game) -> SolveResult``: how ``tablegym solve`` solves the game when the generic exact
    solver (``tablegym.search.solver.solve`` from the initial position) is not the best way
    (Sim: canonical keys, so isomorphic positions share one entry)."""
    solve_cases: tuple[Mapping[str, Any], ...] = ()
    """The option sets ``tablegym solve GAME`` solves when given none (Sim: K3-K6, the
    published facts); empty: the default game."""
    deal: str | None = None
    """``(game, seed, index) -> (state, rng)``: the opening of game ``index`` of a run seeded
    ``seed`` and the generator that plays it, when a game deals otherwise than the default (the
    initial state and ``SeedSequence(seed, spawn_key=(index,))``); single-player runs give
    every agent the same deals."""
    chance: str | None = None
    """``(state, rng) -> state``: a compiled sampler that resolves chance nodes faster than
    drawing from ``chance_outcomes`` one node at a time (single-player runs use it)."""
    outcome: str | None = None
    """``(finished state) -> dict``: what a single-player run records of a game beyond its
    return (a score, a win)."""
    max_decisions: int | None = None
    """A cap on the decisions of a single-player run's game (Friday: its env's ``max_steps``):
    where moves can go round in circles a deterministic agent may never finish; a game stopped
    there is recorded as truncated, not won, return 0 (what the env gives at truncation)."""
    command: str | None = None
    """``add_command(subparsers)``: the game's own ``tablegym`` subcommand, named after the game
    (the starship generator's ``tablegym starship``)."""
    afterstate: str | None = None
    """The value network over afterstates (the position after a move, before chance acts) that
    ``tablegym train GAME --algo dqn --afterstate`` learns, for a game whose vector env gives
    ``afterstates()``: a ``torch.nn.Module`` class with ``for_training(tuples, stage_ranks)``,
    ``value_of(keys, hints)``, ``save(path, metadata)`` and ``load_with_metadata(path)``, saved in
    the file its ``loader`` reads."""
    board_symmetries: int = 1
    """The symmetries of its observation planes (the last two axes) under which the rules and
    every value stay the same: 8 for the square's rotations and reflections (Trap), else 1. A
    trainer may learn each position under any of them (``--symmetries``)."""
    training_metrics: str | None = None
    """``metrics(game, evaluator) -> dict`` that TD training logs besides its own (exact
    measures a game allows, such as Sim's agreement with its solver)."""

    @property
    def single_player(self) -> bool:
        """Gymnasium envs only, no PettingZoo id (a single-player game or generator)."""
        return bool(self.gym) and not self.aec

    @classmethod
    def from_toml(cls, data: dict[str, Any], source: str) -> GamePlugin:
        """A record from one ``[[game]]`` table of a ``game.toml``."""
        fields = dict(data)
        try:
            fields["options"] = {k: _TYPES[v] for k, v in data.get("options", {}).items()}
            fields["solve_cases"] = tuple(dict(c) for c in data.get("solve_cases", ()))
            for table in ("gym", "aec"):
                fields[table] = {i: (e["entry_point"], dict(e.get("kwargs", {}))) for i, e in data.get(table, {}).items()}
            stray = sorted(set(data.get("vector", {})) - set(fields["gym"]))
            if stray:
                raise ValueError(
                    f"{source}: game {data.get('name')!r} has a vector entry point for {stray[0]!r}, "
                    f"which is not one of its Gymnasium ids {sorted(fields['gym'])}"
                )
            return cls(**fields)
        except (KeyError, TypeError) as err:
            raise ValueError(f"{source}: bad game record {data.get('name')!r} ({err})") from None


_REGISTRY: dict[str, GamePlugin] = {}


def _add(record: GamePlugin) -> None:
    if record.name in _REGISTRY:
        raise ValueError(f"a game named {record.name!r} is already registered")
    taken = {i for p in _REGISTRY.values() for i in (*p.gym, *p.aec)}
    clash = sorted(taken & {*record.gym, *record.aec})
    if clash:
        raise ValueError(f"game {record.name!r}: env id {clash[0]!r} is already registered")
    _REGISTRY[record.name] = record


def _load_builtin() -> None:
    here = Path(__file__).parent
    for folder in BUILTIN:
        path = here / folder / "game.toml"
        with path.open("rb") as f:
            for data in tomllib.load(f)["game"]:
                _add(GamePlugin.from_toml(data, str(path)))


def register(record: GamePlugin) -> GamePlugin:
    """Add a game and register its env ids. Its name and ids must be new (``ValueError``
    names the clash)."""
    _add(record)
    register_envs()
    return record


def unregister(name: str) -> None:
    """Remove a game added by ``register`` and its env ids (for tests and plugin reloads)."""
    record = _REGISTRY.pop(name)
    for env_id in record.gym:
        gymnasium.registry.pop(env_id, None)
    for env_id in record.aec:
        pettingzoo.aec_registry.pop(env_id, None)


def plugins() -> list[GamePlugin]:
    """Every registered game, tablegym's own first, in registration order."""
    return list(_REGISTRY.values())


def plugin(name: str) -> GamePlugin:
    """The record of game ``name``; ``ValueError`` lists the known names.

    >>> plugin("trap").searcher
    'search'
    """
    if name not in _REGISTRY:
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(_REGISTRY)}")
    return _REGISTRY[name]


def load(ref: str) -> Any:
    """Import ``"module:attribute"`` (or a plain ``"module"``) and return the object."""
    module, _, attribute = ref.partition(":")
    obj = importlib.import_module(module)
    for part in attribute.split(".") if attribute else ():
        obj = getattr(obj, part)
    return obj


ABOVE = {
    "make_agent": "tablegym.models.agents:make_agent",
    "game_evaluators": "tablegym.models.agents:game_evaluators",
    "random_agent": "tablegym.search.agents:RandomAgent",
    "search_opponent": "tablegym.search.batch_opponent:SearchOpponent",
}
"""The entry points of the layers above that a lower layer reaches, by name and only when asked:
an env's opponent named by a spec is built by the agent front door (``make_agent``), a vector
env's compiled search opponent by the search layer. ``above(name)`` loads one; nothing below
imports those layers (tests/test_layers.py)."""


def above(name: str) -> Any:
    """The entry point ``ABOVE[name]`` of a higher layer, imported now."""
    return load(ABOVE[name])


def known_games() -> list[str]:
    """The names ``make_game`` accepts: the registered games with rules (a generator has none)."""
    return [p.name for p in plugins() if p.game]


def _coerce(game: str, key: str, value: Any, kind: type) -> Any:
    """Turn a command-line string into the option's type; pass other values through."""
    if not isinstance(value, str):
        return value
    try:
        return kind(value.strip())
    except ValueError:
        raise ValueError(f"option {key!r} of game {game!r} needs a {kind.__name__}, got {value!r}") from None


def make_game(name: str, **options: Any):
    """Build the ``Game`` of registered game ``name`` with ``options`` (strings are converted
    to the option's type). Match workers and trainers rebuild games from ``(name, options)``
    because a name and a dict pickle cheaply and never drag a compiled object across processes.

    Raises ``ValueError`` naming the unknown game or option and listing the known ones.
    """
    record = _REGISTRY.get(name)
    if record is None or not record.game:
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(known_games())}")
    unknown = [k for k in options if k not in record.options]
    if unknown:
        known = ", ".join(record.options) or "none"
        raise ValueError(f"unknown option {unknown[0]!r} for game {name!r}; its options are: {known}")
    typed = {k: _coerce(name, k, v, record.options[k]) for k, v in options.items()}
    try:
        factory = load(record.game)
    except ModuleNotFoundError as err:
        raise ValueError(f"game {name!r} is not available in this installation ({err})") from None
    return factory(**typed)


def deal(game: Any, seed: int, index: int) -> tuple[Any, Any]:
    """The opening state of game ``index`` of a run seeded ``seed`` and the numpy generator that
    plays it: the record's ``deal`` when it names one, else the initial state and a generator of
    its own per game, so every agent of a run meets the same deals."""
    import numpy as np

    record = plugin(game.spec.name)
    if record.deal:
        return load(record.deal)(game, seed, index)
    return game.new_initial_state(), np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))


def register_envs() -> None:
    """Register the env ids of every registered game with Gymnasium and PettingZoo
    (idempotent: a re-import, or a call after ``register``, does not warn)."""
    for record in plugins():
        for env_id, (entry_point, kwargs) in record.gym.items():
            if env_id not in gymnasium.registry:
                gymnasium.register(
                    id=env_id, entry_point=entry_point, kwargs=kwargs, vector_entry_point=record.vector.get(env_id)
                )
        for env_id, (entry_point, kwargs) in record.aec.items():
            if env_id not in pettingzoo.aec_registry:
                pettingzoo.register("aec", env_id, entry_point=entry_point, kwargs=kwargs)


_load_builtin()

ENV_IDS: dict[str, tuple[str, dict]] = {i: e for p in plugins() if not p.single_player for i, e in p.gym.items()}
"""Gymnasium id -> (entry point, default keyword arguments) of the two-player games (each also a PettingZoo id)."""

SINGLE_AGENT_ENV_IDS: dict[str, tuple[str, dict]] = {i: e for p in plugins() if p.single_player for i, e in p.gym.items()}
"""Gymnasium id -> (entry point, default keyword arguments) of the single-player games (Gymnasium only)."""

AEC_ENV_IDS: dict[str, tuple[str, dict]] = {i: e for p in plugins() for i, e in p.aec.items()}
"""PettingZoo AEC id -> (entry point, default keyword arguments)."""

register_envs()
