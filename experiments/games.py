"""Games by name: the one place where the command line and match runners turn a name into a Game.

Match workers rebuild the game from ``(name, options)`` because a name and a dict pickle
cheaply and never drag a compiled object across processes.

>>> make_game("trilobite-tiny").spec.options["width"]
3
>>> make_game("trilobite", width="5").width
5
>>> make_game("threes", hint="candidates").spec.options
{'hint': 'candidates'}
>>> make_game("friday", level="3").level
3
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from tablegym.envs.core import Game


def _trilobite(**options: Any) -> Game:
    from tablegym.envs.trilobite.core import TrilobiteGame

    return TrilobiteGame(**options)


def _trilobite_tiny(**options: Any) -> Game:
    from tablegym.envs.trilobite.core import TrilobiteGame

    return TrilobiteGame.tiny(**options)


def _sim(**options: Any) -> Game:
    try:
        from tablegym.envs.sim.core import SimGame
    except ModuleNotFoundError as err:
        raise ValueError(f"game 'sim' is not available in this installation ({err})") from None
    return SimGame(**options)


def _trap(**options: Any) -> Game:
    from tablegym.envs.trap.core import TrapGame

    return TrapGame(**options)


def _threes(**options: Any) -> Game:
    from tablegym.envs.threes.core import ThreesGame

    return ThreesGame(**options)


def _friday(**options: Any) -> Game:
    from tablegym.envs.friday.core import FridayGame

    return FridayGame(**options)


@dataclass(frozen=True)
class GameEntry:
    """A registered game: how to build it and which options (with their types) it takes."""

    name: str
    factory: Callable[..., Game]
    options: dict[str, type]
    doc: str
    searcher: str = "alphabeta"
    """The search that ``--eval/--depth/--time`` set up when no ``--agent`` is named."""


GAMES: dict[str, GameEntry] = {
    e.name: e
    for e in (
        GameEntry("trilobite", _trilobite, {"width": int, "height": int, "win_length": int, "first_player": int},
                  "gravity N-in-a-row, default 8x7, four in a row"),
        GameEntry("trilobite-tiny", _trilobite_tiny, {"first_player": int}, "Trilobite 3x3, three in a row"),
        GameEntry("sim", _sim, {"n": int}, "triangle-avoidance on K_n, default n=6"),
        GameEntry("trap", _trap, {"n": int, "turn_cap": int, "first_player": int},
                  "move a king step, throw a trap that may miss, enclose the opponent; default 7x7, draw at 200 turns",
                  searcher="search"),  # chance nodes: the expectiminimax
        GameEntry("threes", _threes, {"hint": str}, "Threes! (single player); hint '+' (default) or 'candidates'"),
        GameEntry("friday", _friday,
                  {"level": int, "abilities": str, "aging_life": str, "empty_aging": str, "below_replacement": str,
                   "sort_draws": str, "max_life_level4": int},
                  "Friday (single-player deck-building), level 1-4 (default 1)",
                  searcher="bestfirst"),  # Fridai's best-first search
    )
}


def known_games() -> list[str]:
    """Names ``make_game`` accepts."""
    return list(GAMES)


def _coerce(game: str, key: str, value: Any, kind: type) -> Any:
    """Turn a command-line string into the option's type; pass other values through."""
    if not isinstance(value, str):
        return value
    try:
        return kind(value.strip())
    except ValueError:
        raise ValueError(f"option {key!r} of game {game!r} needs a {kind.__name__}, got {value!r}") from None


def make_game(name: str, **options: Any) -> Game:
    """Build game ``name`` with ``options`` (strings are converted to the option's type).

    Raises ``ValueError`` naming the unknown game or option and listing the known ones.
    """
    entry = GAMES.get(name)
    if entry is None:
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(GAMES)}")
    unknown = [k for k in options if k not in entry.options]
    if unknown:
        known = ", ".join(entry.options) or "none"
        raise ValueError(f"unknown option {unknown[0]!r} for game {name!r}; its options are: {known}")
    typed = {k: _coerce(name, k, v, entry.options[k]) for k, v in options.items()}
    return entry.factory(**typed)
