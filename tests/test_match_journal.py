"""Resumable tournaments: the game journal, stopping after a time limit, and the CLI on top.

The games are Trap on a 5x5 board between the course's quick reference opponents, so a whole
round robin takes a fraction of a second.
"""

from __future__ import annotations

import csv
import json
import time
import types

import pytest

from tablegym.experiments import match
from tablegym.experiments.cli import main
from tablegym.experiments.journal import JournalError, JournalWarning
from tablegym.experiments.match import play_match, round_robin, write_csv
from tablegym.models.agents import make_agent

GAME = "trap"
SPECS = ["random", "easy", "medium"]
KW = dict(games_per_pair=4, seed=3, opening_plies=2, progress=False, game_options={"n": 5})
TIMING = ("sec_per_move_a", "sec_per_move_b")


def slow_factory(game, spec):
    """The usual agents, each taking 0.1 s to build, so that a game takes at least 0.2 s (top
    level, so it pickles into worker processes)."""
    time.sleep(0.1)
    return make_agent(game, spec)


def lines(path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def game_ids(path) -> list[tuple[int, int, int]]:
    return [(e["match"], e["pair"], e["a_seat"]) for e in map(json.loads, lines(path))]


def untimed(results) -> list[dict]:
    return [{k: v for k, v in r.as_row().items() if k not in TIMING} for r in results]


def games(results) -> list[list[tuple]]:
    """Every game of every pairing without its timing: moves, winner, returns, move counts."""
    return [[(g.actions, g.opening_plies, g.winner, g.returns, g.move_counts) for g in r.records] for r in results]


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """A whole round robin played in one go, and its journal (12 games)."""
    path = tmp_path_factory.mktemp("full") / "j.jsonl"
    results = round_robin(GAME, SPECS, journal=path, **KW)
    return results, path


# ---------------------------------------------------------------------------------- resuming


def test_journal_holds_every_game_of_the_run(full):
    results, path = full
    entries = [json.loads(line) for line in lines(path)]
    assert len(entries) == 12 and all(line.endswith(b"\n") for line in lines(path))
    assert sorted(game_ids(path)) == [(m, p, s) for m in range(3) for p in range(2) for s in range(2)]
    first = entries[0]
    assert (first["game"], first["options"], first["seed"], first["opening_plies"]) == ("trap", [["n", 5]], 3, 2)
    by_id = {(e["match"], e["pair"], e["a_seat"]): e["record"] for e in entries}
    for m, r in enumerate(results):
        for i, g in enumerate(r.records):
            saved = by_id[(m, i // 2, i % 2)]
            assert tuple(saved["actions"]) == g.actions and saved["winner"] == g.winner
            assert tuple(saved["move_seconds"]) == g.move_seconds


def test_journal_does_not_change_the_games(full):
    results, _ = full
    plain = round_robin(GAME, SPECS, **KW)
    assert untimed(plain) == untimed(results) and games(plain) == games(results)


def test_resumed_round_robin_equals_one_played_in_one_go(full, tmp_path):
    results, full_path = full
    path = tmp_path / "j.jsonl"
    half = lines(full_path)[:6]
    path.write_bytes(b"".join(half))

    resumed = round_robin(GAME, SPECS, journal=path, **KW)

    assert untimed(resumed) == untimed(results) and games(resumed) == games(results)
    assert lines(path)[:6] == half and len(lines(path)) == 12  # appended only, nothing lost
    assert sorted(game_ids(path)) == sorted(game_ids(full_path))
    # The six saved games were read back, not played again: even their timings are the saved ones.
    seconds = {(m, i // 2, i % 2): g.move_seconds for m, r in enumerate(resumed) for i, g in enumerate(r.records)}
    for entry in map(json.loads, half):
        assert seconds[(entry["match"], entry["pair"], entry["a_seat"])] == tuple(entry["record"]["move_seconds"])
    # The CSV rows agree too, timing aside.
    write_csv(results, tmp_path / "full.csv")
    write_csv(resumed, tmp_path / "resumed.csv")
    with open(tmp_path / "full.csv", newline="") as f1, open(tmp_path / "resumed.csv", newline="") as f2:
        rows1, rows2 = list(csv.DictReader(f1)), list(csv.DictReader(f2))
    assert [{k: v for k, v in r.items() if k not in TIMING} for r in rows1] == [
        {k: v for k, v in r.items() if k not in TIMING} for r in rows2
    ]

    # Rebuilt from the journal alone, every number is the same, timing included.
    before = path.read_bytes()
    rebuilt = round_robin(GAME, SPECS, journal=path, time_limit_s=0, **KW)
    assert rebuilt == resumed and games(rebuilt) == games(resumed)
    assert [r.records for r in rebuilt] == [r.records for r in resumed]
    assert path.read_bytes() == before


def test_play_match_resumes_and_shares_games_with_the_round_robin(full, tmp_path):
    results, full_path = full
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"".join(lines(full_path)))
    before = path.read_bytes()
    # Match 0 of the round robin is the match play_match plays: all four games are found.
    r = play_match(GAME, "random", "easy", games=4, seed=3, progress=False, game_options={"n": 5}, journal=path)
    assert r == results[0] and path.read_bytes() == before


def test_worker_counts_give_the_same_journal(full, tmp_path):
    results, full_path = full
    path = tmp_path / "j.jsonl"
    two = round_robin(GAME, SPECS, journal=path, workers=2, **KW)
    assert untimed(two) == untimed(results) and games(two) == games(results)

    def untimed_lines(p):
        out = []
        for e in map(json.loads, lines(p)):
            e["record"].pop("move_seconds")
            out.append(json.dumps(e, sort_keys=True))
        return sorted(out)

    assert untimed_lines(path) == untimed_lines(full_path)
    # And a run begun with one worker can be finished with two.
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(b"".join(lines(full_path)[:5]))
    resumed = round_robin(GAME, SPECS, journal=mixed, workers=2, **KW)
    assert untimed(resumed) == untimed(results) and games(resumed) == games(results)
    assert untimed_lines(mixed) == untimed_lines(full_path)


def test_lines_of_other_runs_are_kept_and_not_used(full, tmp_path):
    results, full_path = full
    path = tmp_path / "j.jsonl"
    round_robin(GAME, SPECS, journal=path, **{**KW, "seed": 4})
    other = lines(path)
    assert len(other) == 12

    again = round_robin(GAME, SPECS, journal=path, **KW)

    assert untimed(again) == untimed(results) and games(again) == games(results)
    assert lines(path)[:12] == other and len(lines(path)) == 24


# ---------------------------------------------------------------------------------- damage


@pytest.mark.parametrize("bad", [b"{not json\n", b'{"match": 0}\n', b"[1, 2, 3]\n", b'{"game": "tr\n'])
def test_a_corrupt_line_is_an_error_naming_file_and_line(full, tmp_path, bad):
    _, full_path = full
    path = tmp_path / "j.jsonl"
    saved = lines(full_path)
    path.write_bytes(b"".join(saved[:2] + [bad] + saved[3:]))
    before = path.read_bytes()
    with pytest.raises(JournalError, match=r"j\.jsonl, line 3: "):
        round_robin(GAME, SPECS, journal=path, **KW)
    assert path.read_bytes() == before  # left for a person to repair


def test_a_torn_last_line_is_ignored_with_a_warning_and_cut_off(full, tmp_path):
    results, full_path = full
    path = tmp_path / "j.jsonl"
    saved = lines(full_path)
    path.write_bytes(b"".join(saved[:-1]) + saved[-1][:40])  # killed while writing the last game

    # Reading alone (nothing to play) leaves the file as it is.
    before = path.read_bytes()
    with pytest.warns(JournalWarning, match=r"j\.jsonl, line 12: ignoring the unfinished last line"):
        partial = round_robin(GAME, SPECS, journal=path, time_limit_s=0, **KW)
    assert sum(r.games for r in partial) == 11 and path.read_bytes() == before

    with pytest.warns(JournalWarning, match="line 12"):
        resumed = round_robin(GAME, SPECS, journal=path, **KW)

    assert untimed(resumed) == untimed(results) and games(resumed) == games(results)
    now = lines(path)
    assert now[:11] == saved[:11] and len(now) == 12
    assert all(isinstance(json.loads(line), dict) for line in now)  # the torn bytes are gone
    assert game_ids(path)[11] == game_ids(full_path)[11]  # that game was played again


def test_a_complete_last_line_without_newline_counts(full, tmp_path):
    results, full_path = full
    path = tmp_path / "j.jsonl"
    saved = lines(full_path)
    path.write_bytes(b"".join(saved[:6]).rstrip(b"\n"))

    resumed = round_robin(GAME, SPECS, journal=path, **KW)

    assert untimed(resumed) == untimed(results)
    now = lines(path)
    assert now[:6] == saved[:6] and len(now) == 12  # the newline was added, the game not replayed
    assert all(isinstance(json.loads(line), dict) for line in now)


# ---------------------------------------------------------------------------------- stopping early


def test_interleaved_order_covers_every_pairing_first():
    per_pair = [match._tasks(m, GAME, (("n", 5),), "a", "b", 5, 0, 2, None) for m in range(3)]
    order = [match._task_id(t) for t in match._interleave(per_pair)]
    assert sorted(order) == sorted(match._task_id(t) for ts in per_pair for t in ts)
    assert order[:6] == [(0, 0, 0), (0, 0, 1), (1, 0, 0), (1, 0, 1), (2, 0, 0), (2, 0, 1)]
    assert order[6:12] == [(0, 1, 0), (0, 1, 1), (1, 1, 0), (1, 1, 1), (2, 1, 0), (2, 1, 1)]
    assert order[-3:] == [(0, 2, 0), (1, 2, 0), (2, 2, 0)]  # the odd fifth game of every pairing


def test_partial_results_count_only_finished_games(full, tmp_path, monkeypatch):
    results, _ = full
    # A clock that advances one second per reading: the deadline of 8 s admits exactly 7 games.
    ticks = iter(range(1000))
    monkeypatch.setattr(
        match, "time", types.SimpleNamespace(monotonic=lambda: float(next(ticks)), perf_counter=time.perf_counter)
    )
    path = tmp_path / "j.jsonl"
    partial = round_robin(GAME, SPECS, journal=path, time_limit_s=8, **KW)

    assert game_ids(path) == [(0, 0, 0), (0, 0, 1), (1, 0, 0), (1, 0, 1), (2, 0, 0), (2, 0, 1), (0, 1, 0)]
    assert [(r.agent_a, r.agent_b, r.games) for r in partial] == [
        ("random", "easy", 3),
        ("random", "medium", 2),
        ("easy", "medium", 2),
    ]
    for r, whole in zip(partial, results):  # the finished games are the first ones of each pairing
        assert games([r]) == [games([whole])[0][: r.games]]
        assert sum(s.games for s in r.seats) == r.wins + r.draws + r.losses == r.games


def test_a_pairing_without_games_is_left_out(tmp_path, monkeypatch):
    ticks = iter(range(1000))
    monkeypatch.setattr(
        match, "time", types.SimpleNamespace(monotonic=lambda: float(next(ticks)), perf_counter=time.perf_counter)
    )
    partial = round_robin(GAME, SPECS, journal=tmp_path / "j.jsonl", time_limit_s=4, **KW)
    assert [(r.agent_a, r.agent_b, r.games) for r in partial] == [("random", "easy", 2), ("random", "medium", 1)]
    nothing = play_match(GAME, "random", "easy", games=4, seed=3, progress=False, game_options={"n": 5}, time_limit_s=0)
    assert nothing.games == 0 and nothing.records == ()


def test_time_limit_with_workers_stops_dispatching(tmp_path, monkeypatch):
    path = tmp_path / "j.jsonl"
    kw = {**KW, "games_per_pair": 20}  # 60 games
    readings = iter(range(1000))  # a clock that gains 1 s each time it is read (the other tests' clock)
    monkeypatch.setattr(
        match, "time", types.SimpleNamespace(monotonic=lambda: float(next(readings)), perf_counter=time.perf_counter)
    )
    partial = round_robin(GAME, SPECS, journal=path, workers=2, time_limit_s=3, agent_factory=slow_factory, **kw)
    finished = game_ids(path)
    # The clock is read to set the deadline, once before the pool and once per game handed to a
    # worker: a 3 s limit at 1 s a reading lets at most 2 games start, whatever the machine's load.
    assert 0 < len(finished) <= 2
    # Only started games were waited for, and games were started in the interleaved order.
    per_pair = [
        match._tasks(m, GAME, (("n", 5),), a, b, 20, 3, 2, None)
        for m, (a, b) in enumerate([("random", "easy"), ("random", "medium"), ("easy", "medium")])
    ]
    order = [match._task_id(t) for t in match._interleave(per_pair)]
    assert sorted(finished) == sorted(order[: len(finished)])
    assert sum(r.games for r in partial) == len(finished)
    for m, r in enumerate(partial):
        assert r.games == sum(1 for f in finished if f[0] == m)
    # The journal alone gives the same tables.
    assert round_robin(GAME, SPECS, journal=path, time_limit_s=0, **kw) == partial


# ---------------------------------------------------------------------------------- command line


def eval_argv(journal, *extra) -> list[str]:
    return [
        "eval",
        GAME,
        *SPECS,
        "--n",
        "5",
        "--games",
        "2",
        "--seed",
        "3",
        "--no-progress",
        "--elo",
        "--journal",
        str(journal),
        *extra,
    ]


def test_cli_stop_after_zero_rebuilds_the_tables_from_the_journal(tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    assert main(eval_argv(path, "--csv", str(tmp_path / "1.csv"))) == 0
    played = capsys.readouterr().out
    assert "partial" not in played and len(lines(path)) == 6
    before = path.read_bytes()

    assert main(eval_argv(path, "--stop-after", "0", "--csv", str(tmp_path / "2.csv"))) == 0
    rebuilt = capsys.readouterr().out

    assert path.read_bytes() == before  # nothing played
    assert rebuilt.replace("2.csv", "1.csv") == played  # timings come from the journal too
    assert (tmp_path / "1.csv").read_text() == (tmp_path / "2.csv").read_text()


def test_cli_says_when_the_tournament_is_partial(tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    assert main(eval_argv(path, "--stop-after", "0")) == 0
    out = capsys.readouterr().out
    assert out.startswith("partial: 0 of 6 games (0 of 3 pairings have games)")
    assert "| `random` |" not in out and "| rank |" not in out

    assert main(eval_argv(path)) == 0
    capsys.readouterr()
    argv = eval_argv(path, "--stop-after", "0")
    argv[argv.index("--games") + 1] = "3"  # one more game per pairing than the journal holds
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("partial: 6 of 9 games (3 of 3 pairings have games); run the same command again")
    assert sum(" 2 (" in line for line in out.splitlines() if line.startswith("| `")) == 3


def test_cli_reports_a_corrupt_journal_without_a_traceback(tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"garbage\n")
    assert main(eval_argv(path)) == 1
    err = capsys.readouterr().err
    assert "j.jsonl, line 1: not valid JSON" in err and "Traceback" not in err


def test_cli_rejects_a_negative_stop_after(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(eval_argv(tmp_path / "j.jsonl", "--stop-after", "-1"))
    assert exit_info.value.code == 2
    assert "--stop-after" in capsys.readouterr().err
