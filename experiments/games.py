"""Games by name, for the command line: ``GAMES`` lists the registry's games with their
options; ``make_game`` (``tablegym.envs.make_game``) builds one.

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

import functools
from dataclasses import dataclass
from typing import Callable

from tablegym.envs import GamePlugin, known_games, make_game, plugins  # noqa: F401 (re-exported)
from tablegym.envs.core import Game


@dataclass(frozen=True)
class GameEntry:
    """A registered game: how to build it and which options (with their types) it takes."""

    name: str
    factory: Callable[..., Game]
    options: dict[str, type]
    doc: str
    searcher: str = "alphabeta"
    """The search that ``--eval/--depth/--time`` set up when no ``--agent`` is named."""


def _factory(record: GamePlugin) -> Callable[..., Game]:
    return functools.partial(make_game, record.name)


def _entry(record: GamePlugin) -> GameEntry:
    return GameEntry(record.name, _factory(record), dict(record.options), record.doc, record.searcher)


GAMES: dict[str, GameEntry] = {p.name: _entry(p) for p in plugins() if p.game}
"""The turn-based games of the registry (``tablegym.envs.plugins()``) by name; see ``make_game``."""
