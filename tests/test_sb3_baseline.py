"""The one SB3 baseline script (experiments/sb3_baseline.py) over every configured game: the env
builds and shows the evaluating agent's observation, a few steps train, one evaluation runs; bad
input is one line and exit 2."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

from tablegym.experiments import sb3_baseline  # noqa: E402
from tablegym.experiments.sb3_games import GAMES  # noqa: E402

TINY = {  # the fewest steps each trains (one rollout of one env; Friday: one of each level), one evaluation
    "threes": ["--n-envs", "1", "--eval-games", "1"],
    "friday": ["--n-envs", "4", "--eval-games", "1", "--levels", "2"],
    "trap": ["--n-envs", "1", "--eval-games", "2", "--opponent", "random", "--eval-opponent", "random"],
    "trilobite": ["--n-envs", "1", "--eval-games", "2", "--opponent", "random", "--eval-opponent", "random"],
}


def test_every_configured_game_has_a_tiny_run():
    assert set(TINY) == set(GAMES)


@pytest.mark.parametrize("game", list(GAMES))
def test_the_training_env_shows_what_the_evaluating_agent_sees(game):
    algo = GAMES[game].algos[0]
    env = sb3_baseline.make_env(game, algo)
    agent = sb3_baseline.policy_agent(game, _FirstLegal(), algo)
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(40):
        np.testing.assert_array_equal(obs, agent.observe(env.unwrapped.game_state))
        assert env.observation_space.contains(obs)
        obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated or truncated:
            obs, info = env.reset()


class _FirstLegal:
    """A stand-in model: the lowest legal action."""

    def predict(self, obs, action_masks=None, deterministic=False):
        return np.int64(np.flatnonzero(action_masks)[0]), None


@pytest.mark.parametrize("game", list(GAMES))
def test_a_few_steps_train_save_and_evaluate_through_the_command_line(game, tmp_path, capsys):
    run_dir = tmp_path / "run"
    out = tmp_path / ("games.jsonl" if GAMES[game].variant else "report.md")
    argv = [game, "--timesteps", "8", "--seed", "0", "--run-dir", str(run_dir), "--out", str(out), "--no-progress", *TINY[game]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3's notes about CPU/GPU and batch size
        text = sb3_baseline.main(argv)
    meta = json.loads((run_dir / "train.json").read_text())
    assert (run_dir / "model.zip").exists() and meta["game"] == game and meta["seed"] == 0
    assert meta["timesteps"] >= 8 and list(run_dir.glob(f"{meta['algo']}_*/events.out.tfevents.*"))
    printed = capsys.readouterr().out
    if GAMES[game].variant:
        records = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(records) == 1 and records[0]["agent"] == "sb3-maskableppo"
        assert records[0]["timesteps"] == meta["timesteps"] and "| sb3-maskableppo |" in printed
    else:
        assert out.read_text() == text and "| `sb3-maskableppo` | `random` | 2 |" in text
        assert f"{sb3_baseline.PROG} {' '.join(argv)}" in text


@pytest.mark.parametrize(
    "argv, message",
    [
        (["go"], "unknown game 'go'; games with an SB3 baseline: threes, friday, trap, trilobite"),
        (["sim"], "sim has no SB3 baseline configuration"),
        (["friday", "--algo", "dqn"], "argument --algo: invalid choice: 'dqn'"),
        (["threes", "--algo", "ppo2"], "argument --algo: invalid choice: 'ppo2'"),
        (["threes", "eval", "--run-dir", "/nonexistent/sb3"], "no model at /nonexistent/sb3/model.zip"),
        (["trilobite", "--opponent", "alphabeta:depth=x"], "--opponent:"),
        (["trap", "--workers", "2"], "--workers: a two-player game's match"),
        (["threes", "--hint", "minus"], "--hint must be among ['+', 'candidates'], got ['minus']"),
        ([], "the following arguments are required: game"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_:
        sb3_baseline.main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.splitlines()) == 1 and message in err and "Traceback" not in err, err


def test_a_model_of_another_game_is_refused_in_one_line(tmp_path, capsys):
    run_dir = tmp_path / "run"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sb3_baseline.train("trilobite", timesteps=8, seed=0, run_dir=str(run_dir), n_envs=1, opponent="random", progress=False)
    with pytest.raises(SystemExit) as exit_:
        sb3_baseline.main(["trap", "eval", "--run-dir", str(run_dir), "--eval-games", "2", "--no-progress"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.splitlines()) == 1 and "holds a model of trilobite, not of trap" in err, err


def test_a_league_member_may_have_several_options():
    assert sb3_baseline.split_league("random,alphabeta:eval=advanced,depth=2,medium:ties=random") == [
        "random",
        "alphabeta:eval=advanced,depth=2",
        "medium:ties=random",
    ]
    assert sb3_baseline.split_league("random,") == ["random", ""]
