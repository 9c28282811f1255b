"""Play many Friday games per level with one agent, in parallel, and tabulate win rates.

Every game gets its own seed (SeedSequence(seed, spawn_key=(level, game))), so results do not
depend on the number of workers. Finished games are appended to ``--out`` (JSON lines) and a
rerun skips those already there, so a long run can be stopped and resumed. Every line of a records
file (``--out`` resumed, ``--report``, ``--against``) is checked as a Friday game's record
(``check_record``) and a line that is not one is refused in one line (exit 2).

    python -m tablegym.experiments.friday.evaluate "bestfirst:nodes=10000" --levels 1 2 3 4 \\
        --games 500 --workers 2 --out results/friday/fridai_10k.jsonl
    python -m tablegym.experiments.friday.evaluate --report results/friday/*.jsonl
"""

from __future__ import annotations

import functools
import json
from typing import Any

import numpy as np

from tablegym.experiments.friday.records import HEADER, markdown_row, options_text, play_game, summarise
from tablegym.experiments.game_runs import read_records, recorded, records_parser, refusing_bad_records, run_tasks


@functools.lru_cache(maxsize=64)
def _rules_problem(options: str) -> str | None:
    """Why rule options (JSON text) make no Friday game, or None."""
    from tablegym.envs.friday.core import FridayGame

    try:
        FridayGame(**json.loads(options))
    except (TypeError, ValueError) as err:
        return f"options make no Friday game ({err})"[:300]
    return None


def check_record(rec: dict) -> str | None:
    """What makes ``rec`` not the record of a Friday game of this script (beyond
    ``game_runs.record_problem``), or None. The decisions and draws are not recorded, so the
    game cannot be replayed; what the record holds must agree with the rules: its options make a
    game of its level, pirates are fought (and a game is won) only in the last step (3), and the
    counts are in range."""
    fields: tuple[tuple[str, Any], ...] = (
        ("agent", str),
        ("level", int),
        ("seed", int),
        ("options", dict),
        ("won", bool),
        ("score", int),
        ("life", int),
        ("step", int),
        ("pirates_beaten", int),
        ("decisions", int),
    )
    for name, kind in fields:
        if type(rec.get(name)) is not kind:
            return f"{name} {rec.get(name)!r} is not {kind.__name__}"[:300]
    if rec["options"].get("level", rec["level"]) != rec["level"]:
        return f"level {rec['level']} is not its options' level {rec['options'].get('level')!r}"[:300]
    problem = _rules_problem(json.dumps({**rec["options"], "level": rec["level"]}, sort_keys=True))
    if problem:
        return problem
    if not 0 <= rec["step"] <= 3 or not 0 <= rec["pirates_beaten"] <= 2 or rec["life"] < 0:
        return (
            f"step {rec['step']}, pirates_beaten {rec['pirates_beaten']}, life {rec['life']}: out of range "
            "(steps 0..3, pirates 0..2, life >= 0)"
        )
    if (rec["won"] or rec["pirates_beaten"]) and rec["step"] != 3:
        what = "won" if rec["won"] else f"{rec['pirates_beaten']} pirates beaten"
        return f"{what} in step {rec['step']} (pirates come in step 3, and a game is won there)"
    return None


@functools.lru_cache(maxsize=4)
def _agent(spec: str):
    """One agent per spec and process (a learned one loads its network once)."""
    from tablegym.envs.friday.core import FridayGame
    from tablegym.models.agents import make_agent

    return make_agent(FridayGame(), spec)


def play_one(task: tuple[str, int, int, int, str]) -> dict:
    spec, level, seed, index, options = task
    rec = play_game(_agent(spec), level, seed, index, json.loads(options))
    rec["agent"] = spec
    return rec


def run(
    spec: str,
    *,
    level: int,
    games: int,
    workers: int = 1,
    seed: int = 0,
    options: dict | None = None,
    out: str | None = None,
    progress: bool = True,
) -> list[dict]:
    """Play games 0..games-1 at ``level`` (skipping those already in ``out``); return all records."""
    text = json.dumps(options or {}, sort_keys=True)
    done = recorded(out, check=check_record, agent=spec, level=level, seed=seed)
    tasks = ((spec, level, seed, i, text) for i in range(games) if i not in done)  # made as workers free up
    run_tasks(
        play_one, tasks, done, total=games, workers=workers, out=out, label=f"{spec} L{level}", progress=progress, postfix="won"
    )
    return [done[i] for i in sorted(done) if i < games]


def _groups(paths: list[str]) -> dict[tuple, dict[tuple, dict]]:
    """Records by (agent, level, options), each group keyed by (seed, game)."""
    groups: dict[tuple, dict[tuple, dict]] = {}
    for path in paths:
        for rec in read_records(path, check_record):
            key = (rec["agent"], rec["level"], options_text(rec["options"]))
            groups.setdefault(key, {})[(rec["seed"], rec["game"])] = rec
    return groups


