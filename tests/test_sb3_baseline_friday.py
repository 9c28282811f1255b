"""Smoke tests of the SB3 baseline on Friday (experiments/sb3_baseline.py): one tiny training, a few games."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

from tablegym.envs.friday.env import DEFAULT_MAX_STEPS  # noqa: E402
from tablegym.experiments import sb3_baseline  # noqa: E402
from tablegym.experiments.friday import evaluate as friday_eval  # noqa: E402
from tablegym.experiments.sb3_games import FRIDAY_MAX_STEPS, GAMES, play_friday  # noqa: E402
from tablegym.models.friday.agents import RuleAgent  # noqa: E402
from tablegym.training.sb3 import Truncated  # noqa: E402

LEVELS = GAMES["friday"].variant.choices


def make_env(level: int):
    return sb3_baseline.make_env("friday", level=level)


def friday_agent(run_dir: str, max_decisions: int = FRIDAY_MAX_STEPS):
    """The evaluated agent: the trained MaskablePPO, stopped at the env's step limit."""
    return sb3_baseline.policy_agent(
        "friday", sb3_baseline.load_model("friday", "maskableppo", run_dir), max_decisions=max_decisions
    )


def run_main(argv: list[str]) -> str:
    return sb3_baseline.main(["friday", *argv])


from tablegym.experiments.game_runs import recorded  # noqa: E402

EXTRA_KEYS = {"timesteps", "train_seconds", "truncated"}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("friday-sb3")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3's notes about CPU/GPU and batch size
        meta = sb3_baseline.train("friday", timesteps=256, seed=0, run_dir=str(run_dir), n_envs=4, progress=False)
    return run_dir, meta


@pytest.fixture(scope="module")
def agent(trained):
    run_dir, _ = trained
    return friday_agent(str(run_dir))


class LegalityChecked:
    """Wraps an agent: asserts that each action it returns is legal in the state it was given."""

    def __init__(self, agent) -> None:
        self.agent, self.name, self.checked = agent, agent.name, 0

    def __call__(self, state, rng):
        action = self.agent(state, rng)
        assert action in state.legal_actions(), f"illegal {action} while {state.phase_name}"
        self.checked += 1
        return action


def test_training_saves_the_model_its_budget_and_tensorboard_logs(trained):
    run_dir, meta = trained
    assert (run_dir / "model.zip").exists() and (run_dir / "train.json").exists()
    assert meta["timesteps"] >= 256 and meta["train_seconds"] >= 0
    assert meta["levels"] == [1, 2, 3, 4] and meta["reward"] == "score"
    assert json.loads((run_dir / "train.json").read_text())["timesteps"] == meta["timesteps"]
    assert list(run_dir.glob("maskableppo_*/events.out.tfevents.*")), "no TensorBoard log"


def test_training_envs_play_every_level_with_the_scaled_score_reward():
    for level in LEVELS:
        env = make_env(level)
        env.reset(seed=0)
        assert env.unwrapped.game.level == level and env.unwrapped.reward == "score"
        assert env.unwrapped.max_steps == FRIDAY_MAX_STEPS == DEFAULT_MAX_STEPS
    with pytest.raises(ValueError, match="multiple of 4"):
        sb3_baseline.train("friday", timesteps=8, seed=0, run_dir="unused", n_envs=6)


def test_agent_observation_is_the_training_observation(agent):
    rng = np.random.default_rng(0)
    for level in LEVELS:
        env = make_env(level)
        obs, info = env.reset(seed=level)
        start, total = info["score"], 0.0
        terminated = truncated = False
        while not (terminated or truncated):  # a random game: about 50 decisions
            np.testing.assert_array_equal(obs, agent.observe(env.unwrapped.game_state))
            assert obs.dtype == np.float32 and env.observation_space.contains(obs)
            obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            total += reward
        # The learner's reward is the score change / 10 (Monitor keeps the true one).
        assert total == pytest.approx((info["score"] - start - (1 if terminated else 0)) / 10)


def test_agent_plays_legal_actions_only_and_play_game_seeds_like_friday_eval(agent):
    for level in (1, 4):
        checked = LegalityChecked(agent)
        rec = friday_eval.play_game(checked, level, 0, 3)
        assert checked.checked == rec["decisions"] > 0
        assert rec["agent"] == "sb3-maskableppo"
        # The same game through sb3_games.play_friday: same seed, same deterministic play.
        again = play_friday(agent, level, 0, 3)
        assert again["truncated"] is False
        assert {k: again[k] for k in ("score", "life", "step", "decisions")} == {
            k: rec[k] for k in ("score", "life", "step", "decisions")
        }


