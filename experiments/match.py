"""Matches and tournaments between agents, run in parallel and reproducible from one seed.

Agents are named by spec strings (``"random"``, ``"alphabeta:depth=5,eval=advanced"``), each read
once, in the parent, into a plan (``tablegym.models.agents.plan_agent``: plain data) that travels
to the worker processes and is built there (``build_agent``): plans pickle, agents (numba
kernels, torch models) need not, and a network file is read once a process. Every game gets its
own seed from ``numpy.random.SeedSequence(seed, spawn_key=...)`` and fresh agents, so a match
gives the same games whatever the number of workers.

Seats are balanced: games come in pairs that share one random opening, agent A playing
player 0 in the first game of the pair and player 1 in the second (player 0 moves first unless
the game's ``first_player`` option says otherwise). Opening plies are uniformly random legal
moves; they are not agent moves and are not timed. In a game without chance a match draws its
openings without replacement (``_opening``): deterministic agents replay an opening move for
move there, so a repeated one would add a game and no evidence. Only when every opening the
plies allow has been played does a pair repeat one. A game with chance (Trap's dice) rolls
every game's own dice after its opening, so its openings are drawn as they come.

A long tournament can be run across several sessions: with ``journal=PATH`` every finished
game is appended to a JSON-lines file as soon as it arrives, and a later run with the same
journal replays nothing it finds there. ``time_limit_s`` stops dispatching new games after
that many seconds; the results then count the finished games only. Because every game has
its own seed, a resumed tournament gives the same games as one played in one go.

A journal is data from outside: every line must be a game that replays on the rules core, or
it is refused in one line (``tablegym.experiments.journal``). Games are generated as they are
dispatched, never listed, so the number of games asked for costs nothing until they are played.
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

import numpy as np

from tablegym.envs.core import Game
from tablegym.experiments.games import cached_game
from tablegym.experiments.journal import _Journal, _open_journal
from tablegym.experiments.stats import MAX_GAMES, MatchResult, SeatRecord, format_elo
from tablegym.search.play import GameRecord, count_openings, play_game, random_opening
from tablegym.training.parallel import run_bounded

AgentFactory = Callable[[Game, str], Any]
"""``(game, spec) -> Agent``; must be a picklable top-level function when ``workers > 1``."""


# --------------------------------------------------------------------------------------------
# Parallel matches
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Planned:
    """The agent factory of a run given none: each spec read once, in the parent
    (``plan_agent``), and built from its plan wherever a game is played (``build_agent``: the
    evaluator read once a process, a fresh agent every game)."""

    plans: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, game: Game, specs: Iterable[str]) -> _Planned:
        from tablegym.models.agents import build_agent, plan_agent

        plans = {}
        for spec in specs:
            plans[spec] = plan_agent(game, spec)
            build_agent(plans[spec], game)  # a file that does not load fails here, not in a worker
        return cls(tuple(plans.items()))

    def __call__(self, game: Game, spec: str) -> Any:
        from tablegym.models.agents import build_agent

        return build_agent(dict(self.plans)[spec], game)


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
    factory: AgentFactory


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


@dataclass
class _Drawn:
    """The openings of one match's pairs so far, in pair order (a worker draws them as far as
    the pairs it plays: each depends on the ones before it)."""

    openings: list[tuple[int, ...]] = dataclasses.field(default_factory=list)
    seen: set[tuple[int, ...]] = dataclasses.field(default_factory=set)
    exhausted: bool = False
    """Every opening the plies allow is among ``openings``: further pairs repeat them in order."""


_DRAWN: dict[tuple[Any, ...], _Drawn] = {}


def _opening(game: Game, task: _Task) -> tuple[int, ...]:
    """The opening of ``task``'s pair: the first one drawn from the pair's own seeds
    (``SeedSequence(seed, spawn_key=(match, pair[, retry]))``) that no earlier pair of the match
    plays, while the game has one left (``count_openings``, asked only when a draw repeats);
    after that pair ``p`` plays the opening of pair ``p mod`` (the number there are). A game
    with chance keeps each pair's first draw."""
    if game.spec.max_chance_outcomes > 0:
        seq = np.random.SeedSequence(task.seed, spawn_key=(task.match, task.pair)).spawn(1)[0]
        return tuple(random_opening(game, task.opening_plies, np.random.default_rng(seq)))
    key = (task.game_name, task.game_options, task.seed, task.match, task.opening_plies)
    drawn = _DRAWN.setdefault(key, _Drawn())
    while len(drawn.openings) <= task.pair:
        p = len(drawn.openings)
        for retry in itertools.count():
            if drawn.exhausted:
                opening = drawn.openings[p % len(drawn.seen)]
                break
            spawn_key = (task.match, p) if retry == 0 else (task.match, p, retry)
            seq = np.random.SeedSequence(task.seed, spawn_key=spawn_key)
            first = seq.spawn(1)[0] if retry == 0 else seq  # a pair's first draw: its games' seeds' sibling
            opening = tuple(random_opening(game, task.opening_plies, np.random.default_rng(first)))
            if opening not in drawn.seen:
                drawn.seen.add(opening)
                break
            if retry == 0:
                drawn.exhausted = count_openings(game, task.opening_plies, most=len(drawn.seen) + 1) <= len(drawn.seen)
        drawn.openings.append(opening)
    return drawn.openings[task.pair]


