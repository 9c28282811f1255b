"""Many independent single-player games in parallel, recorded as JSON lines so a run resumes.

Each game is a task (a tuple) that a module-level ``play_one(task) -> dict`` turns into a record
with a "game" index. Finished records are appended to ``out`` as they come, and a rerun skips the
indices already recorded there with the same identifying fields.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from tqdm import tqdm

from tablegym.training.flags import OneLineParser


class RecordsError(ValueError):
    """A records file (JSON lines) with a line that is not one game's record."""


def read_records(path: str | Path) -> list[dict]:
    """The records of a JSON-lines file, each line one JSON object with a "game" index; a line
    that is not (a killed run's torn last line, an edit) is refused in one line naming it."""
    records = []
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise RecordsError(f"{path}: cannot read it as text ({err})") from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as err:
            raise RecordsError(f"{path}, line {number}: not valid JSON ({err}); each line must be one game's record: "
                               "repair or delete that line and run again") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("game"), int):
            raise RecordsError(f"{path}, line {number}: not a game record (a JSON object with an integer \"game\"); "
                               "repair or delete that line and run again")
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
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="append finished games here (JSON lines); a rerun resumes")
    parser.add_argument("--no-progress", action="store_true")
    return parser


def recorded(out: str | None, **match: Any) -> dict[int, dict]:
    """The games already in ``out`` whose fields equal ``match``, by game index (for resuming)."""
    done: dict[int, dict] = {}
    if out and Path(out).exists():
        for rec in read_records(out):
            if all(rec.get(k) == v for k, v in match.items()):
                done[rec["game"]] = rec
    return done


class InProcess:
    """A stand-in for ``multiprocessing.Pool`` that runs tasks here (one worker, easy to debug)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def imap_unordered(self, fn, tasks):
        return map(fn, tasks)


def _pool(backend: str, workers: int, address: str | None, any_tasks: bool):
    if (backend == "ray" or workers > 1) and any_tasks:
        from tablegym.training.parallel import task_pool

        return task_pool(backend, workers, address)
    return InProcess()


def run_tasks(play_one: Callable[[Any], dict], tasks: Iterable, done: dict[int, dict], *, total: int,
              workers: int = 1, out: str | None = None, label: str = "", progress: bool = True,
              postfix: str = "score", backend: str = "process", address: str | None = None) -> dict[int, dict]:
    """Play ``tasks`` over ``workers`` processes (or Ray tasks, ``backend="ray"``), adding each
    record to ``done`` and to ``out``."""
    tasks = list(tasks)
    sink = open(out, "a") if out else None
    try:
        bar = tqdm(total=total, initial=len(done), disable=not progress, unit="game", desc=label)
        with _pool(backend, workers, address, bool(tasks)) as pool:
            for rec in pool.imap_unordered(play_one, tasks):
                done[rec["game"]] = rec
                if sink:
                    sink.write(json.dumps(rec) + "\n")
                    sink.flush()
                bar.update(1)
                bar.set_postfix({postfix: rec.get(postfix)})
        bar.close()
    finally:
        if sink:
            sink.close()
    return done
