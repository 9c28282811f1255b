"""Play many Threes games with one agent, in parallel, and summarise the scores.

Every game gets its own seed (SeedSequence(seed, spawn_key=(game,))), so results do not depend
on the number of workers. Finished games are appended to ``--out`` (JSON lines) as they end and
a rerun skips the games already there, so a long run can be stopped and resumed.

    python -m tablegym.envs.threes.evaluate threesus --games 100 --workers 2 \\
        --out results/threes_threesus.jsonl
"""

from __future__ import annotations

import argparse
import functools
import json
from pathlib import Path

import numpy as np

from tablegym.experiments.game_runs import recorded, run_tasks
from tablegym.experiments.solo import play_deal

MILESTONES = (384, 768, 1536, 3072, 6144)


def play_game(agent, label: str, hint: str, seed: int, index: int) -> dict:
    """Game ``index`` of seed ``seed`` played by ``agent`` (state, rng) -> swipe; its record (the
    single-player runner's, ``tablegym.experiments.solo``, in this script's fields)."""
    from tablegym.envs.threes.core import ThreesGame

    leaves = getattr(agent, "leaves", 0)
    rec = play_deal(ThreesGame(hint), agent, seed, index)
    return {"game": index, "agent": label, "hint": hint, "seed": seed, "score": rec["score"],
            "highest": rec["highest"], "moves": rec["moves"], "seconds": rec["seconds"],
            "leaves": getattr(agent, "leaves", 0) - leaves}


@functools.lru_cache(maxsize=4)
def _agent(spec: str):
    """One agent per spec and process: a learned one loads its tables once, not every game."""
    from tablegym.envs.threes.agents import make_threes_agent

    return make_threes_agent(spec)


def play_one(task: tuple[str, str, int, int]) -> dict:
    """One game of ``spec`` under rule option ``hint``; the record of how it went."""
    spec, hint, seed, index = task
    return play_game(_agent(spec), spec, hint, seed, index)


def summarise(records: list[dict]) -> dict:
    scores = np.array([r["score"] for r in records])
    highest = np.array([r["highest"] for r in records])
    moves = sum(r["moves"] for r in records)
    seconds = sum(r["seconds"] for r in records)
    n = len(records)
    out = {"games": n, "low": int(scores.min()), "median": float(np.median(scores)), "mean": float(scores.mean()),
           "mean_ci95": float(1.96 * scores.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan"),
           "high": int(scores.max()), "moves_per_s": moves / seconds if seconds else float("nan"),
           "s_per_move": seconds / moves if moves else float("nan")}
    leaves = sum(r.get("leaves", 0) for r in records)
    if leaves:
        out["leaves_per_s"] = leaves / seconds
    for m in MILESTONES:
        out[f"pct_{m}"] = float(100.0 * np.mean(highest >= m))
    return out


def markdown_row(label: str, s: dict, hint: str) -> str:
    pct = " | ".join(f"{s[f'pct_{m}']:.0f}%" for m in MILESTONES)
    return (f"| {label} | {s['games']} | {s['low']:,} | {s['median']:,.0f} | {s['mean']:,.0f} ± {s['mean_ci95']:,.0f} "
            f"| {s['high']:,} | {pct} | {s['moves_per_s']:,.1f} | `{hint}` |")


HEADER = ("| agent | games | low | median | mean ± 95% | high | >=384 | >=768 | >=1536 | >=3072 | >=6144 "
          "| moves/s | hint |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def run(spec: str, *, games: int, workers: int = 1, seed: int = 0, hint: str = "+", out: str | None = None,
        progress: bool = True) -> list[dict]:
    """Play games 0..games-1 (skipping those already recorded in ``out``); return all records."""
    done = recorded(out, agent=spec, hint=hint, seed=seed)
    tasks = [(spec, hint, seed, i) for i in range(games) if i not in done]
    run_tasks(play_one, tasks, done, total=games, workers=workers, out=out, label=spec, progress=progress)
    return [done[i] for i in sorted(done) if i < games]


def report(paths: list[str]) -> str:
    """One table row per (agent, hint rule) over the games recorded in ``paths``."""
    groups: dict[tuple[str, str], dict[tuple[int, int], dict]] = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            rec = json.loads(line)
            groups.setdefault((rec["agent"], rec["hint"]), {})[(rec["seed"], rec["game"])] = rec
    rows = [markdown_row(agent, summarise(list(recs.values())), hint) for (agent, hint), recs in groups.items()]
    return "\n".join([HEADER, *rows])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tablegym.envs.threes.evaluate", description=__doc__.split("\n\n")[0])
    parser.add_argument("agent", nargs="?", help="random, greedy, threesus, expectimax:depth=D (each takes eval=openness)")
    parser.add_argument("--report", nargs="+", metavar="JSONL", help="only summarise recorded games, one row per agent")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hint", choices=("+", "candidates"), default="+")
    parser.add_argument("--out", help="append finished games here (JSON lines); a rerun resumes")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.report:
        print(report(args.report))
        return
    if not args.agent:
        parser.error("give an agent to play (or --report FILES)")
    records = run(args.agent, games=args.games, workers=args.workers, seed=args.seed, hint=args.hint, out=args.out,
                  progress=not args.no_progress)
    print(HEADER)
    print(markdown_row(args.agent, summarise(records), args.hint))


if __name__ == "__main__":
    main()
