"""The same-budget comparison of tablegym's PPO and SB3's MaskablePPO runs end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tablegym.experiments import rl_same_budget as R
from tablegym.training import vector_rl as ppo


def _budget(trainer: str) -> list[str]:
    """The arguments of ``trainer``'s run: 0.05 minutes (3 seconds) on 16 boards."""
    return ["--trainer", trainer, "--minutes", "0.05", "--num-envs", "16"]


def test_both_trainers_train_for_the_budget_and_the_report_scores_both(tmp_path):
    for trainer in R.TRAINERS:
        assert (
            R.main(
                [
                    "trilobite-tiny",
                    *_budget(trainer),
                    "--num-steps",
                    "8",
                    "--run-dir",
                    str(tmp_path),
                ]
            )
            == 0
        )
        budget = json.loads((tmp_path / trainer / "budget.json").read_text())
        assert budget["steps"] > 0 and budget["seconds"] >= 3.0  # ran its 3 seconds, at least one update
    out = tmp_path / "report.md"
    assert (
        R.main(
            [
                "trilobite-tiny",
                "--report",
                "--games",
                "20",
                "--run-dir",
                str(tmp_path),
                "--opponent",
                "alphabeta:eval=advanced,depth=1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    rows = [line for line in out.read_text().splitlines() if line.startswith(("| tablegym |", "| sb3 |"))]
    assert len(rows) == 2 and all(line.count("+-") == 2 for line in rows)


@pytest.mark.parametrize("game", ["trilobite-tiny", "threes"])
def test_both_dqns_train_for_the_budget_and_the_report_scores_both(game, tmp_path):
    """SB3's DQN trains on boards that lose on an illegal move and is judged on legal moves only,
    as tablegym's; a single-player game's row reports the mean score."""
    for trainer in R.TRAINERS:
        assert (
            R.main(
                [
                    game,
                    "--algo",
                    "dqn",
                    *_budget(trainer),
                    "--reward-scale",
                    "0.01",
                    "--run-dir",
                    str(tmp_path),
                ]
            )
            == 0
        )
        budget = json.loads((tmp_path / f"{trainer}-dqn" / "budget.json").read_text())
        assert budget["steps"] > 0 and budget["seconds"] >= 3.0
    out = tmp_path / "report.md"
    assert R.main([game, "--algo", "dqn", "--report", "--games", "8", "--run-dir", str(tmp_path), "--out", str(out)]) == 0
    text = out.read_text()
    rows = [line for line in text.splitlines() if line.startswith(("| tablegym |", "| sb3 |"))]
    assert "tablegym DQN and SB3 DQN" in text and len(rows) == 2 and all(line.count("+-") == 1 for line in rows)
    assert all(f"--algo dqn --trainer {trainer} --minutes 0.05" in text for trainer in R.TRAINERS)  # how each was trained
    if game == "threes":  # the deck deals 3s and a card of 3 or more scores: every game scores above 0
        assert all(float(line.split("|")[5].split("+-")[0]) > 0 for line in rows)


def test_episode_returns_are_each_games_win_or_loss_and_their_mean_is_mean_return():
    rng = np.random.default_rng(0)

    def first_legal(obs, masks):
        return np.argmax(masks + 0 * rng.random(masks.shape), axis=1)

    x = ppo.episode_returns(first_legal, "tablegym/TrilobiteTiny-v0", 10, 3)
    assert x.shape == (10,) and set(np.unique(x)) <= {-1.0, 0.0, 1.0}
    assert ppo.mean_return(first_legal, "tablegym/TrilobiteTiny-v0", 10, 3) == pytest.approx(x.mean())


@pytest.mark.parametrize(
    "argv, words",
    [
        (["trilobite-tiny"], "either --trainer"),
        (["trilobite-tiny", "--report", "--trainer", "sb3"], "either --trainer"),
        (["trilobite-tiny", "--report", "--games", "3"], "--games an even number"),
        (["nosuchgame", "--report"], "unknown game"),
        (["trilobite-tiny", "--report", "--opponent", "search:eval=advanced,depth=1"], "a vector env's opponent must be"),
        (["starship", "--algo", "dqn", "--trainer", "sb3"], "no illegal_action='penalty' boards"),
        (["threes", "--algo", "dqn", "--trainer", "sb3", "--reward-scale", "0"], "--reward-scale > 0"),
    ],
)
def test_bad_arguments_are_one_line(argv, words, capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_:
        R.main(argv + ["--run-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and words in err and "Traceback" not in err


def test_a_report_before_training_says_what_is_missing(capsys, tmp_path):
    with pytest.raises(SystemExit):
        R.main(["trilobite-tiny", "--report", "--run-dir", str(tmp_path)])
    assert "has no trained tablegym or sb3" in capsys.readouterr().err
