"""Many independent single-player games in parallel, recorded as JSON lines so a run resumes.

Each game is a task (a tuple) that a module-level ``play_one(task) -> dict`` turns into a record
with a "game" index. Finished records are appended to ``out`` as they come, and a rerun skips the
indices already recorded there with the same identifying fields. Tasks are drawn as workers
free up, so a run of any number of games holds only the games in play.

A records file is data from outside: each line is read through ``tablegym.envs.limits.loads_json``
(bounded size and nesting) and checked (``record_problem``, and a game's own ``check``) before
anything counts; a line that fails is refused in one line naming the file, the line and why.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from tablegym.envs.limits import LimitError, loads_json
from tablegym.experiments.stats import MAX_GAMES
from tablegym.training.files import RunFolderError, open_append
from tablegym.training.flags import OneLineParser, bounded_int
from tablegym.training.parallel import run_bounded
from tablegym.training.progress import progress_bar

MAX_WORKERS = 1024
"""The most worker processes (or Ray tasks in flight) a run starts (``--workers``)."""

Check = Callable[[dict], "str | None"]
"""``check(record) -> problem or None``: what a game's records must hold beyond ``record_problem``."""


class RecordsError(ValueError):
    """A records file (JSON lines) with a line that is not one game's record."""


_COUNTS = ("moves", "decisions", "leaves", "polled")
"""Fields that count (moves, decisions, search leaves or nodes): whole numbers >= 0 where present."""
_FLAGS = ("won", "truncated", "valid")
"""Fields that are true or false where present."""


def _first_non_finite(value: Any, where: str) -> str | None:
    """The path of the first NaN or infinite number in a decoded record (nesting is bounded by
    ``loads_json``), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return where
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _first_non_finite(item, f"{where}[{key!r}]" if where else repr(key))
        if found:
            return found
    return None


def _is_count(x: Any) -> bool:
    return type(x) is int and x >= 0


def record_problem(rec: Any) -> str | None:
    """What makes ``rec`` not a game's record in any run (None when nothing does): a JSON object
    with a "game" index >= 0, every number finite, a seed >= 0, seconds >= 0, counts whole and
    >= 0, flags true or false, an agent named by a string, rule options an object."""
    if not isinstance(rec, dict) or not _is_count(rec.get("game")):
        return 'a JSON object with an integer "game" >= 0'
    bad = _first_non_finite(rec, "")
    if bad:
        return f"{bad} is not a finite number"
    if "seed" in rec and not _is_count(rec["seed"]):
        return f"seed {rec['seed']!r} is not an integer >= 0"[:300]
    seconds = rec.get("seconds", 0.0)
    if type(seconds) not in (int, float) or seconds < 0:
        return f"seconds {seconds!r} is not a number >= 0"[:300]
    for name in _COUNTS:
        if name in rec and not _is_count(rec[name]):
            return f"{name} {rec[name]!r} is not an integer >= 0"[:300]
    for name in _FLAGS:
        if name in rec and not isinstance(rec[name], bool):
            return f"{name} {rec[name]!r} is not true or false"[:300]
    if "agent" in rec and not isinstance(rec["agent"], str):
        return f"agent {rec['agent']!r} is not a spec string"[:300]
    if "options" in rec and not isinstance(rec["options"], dict):
        return f"options {rec['options']!r} are not an object of rule options"[:300]
    return None


def read_records(path: str | Path, check: Check | None = None) -> list[dict]:
    """The records of a JSON-lines file, each line one game's record (``record_problem``, then
    ``check``, a game's own rules for its records); a line that is not (a killed run's torn last
    line, an edit, a forged file) is refused in one line naming it."""
    records = []
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise RecordsError(f"{path}: cannot read it as text ({err})") from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = loads_json(line, f"{str(path)!r} line {number}")
        except LimitError as err:
            raise RecordsError(f"{err}; repair or delete that line and run again") from None
        except ValueError as err:
            raise RecordsError(
                f"{path}, line {number}: not valid JSON ({err}); each line must be one game's record: "
                "repair or delete that line and run again"
            ) from None
        problem = record_problem(rec) or (check(rec) if check else None)
        if problem:
            raise RecordsError(f"{path}, line {number}: not a game record ({problem}); repair or delete that line and run again")
        records.append(rec)
    return records


@contextlib.contextmanager
def refusing_bad_records(parser: argparse.ArgumentParser) -> Iterator[None]:
    """A script's body whose records files are checked: a bad line ends it in one line (exit 2)."""
    try:
        yield
    except RecordsError as err:
        parser.exit(2, f"{parser.prog}: error: {err}\n")


