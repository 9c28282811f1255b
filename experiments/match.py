"""Matches and tournaments between agents, run in parallel and reproducible from one seed.

Agents travel to worker processes as spec strings (``"random"``,
``"alphabeta:depth=5,eval=advanced"``) and are built there with
``tablegym.models.agents.make_agent``: specs pickle, agents (numba kernels, torch models)
need not. Every game gets its own seed from ``numpy.random.SeedSequence(seed, spawn_key=...)``
and fresh agents, so a match gives the same games whatever the number of workers.

Seats are balanced: games come in pairs that share one random opening, agent A playing
player 0 in the first game of the pair and player 1 in the second (player 0 moves first unless
the game's ``first_player`` option says otherwise). Opening plies are uniformly random legal
moves; they are not agent moves and are not timed.

A long tournament can be run across several sessions: with ``journal=PATH`` every finished
game is appended to a JSON-lines file as soon as it arrives, and a later run with the same
journal replays nothing it finds there. ``time_limit_s`` stops dispatching new games after
that many seconds; the results then count the finished games only. Because every game has
its own seed, a resumed tournament gives the same games as one played in one go.
"""

from __future__ import annotations

import contextlib
import dataclasses
import csv
import json
import math
import os
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from tablegym.envs.core import Game
from tablegym.experiments.games import make_game
from tablegym.search.play import GameRecord, play_game, random_opening  # noqa: F401 (re-exported)
from tablegym.experiments.stats import MatchResult, SeatRecord, format_elo

AgentFactory = Callable[[Game, str], Any]
"""``(game, spec) -> Agent``; must be a picklable top-level function when ``workers > 1``."""


# --------------------------------------------------------------------------------------------
# Parallel matches
# --------------------------------------------------------------------------------------------


def _default_factory(game: Game, spec: str) -> Any:
    from tablegym.models.agents import make_agent

    return make_agent(game, spec)


@dataclass(frozen=True)
class _Task:
    """One game of a match, everything a worker needs, all picklable."""

    match: int
    pair: int
    a_seat: int
    game_name: str
    game_options: tuple[tuple[str, Any], ...]
    spec_a: str
    spec_b: str
    seed: int
    opening_plies: int
    factory: AgentFactory | None


_GAMES: dict[tuple[str, tuple[tuple[str, Any], ...]], Game] = {}
"""Per-process cache: a game is immutable, so each worker builds it once."""


def _game(name: str, options: tuple[tuple[str, Any], ...]) -> Game:
    key = (name, options)
    if key not in _GAMES:
        _GAMES[key] = make_game(name, **dict(options))
    return _GAMES[key]


_WARM: set[tuple[Any, ...]] = set()
"""Per-process record of the (game, spec, factory) combinations already warmed up."""


def _warm_up(game: Game, key: tuple[Any, ...], spec: str, factory: AgentFactory) -> None:
    """Make one untimed move with a throwaway agent so JIT compilation and cache loading
    (numba kernels, a checkpoint) do not count as thinking time in the first game."""
    if key in _WARM:
        return
    _WARM.add(key)
    state = game.new_initial_state()
    if not state.is_terminal() and state.current_player() >= 0:
        factory(game, spec)(state, np.random.default_rng(0))


def _play_task(task: _Task) -> tuple[_Task, GameRecord]:
    """Play one game in a worker: fresh agents, the pair's shared opening, the game's own rng."""
    game = _game(task.game_name, task.game_options)
    factory = task.factory or _default_factory
    for spec in (task.spec_a, task.spec_b):
        _warm_up(game, (task.game_name, task.game_options, spec, task.factory), spec, factory)
    opening_seq, *game_seqs = np.random.SeedSequence(task.seed, spawn_key=(task.match, task.pair)).spawn(3)
    opening = random_opening(game, task.opening_plies, np.random.default_rng(opening_seq))
    a, b = factory(game, task.spec_a), factory(game, task.spec_b)
    agents = (a, b) if task.a_seat == 0 else (b, a)
    record = play_game(game, agents, np.random.default_rng(game_seqs[task.a_seat]), opening=opening)
    return task, dataclasses.replace(record, final=None)  # the actions replay it; no need to ship the state back


