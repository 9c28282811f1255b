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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tablegym.envs import GamePlugin, make_game, plugins
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


class _Games(Mapping[str, GameEntry]):
    """The turn-based games of the registry, read when asked: a game registered after import
    (``tablegym.envs.register``) is here with its own record, not missing or defaulted."""

    def _records(self) -> dict[str, GamePlugin]:
        return {p.name: p for p in plugins() if p.game}

    def __getitem__(self, name: str) -> GameEntry:
        return _entry(self._records()[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._records())

    def __len__(self) -> int:
        return len(self._records())


GAMES: Mapping[str, GameEntry] = _Games()
"""The turn-based games of the registry (``tablegym.envs.plugins()``) by name; see ``make_game``."""


_CACHED: dict[tuple[str, tuple[tuple[str, Any], ...]], Game] = {}
"""Per-process cache: a game is immutable, so each worker builds it once."""


def cached_game(name: str, options: tuple[tuple[str, Any], ...]) -> Game:
    """``make_game(name, **dict(options))``, built once per process (workers play many games of it)."""
    key = (name, options)
    if key not in _CACHED:
        _CACHED[key] = make_game(name, **dict(options))
    return _CACHED[key]
