"""Smoke tests of the SB3 baselines on Trap (experiments/sb3_baseline.py): a 256-step training, four games."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

from tablegym.envs.core import CHANCE  # noqa: E402
from tablegym.envs.trap.core import TrapGame  # noqa: E402
from tablegym.experiments import sb3_baseline  # noqa: E402

PROG = sb3_baseline.PROG + " trap"


def make_env(opponent: str = "medium", algo: str = "maskableppo"):
    return sb3_baseline.make_env("trap", algo, opponent=opponent)


def load_model(algo: str, run_dir: str):
    return sb3_baseline.load_model("trap", algo, run_dir)


def agent_of(model, algo: str = "maskableppo"):
    return sb3_baseline.policy_agent("trap", model, algo)


def evaluate(model, *, games: int, seed: int, opponent: str, algo: str = "maskableppo"):
    return sb3_baseline.evaluate_match("trap", model, algo, games=games, seed=seed, opponent=opponent)


def run_main(argv: list[str]) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3's notes about CPU/GPU and batch size
        return sb3_baseline.main(["trap", *argv])


def table_row(text: str) -> list[str]:
    """The cells of the results table's one data row."""
    rows = [line for line in text.splitlines() if line.startswith("| `sb3-maskableppo`")]
    assert len(rows) == 1, text
    return [cell.strip() for cell in rows[0].strip("|").split("|")]


def wdl(cell: str) -> tuple[int, int, int]:
    wins, draws, losses = (int(x) for x in cell.split("/"))
    return wins, draws, losses