def _check_openings(journal: _Journal, tasks: _Tasks, found: dict[tuple[int, int, int], GameRecord]) -> None:
    """Refuse a journal whose games start from other openings than this match draws (one
    written when openings were drawn with replacement): resuming it would mix two matches."""
    from tablegym.experiments.journal import JournalError

    game = cached_game(tasks.game_name, tasks.game_options)
    for (_, pair, seat), record in sorted(found.items()):
        want = _opening(game, tasks[2 * pair + seat])
        if tuple(record.actions[: record.opening_plies]) != want:
            raise JournalError(
                f"{journal.path}: match {tasks.match}, pair {pair} starts from the opening "
                f"{list(record.actions[: record.opening_plies])}, not {list(want)}, the one this match draws "
                "(openings are drawn without replacement); give a new --journal"
            )


def _play_task(task: _Task) -> tuple[_Task, GameRecord]:
    """Play one game in a worker: fresh agents, the pair's shared opening, the game's own rng."""
    game = cached_game(task.game_name, task.game_options)
    factory = task.factory
    for spec in (task.spec_a, task.spec_b):
        _warm_up(game, (task.game_name, task.game_options, spec, task.factory), spec, factory)
    _, *game_seqs = np.random.SeedSequence(task.seed, spawn_key=(task.match, task.pair)).spawn(3)
    opening = _opening(game, task)
    a, b = factory(game, task.spec_a), factory(game, task.spec_b)
    agents = (a, b) if task.a_seat == 0 else (b, a)
    record = play_game(game, agents, np.random.default_rng(game_seqs[task.a_seat]), opening=opening)
    return task, dataclasses.replace(record, final=None)  # the actions replay it; no need to ship the state back


@dataclass(frozen=True)
class _Tasks(Sequence[_Task]):
    """The games of one match, in order, made when asked for (game ``g`` is opening pair
    ``g // 2`` with A in seat ``g % 2``): a sequence as long as the match that holds no game."""

    match: int
    game_name: str
    game_options: tuple[tuple[str, Any], ...]
    spec_a: str
    spec_b: str
    games: int
    seed: int
    opening_plies: int
    factory: AgentFactory

    def __len__(self) -> int:
        return self.games

    def __getitem__(self, g: int) -> _Task:  # type: ignore[override]
        if not 0 <= g < self.games:
            raise IndexError(f"game {g} of a match of {self.games}")
        return _Task(
            self.match,
            g // 2,
            g % 2,
            self.game_name,
            self.game_options,
            self.spec_a,
            self.spec_b,
            self.seed,
            self.opening_plies,
            self.factory,
        )

    def __iter__(self) -> Iterator[_Task]:
        return (self[g] for g in range(self.games))


def _tasks(
    match: int,
    game_name: str,
    options: tuple,
    spec_a: str,
    spec_b: str,
    games: int,
    seed: int,
    opening_plies: int,
    factory: AgentFactory,
) -> _Tasks:
    return _Tasks(match, game_name, options, spec_a, spec_b, games, seed, opening_plies, factory)


def _task_id(task: _Task) -> tuple[int, int, int]:
    return task.match, task.pair, task.a_seat


# --------------------------------------------------------------------------------------------
# Running and counting
# --------------------------------------------------------------------------------------------


def _pool(backend: str, processes: int, address: str | None) -> Any:
    """Where games run: worker processes here, or Ray tasks (training/parallel.py)."""
    from tablegym.training.parallel import task_pool

    return task_pool(backend, processes, address, __name__)