def test_evaluation_records_resume_and_report(trained, tmp_path):
    run_dir, meta = trained
    out = tmp_path / "friday_sb3.jsonl"
    results = sb3_baseline.evaluate_solo(
        "friday", run_dir=str(run_dir), values=[1, 3], games=2, seed=0, out=str(out), progress=False
    )
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 4 and sorted(results) == [1, 3] and all(len(r) == 2 for r in results.values())
    eval_keys = set(friday_eval.play_game(RuleAgent(), 1, 0, 0))
    for rec in lines:
        assert set(rec) == eval_keys | EXTRA_KEYS
        assert rec["agent"] == "sb3-maskableppo" and rec["seed"] == 0 and rec["level"] in (1, 3)
        assert rec["timesteps"] == meta["timesteps"] and rec["train_seconds"] == meta["train_seconds"]
        assert rec["won"] is False and rec["truncated"] is False and rec["decisions"] > 0
    # A rerun resumes: nothing new for the games recorded, only the new ones when asked for more.
    sb3_baseline.evaluate_solo("friday", run_dir=str(run_dir), values=[1, 3], games=2, seed=0, out=str(out), progress=False)
    assert len(out.read_text().splitlines()) == 4
    sb3_baseline.evaluate_solo("friday", run_dir=str(run_dir), values=[1], games=3, seed=0, out=str(out), progress=False)
    added = [json.loads(line) for line in out.read_text().splitlines()[4:]]
    assert [(r["level"], r["game"]) for r in added] == [(1, 2)]
    # Another model (another budget) does not count as done.
    assert (
        recorded(
            str(out),
            agent="sb3-maskableppo",
            level=1,
            seed=0,
            timesteps=meta["timesteps"] + 1,
            train_seconds=meta["train_seconds"],
        )
        == {}
    )
    table = friday_eval.report([str(out)])
    assert "| sb3-maskableppo | 1 | 3 | 0 |" in table and "| sb3-maskableppo | 3 | 2 | 0 |" in table


def test_parallel_evaluation_records_the_same_games(trained, tmp_path):
    run_dir, _ = trained
    serial, parallel = tmp_path / "serial.jsonl", tmp_path / "parallel.jsonl"
    for out, workers in ((serial, 1), (parallel, 2)):
        sb3_baseline.evaluate_solo(
            "friday", run_dir=str(run_dir), values=[2], games=4, seed=1, out=str(out), workers=workers, progress=False
        )

    def games(path):
        keep = ("game", "level", "seed", "score", "life", "step", "decisions", "truncated")
        return sorted(tuple(json.loads(line)[k] for k in keep) for line in path.read_text().splitlines())

    assert games(serial) == games(parallel) and len(games(serial)) == 4


def test_a_game_that_runs_past_max_steps_is_truncated(trained):
    run_dir, _ = trained
    short = friday_agent(str(run_dir), max_decisions=5)
    first = play_friday(short, 2, 0, 0)
    second = play_friday(short, 2, 0, 1)  # a new game: the decision count starts again
    for rec in (first, second):
        assert rec["truncated"] is True and rec["decisions"] == 5 and rec["won"] is False
        assert set(rec) == set(friday_eval.play_game(RuleAgent(), 2, 0, 0)) | {"truncated"}
    with pytest.raises(Truncated):
        friday_eval.play_game(short, 2, 0, 0)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--timesteps", "0"], "--timesteps must be at least 1"),
        (["--games", "-1"], "--games must be at least 1"),
        (["--workers", "0"], "--workers must be at least 1"),
        (["--levels", "1", "5"], "--levels must be among"),
        (["--levels", "2", "2"], "repeats a level"),
        (["--n-envs", "6"], "--n-envs must be a multiple of 4"),
        (["--seed", "-3"], "--seed must be >= 0"),
        (["--eval-only", "--run-dir", "/nonexistent/friday-sb3"], "needs a trained run-dir"),
        (["--timesteps", "many"], "invalid int value"),
    ],
)
def test_bad_arguments_are_rejected(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        sb3_baseline.parse_args(["friday", *argv])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_command_line_eval_only_prints_the_table(trained, tmp_path, capsys):
    run_dir, _ = trained
    out = tmp_path / "cli.jsonl"
    run_main(["--eval-only", "--run-dir", str(run_dir), "--games", "1", "--levels", "2", "--out", str(out), "--no-progress"])
    printed = capsys.readouterr().out
    assert "| sb3-maskableppo | 2 | 1 | 0 |" in printed
    assert len(out.read_text().splitlines()) == 1
