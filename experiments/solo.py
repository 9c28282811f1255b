"""Single-player runs: each agent plays games 0..N-1 on the same seeded deals, in parallel,
recorded as JSON lines so a run resumes; one table of scores and wins, and paired differences.

Game ``index`` of a run seeded ``seed`` is dealt by the game's record (``deal``; by default the
initial position and ``SeedSequence(seed, spawn_key=(index,))``), so every agent meets the
same cards and the deal's luck cancels in the paired differences: their intervals are much
narrower than the difference of two rows' intervals. Games are played by the one game loop
(``tablegym.search.play.play_game``), chance resolved by the record's ``chance`` sampler when it
has one; a record's ``outcome`` adds what a game keeps beyond its return (a score, a win).
"""

from __future__ import annotations

import csv
import functools
import json
import os
import time
from typing import Any

import numpy as np

from tablegym.envs import deal, load, make_game, plugin
from tablegym.envs.core import Game
from tablegym.experiments.game_runs import recorded, run_tasks
from tablegym.experiments.stats import mean_interval, wilson_interval
from tablegym.search.play import play_game

__all__ = ["deal", "play_deal", "record_problem", "run", "table", "paired_table"]


def play_deal(game: Game, agent: Any, seed: int, index: int) -> dict:
    """Game ``index`` of seed ``seed`` played by ``agent``; its record (return, moves, seconds,
    and the record's ``outcome`` fields)."""
    record = plugin(game.spec.name)
    state, rng = deal(game, seed, index)
    chance = load(record.chance) if record.chance else None
    start = time.perf_counter()
    played = play_game(game, [agent], rng, start=state, chance=chance, max_decisions=record.max_decisions)
    out = {
        "game": index,
        "seed": seed,
        "return": played.returns[0],
        "decisions": played.move_counts[0],
        "seconds": time.perf_counter() - start,
    }
    if record.outcome:
        out.update(load(record.outcome)(played.final))
    if not played.final.is_terminal():  # stopped at the record's max_decisions
        out["truncated"] = True
    return out


@functools.lru_cache(maxsize=8)
def _agent(game_name: str, options: str, spec: str) -> Any:
    """One agent per spec and process: a learned one loads its network once, not every game."""
    from tablegym.models.agents import make_agent

    return make_agent(_game(game_name, options), spec)


@functools.lru_cache(maxsize=8)
def _game(game_name: str, options: str) -> Game:
    return make_game(game_name, **json.loads(options))


def play_one(task: tuple[str, str, str, int, int]) -> dict:
    """One game in a worker (a module-level function: tasks pickle, agents need not)."""
    game_name, options, spec, seed, index = task
    rec = play_deal(_game(game_name, options), _agent(game_name, options, spec), seed, index)
    rec.update(agent=spec, options=json.loads(options))
    return rec


def record_problem(game: Game, rec: dict) -> str | None:
    """What a record of this runner says that ``game`` cannot give (beyond
    ``game_runs.record_problem``), or None: a return that is not a number in the game's utility
    range (a truncated game's too: an unfinished position returns zeros). The moves are not
    recorded, so they cannot be replayed."""
    value = rec.get("return")
    if value is None:
        return None
    if type(value) not in (int, float):
        return f"return {value!r} is not a number"[:300]
    low, high = game.spec.min_utility, game.spec.max_utility
    if not low <= value <= high:
        return f"return {value!r} lies outside {game.spec.name}'s returns, {low:g}..{high:g}"
    return None