def _run(
    matches: Sequence[_Tasks],
    order: Iterable[_Task],
    workers: int,
    progress: bool,
    desc: str,
    *,
    journal: _Journal | None = None,
    time_limit_s: float | None = None,
    backend: str = "process",
    address: str | None = None,
) -> dict[tuple[int, int, int], GameRecord]:
    """Play the games of ``matches`` (in a pool when ``workers > 1``), dispatched in ``order`` (an
    iterable of those games, each once); return the records of the finished games by
    ``(match, pair, a_seat)``.

    Games found in ``journal`` are taken from it, not played. Each game played is appended to
    it here, in the parent, as soon as its result arrives, so a kill loses only games in
    progress. After ``time_limit_s`` seconds no new game starts; started games are finished.
    Games are drawn from ``order`` one at a time as workers free up: nothing is held per game
    that has not started.
    """
    from tablegym.training.progress import progress_bar

    done: dict[tuple[int, int, int], GameRecord] = {}
    if journal is not None:
        for tasks in matches:
            found = journal.found(tasks)
            _check_openings(journal, tasks, found)
            done.update(found)
    total = sum(len(tasks) for tasks in matches)
    remaining = total - len(done)
    todo = (task for task in order if _task_id(task) not in done)
    deadline = math.inf if time_limit_s is None else time.monotonic() + time_limit_s

    with progress_bar(total=total, initial=len(done), desc=desc, unit="game", enabled=progress, leave=False) as bar:

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
        elif remaining and time.monotonic() < deadline:
            processes = min(workers, remaining)
            with _pool(backend, processes, address) as pool:
                run_bounded(
                    pool, _play_task, todo, processes, lambda result: keep(*result), until=lambda: time.monotonic() >= deadline
                )
    return done


def _interleave(per_pair: Sequence[_Tasks]) -> Iterator[_Task]:
    """Opening pair 0 (both seats) of every pairing, then pair 1 of every pairing, and so on:
    a tournament stopped early then has about as many games of every pairing. Made as it is
    consumed."""
    matches = sorted(per_pair, key=lambda tasks: tasks.match)
    pairs = max((len(tasks) + 1) // 2 for tasks in matches) if matches else 0
    for pair in range(pairs):
        for tasks in matches:
            for seat in (0, 1):
                if 2 * pair + seat < len(tasks):
                    yield tasks[2 * pair + seat]


def _summarize(game_name: str, spec_a: str, spec_b: str, tasks: list[_Task], records: list[GameRecord]) -> MatchResult:
    """Count A's wins/draws/losses overall and per seat, and the mean time per move of A and B."""
    seat = {s: [0, 0, 0, 0] for s in (0, 1)}  # games, wins, draws, losses
    distinct = [0, 0, 0]  # wins, draws, losses of the games not seen before
    seen: set[tuple] = set()
    moves = [0, 0]
    secs = [0.0, 0.0]
    for task, rec in zip(tasks, records):
        a, b = task.a_seat, 1 - task.a_seat
        counts = seat[a]
        counts[0] += 1
        outcome = 0 if rec.winner == a else 2 if rec.winner == b else 1
        counts[1 + outcome] += 1
        if (a, tuple(rec.actions)) not in seen:
            seen.add((a, tuple(rec.actions)))
            distinct[outcome] += 1
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
        distinct=(distinct[0], distinct[1], distinct[2]),
    )


def _summarize_finished(
    game_name: str, spec_a: str, spec_b: str, tasks: _Tasks, done: dict[tuple[int, int, int], GameRecord]
) -> MatchResult:
    """``_summarize`` over the finished games among ``tasks``, in task order (found among the
    finished games, not by going through every game asked for)."""
    finished = [
        tasks[g]
        for g in sorted(2 * pair + seat for match, pair, seat in done if match == tasks.match and 2 * pair + seat < len(tasks))
    ]
    return _summarize(game_name, spec_a, spec_b, finished, [done[_task_id(t)] for t in finished])


def _check_games(name: str, games: Any) -> None:
    if not isinstance(games, int) or isinstance(games, bool) or games < 1:
        raise ValueError(f"{name} must be a positive integer, got {games!r}")
    if games > MAX_GAMES:
        raise ValueError(f"{name} must be at most {MAX_GAMES:,} (2**53, the most a float counts exactly), got {games:,}")


def _prepare(
    game_name: str,
    specs: Iterable[str],
    game_options: dict[str, Any] | None,
    workers: int,
    factory: AgentFactory | None,
    time_limit_s: float | None = None,
    backend: str = "process",
) -> tuple[tuple[tuple[str, Any], ...], AgentFactory]:
    """Check everything in the parent so bad input fails fast with a clear error, not in a worker;
    the game's options and the factory the games build their agents with (the caller's, else
    every spec planned once: ``_Planned``)."""
    from tablegym.training.parallel import check_backend

    check_backend(backend)
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    if time_limit_s is not None and not time_limit_s >= 0:
        raise ValueError(f"time_limit_s must be None or >= 0, got {time_limit_s!r}")
    options = tuple(sorted((game_options or {}).items()))
    game = cached_game(game_name, options)
    if factory is None:
        return options, _Planned.of(game, specs)
    for spec in specs:
        if not isinstance(spec, str):
            raise TypeError(f"agent specs are strings, got {spec!r}")
        factory(game, spec)
    return options, factory