def records_parser(prog: str, description: str, agent_help: str) -> argparse.ArgumentParser:
    """The flags every game's recorded evaluation takes: an agent to play, or ``--report`` of
    records already made; how many games, workers, the seed of the deals, and where they go."""
    parser = OneLineParser(prog=prog, description=description)
    parser.add_argument("agent", nargs="?", help=agent_help)
    parser.add_argument("--report", nargs="+", metavar="JSONL", help="only summarise recorded games, one row per agent")
    parser.add_argument("--games", type=bounded_int(1, MAX_GAMES, "the most a float counts exactly"), default=100)
    parser.add_argument("--workers", type=bounded_int(1, MAX_WORKERS), default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="append finished games here (JSON lines); a rerun resumes")
    parser.add_argument("--no-progress", action="store_true")
    return parser


def recorded(out: str | None, *, check: Check | None = None, **match: Any) -> dict[int, dict]:
    """The games already in ``out`` whose fields equal ``match``, by game index (for resuming);
    every line is checked (``read_records``, with the game's ``check``)."""
    done: dict[int, dict] = {}
    if out and Path(out).exists():
        for rec in read_records(out, check):
            if all(rec.get(k) == v for k, v in match.items()):
                done[rec["game"]] = rec
    return done


class InProcess:
    """A stand-in for ``multiprocessing.Pool`` that runs tasks here (one worker, easy to debug)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def imap_unordered(self, fn, tasks, chunksize=1):
        return map(fn, tasks)


def _pool(backend: str, workers: int, address: str | None, any_tasks: bool):
    if (backend == "ray" or workers > 1) and any_tasks:
        from tablegym.training.parallel import task_pool

        return task_pool(backend, workers, address)
    return InProcess()


_END = object()
"""What ``next`` gives at the end of the tasks."""


def run_tasks(
    play_one: Callable[[Any], dict],
    tasks: Iterable,
    done: dict[int, dict],
    *,
    total: int,
    workers: int = 1,
    out: str | None = None,
    label: str = "",
    progress: bool = True,
    postfix: str = "score",
    backend: str = "process",
    address: str | None = None,
) -> dict[int, dict]:
    """Play ``tasks`` over ``workers`` processes (or Ray tasks, ``backend="ray"``), adding each
    record to ``done`` and to ``out``. Tasks are drawn from ``tasks`` (any iterable, a generator
    of any length) only as workers free up: at most two a worker wait, so nothing is held for
    a game that has not started."""
    source = iter(tasks)
    first = next(source, _END)
    pending = iter(()) if first is _END else itertools.chain([first], source)
    try:
        sink = open_append(out) if out else None
    except RunFolderError as err:
        raise RecordsError(str(err)) from None
    try:
        bar = progress_bar(total=total, initial=len(done), enabled=progress, unit="game", desc=label)
        with _pool(backend, workers, address, first is not _END) as pool:

            def keep(rec: dict) -> None:
                done[rec["game"]] = rec
                if sink:
                    sink.write(json.dumps(rec) + "\n")
                    sink.flush()
                bar.update(1)
                bar.set_postfix({postfix: rec.get(postfix)})

            run_bounded(pool, play_one, pending, 2 * workers, keep)
        bar.close()
    finally:
        if sink:
            sink.close()
    return done