def tiny_run(run_dir, out, opponent: str) -> list[str]:
    """The arguments the tiny runs share: seed 0, ``run_dir``, 4 evaluation games against ``opponent``,
    the table written to ``out``, no progress bar."""
    return [
        "--seed",
        "0",
        "--run-dir",
        str(run_dir),
        "--eval-games",
        "4",
        "--opponent",
        opponent,
        "--out",
        str(out),
        "--no-progress",
    ]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One tiny run of the command line: train 256 steps, evaluate 4 games, write the table."""
    root = tmp_path_factory.mktemp("trap-sb3")
    run_dir, out = root / "run", root / "results" / "trap_sb3.md"
    argv = ["--timesteps", "256", "--n-envs", "1", *tiny_run(run_dir, out, "medium")]
    text = run_main(argv)
    return run_dir, out, text, argv


def random_states(count: int = 60, seed: int = 0) -> list:
    """Decision states of random Trap games (moves and throws, either player to decide)."""
    rng = np.random.default_rng(seed)
    game, out = TrapGame(), []
    while len(out) < count:
        s = game.new_initial_state()
        while not s.is_terminal() and len(out) < count:
            if s.current_player() == CHANCE:
                outcomes = s.chance_outcomes()
                s = s.child(outcomes[rng.integers(len(outcomes))][0])
                continue
            out.append(s)
            legal = s.legal_actions()
            s = s.child(int(legal[rng.integers(len(legal))]))
    return out


def test_training_saves_the_model_its_budget_and_tensorboard_logs(trained):
    run_dir, _, _, _ = trained
    meta = json.loads((run_dir / "train.json").read_text())
    assert (run_dir / "model.zip").exists()
    assert meta["timesteps"] == 256 and meta["train_seconds"] >= 0 and meta["opponent"] == "medium"
    assert meta["net"] == "mlp" and meta["seed"] == 0
    assert list(run_dir.glob("maskableppo_*/events.out.tfevents.*")), "no TensorBoard log"


def test_training_env_alternates_seats_and_observes_like_evaluation():
    env = make_env("medium")
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    seats = []
    for _ in range(4):
        seats.append(info["seat"])
        done = False
        while not done:
            inner = env.unwrapped
            # the evaluation agent sees state.observation(player) with the same player to decide
            state = inner.game_state
            assert state.current_player() == info["seat"]
            np.testing.assert_array_equal(obs, state.observation(info["seat"]))
            legal = np.flatnonzero(inner.action_masks())
            obs, reward, done, truncated, info = env.step(int(rng.choice(legal)))
            assert not truncated
        assert reward in (-1.0, 0.0, 1.0)
        obs, info = env.reset()
    assert seats == [0, 1, 0, 1]


def test_model_only_picks_legal_actions(trained):
    run_dir, _, _, _ = trained
    agent = agent_of(load_model("maskableppo", str(run_dir)))
    states = random_states()
    assert {s.phase for s in states} == {"move", "throw"} and {s.current_player() for s in states} == {0, 1}
    for state in states:
        mask = state.legal_action_mask().astype(bool)
        assert not mask.all()
        assert mask[agent(state, None)]


class AlwaysStepNorth:
    """A fake model that ignores the mask: step 0 (north) always, illegal in every throw phase."""

    def predict(self, obs, action_masks=None, deterministic=False):
        return np.int64(0), None


def test_evaluation_rejects_an_illegal_action():
    with pytest.raises(ValueError, match="illegal action 0"):
        evaluate(AlwaysStepNorth(), games=2, seed=0, opponent="medium")


def test_evaluation_plays_half_the_games_in_each_seat_and_counts_add_up(trained):
    run_dir, out, text, argv = trained
    model = load_model("maskableppo", str(run_dir))
    result = evaluate(model, games=4, seed=0, opponent="medium")  # the rules core raises on an illegal move
    assert result.games == 4 and [s.games for s in result.seats] == [2, 2]
    assert all(s.wins + s.draws + s.losses == s.games for s in result.seats)
    assert all(r.move_counts[0] > 0 and r.move_counts[1] > 0 for r in result.records)
    # The written table (also printed) is this same evaluation: same seed, deterministic agent.
    assert out.read_text() == text
    cells = table_row(text)
    assert cells[1] == "`medium`" and cells[2] == "4"
    total = wdl(cells[3])
    assert sum(total) == 4 and total == (result.wins, result.draws, result.losses)
    p0, p1 = (wdl(c) for c in cells[4].split(" / "))
    assert sum(p0) == sum(p1) == 2 and tuple(a + b for a, b in zip(p0, p1)) == total
    assert cells[5].startswith(f"{total[0] / 4:.3f} [") and cells[7] == "256"
    assert PROG + " " + " ".join(argv) in text


def test_eval_only_reloads_the_saved_model(trained, tmp_path):
    run_dir, _, text, _ = trained
    stamp = (run_dir / "model.zip").stat().st_mtime_ns
    out = tmp_path / "again.md"
    again = run_main(
        ["--eval-only", "--seed", "0", "--run-dir", str(run_dir), "--eval-games", "4", "--out", str(out), "--no-progress"]
    )
    assert (run_dir / "model.zip").stat().st_mtime_ns == stamp  # no training, nothing saved
    assert len(list(run_dir.glob("maskableppo_*"))) == 1
    assert table_row(again) == table_row(text)  # same model, same timesteps and seconds, same games
    assert out.read_text() == again


def assert_refused_before_training(tmp_path, capsys, cases) -> None:
    """Each (extra arguments, message) case exits with status 2 naming the problem, and no run
    directory is created."""
    for extra, message in cases:
        with pytest.raises(SystemExit) as exit_info:
            sb3_baseline.main(["trap", "--timesteps", "256", "--run-dir", str(tmp_path / "run"), "--no-progress", *extra])
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_bad_arguments_fail_clearly_before_training(tmp_path, capsys):
    with pytest.raises(ValueError, match="unknown agent 'mediumm' for trap; known: .*medium"):
        sb3_baseline.check_opponent("trap", "mediumm")
    cases = [
        (["--opponent", "mediumm"], "unknown agent 'mediumm'"),
        (["--eval-games", "3"], "even number"),
        (["--eval-only"], "no model at"),
    ]
    assert_refused_before_training(tmp_path, capsys, cases)


# -- DQN against a league -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dqn_trained(tmp_path_factory):
    """A tiny DQN run of the command line against a league, evaluated (by default) against Medium."""
    root = tmp_path_factory.mktemp("trap-sb3-dqn")
    run_dir, out = root / "run", root / "dqn.md"
    argv = ["--algo", "dqn", "--timesteps", "256", *tiny_run(run_dir, out, "random,medium")]
    return run_dir, out, run_main(argv), argv


def test_dqn_run_trains_against_the_league_and_evaluates_against_medium(dqn_trained):
    run_dir, out, text, argv = dqn_trained
    meta = json.loads((run_dir / "train.json").read_text())
    assert meta["algo"] == "dqn" and meta["opponent"] == "random,medium" and meta["n_envs"] == 1
    assert meta["timesteps"] == 256 and (run_dir / "model.zip").exists()
    assert list(run_dir.glob("dqn_*/events.out.tfevents.*")), "no TensorBoard log"
    rows = [line for line in text.splitlines() if line.startswith("| `sb3-dqn`")]
    assert len(rows) == 1, text
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert cells[1] == "`medium`" and cells[2] == "4" and sum(wdl(cells[3])) == 4 and cells[7] == "256"
    assert "## Trap: DQN (mlp, trained vs random,medium) vs medium" in text and out.read_text() == text
    assert PROG + " " + " ".join(argv) in text


def test_dqn_trains_in_penalty_mode_and_plays_legal_actions_only(dqn_trained):
    from stable_baselines3.common.vec_env import DummyVecEnv

    env = make_env("random", "dqn")
    assert env.unwrapped.illegal_action == "penalty"  # DQN cannot mask: an illegal action loses at once
    env.reset(seed=0)
    assert env.step(0)[1:3] == (-1.0, True)  # north from the top row
    model = sb3_baseline.build("trap", "dqn", DummyVecEnv([lambda: make_env("random", "dqn")]), seed=0, tensorboard_log=None)
    model.learning_starts = 64  # the real 5,000 is past this test's budget
    before = [p.detach().clone() for p in model.q_net.parameters()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.learn(total_timesteps=320)
    assert model._n_updates > 0
    assert any(not np.array_equal(a, b.detach()) for a, b in zip(before, model.q_net.parameters()))

    saved = load_model("dqn", str(dqn_trained[0]))
    states = random_states()
    for m in (model, saved):
        agent = agent_of(m, "dqn")
        assert agent.name == "sb3-dqn"
        unmasked_illegal = 0
        for state in states:
            mask = state.legal_action_mask().astype(bool)
            assert mask[agent(state, None)]
            q = m.q_net(torch_obs(state))[0].detach().numpy()
            unmasked_illegal += not mask[int(np.argmax(q))]
        assert unmasked_illegal > 0  # the legal argmax mattered: the plain argmax was sometimes illegal


def torch_obs(state):
    import torch

    return torch.as_tensor(state.observation(state.current_player()), dtype=torch.float32).unsqueeze(0)


def test_league_draws_every_member_per_episode_seeded():
    league = ["random", "easy", "medium", "hard"]

    def draws(seed: int) -> list[str]:
        env = make_env(",".join(league), "dqn")
        inner = env.unwrapped
        names = []
        for episode in range(40):
            _, info = env.reset(seed=seed if episode == 0 else None)
            assert inner.league.members[inner.league.index].name.split(":")[0] == info["opponent"]  # it plays
            names.append(info["opponent"])
        return names

    names = draws(0)
    assert set(names) == set(league) and min(names.count(x) for x in league) >= 4
    assert draws(0) == names and draws(1) != names
    assert make_env("medium").unwrapped.league is None  # one opponent: the plain env, as before


def test_bad_league_member_or_eval_opponent_fails_before_training(tmp_path, capsys, dqn_trained):
    with pytest.raises(ValueError, match="league member 'mediumm' of 'random,mediumm': unknown agent 'mediumm'"):
        sb3_baseline.parse_league("trap", "random,mediumm")
    with pytest.raises(ValueError, match="league member '' of 'random,'"):
        sb3_baseline.parse_league("trap", "random,")
    assert sb3_baseline.parse_league("trap", " random , hard") == ["random", "hard"]
    cases = [
        (["--algo", "dqn", "--opponent", "random,easy,mediumm"], "league member 'mediumm'"),
        (["--algo", "dqn", "--eval-opponent", "hardd"], "--eval-opponent: unknown agent 'hardd'"),
        (["--algo", "sarsa"], "invalid choice: 'sarsa'"),
    ]
    assert_refused_before_training(tmp_path, capsys, cases)
    with pytest.raises(SystemExit):  # a DQN model is not loaded as MaskablePPO
        sb3_baseline.main(["trap", "--eval-only", "--run-dir", str(dqn_trained[0]), "--eval-games", "4", "--no-progress"])
    assert "holds a dqn model; pass --algo dqn" in capsys.readouterr().err