class MatchSettings(TypedDict, total=False):
    """How ``play_match`` and ``round_robin`` play their games (keyword arguments, each optional).

    ``opening_plies`` (2): uniformly random plies before the agents play, shared by the two games
    of a pair; ``seed`` (0): the openings' and agents' seed; ``workers`` (1): processes playing
    games side by side; ``progress`` (True): a progress bar; ``game_options``: the game's rule
    options; ``agent_factory``: ``(game, spec) -> agent`` instead of the one route's; ``journal``:
    a JSON-lines file of finished games, read and appended to; ``time_limit_s``: no new game
    starts after this many seconds; ``backend`` ("process" or "ray") and ``address`` (the Ray
    cluster to join, else a local instance).
    """

    opening_plies: int
    seed: int
    workers: int
    progress: bool
    game_options: dict[str, Any] | None
    agent_factory: AgentFactory | None
    journal: str | os.PathLike[str] | None
    time_limit_s: float | None
    backend: str
    address: str | None


def play_match(
    game_name: str,
    spec_a: str,
    spec_b: str,
    *,
    games: int,
    **settings: Unpack[MatchSettings],
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
    _check_games("games", games)
    return _play(game_name, (spec_a, spec_b), [(spec_a, spec_b)], games, f"{spec_a} vs {spec_b}", **settings)[0]


def round_robin(
    game_name: str,
    specs: Sequence[str],
    *,
    games_per_pair: int,
    **settings: Unpack[MatchSettings],
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
    _check_games("games_per_pair", games_per_pair)
    pairs = [(a, b) for i, a in enumerate(specs) for b in specs[i + 1 :]]
    results = _play(game_name, specs, pairs, games_per_pair, f"round robin ({len(specs)} agents)", **settings)
    return [r for r in results if r.games]


def _play(
    game_name: str,
    specs: Sequence[str],
    pairs: list[tuple[str, str]],
    games: int,
    desc: str,
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
    """The matches of ``pairs`` (``games`` each), in one pool; a result for every pairing (one
    without a finished game counts none)."""
    if opening_plies < 0:
        raise ValueError(f"opening plies must be >= 0, got {opening_plies!r}")
    options, factory = _prepare(game_name, specs, game_options, workers, agent_factory, time_limit_s, backend)
    per_pair = [_tasks(m, game_name, options, a, b, games, seed, opening_plies, factory) for m, (a, b) in enumerate(pairs)]
    resumable = journal is not None or time_limit_s is not None
    order = _interleave(per_pair) if resumable else itertools.chain.from_iterable(per_pair)
    with _open_journal(journal) as log:
        done = _run(
            per_pair, order, workers, progress, desc, journal=log, time_limit_s=time_limit_s, backend=backend, address=address
        )
    return [_summarize_finished(game_name, a, b, per_pair[m], done) for m, (a, b) in enumerate(pairs)]


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
        wins, draws, losses = r.counted  # over the distinct games, as the pair's own interval
        won[a] += wins + draws / 2 + prior_draws / 2
        won[b] += losses + draws / 2 + prior_draws / 2
        played[a, b] += wins + draws + losses + prior_draws
        played[b, a] += wins + draws + losses + prior_draws
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
    rows = [
        EloRow(n, float(elo[i]), int(games[i]), float(points[i] / games[i]) if games[i] else math.nan)
        for i, n in enumerate(names)
    ]
    return sorted(rows, key=lambda row: -row.elo)


def _fmt_seconds(x: float) -> str:
    if math.isnan(x):
        return "-"
    return f"{x:.3g}"


def markdown_table(results: Iterable[MatchResult], *, elo: bool = False) -> str:
    """A markdown table of matches: W/D/L of A over all games, score with its 95% interval (over
    the distinct games where the records say which they are: ``MatchResult.counted``), seconds
    per move; the score's header names the games it counts."""
    results = list(results)
    over = " / ".join(sorted({r.method for r in results})) or "all games"
    header = ["A", "B", "games (distinct)", "W/D/L (A)", "W/D/L A as p0 / as p1", f"score A [95%, {over}]"]
    if elo:
        header.append("Elo A-B [95%]")
    header += ["s/move A", "s/move B"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in results:
        lo, hi = r.interval
        seats = " / ".join(f"{s.wins}/{s.draws}/{s.losses}" for s in r.seats)
        cells = [
            f"`{r.agent_a}`",
            f"`{r.agent_b}`",
            f"{r.games} ({r.distinct_games})",
            f"{r.wins}/{r.draws}/{r.losses}",
            seats,
            f"{r.score:.3f} [{lo:.3f}, {hi:.3f}]",
        ]
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
