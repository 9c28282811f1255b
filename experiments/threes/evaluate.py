"""Play many Threes games with one agent, in parallel, and summarise the scores.

Every game gets its own seed (SeedSequence(seed, spawn_key=(game,))), so results do not depend
on the number of workers. Finished games are appended to ``--out`` (JSON lines) as they end and
a rerun skips the games already there, so a long run can be stopped and resumed. Every line of a
records file (``--out`` resumed, ``--report``) is checked as a Threes game's record
(``check_record``) and a line that is not one is refused in one line (exit 2).

    python -m tablegym.experiments.threes.evaluate threesus --games 100 --workers 2 \\
        --out results/threes/threesus_om.jsonl
"""

from __future__ import annotations

import functools

from tablegym.envs.threes.board import RANK_SCORES, value_rank
from tablegym.experiments.game_runs import read_records, recorded, records_parser, refusing_bad_records, run_tasks
from tablegym.experiments.threes.records import HEADER, markdown_row, play_game, summarise


@functools.lru_cache(maxsize=4)
def _agent(spec: str):
    """One agent per spec and process: a learned one loads its tables once, not every game."""
    from tablegym.envs.threes.core import ThreesGame
    from tablegym.models.agents import make_agent

    return make_agent(ThreesGame(), spec)


def play_one(task: tuple[str, str, int, int]) -> dict:
    """One game of ``spec`` under rule option ``hint``; the record of how it went."""
    spec, hint, seed, index = task
    return play_game(_agent(spec), spec, hint, seed, index)


HINTS = ("+", "candidates")
"""The values of the ``hint`` rule option."""


def check_record(rec: dict) -> str | None:
    """What makes ``rec`` not the record of a Threes game of this script (beyond
    ``game_runs.record_problem``), or None. The swipes and cards are not recorded, so the game
    cannot be replayed; what the record holds must agree: its highest card is a Threes card,
    and its score (the sum of its cards' scores, 3 ** (rank - 2) each) lies between that card's
    score and sixteen times it."""
    for name, kind in (("agent", str), ("hint", str), ("seed", int), ("score", int), ("highest", int), ("moves", int)):
        if type(rec.get(name)) is not kind:
            return f"{name} {rec.get(name)!r} is not {'a string' if kind is str else 'an integer'}"[:300]
    if rec["hint"] not in HINTS:
        return f"hint {rec['hint']!r} is not a hint rule ({' or '.join(HINTS)})"[:300]
    try:
        top = int(RANK_SCORES[value_rank(rec["highest"])])
    except (ValueError, IndexError) as err:
        return f"highest: {err}"[:300]
    if not top <= rec["score"] <= 16 * top:
        return (
            f"score {rec['score']:,} cannot be the score of a board whose highest card is {rec['highest']} "
            f"({top:,}..{16 * top:,})"
        )
    return None


def run(
    spec: str, *, games: int, workers: int = 1, seed: int = 0, hint: str = "+", out: str | None = None, progress: bool = True
) -> list[dict]:
    """Play games 0..games-1 (skipping those already recorded in ``out``); return all records."""
    done = recorded(out, check=check_record, agent=spec, hint=hint, seed=seed)
    tasks = ((spec, hint, seed, i) for i in range(games) if i not in done)  # made as workers free up
    run_tasks(play_one, tasks, done, total=games, workers=workers, out=out, label=spec, progress=progress)
    return [done[i] for i in sorted(done) if i < games]


def report(paths: list[str]) -> str:
    """One table row per (agent, hint rule) over the games recorded in ``paths``."""
    groups: dict[tuple[str, str], dict[tuple[int, int], dict]] = {}
    for path in paths:
        for rec in read_records(path, check_record):
            groups.setdefault((rec["agent"], rec["hint"]), {})[(rec["seed"], rec["game"])] = rec
    rows = [markdown_row(agent, summarise(list(recs.values())), hint) for (agent, hint), recs in groups.items()]
    return "\n".join([HEADER, *rows])


def main(argv: list[str] | None = None) -> None:
    parser = records_parser(
        "python -m tablegym.experiments.threes.evaluate",
        __doc__.split("\n\n")[0],
        "random, greedy, threesus, expectimax:depth=D (each takes eval=openness)",
    )
    parser.add_argument("--hint", choices=("+", "candidates"), default="+")
    args = parser.parse_args(argv)
    if args.report:
        with refusing_bad_records(parser):
            print(report(args.report))
        return
    if not args.agent:
        parser.error("give an agent to play (or --report FILES)")
    with refusing_bad_records(parser):
        records = run(
            args.agent,
            games=args.games,
            workers=args.workers,
            seed=args.seed,
            hint=args.hint,
            out=args.out,
            progress=not args.no_progress,
        )
    print(HEADER)
    print(markdown_row(args.agent, summarise(records), args.hint))


if __name__ == "__main__":
    main()
