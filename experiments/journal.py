"""Match journals: a resumable tournament's finished games, one JSON line each.

Only the parent process writes, one line per game, flushed and fsynced at once, so a kill
loses at most the line being written; a later run with the same journal plays nothing it finds
there. A journal is data from outside, checked line by line before anything counts: each line
must be a game of a two-player rule set that replays on the rules core
(``tablegym.experiments.replay``); any other line is refused in one line naming the file, the
line and the problem (``JournalError``).
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tablegym.envs.core import Game
from tablegym.envs.limits import LimitError, loads_json
from tablegym.experiments.games import cached_game
from tablegym.experiments.replay import ReplayError, is_int, read_record, replay_problems
from tablegym.search.play import GameRecord
from tablegym.training.files import RunFolderError, open_append

if TYPE_CHECKING:
    from tablegym.experiments.match import _Task, _Tasks


class JournalError(ValueError):
    """A journal line that cannot be read. The file is left as it is, for a person to look at:
    guessing what a damaged line meant could silently change a tournament's results."""


class JournalWarning(UserWarning):
    """A journal's unfinished last line (the usual trace of a killed run) is being ignored."""


_KEY_FIELDS = ("game", "options", "spec_a", "spec_b", "seed", "opening_plies", "match", "pair", "a_seat")
"""What identifies a game: with these the game's seed, opening and agents are fixed."""
_RUN_FIELDS = _KEY_FIELDS[:7]
"""What the games of one match share: all but the opening pair and A's seat."""


def _run_text(key: Mapping[str, Any]) -> str:
    """Canonical text of a match's key, the same for its tasks and for their lines read back."""
    return json.dumps([key[f] for f in _RUN_FIELDS], separators=(",", ":"))


def _run_key(run: _Task | _Tasks) -> dict[str, Any]:
    """The fields of ``_RUN_FIELDS`` of a game or of its match (both carry them by the same names)."""
    return {
        "game": run.game_name,
        "options": [list(kv) for kv in run.game_options],
        "spec_a": run.spec_a,
        "spec_b": run.spec_b,
        "seed": run.seed,
        "opening_plies": run.opening_plies,
        "match": run.match,
    }


def _task_key(task: _Task) -> dict[str, Any]:
    """The fields of ``_KEY_FIELDS`` of a game, in their order."""
    return {**_run_key(task), "pair": task.pair, "a_seat": task.a_seat}


def _record_json(record: GameRecord) -> dict[str, Any]:
    return {
        "actions": list(record.actions),
        "opening_plies": record.opening_plies,
        "winner": record.winner,
        "returns": list(record.returns),
        "move_counts": list(record.move_counts),
        "move_seconds": list(record.move_seconds),
    }


def _check_key(entry: Mapping[str, Any]) -> None:
    """The key fields' types and ranges."""
    for name in ("game", "spec_a", "spec_b"):
        if not isinstance(entry[name], str) or not entry[name]:
            raise ValueError(f"{name} must be a non-empty string, got {entry[name]!r}"[:300])
    for name in ("seed", "opening_plies", "match", "pair"):
        if not is_int(entry[name]) or entry[name] < 0:
            raise ValueError(f"{name} must be an integer >= 0, got {entry[name]!r}"[:300])
    if entry["a_seat"] not in (0, 1) or not is_int(entry["a_seat"]):
        raise ValueError(f"a_seat must be 0 or 1 (the seat of agent A), got {entry['a_seat']!r}"[:300])
    options = entry["options"]
    scalar = (str, int, float, bool, type(None))
    if (
        not isinstance(options, list)
        or not all(
            isinstance(kv, list) and len(kv) == 2 and isinstance(kv[0], str) and isinstance(kv[1], scalar) for kv in options
        )
        or len({kv[0] for kv in options}) != len(options)
    ):
        raise ValueError(f"options must be a list of distinct [name, value] pairs, got {options!r}"[:300])


def _record_game(entry: Mapping[str, Any]) -> Game:
    """The rule set a line was played under (its game and options), built once per process."""
    options = tuple(tuple(kv) for kv in entry["options"])
    try:
        game = cached_game(entry["game"], options)
    except (ValueError, TypeError) as err:
        raise ReplayError(f"its rules cannot be made ({err})") from None
    if game.spec.num_players != 2:
        raise ReplayError(f"{entry['game']} is not a two-player game, and a match journal holds only those")
    return game


def _parse_entry(entry: Any) -> tuple[str, tuple[int, int], Game, GameRecord]:
    """The match key text, (pair, A's seat), rules and typed game of one decoded journal line,
    checked in everything but its replay (``replay_problems``); raises ValueError
    (``ReplayError`` for a game the rules do not give), KeyError or TypeError when it is not
    one."""
    if not isinstance(entry, dict) or not isinstance(entry.get("record"), dict):
        raise ValueError("not a game: expected an object with the game's key and a 'record'")
    missing = [f for f in _KEY_FIELDS if f not in entry]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    _check_key(entry)
    game = _record_game(entry)
    record = read_record(entry["record"], game, entry["opening_plies"])
    return _run_text(entry), (entry["pair"], entry["a_seat"]), game, record


