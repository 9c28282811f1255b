"""Records checked as data: a match journal line must replay on the game's rules core, a
single-player records line must hold a game the rules allow; anything else is refused in one line
naming the file, the line and the problem, before a game is played or counted.

The journal games are Trap on a 5x5 board (chance outcomes are in the records, so a line replays
exactly) between the course's quick reference opponents.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from tablegym.experiments.cli import main
from tablegym.experiments.game_runs import RecordsError, read_records
from tablegym.experiments.journal import JournalError
from tablegym.experiments.match import play_match, round_robin

GAME = "trap"
KW = dict(seed=3, opening_plies=2, progress=False, game_options={"n": 5})
RESULTS = Path(__file__).resolve().parent.parent / "results"


@pytest.fixture(scope="module")
def journal(tmp_path_factory) -> Path:
    """A finished match of four games and its journal."""
    path = tmp_path_factory.mktemp("journal") / "j.jsonl"
    play_match(GAME, "random", "easy", games=4, journal=path, **KW)
    return path


def entries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def write(path: Path, lines: list[dict | str]) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def with_line_3(journal: Path, tmp_path: Path, change) -> Path:
    """The journal with its third game changed by ``change(entry)`` (in place)."""
    saved = entries(journal)
    change(saved[2])
    return write(tmp_path / "j.jsonl", saved)


def refused(path: Path, words: str) -> str:
    """The journal at ``path`` is refused when a match reads it: one line naming the file, line 3
    and ``words``, and the file left as it was for a person to repair."""
    before = path.read_bytes()
    with pytest.raises(JournalError) as info:
        play_match(GAME, "random", "easy", games=4, journal=path, **KW)
    message = str(info.value)
    assert "\n" not in message and "j.jsonl" in message and "line 3" in message and words in message, message
    assert path.read_bytes() == before
    return message


def illegal_action(entry: dict) -> None:
    """Replace a move after the opening by an action of the game that is not legal there."""
    from tablegym.envs import make_game

    state = make_game(GAME, **dict(entry["options"])).new_initial_state()
    actions = entry["record"]["actions"]
    for a in actions[:3]:
        state = state.child(a)
    width = max(state.game.spec.num_actions, state.game.spec.max_chance_outcomes)
    actions[3] = next(a for a in range(width) if a not in state.legal_actions())


def other_winner(entry: dict) -> None:
    """Claim the other player won: winner and returns agree, but the game says otherwise."""
    rec = entry["record"]
    rec["returns"] = rec["returns"][::-1]
    rec["winner"] = None if rec["winner"] is None else 1 - rec["winner"]


BAD = {
    # the line of the report: a winner who is no player, actions off the board, returns that are no numbers
    "reported": (
        lambda e: e["record"].update(winner=7, actions=[99, -5], returns=[1e308, math.nan]),
        "actions must be a list of action numbers 0..",
    ),
    "winner-7": (lambda e: e["record"].update(winner=7), "winner 7 is not a player of trap"),
    "return-nan": (lambda e: e["record"].update(returns=[math.nan, 1.0]), "are not all finite"),
    "return-huge": (lambda e: e["record"].update(returns=[1e308, -1.0], winner=0), "are not the game's"),
    "winner-vs-returns": (lambda e: e["record"].update(winner=1 - (e["record"]["winner"] or 0)), "does not match returns"),
    "illegal-action": (illegal_action, "is not legal there; legal: ["),
    "other-winner": (other_winner, "are not the game's"),
    "cut-short": (lambda e: e["record"]["actions"].pop(), "the game does not end with its"),
    "after-the-end": (lambda e: e["record"]["actions"].append(0), "comes after the end of the game"),
    "move-counts": (lambda e: e["record"].update(move_counts=[0, 0]), "move_counts [0, 0] are not the players'"),
    "seconds": (lambda e: e["record"].update(move_seconds=[-1.0, 0.5]), "must be finite and >= 0"),
    "bool-action": (lambda e: e["record"]["actions"].__setitem__(0, True), "actions must be a list"),
    "huge-action": (lambda e: e["record"]["actions"].__setitem__(0, 10**30), "actions must be a list"),
    "seat-2": (lambda e: e.update(a_seat=2), "a_seat must be 0 or 1"),
    "opening": (lambda e: e["record"].update(opening_plies=5), "opening_plies 5 must be an integer in 0..2"),
    "no-game": (lambda e: e.update(game="chess"), "its rules cannot be made (unknown game 'chess'"),
    "bad-rules": (lambda e: e.update(options=[["n", 99]]), "its rules cannot be made"),
    "one-player": (lambda e: e.update(game="threes", options=[]), "threes is not a two-player game"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_journal_line_that_does_not_replay_is_refused_in_one_line(journal, tmp_path, case):
    change, words = BAD[case]
    refused(with_line_3(journal, tmp_path, change), words)


def test_the_reported_line_is_refused_by_the_command_line_without_a_traceback(journal, tmp_path, capsys):
    path = with_line_3(journal, tmp_path, BAD["reported"][0])
    argv = ["eval", GAME, "random", "easy", "--n", "5", "--games", "4", "--seed", "3", "--no-progress", "--journal", str(path)]
    assert main(argv) == 1  # as every unreadable journal (tests/test_match_journal.py)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "j.jsonl, line 3: a game that does not replay" in err and "Traceback" not in err


def test_the_first_bad_line_is_named_whatever_its_fault(journal, tmp_path):
    """A line that does not replay (line 2) is named before a later line that is not JSON."""
    saved = entries(journal)
    saved[1]["record"]["actions"].pop()
    path = write(tmp_path / "j.jsonl", [saved[0], saved[1], "{not json"])
    with pytest.raises(JournalError, match=r"j\.jsonl, line 2: a game that does not replay"):
        play_match(GAME, "random", "easy", games=4, journal=path, **KW)


@pytest.mark.parametrize("where", ["inside", "torn last line"])
def test_json_nested_200000_deep_is_refused_in_one_line(journal, tmp_path, where):
    deep = "[" * 200_000 + "]" * 200_000
    saved = entries(journal)
    path = tmp_path / "j.jsonl"
    if where == "inside":
        write(path, [saved[0], deep, saved[1]])
        line = 2
    else:  # no newline: not taken for a killed run's torn line, which is a prefix of a good one
        path.write_text(json.dumps(saved[0]) + "\n" + deep)
        line = 2
    with pytest.raises(JournalError) as info:
        play_match(GAME, "random", "easy", games=4, journal=path, **KW)
    message = str(info.value)
    assert "\n" not in message and f"j.jsonl' line {line}: JSON nested 200,000 deep" in message, message


def test_a_good_journal_still_resumes(journal, tmp_path):
    path = tmp_path / "j.jsonl"
    shutil.copy(journal, path)
    first = path.read_bytes()
    resumed = play_match(GAME, "random", "easy", games=6, journal=path, **KW)
    whole = play_match(GAME, "random", "easy", games=6, **KW)
    assert path.read_bytes().startswith(first) and len(entries(path)) == 6  # 4 read back, 2 played
    assert [(g.actions, g.winner, g.returns, g.move_counts) for g in resumed.records] == [
        (g.actions, g.winner, g.returns, g.move_counts) for g in whole.records
    ]
    nothing_new = play_match(GAME, "random", "easy", games=6, journal=path, time_limit_s=0, **KW)
    assert nothing_new.games == 6 and len(entries(path)) == 6


def test_committed_journals_still_load():
    """A journal of the results (Trap, the shipped network against the course's hard opponent)
    gives its tables back, every line replayed."""
    result = play_match(
        GAME,
        "search:eval=learned,time=0.1",
        "hard",
        games=200,
        seed=0,
        opening_plies=2,
        progress=False,
        journal=str(RESULTS / "trap" / "learned_vs_hard.jsonl"),
        time_limit_s=0,
    )
    assert result.games == 200


def test_a_big_journal_is_replayed_compiled_and_a_bad_line_deep_in_it_named(tmp_path):
    """The 6,600-game Trap round robin of the results (426,000 actions) replays through the
    compiled kernels; one illegal action in line 5,000 is found there."""
    source = RESULTS / "trap" / "round_robin.jsonl"
    specs = [
        "random",
        "easy",
        "medium",
        "hard",
        "hard-sound",
        *(f"search:eval={e},depth=3" for e in ("is", "ais", "ais-course", "ocls", "flood", "cut", "composite")),
    ]
    results = round_robin(GAME, specs, games_per_pair=100, seed=0, progress=False, journal=str(source), time_limit_s=0)
    assert sum(r.games for r in results) == 6600

    saved = source.read_bytes().splitlines()
    bad = json.loads(saved[4999])
    illegal_action(bad)
    saved[4999] = json.dumps(bad).encode()
    path = tmp_path / "rr.jsonl"
    path.write_bytes(b"\n".join(saved) + b"\n")
    with pytest.raises(
        JournalError,
        match=r"rr\.jsonl, line 5000: a game that does not replay \(action 3 \(\d+\) "
        r"is not legal there",
    ):
        round_robin(GAME, specs, games_per_pair=100, seed=0, progress=False, journal=path, time_limit_s=0)


# ---------------------------------------------------------------------------------- single-player records


THREES_GAME = {
    "game": 0,
    "agent": "random",
    "hint": "+",
    "seed": 0,
    "score": 255,
    "highest": 24,
    "moves": 45,
    "seconds": 0.03,
    "leaves": 0,
}
FRIDAY_GAME = {
    "game": 0,
    "agent": "rules",
    "level": 1,
    "seed": 0,
    "options": {
        "level": 1,
        "abilities": "any_time",
        "aging_life": "at_resolution",
        "empty_aging": "lose",
        "below_replacement": "optional",
        "sort_draws": "one_at_a_time",
        "max_life_level4": 22,
    },
    "won": False,
    "score": -61,
    "life": 0,
    "step": 1,
    "pirates_beaten": 0,
    "decisions": 92,
    "seconds": 0.13,
    "polled": 0,
}


def records_refused(module: str, argv: list[str], capsys, words: str) -> None:
    """``python -m module ARGV`` ends in one error line (exit 2) naming the file's line 2 and ``words``."""
    import importlib

    with pytest.raises(SystemExit) as info:
        importlib.import_module(module).main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "r.jsonl" in err and "line 2" in err and words in err, err


@pytest.mark.parametrize(
    "bad, words",
    [
        ({"score": math.nan}, "'score' is not a finite number"),
        ({"score": 10**6}, "cannot be the score of a board whose highest card is 24"),
        ({"highest": 25}, "25 is not a Threes card value"),
        ({"hint": "x"}, "hint 'x' is not a hint rule"),
        ({"moves": -1}, "moves -1 is not an integer >= 0"),
        ({"game": -3}, 'an integer "game" >= 0'),
    ],
)
def test_a_bad_threes_record_is_refused_by_report_and_resume(tmp_path, capsys, bad, words):
    path = write(tmp_path / "r.jsonl", [THREES_GAME, {**THREES_GAME, "game": 1, **bad}])
    records_refused("tablegym.experiments.threes.evaluate", ["--report", str(path)], capsys, words)
    records_refused(
        "tablegym.experiments.threes.evaluate", ["random", "--games", "1", "--out", str(path), "--no-progress"], capsys, words
    )


@pytest.mark.parametrize(
    "bad, words",
    [
        ({"won": True}, "won in step 1"),
        ({"pirates_beaten": 1}, "pirates beaten in step 1"),
        ({"level": 7}, "level 7 is not its options' level 1"),
        ({"options": {**FRIDAY_GAME["options"], "max_life_level4": 99}}, "options make no Friday game"),
        ({"seconds": math.inf}, "'seconds' is not a finite number"),
    ],
)
def test_a_bad_friday_record_is_refused(tmp_path, capsys, bad, words):
    path = write(tmp_path / "r.jsonl", [FRIDAY_GAME, {**FRIDAY_GAME, "game": 1, **bad}])
    records_refused("tablegym.experiments.friday.evaluate", ["--report", str(path)], capsys, words)


def test_a_deep_records_line_is_refused_in_one_line(tmp_path):
    path = write(tmp_path / "r.jsonl", [THREES_GAME, "[" * 200_000 + "]" * 200_000])
    with pytest.raises(RecordsError) as info:
        read_records(path)
    assert "\n" not in str(info.value) and "r.jsonl' line 2: JSON nested 200,000 deep" in str(info.value)


def test_a_single_player_journal_with_an_impossible_return_is_refused(tmp_path, capsys):
    rec = {"game": 0, "seed": 0, "return": 1e300, "decisions": 3, "seconds": 0.1, "agent": "random", "options": {}}
    path = write(tmp_path / "r.jsonl", [{**rec, "return": 10.0}, rec])
    assert main(["eval", "threes", "random", "--games", "2", "--journal", str(path), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "r.jsonl, line 2: not a game record (return 1e+300 lies outside threes" in err


def test_committed_records_still_load():
    from tablegym.experiments.friday.evaluate import check_record as friday_check
    from tablegym.experiments.threes.evaluate import check_record as threes_check

    assert len(read_records(RESULTS / "threes" / "threesus_om.jsonl", threes_check)) == 100
    assert len(read_records(RESULTS / "friday" / "learned_10k.jsonl", friday_check)) == 247
    assert len(read_records(RESULTS / "starship" / "targets_nocaps_500k.jsonl")) == 120