def _tasks(match: int, game_name: str, options: tuple, spec_a: str, spec_b: str, games: int,
           seed: int, opening_plies: int, factory: AgentFactory | None) -> list[_Task]:
    return [
        _Task(match, g // 2, g % 2, game_name, options, spec_a, spec_b, seed, opening_plies, factory)
        for g in range(games)
    ]


# --------------------------------------------------------------------------------------------
# Journals: resumable tournaments
# --------------------------------------------------------------------------------------------


class JournalError(ValueError):
    """A journal line that cannot be read. The file is left as it is, for a person to look at:
    guessing what a damaged line meant could silently change a tournament's results."""


class JournalWarning(UserWarning):
    """A journal's unfinished last line (the usual trace of a killed run) is being ignored."""


_KEY_FIELDS = ("game", "options", "spec_a", "spec_b", "seed", "opening_plies", "match", "pair", "a_seat")
"""What identifies a game: with these the game's seed, opening and agents are fixed."""


def _task_id(task: _Task) -> tuple[int, int, int]:
    return task.match, task.pair, task.a_seat


def _key_text(key: dict[str, Any]) -> str:
    """Canonical text of a game's key, the same for a task and for its line read back."""
    return json.dumps([key[f] for f in _KEY_FIELDS], separators=(",", ":"))


def _task_key(task: _Task) -> dict[str, Any]:
    return {"game": task.game_name, "options": [list(kv) for kv in task.game_options], "spec_a": task.spec_a,
            "spec_b": task.spec_b, "seed": task.seed, "opening_plies": task.opening_plies, "match": task.match,
            "pair": task.pair, "a_seat": task.a_seat}


def _record_json(record: GameRecord) -> dict[str, Any]:
    return {"actions": list(record.actions), "opening_plies": record.opening_plies, "winner": record.winner,
            "returns": list(record.returns), "move_counts": list(record.move_counts),
            "move_seconds": list(record.move_seconds)}


def _parse_entry(entry: Any) -> tuple[str, GameRecord]:
    """The key text and the game of one decoded journal line; raises ValueError, KeyError or
    TypeError when it is not one."""
    if not isinstance(entry, dict) or not isinstance(entry.get("record"), dict):
        raise ValueError("not a game: expected an object with the game's key and a 'record'")
    missing = [f for f in _KEY_FIELDS if f not in entry]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    rec = entry["record"]
    winner = rec["winner"]
    record = GameRecord(
        actions=tuple(int(a) for a in rec["actions"]),
        opening_plies=int(rec["opening_plies"]),
        winner=None if winner is None else int(winner),
        returns=tuple(float(x) for x in rec["returns"]),
        move_counts=tuple(int(x) for x in rec["move_counts"]),
        move_seconds=tuple(float(x) for x in rec["move_seconds"]),
    )
    if not len(record.returns) == len(record.move_counts) == len(record.move_seconds):
        raise ValueError("returns, move_counts and move_seconds differ in length")
    return _key_text(entry), record


class _Journal:
    """The games of earlier runs, read once, and an append-only file for this run's games.

    Only the parent process writes, one line per game, flushed and fsynced at once, so a kill
    loses at most the line being written. Such a torn last line (no newline) holds no finished
    game: it is ignored with a warning and cut off just before the next game is written, so
    the file stays one game per line. Any other unreadable line is an error. When a key occurs
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
        self._games: dict[str, GameRecord] = {}
        lines = data.split(b"\n")
        tail = lines.pop()  # what follows the last newline: b"" in a clean file
        for number, raw in enumerate(lines, 1):
            if raw.strip():
                self._add(number, self._decode(number, raw))
        if tail.strip():
            number = len(lines) + 1
            try:
                entry = json.loads(tail)
            except ValueError:
                warnings.warn(f"{self.path}, line {number}: ignoring the unfinished last line ({len(tail)} bytes, "
                              "no newline), the usual trace of a killed run; its game will be played again",
                              JournalWarning, stacklevel=4)
                self._cut_at = len(data) - len(tail)
            else:
                self._add(number, entry)  # complete, only its newline is missing
                self._needs_newline = True
        elif tail:
            self._needs_newline = True
        self._file = open(self.path, "ab")  # creates the file: a bad path fails now, not after a game

    def _decode(self, number: int, raw: bytes) -> Any:
        try:
            return json.loads(raw)
        except ValueError as err:  # UnicodeDecodeError is one too
            raise JournalError(f"{self.path}, line {number}: not valid JSON ({err}); each line must be one "
                               "game: repair or delete that line and run again") from None

    def _add(self, number: int, entry: Any) -> None:
        try:
            key, record = _parse_entry(entry)
        except (ValueError, KeyError, TypeError) as err:
            what = f"missing field {err}" if isinstance(err, KeyError) else str(err)
            raise JournalError(f"{self.path}, line {number}: not a game record ({what}); repair or delete "
                               "that line and run again") from None
        self._games.setdefault(key, record)

    def get(self, task: _Task) -> GameRecord | None:
        """The game of ``task`` if an earlier run finished it."""
        return self._games.get(_key_text(_task_key(task)))

    def append(self, task: _Task, record: GameRecord) -> None:
        """Write one finished game and make sure it is on disk before going on."""
        if self._cut_at is not None or self._needs_newline:
            self._start_fresh_line()
        key = _task_key(task)
        line = json.dumps({**key, "record": _record_json(record)}, separators=(",", ":"))
        self._file.write(line.encode("utf-8") + b"\n")
        self._file.flush()
        os.fsync(self._file.fileno())
        self._games.setdefault(_key_text(key), record)

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

    def __enter__(self) -> "_Journal":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _open_journal(path: str | os.PathLike[str] | None) -> contextlib.AbstractContextManager[_Journal | None]:
    return contextlib.nullcontext() if path is None else _Journal(path)


# --------------------------------------------------------------------------------------------
# Running and counting
# --------------------------------------------------------------------------------------------


def _pool(backend: str, processes: int, address: str | None) -> Any:
    """Where games run: worker processes here, or Ray tasks (training/parallel.py)."""
    from tablegym.training.parallel import task_pool

    return task_pool(backend, processes, address, __name__)


def _run(tasks: list[_Task], workers: int, progress: bool, desc: str, *, journal: _Journal | None = None,
         time_limit_s: float | None = None, backend: str = "process",
         address: str | None = None) -> dict[tuple[int, int, int], GameRecord]:
    """Play ``tasks`` (in a pool when ``workers > 1``), dispatched in the order given; return the
    records of the finished games by ``(match, pair, a_seat)``.

    Games found in ``journal`` are taken from it, not played. Each game played is appended to
    it here, in the parent, as soon as its result arrives, so a kill loses only games in
    progress. After ``time_limit_s`` seconds no new game starts; started games are finished.
    """
    from tqdm import tqdm

    done: dict[tuple[int, int, int], GameRecord] = {}
    todo: list[_Task] = []
    for task in tasks:
        record = journal.get(task) if journal is not None else None
        if record is None:
            todo.append(task)
        else:
            done[_task_id(task)] = record
    deadline = math.inf if time_limit_s is None else time.monotonic() + time_limit_s

    with tqdm(total=len(tasks), initial=len(done), desc=desc, unit="game", disable=not progress, leave=False) as bar:
        def keep(task: _Task, record: GameRecord) -> None:
            done[_task_id(task)] = record
            if journal is not None:
                journal.append(task, record)
            bar.update()

        if workers == 1 and backend == "process":
            for task in todo:
                if time.monotonic() >= deadline:
                    break
                keep(*_play_task(task))
        elif todo and time.monotonic() < deadline:
            processes = min(workers, len(todo))
            with _pool(backend, processes, address) as pool:
                if time_limit_s is None:
                    for task, record in pool.imap_unordered(_play_task, todo, chunksize=1):
                        keep(task, record)
                else:
                    _run_until(pool, todo, processes, deadline, keep)
    return done


def _run_until(pool: Any, tasks: list[_Task], processes: int, deadline: float,
               keep: Callable[[_Task, GameRecord], None]) -> None:
    """Hand the pool one game per free worker while time is left, so that stopping leaves no
    queued games behind: only games already started are waited for."""
    slots = threading.Semaphore(processes)
    stop = threading.Event()

    def feed() -> Iterator[_Task]:
        # Runs in the pool's task-handler thread, which would otherwise queue every task at once.
        for task in tasks:
            slots.acquire()
            if stop.is_set() or time.monotonic() >= deadline:
                return
            yield task

    try:
        for task, record in pool.imap_unordered(_play_task, feed(), chunksize=1):
            slots.release()
            keep(task, record)
    finally:
        stop.set()
        slots.release()  # wake the feeder if it waits, so that the pool can shut down


def _interleave(per_pair: list[list[_Task]]) -> list[_Task]:
    """Opening pair 0 (both seats) of every pairing, then pair 1 of every pairing, and so on:
    a tournament stopped early then has about as many games of every pairing."""
    return sorted((t for ts in per_pair for t in ts), key=lambda t: (t.pair, t.match, t.a_seat))


def _summarize(game_name: str, spec_a: str, spec_b: str, tasks: list[_Task], records: list[GameRecord]) -> MatchResult:
    """Count A's wins/draws/losses overall and per seat, and the mean time per move of A and B."""
    seat = {s: [0, 0, 0, 0] for s in (0, 1)}  # games, wins, draws, losses
    moves = [0, 0]
    secs = [0.0, 0.0]
    for task, rec in zip(tasks, records):
        a, b = task.a_seat, 1 - task.a_seat
        counts = seat[a]
        counts[0] += 1
        counts[1 if rec.winner == a else 3 if rec.winner == b else 2] += 1
        moves[0] += rec.move_counts[a]
        moves[1] += rec.move_counts[b]
        secs[0] += rec.move_seconds[a]
        secs[1] += rec.move_seconds[b]
    seats = tuple(SeatRecord(s, *seat[s]) for s in (0, 1))
    return MatchResult(
        game=game_name,
        agent_a=spec_a,
        agent_b=spec_b,
        wins=sum(s.wins for s in seats),
        draws=sum(s.draws for s in seats),
        losses=sum(s.losses for s in seats),
        seats=seats,
        seconds_per_move=tuple(s / m if m else math.nan for s, m in zip(secs, moves)),  # type: ignore[arg-type]
        records=tuple(records),
    )


def _summarize_finished(game_name: str, spec_a: str, spec_b: str, tasks: list[_Task],
                        done: dict[tuple[int, int, int], GameRecord]) -> MatchResult:
    """``_summarize`` over the finished games among ``tasks``, in task order."""
    finished = [t for t in tasks if _task_id(t) in done]
    return _summarize(game_name, spec_a, spec_b, finished, [done[_task_id(t)] for t in finished])


def _prepare(game_name: str, specs: Iterable[str], game_options: dict[str, Any] | None, workers: int,
             factory: AgentFactory | None, time_limit_s: float | None = None,
             backend: str = "process") -> tuple[tuple[str, Any], ...]:
    """Check everything in the parent so bad input fails fast with a clear error, not in a worker."""
    from tablegym.training.parallel import check_backend

    check_backend(backend)
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    if time_limit_s is not None and not time_limit_s >= 0:
        raise ValueError(f"time_limit_s must be None or >= 0, got {time_limit_s!r}")
    options = tuple(sorted((game_options or {}).items()))
    game = _game(game_name, options)
    build = factory or _default_factory
    for spec in specs:
        if not isinstance(spec, str):
            raise TypeError(f"agent specs are strings, got {spec!r}")
        build(game, spec)
    return options


def play_match(
    game_name: str,
    spec_a: str,
    spec_b: str,
    *,
    games: int,
    opening_plies: int = 2,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    game_options: dict[str, Any] | None = None,
    agent_factory: AgentFactory | None = None,
    journal: str | os.PathLike[str] | None = None,
    time_limit_s: float | None = None,
    backend: str = "process",
    address: str | None = None,
) -> MatchResult:
    """Play ``games`` games of A against B with balanced seats; results are counted for A.

    Each random opening is played twice, A as player 0 then as player 1 (an odd ``games``
    leaves the last opening played once). The result depends on ``seed`` only, not on
    ``workers``, as long as the agents themselves are deterministic given their rng.

    With ``journal`` (a JSON-lines file) games finished by earlier runs are read from it and
    each new game is appended to it. After ``time_limit_s`` seconds no new game starts, and the
    result counts the finished games only (possibly none). ``backend="ray"`` plays the games as
    Ray tasks (on the cluster at ``address``, else a local instance): the same records.
    """
    if not isinstance(games, int) or games < 1:
        raise ValueError(f"games must be a positive integer, got {games!r}")
    if opening_plies < 0:
        raise ValueError(f"opening plies must be >= 0, got {opening_plies!r}")
    options = _prepare(game_name, (spec_a, spec_b), game_options, workers, agent_factory, time_limit_s, backend)
    tasks = _tasks(0, game_name, options, spec_a, spec_b, games, seed, opening_plies, agent_factory)
    with _open_journal(journal) as log:
        done = _run(tasks, workers, progress, f"{spec_a} vs {spec_b}", journal=log, time_limit_s=time_limit_s,
                    backend=backend, address=address)
    return _summarize_finished(game_name, spec_a, spec_b, tasks, done)


def round_robin(
    game_name: str,
    specs: Sequence[str],
    *,
    games_per_pair: int,
    opening_plies: int = 2,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    game_options: dict[str, Any] | None = None,
    agent_factory: AgentFactory | None = None,
    journal: str | os.PathLike[str] | None = None,
    time_limit_s: float | None = None,
    backend: str = "process",
    address: str | None = None,
) -> list[MatchResult]:
    """Every pair of ``specs`` plays a match of ``games_per_pair`` games, in one shared pool.

    Pairings come in order (0,1), (0,2), ..., (1,2), ...; the first pairing is the same match
    that ``play_match`` gives for the same seed.

    With ``journal`` (a JSON-lines file) games finished by earlier runs are read from it and
    each new game is appended to it. After ``time_limit_s`` seconds no new game starts; each
    pairing's result then counts its finished games only, and pairings without any are left
    out. With either option, games are dispatched pair by pair across all pairings (see
    ``_interleave``) so that a stopped tournament covers every pairing evenly; the games
    themselves, and so the results, do not depend on that order. ``backend`` and ``address``: as
    in ``play_match``.
    """
    specs = list(specs)
    if len(specs) < 2:
        raise ValueError(f"a round robin needs at least two agents, got {specs!r}")
    dupes = sorted({s for s in specs if specs.count(s) > 1})
    if dupes:
        raise ValueError(f"agent specs must be distinct, repeated: {dupes}")
    if not isinstance(games_per_pair, int) or games_per_pair < 1:
        raise ValueError(f"games_per_pair must be a positive integer, got {games_per_pair!r}")
    if opening_plies < 0:
        raise ValueError(f"opening plies must be >= 0, got {opening_plies!r}")
    options = _prepare(game_name, specs, game_options, workers, agent_factory, time_limit_s, backend)
    pairs = [(a, b) for i, a in enumerate(specs) for b in specs[i + 1:]]
    per_pair = [
        _tasks(m, game_name, options, a, b, games_per_pair, seed, opening_plies, agent_factory)
        for m, (a, b) in enumerate(pairs)
    ]
    resumable = journal is not None or time_limit_s is not None
    order = _interleave(per_pair) if resumable else [t for ts in per_pair for t in ts]
    with _open_journal(journal) as log:
        done = _run(order, workers, progress, f"round robin ({len(specs)} agents)", journal=log,
                    time_limit_s=time_limit_s, backend=backend, address=address)
    results = [_summarize_finished(game_name, a, b, per_pair[m], done) for m, (a, b) in enumerate(pairs)]
    return [r for r in results if r.games]


# --------------------------------------------------------------------------------------------
# Ratings and tables
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EloRow:
    """One agent's fitted rating, games played and overall score."""

    name: str
    elo: float
    games: int
    score: float


def elo_ratings(results: Iterable[MatchResult], *, prior_draws: float = 1.0, iterations: int = 10_000) -> list[EloRow]:
    """Fit Bradley-Terry ratings to all pairings (draws count half), best first, mean Elo 0.

    Uses Hunter's minorize-maximize iteration for the maximum-likelihood strengths. Each played
    pairing gets ``prior_draws`` virtual drawn games so that an agent that won or lost every
    game still gets a finite rating; set it to 0 for the plain maximum-likelihood fit.
    """
    results = list(results)
    names: list[str] = []
    for r in results:
        for s in (r.agent_a, r.agent_b):
            if s not in names:
                names.append(s)
    k = len(names)
    idx = {s: i for i, s in enumerate(names)}
    won = np.zeros(k)
    played = np.zeros((k, k))
    games = np.zeros(k, dtype=int)
    points = np.zeros(k)
    for r in results:
        a, b = idx[r.agent_a], idx[r.agent_b]
        won[a] += r.wins + r.draws / 2 + prior_draws / 2
        won[b] += r.losses + r.draws / 2 + prior_draws / 2
        played[a, b] += r.games + prior_draws
        played[b, a] += r.games + prior_draws
        games[a] += r.games
        games[b] += r.games
        points[a] += r.wins + r.draws / 2
        points[b] += r.losses + r.draws / 2
    strength = np.ones(k)
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(iterations):
            denom = (played / (strength[:, None] + strength[None, :])).sum(axis=1)
            new = np.where(denom > 0, won / denom, 1.0)
            positive = new[new > 0]
            new /= np.exp(np.log(positive).mean()) if positive.size else 1.0
            done = np.allclose(new, strength, rtol=1e-12, atol=0)
            strength = new
            if done:
                break
        elo = 400.0 * np.log10(strength)
    finite = elo[np.isfinite(elo)]
    if finite.size:
        elo = elo - finite.mean()
    rows = [EloRow(n, float(elo[i]), int(games[i]), float(points[i] / games[i]) if games[i] else math.nan)
            for i, n in enumerate(names)]
    return sorted(rows, key=lambda row: -row.elo)


def _fmt_seconds(x: float) -> str:
    if math.isnan(x):
        return "-"
    return f"{x:.3g}"


def markdown_table(results: Iterable[MatchResult], *, elo: bool = False) -> str:
    """A markdown table of matches: W/D/L of A, score with its 95% interval, seconds per move."""
    header = ["A", "B", "games (distinct)", "W/D/L (A)", "W/D/L A as p0 / as p1", "score A [95%]"]
    if elo:
        header.append("Elo A-B [95%]")
    header += ["s/move A", "s/move B"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in results:
        lo, hi = r.interval
        seats = " / ".join(f"{s.wins}/{s.draws}/{s.losses}" for s in r.seats)
        cells = [f"`{r.agent_a}`", f"`{r.agent_b}`", f"{r.games} ({r.distinct_games})", f"{r.wins}/{r.draws}/{r.losses}",
                 seats, f"{r.score:.3f} [{lo:.3f}, {hi:.3f}]"]
        if elo:
            elo_lo, elo_hi = r.elo_interval
            cells.append(f"{format_elo(r.elo)} [{format_elo(elo_lo)}, {format_elo(elo_hi)}]")
        cells += [_fmt_seconds(r.seconds_per_move[0]), _fmt_seconds(r.seconds_per_move[1])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def elo_markdown(rows: Iterable[EloRow]) -> str:
    """A markdown table of fitted ratings, best first."""
    lines = ["| rank | agent | Elo | games | score |", "|---|---|---|---|---|"]
    for rank, row in enumerate(rows, 1):
        lines.append(f"| {rank} | `{row.name}` | {format_elo(row.elo)} | {row.games} | {row.score:.3f} |")
    return "\n".join(lines)


def write_csv(results: Iterable[MatchResult], path: str | os.PathLike[str]) -> None:
    """Write one row per match (``MatchResult.as_row``) to a CSV file."""
    rows = [r.as_row() for r in results]
    fields: list[str] = []
    for row in rows:
        fields += [k for k in row if k not in fields]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