class _Journal:
    """The games of earlier runs, read once, and an append-only file for this run's games.

    Only the parent process writes, one line per game, flushed and fsynced at once, so a kill
    loses at most the line being written. Such a torn last line (no newline) holds no finished
    game: it is ignored with a warning and cut off just before the next game is written, so
    the file stays one game per line. Any other unreadable line is an error, and so is a line
    whose game does not replay (``replay_problems``): the first such line is named. When a key occurs
    twice, the first line counts.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            data = b""
        self._size = len(data)
        self._cut_at: int | None = None  # where a torn last line starts
        self._needs_newline = False
        self._games: dict[str, dict[tuple[int, int], GameRecord]] = {}  # match key text -> (pair, seat) -> game
        lines = data.split(b"\n")
        tail = lines.pop()  # what follows the last newline: b"" in a clean file
        read: list[tuple[int, str, tuple[int, int], Game, GameRecord]] = []
        try:
            for number, raw in enumerate(lines, 1):
                if raw.strip():
                    read.append((number, *self._parse(number, self._decode(number, raw))))
            if tail.strip():
                number = len(lines) + 1
                try:
                    entry = loads_json(tail, f"{self.path!r} line {number}")
                except LimitError as err:  # a killed run's torn line is a prefix of a good one: never this
                    raise JournalError(f"{err}; repair or delete that line and run again") from None
                except ValueError:
                    warnings.warn(
                        f"{self.path}, line {number}: ignoring the unfinished last line ({len(tail)} "
                        "bytes, no newline), the usual trace of a killed run; its game will be played again",
                        JournalWarning,
                        stacklevel=4,
                    )
                    self._cut_at = len(data) - len(tail)
                else:
                    read.append((number, *self._parse(number, entry)))  # complete, only its newline is missing
                    self._needs_newline = True
            elif tail:
                self._needs_newline = True
        except JournalError:
            self._check_replays(read)  # a line before the bad one that does not replay is named first
            raise
        self._check_replays(read)
        for _, key, slot, _, record in read:
            self._games.setdefault(key, {}).setdefault(slot, record)
        try:  # creates the file: a bad path fails now, not after a game
            self._file = open_append(self.path, "ab")
        except RunFolderError as err:
            raise JournalError(str(err)) from None

    def _decode(self, number: int, raw: bytes) -> Any:
        try:
            return loads_json(raw, f"{self.path!r} line {number}")
        except LimitError as err:
            raise JournalError(f"{err}; repair or delete that line and run again") from None
        except ValueError as err:  # UnicodeDecodeError is one too
            raise JournalError(
                f"{self.path}, line {number}: not valid JSON ({err}); each line must be one "
                "game: repair or delete that line and run again"
            ) from None

    def _parse(self, number: int, entry: Any) -> tuple[str, tuple[int, int], Game, GameRecord]:
        try:
            return _parse_entry(entry)
        except ReplayError as err:
            raise self._does_not_replay(number, str(err)) from None
        except (ValueError, KeyError, TypeError) as err:
            what = f"missing field {err}" if isinstance(err, KeyError) else str(err)
            raise JournalError(
                f"{self.path}, line {number}: not a game record ({what}); repair or delete that line and run again"
            ) from None

    def _does_not_replay(self, number: int, problem: str) -> JournalError:
        return JournalError(
            f"{self.path}, line {number}: a game that does not replay ({problem}); repair or delete that line and run again"
        )

    def _check_replays(self, read: Sequence[tuple[int, str, tuple[int, int], Game, GameRecord]]) -> None:
        """Refuse the first of the lines ``read`` whose game does not replay."""
        for (number, *_), problem in zip(read, replay_problems([(game, record) for *_, game, record in read])):
            if problem is not None:
                raise self._does_not_replay(number, problem)

    def found(self, tasks: _Tasks) -> dict[tuple[int, int, int], GameRecord]:
        """The games of ``tasks`` that earlier runs finished, by ``(match, pair, a_seat)``."""
        games = self._games.get(_run_text(_run_key(tasks)), {})
        return {(tasks.match, pair, seat): r for (pair, seat), r in games.items() if 2 * pair + seat < len(tasks)}

    def append(self, task: _Task, record: GameRecord) -> None:
        """Write one finished game and make sure it is on disk before going on."""
        if self._cut_at is not None or self._needs_newline:
            self._start_fresh_line()
        key = _task_key(task)
        line = json.dumps({**key, "record": _record_json(record)}, separators=(",", ":"))
        self._file.write(line.encode("utf-8") + b"\n")
        self._file.flush()
        os.fsync(self._file.fileno())
        self._games.setdefault(_run_text(key), {}).setdefault((task.pair, task.a_seat), record)

    def _start_fresh_line(self) -> None:
        """Cut off a torn last line, or end a complete one, before the first append."""
        fd = self._file.fileno()
        if os.fstat(fd).st_size != self._size:
            raise JournalError(f"{self.path} changed since it was read; is another run writing to it?")
        if self._cut_at is not None:
            os.ftruncate(fd, self._cut_at)  # the torn line held no finished game
        else:
            self._file.write(b"\n")
        self._cut_at, self._needs_newline = None, False

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> _Journal:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _open_journal(path: str | os.PathLike[str] | None) -> contextlib.AbstractContextManager[_Journal | None]:
    return contextlib.nullcontext() if path is None else _Journal(path)
