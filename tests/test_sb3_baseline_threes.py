"""Smoke tests of the SB3 baselines on Threes (experiments/sb3_baseline.py): tiny budgets, two games."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

import gymnasium  # noqa: E402

from tablegym.envs.threes.core import ThreesGame, play_random_setup, sample_chance  # noqa: E402
from tablegym.experiments import sb3_baseline  # noqa: E402
from tablegym.experiments.sb3_games import GAMES  # noqa: E402
from tablegym.experiments.threes.evaluate import report  # noqa: E402
from tablegym.training.sb3 import legal_argmax, make_policy  # noqa: E402

ALGOS = GAMES["threes"].algos


def obs_high(hint: str = "+") -> np.ndarray:
    """The registered env's observation Box's upper bounds (the divisor of the scaled observation)."""
    import tablegym.envs  # noqa: F401  (registers tablegym/Threes-v0)

    return gymnasium.make("tablegym/Threes-v0", hint=hint).observation_space.high.astype(np.float32)


def load_model(algo: str, run_dir: str):
    return sb3_baseline.load_model("threes", algo, run_dir)


RECORD_KEYS = {"game", "agent", "hint", "seed", "score", "highest", "moves", "seconds", "leaves", "timesteps", "train_seconds"}


def states_with_an_illegal_swipe(count: int = 20, seed: int = 0) -> list:
    """Player positions of random games where at least one swipe is illegal."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        s = play_random_setup(ThreesGame(), rng)
        while not s.is_terminal() and len(out) < count:
            mask = s.legal_action_mask()
            if not mask.all():
                out.append(s)
            s = sample_chance(s.child(int(rng.choice(np.flatnonzero(mask)))), rng)
    return out


@pytest.fixture(scope="module", params=ALGOS)
def trained(request, tmp_path_factory):
    algo = request.param
    run_dir = tmp_path_factory.mktemp(algo)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3's notes about CPU/GPU and batch size
        meta = sb3_baseline.train("threes", algo, timesteps=256, seed=0, run_dir=str(run_dir), n_envs=1, progress=False)
    return algo, run_dir, meta


def test_legal_argmax_never_picks_a_masked_action():
    values = np.array([9.0, 1.0, -3.0, 2.0])
    assert legal_argmax(values, np.array([True, True, True, True])) == 0
    assert legal_argmax(values, np.array([False, True, True, True])) == 3
    assert legal_argmax(values, np.array([0, 0, 1, 0], dtype=np.int8)) == 2


def test_eval_observation_is_the_training_observation():
    high = obs_high()
    for algo in ALGOS:
        env = sb3_baseline.make_env("threes", algo)
        obs, info = env.reset(seed=3)
        for _ in range(30):
            state = env.unwrapped.game_state
            np.testing.assert_array_equal(obs, (state.observation() / high).astype(np.float32))
            assert obs.min() >= 0.0 and obs.max() <= 1.0
            legal = np.flatnonzero(info["action_mask"])
            if len(legal) == 0:
                break
            obs, reward, terminated, truncated, info = env.step(int(legal[0]))
            assert reward >= 0.0  # log2(1 + score increase)
            if terminated or truncated:
                break


def test_training_saves_the_model_and_its_budget(trained):
    algo, run_dir, meta = trained
    assert (run_dir / "model.zip").exists() and (run_dir / "train.json").exists()
    assert meta["timesteps"] >= 256 and meta["train_seconds"] >= 0
    assert list(run_dir.glob(f"{algo}_*/events.out.tfevents.*")), "no TensorBoard log"


def test_eval_policy_plays_legal_swipes_only(trained):
    algo, run_dir, _ = trained
    policy = make_policy(algo, load_model(algo, str(run_dir)))
    high = obs_high()
    for state in states_with_an_illegal_swipe():
        mask = state.legal_action_mask().astype(bool)
        assert not mask.all()
        assert mask[policy((state.observation() / high).astype(np.float32), mask)]


def test_evaluation_records_true_scores(trained, tmp_path):
    algo, run_dir, meta = trained
    out = tmp_path / "sb3.jsonl"
    records = sb3_baseline.evaluate_solo("threes", algo, run_dir=str(run_dir), games=2, seed=0, out=str(out), progress=False)["+"]
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == len(lines) == 2
    for rec in lines:
        assert set(rec) == RECORD_KEYS
        assert rec["agent"] == f"sb3-{algo}" and rec["hint"] == "+" and rec["seed"] == 0
        assert rec["timesteps"] == meta["timesteps"]
        assert isinstance(rec["score"], int) and rec["score"] > 0
        assert rec["highest"] >= 3 and rec["moves"] > 0
    # Replaying each game with the same seed and policy ends on the recorded (final, legal) score.
    policy = make_policy(algo, load_model(algo, str(run_dir)))
    high = obs_high()
    for rec in lines:
        rng = np.random.default_rng(np.random.SeedSequence(0, spawn_key=(rec["game"],)))
        state = play_random_setup(ThreesGame(), rng)
        while not state.is_terminal():
            mask = state.legal_action_mask().astype(bool)
            action = policy((state.observation() / high).astype(np.float32), mask)
            assert mask[action]
            state = sample_chance(state.child(action), rng)
        assert state.score == rec["score"] and state.moves == rec["moves"]
    # A rerun resumes (nothing new is played), and threes_eval's report makes the row.
    sb3_baseline.evaluate_solo("threes", algo, run_dir=str(run_dir), games=2, seed=0, out=str(out), progress=False)
    assert len(out.read_text().splitlines()) == 2
    assert f"| sb3-{algo} | 2 |" in report([str(out)])