def run(
    game_name: str,
    spec: str,
    *,
    games: int,
    options: dict | None = None,
    seed: int = 0,
    workers: int = 1,
    out: str | None = None,
    progress: bool = True,
    backend: str = "process",
    address: str | None = None,
) -> list[dict]:
    """Play games 0..games-1 of ``spec`` (skipping those already recorded in ``out``); all records.
    ``backend="ray"``: as Ray tasks (training/parallel.py), the same records."""
    text = json.dumps(options or {}, sort_keys=True)
    done = recorded(
        out, check=functools.partial(record_problem, _game(game_name, text)), agent=spec, options=json.loads(text), seed=seed
    )
    tasks = ((game_name, text, spec, seed, i) for i in range(games) if i not in done)  # made as workers free up
    run_tasks(
        play_one,
        tasks,
        done,
        total=games,
        workers=workers,
        out=out,
        label=spec,
        progress=progress,
        postfix="return",
        backend=backend,
        address=address,
    )
    return [done[i] for i in sorted(done) if i < games]


def _measure(runs: dict[str, list[dict]]) -> str:
    """What the tables average: the game's score where its records keep one (Friday's return is
    only win or loss), else its return."""
    return "score" if all("score" in r for recs in runs.values() for r in recs) else "return"


def summary(runs: dict[str, list[dict]]) -> list[dict[str, Any]]:
    """One dict per agent: games, mean score (or return) and the half-width of its 95%
    interval, wins with a Wilson interval (for games that record a win), seconds per game."""
    key = _measure(runs)
    wins = all("won" in r for recs in runs.values() for r in recs)
    rows = []
    for spec, recs in runs.items():
        mean, half = mean_interval(np.array([r[key] for r in recs], dtype=float))
        row: dict[str, Any] = {"agent": spec, "games": len(recs), f"mean_{key}": mean, "ci95": half}
        if wins:
            w = sum(bool(r["won"]) for r in recs)
            lo, hi = wilson_interval(w, len(recs))
            row.update({"wins": w, "win_rate": w / len(recs), "win_rate_lo": lo, "win_rate_hi": hi})
        row["s_per_game"] = sum(r["seconds"] for r in recs) / len(recs)
        rows.append(row)
    return rows


def table(runs: dict[str, list[dict]]) -> str:
    """``summary`` as a markdown table."""
    key = _measure(runs)
    rows = summary(runs)
    wins = "wins" in rows[0]
    head = f"| agent | games | mean {key} ± 95% |" + (" wins | win rate [95%] |" if wins else "") + " s/game |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        row = f"| {r['agent']} | {r['games']} | {r[f'mean_{key}']:,.1f} ± {r['ci95']:,.1f} |"
        if wins:
            row += f" {r['wins']} | {100 * r['win_rate']:.1f}% [{100 * r['win_rate_lo']:.1f}, {100 * r['win_rate_hi']:.1f}] |"
        row += f" {r['s_per_game']:.3f} |"
        lines.append(row)
    return "\n".join(lines)


def write_csv(runs: dict[str, list[dict]], path: str | os.PathLike[str], options: dict | None = None) -> None:
    """``summary``'s rows, with the rule options in force, to a CSV file (eval --csv)."""
    rows = [{**r, "options": json.dumps(options or {}, sort_keys=True)} for r in summary(runs)]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def paired_table(runs: dict[str, list[dict]]) -> str:
    """Every agent after the first against the first, on the deals both played: the mean
    difference of scores or returns (and of wins, in points) with 95% intervals."""
    key = _measure(runs)
    (base_spec, base), *others = runs.items()
    by_game = {r["game"]: r for r in base}
    wins = all("won" in r for recs in runs.values() for r in recs)
    head = f"| agent | paired games | {key} - {base_spec} ± 95% |" + (f" win rate - {base_spec} (points) ± 95% |" if wins else "")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for spec, recs in others:
        common = [(r, by_game[r["game"]]) for r in recs if r["game"] in by_game]
        d = np.array([a[key] - b[key] for a, b in common], dtype=float)
        mean, half = mean_interval(d)
        row = f"| {spec} | {len(d)} | {mean:+,.1f} ± {half:,.1f} |"
        if wins:
            w = np.array([float(a["won"]) - float(b["won"]) for a, b in common])
            wm, wh = mean_interval(w)
            row += f" {100 * wm:+.1f} ± {100 * wh:.1f} |"
        lines.append(row)
    return "\n".join(lines)