def paired_report(paths: list[str], baseline: str) -> str:
    """Each agent's mean score minus ``baseline``'s over the deals both played (same seed, level,
    game and options): the deal's luck cancels, so the interval is much narrower than the
    difference of the two rows' intervals."""
    groups = _groups(paths)
    lines = [f"| agent | level | paired games | mean score - {baseline} ± 95% |", "|---|---|---|---|"]
    for (agent, level, opts), recs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        base = groups.get((baseline, level, opts))
        if agent == baseline or not base:
            continue
        common = sorted(set(recs) & set(base))
        if len(common) < 2:
            continue
        d = np.array([recs[k]["score"] - base[k]["score"] for k in common], dtype=float)
        lines.append(f"| {agent} | {level} | {len(d)} | {d.mean():+.1f} ± {1.96 * d.std(ddof=1) / np.sqrt(len(d)):.1f} |")
    return "\n".join(lines)


def variant_report(paths: list[str], other_paths: list[str]) -> str:
    """Each agent's games in ``paths`` against its own games in ``other_paths`` (the same agent
    spec and level under other rule options) on the deals both played: the win rate and mean
    score differences, paired by (seed, game), so the deal's luck cancels."""
    ours, theirs = _groups(paths), _groups(other_paths)
    lines = [
        "| agent | level | options there -> here | paired games | win rate here - there (points) ± 95% "
        "| mean score here - there ± 95% | games scored differently |",
        "|---|---|---|---|---|---|---|",
    ]
    for (agent, level, opts), recs in sorted(ours.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        for (agent2, level2, opts2), base in sorted(theirs.items()):
            if (agent2, level2) != (agent, level) or opts2 == opts:
                continue
            common = sorted(set(recs) & set(base))
            if len(common) < 2:
                continue
            half = 1.96 / np.sqrt(len(common))
            w = np.array([float(recs[k]["won"]) - float(base[k]["won"]) for k in common])
            d = np.array([recs[k]["score"] - base[k]["score"] for k in common], dtype=float)
            here, there = recs[common[0]]["options"], base[common[0]]["options"]
            changed = ", ".join(f"{k} {there.get(k, '-')} -> {v}" for k, v in here.items() if there.get(k) != v)
            lines.append(
                f"| {agent} | {level} | {changed} | {len(common)} "
                f"| {100 * w.mean():+.1f} ± {100 * half * w.std(ddof=1):.1f} "
                f"| {d.mean():+.1f} ± {half * d.std(ddof=1):.1f} | {int((d != 0).sum())} |"
            )
    return "\n".join(lines)


def report(paths: list[str]) -> str:
    """One table row per (agent, level, options) over the games recorded in ``paths``."""
    groups = _groups(paths)
    rows = [
        markdown_row(agent, level, summarise(list(recs.values())), opts)
        for (agent, level, opts), recs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1]))
    ]
    return "\n".join([HEADER, *rows])


def main(argv: list[str] | None = None) -> None:
    parser = records_parser(
        "python -m tablegym.experiments.friday.evaluate",
        __doc__.split("\n\n")[0],
        "random, rules, trim, bestfirst:nodes=N,eval=E, mc:rollouts=K,horizon=H,eval=E",
    )
    parser.add_argument(
        "--baseline", metavar="AGENT", help="with --report: also each agent's score minus this agent's on the same deals"
    )
    parser.add_argument(
        "--against",
        nargs="+",
        metavar="JSONL",
        help="with --report: also each agent's win rate and score minus its own on the same "
        "deals in these records (the same agent under other rule options)",
    )
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2, 3, 4])
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a rule option of FridayGame, e.g. abilities=after_free (repeatable)",
    )
    args = parser.parse_args(argv)
    if args.report:
        with refusing_bad_records(parser):
            print(report(args.report))
            if args.baseline:
                print()
                print(paired_report(args.report, args.baseline))
            if args.against:
                print()
                print(variant_report(args.report, args.against))
        return
    if not args.agent:
        parser.error("give an agent to play (or --report FILES)")
    options = {}
    for item in args.option:
        key, eq, value = item.partition("=")
        if not eq:
            parser.error(f"--option needs KEY=VALUE, got {item!r}")
        options[key] = int(value) if value.isdigit() else value
    print(HEADER)
    for level in args.levels:
        with refusing_bad_records(parser):
            records = run(
                args.agent,
                level=level,
                games=args.games,
                workers=args.workers,
                seed=args.seed,
                options=options,
                out=args.out,
                progress=not args.no_progress,
            )
        print(markdown_row(args.agent, level, summarise(records), options_text(records[0]["options"])), flush=True)


if __name__ == "__main__":
    main()
