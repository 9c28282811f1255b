"""The ``tablegym`` command line, run in-process through ``main``."""

from __future__ import annotations

import builtins
import csv
import itertools
import sys
import types

import pytest

from tablegym.envs import make_game
from tablegym.experiments.cli import main
from tablegym.experiments.commands.bench import format_table
from tablegym.experiments.commands.shared import compose_spec
from tablegym.experiments.human import HumanAgent, HumanQuit
from tests.test_solver import brute_force


def fake_module(monkeypatch, name: str, **attrs) -> None:
    """Stand a module in for ``name`` so the CLI's wiring is tested whatever exists."""
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    monkeypatch.setitem(sys.modules, name, mod)


def exact_value(state) -> int:
    """Brute-force negamax value (+1/0/-1) for the player to move; fine for tiny boards."""
    return brute_force(state, {})


def bad_args(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


# ---------------------------------------------------------------------------------- eval


def test_eval_match_prints_table(capsys):
    assert main(["eval", "trilobite-tiny", "random", "random", "--games", "4", "--workers", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    header, _, row = out.strip().splitlines()
    assert "W/D/L" in header and "score" in header and "s/move" in header and "Elo" not in header
    wins, draws, losses = map(int, row.split("|")[4].split("/"))
    assert wins + draws + losses == 4


def test_eval_writes_csv_and_elo(tmp_path, capsys):
    path = tmp_path / "m.csv"
    argv = ["eval", "trilobite-tiny", "random", "random", "--games", "2", "--seed", "3", "--elo", "--csv", str(path)]
    assert main(argv) == 0
    assert "Elo" in capsys.readouterr().out
    with open(path, newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert int(row["games"]) == 2


@pytest.mark.parametrize("game, other, wins", [("friday", "rules", True), ("threes", "greedy", False)])
def test_single_player_eval_writes_the_table_s_rows_to_csv(game, other, wins, tmp_path, capsys):
    path = tmp_path / "solo.csv"
    argv = ["eval", game, "random", other, "--games", "4", "--seed", "2", "--no-progress", "--csv", str(path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["agent"] for r in rows] == ["random", other] and all(int(r["games"]) == 4 for r in rows)
    assert ("win_rate" in rows[0]) == wins and f"wrote {path}" in out
    for r in rows:  # the CSV holds the printed table's figures
        mean = next(k for k in r if k.startswith("mean_"))
        assert f"| {r['agent']} | 4 | {float(r[mean]):,.1f} ± {float(r['ci95']):,.1f} |" in out


def test_eval_round_robin_with_elo_table(capsys):
    specs = ["random", "ab:depth=1,eval=advanced", "ab:depth=2,eval=advanced"]
    assert main(["eval", "trilobite-tiny", *specs, "--games", "2", "--elo", "--no-progress"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert sum(line.startswith("| `random` |") for line in lines) == 2  # A in two of three pairings
    assert "| rank | agent | Elo |" in out


# ---------------------------------------------------------------------------------- solve


def test_solve_trilobite_tiny_states_the_true_value(capsys):
    truth = exact_value(make_game("trilobite-tiny").new_initial_state())
    assert main(["solve", "trilobite-tiny"]) == 0
    out = capsys.readouterr().out
    words = {1: "first player wins", 0: "draw", -1: "second player wins"}[truth]
    assert words in out.splitlines()[0]
    assert "positions stored:" in out and "nodes:" in out and "time:" in out


def test_solve_sim_k6_second_player_wins(capsys):
    assert main(["solve", "sim", "--n", "6"]) == 0
    assert "second player wins" in capsys.readouterr().out


def test_solve_sim_k5_is_a_draw(capsys):
    assert main(["solve", "sim", "--option", "n=5"]) == 0
    assert ": draw" in capsys.readouterr().out


def test_solve_sim_without_n_proves_the_published_facts(capsys):
    assert main(["solve", "sim"]) == 0
    verdicts = [line.split(": ")[1].split(" (")[0] for line in capsys.readouterr().out.splitlines() if line.startswith("SimGame")]
    assert verdicts == ["draw", "draw", "draw", "second player wins"]


# ---------------------------------------------------------------------------------- play


def scripted_input(monkeypatch, lines):
    prompts = []
    it = iter(lines)

    def fake_input(prompt=""):
        prompts.append(prompt)
        return next(it)

    monkeypatch.setattr(builtins, "input", fake_input)
    return prompts


def test_play_full_game_with_a_bad_move_first(monkeypatch, capsys):
    # A bad move, then columns 0, 1, 2, 0, 1, 2, ... (full columns are refused and retried).
    scripted_input(monkeypatch, itertools.chain(["banana"], itertools.cycle(["0", "1", "2"])))
    assert main(["play", "trilobite-tiny", "--agent", "random", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    assert "illegal action 'banana'" in out and "legal actions are [0, 1, 2]" in out
    assert "legal moves: column 0, column 1, column 2" in out
    assert "random (player 1) plays column" in out
    assert out.strip().splitlines()[-1] in ("you win", "you lose", "draw")


def test_play_as_second_player_and_quit(monkeypatch, capsys):
    scripted_input(monkeypatch, ["q"])
    assert main(["play", "trilobite", "--width", "5", "--height", "4", "--seat", "1"]) == 0
    out = capsys.readouterr().out
    assert "random (player 0) plays column" in out
    assert "game abandoned" in out


def test_play_composes_the_search_spec(monkeypatch, capsys):
    scripted_input(monkeypatch, ["q"])
    argv = ["play", "trilobite-tiny", "--agent", "alphabeta", "--eval", "nonsense", "--depth", "5"]
    err = bad_args(capsys, argv)
    assert "nonsense" in err  # the composed spec reached make_agent, which named the bad evaluator


def test_play_with_eval_alone_means_a_search_with_the_shipped_network(monkeypatch, capsys):
    # `tablegym play trilobite --eval learned` works out of the box (README, issue).
    scripted_input(monkeypatch, ["3", "q"])
    assert main(["play", "trilobite", "--eval", "learned", "--depth", "2"]) == 0
    out = capsys.readouterr().out
    assert "alphabeta:eval=learned,depth=2 (player 1) plays column" in out


def test_compose_spec():
    assert compose_spec("alphabeta", eval="learned", depth=5) == "alphabeta:eval=learned,depth=5"
    assert compose_spec("ab:eval=advanced", time=1.5) == "ab:eval=advanced,time=1.5"
    assert compose_spec("random") == "random"


def test_human_agent_retries_after_bad_input():
    state = make_game("trilobite-tiny").new_initial_state()
    lines = iter(["7", "column 2"])
    shown: list[str] = []
    agent = HumanAgent(input_fn=lambda prompt: next(lines), print_fn=lambda *a: shown.append(" ".join(map(str, a))))
    assert agent(state, None) == 2
    assert shown[0] == state.to_text()
    assert any("illegal action 7" in line and "[0, 1, 2]" in line for line in shown)


def test_human_agent_quits_on_q_and_end_of_input():
    state = make_game("trilobite-tiny").new_initial_state()
    with pytest.raises(HumanQuit):
        HumanAgent(input_fn=lambda prompt: " Q ", print_fn=lambda *a: None)(state, None)

    def eof(prompt):
        raise EOFError

    with pytest.raises(HumanQuit):
        HumanAgent(input_fn=eof, print_fn=lambda *a: None)(state, None)


# ---------------------------------------------------------------------------------- bench and train


def test_bench_envs_prints_the_dict(monkeypatch, capsys):
    calls = []
    fake_module(
        monkeypatch,
        "tablegym.experiments.trilobite.bench_envs",
        bench_env_steps=lambda seconds=3.0: calls.append(seconds) or {"trilobite gym": 123456.0, "sim aec": 0.5},
    )
    assert main(["bench", "envs", "--seconds", "0.25"]) == 0
    out = capsys.readouterr().out
    assert calls == [0.25]
    assert "| trilobite gym | 123,456 |" in out and "| sim aec | 0.5 |" in out


def test_bench_search_and_sim_solve_forward_parameters(monkeypatch, capsys):
    seen = {}
    fake_module(monkeypatch, "tablegym.experiments.trilobite.bench", bench_alphabeta=lambda **kw: seen.update(kw) or {"nps": 10})
    assert main(["bench", "search", "--param", "depth=7", "--param", "game=trilobite"]) == 0
    assert seen == {"depth": 7, "game": "trilobite"}
    fake_module(
        monkeypatch,
        "tablegym.experiments.sim.bench",
        bench_sim_solve=lambda n=6, repeats=20: {"K6": {"n": n, "repeats": repeats, "ms": 12.5}},
    )
    assert main(["bench", "sim-solve", "--n", "5", "--repeats", "3"]) == 0
    out = capsys.readouterr().out
    assert "| name | n | repeats | ms |" in out and "| K6 | 5 | 3 | 12.5 |" in out


def test_bench_threes_times_hand_made_and_learned_searches(capsys, tmp_path):
    from tablegym.envs.threes.ntuple import NTupleConfig
    from tablegym.models.threes.ntuple_net import NTupleNet, save_ntuple

    path = save_ntuple(tmp_path / "n.pt", NTupleNet(NTupleConfig(tuples=((0, 1, 2),))))
    assert main(["bench", "threes", "--param", "positions=2", "--param", f"learned=learned:{path}"]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0]
    assert "median_s_per_move" in header and "leaves_per_s_vs_om_depth2" in header
    assert "\n| threesus | 2 |" in out and f"\n| expectimax:depth=3,eval=learned:{path} | 2 |" in out


def test_missing_module_is_a_one_line_error(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tablegym.experiments.trilobite.bench", None)
    assert main(["bench", "search"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tablegym: error: the search benchmark is not available") and "Traceback" not in err


def test_train_forwards_its_arguments(monkeypatch):
    seen = []
    fake_module(monkeypatch, "tablegym.training.td", cli_main=seen.append)
    assert main(["train", "--game", "trilobite", "--steps", "10", "--help"]) == 0
    assert seen == [["--game", "trilobite", "--steps", "10", "--help"]]


def test_format_table_flattens_mixed_dicts():
    text = format_table({"a": 1, "b": {"c": 2.5}})
    assert "| a | 1 |" in text and "| b.c | 2.5 |" in text


# ---------------------------------------------------------------------------------- bad arguments


@pytest.mark.parametrize(
    "argv, message",
    [
        (["solve", "chess"], "unknown game 'chess'; known games: trilobite, trilobite-tiny, sim"),
        (["play", "trilobite", "--n", "5"], "unknown option 'n' for game 'trilobite'"),
        (["eval", "trilobite-tiny", "random"], "at least two agent specs"),
        (["eval", "trilobite-tiny", "random", "random", "--games", "0"], "must be >= 1"),
        (["eval", "trilobite-tiny", "random", "telepath", "--games", "2"], "telepath"),
        (["eval", "trilobite-tiny", "random", "random", "random"], "distinct"),
        (["play", "trilobite", "--option", "width"], "--option needs key=value, got 'width'"),
        (["play", "trilobite", "--option", "width=5", "--width", "6"], "given twice"),
        (["play", "trilobite", "--width", "x"], "invalid int value"),
        (["play", "trilobite-tiny", "--seat", "2"], "invalid choice"),
        (["bench", "gpu"], "invalid choice"),
        (["bench", "vec", "--param", "nope=1"], "bench vec takes no 'nope'; its parameters: seconds, repeats, batches"),
        (["bench", "vec", "--param", "batches=abc"], "batches must be comma-separated integers >= 1, got 'abc'"),
        (["bench", "starship-env", "--param", "size=9"], "bench starship-env takes no 'size'; its parameters:"),
        (["fly"], "invalid choice"),
        ([], "required"),
    ],
)
def test_bad_arguments_give_clear_errors(capsys, argv, message):
    assert message in bad_args(capsys, argv)
