"""Masked DQN over the compiled vector envs (training/dqn.py): it learns, its Q-network plays in
the searches as the largest legal Q, it resumes, and bad arguments get one line."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tablegym.envs import make_game
from tablegym.envs.core import CHANCE, sample_outcome
from tablegym.experiments.cli import main as cli
from tablegym.models.agents import make_agent
from tablegym.models.checkpoint import load_checkpoint
from tablegym.models.export import load_exported
from tablegym.models.policy import load_qnet, qnetwork
from tablegym.training import dqn
from tests.cli_errors import assert_one_error_line
from tests.smoke import assert_plays_in_alphabeta, trained_run

TINY = ["--num-envs", "64", "--learning-starts", "1000", "--eval-every", "0", "--no-progress"]
ITERATIONS = 400


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """400 iterations of DQN on TrilobiteTiny (3x3, three in a row; a quarter of the boards against a
    random player), Q-network written out."""
    return trained_run(
        dqn.main, tmp_path_factory, "dqn", ["trilobite-tiny", *TINY, "--total-steps", str(64 * ITERATIONS)], "q.pt"
    )


def test_the_policy_learns_to_beat_a_random_player(trained):
    torch.manual_seed(0)
    untrained = qnetwork(27, 3, (128, 128))
    before = dqn.evaluate(untrained, "tablegym/TrilobiteTiny-v0", 400, seed=1)
    after = dqn.evaluate(load_qnet(trained / "checkpoint.pt"), "tablegym/TrilobiteTiny-v0", 400, seed=1)
    # mean return over both seats against a random player: +1 a win, -1 a loss
    assert after >= 0.5 and after >= before + 0.3, (before, after)


def test_the_exported_evaluator_is_the_largest_legal_q(trained):
    game = make_game("trilobite-tiny")
    evaluator = load_exported(game, trained / "q.pt")
    qnet = load_qnet(trained / "checkpoint.pt")
    state, rng = game.new_initial_state(), np.random.default_rng(0)
    for _ in range(4):  # the first positions of a random game, each seat to move twice
        mover = state.current_player()
        obs = torch.as_tensor(np.asarray(state.observation(mover), dtype=np.float32).reshape(1, -1))
        with torch.no_grad():
            q = qnet(obs)[0].numpy()
        assert evaluator.evaluate(state, mover) == pytest.approx(q[state.legal_actions()].max(), abs=1e-5)
        state = state.child(int(rng.choice(state.legal_actions())))


def test_the_q_network_runs_compiled_in_alpha_beta(trained):
    assert_plays_in_alphabeta(trained / "q.pt")


def test_a_second_run_in_the_same_folder_resumes(trained, capsys):
    saved = load_checkpoint(trained / "checkpoint.pt")
    before = saved["metadata"]["iteration"]
    assert dqn.main(["trilobite-tiny", *TINY, "--total-steps", str(64 * (before + 1)), "--run-dir", str(trained)]) == 0
    assert "resuming" in capsys.readouterr().out
    resumed = load_checkpoint(trained / "checkpoint.pt")
    assert resumed["metadata"]["iteration"] == before + 1
    # one iteration with the replay buffer empty learns nothing: network, target and Adam's state
    # come back as they were saved
    assert resumed["model"].keys() == saved["model"].keys()
    assert all(torch.equal(resumed["model"][k], saved["model"][k]) for k in saved["model"])
    assert resumed["optimizer"]["state"][0]["step"] == saved["optimizer"]["state"][0]["step"] > 0


def test_a_checkpoint_of_another_network_is_refused_in_one_line(trained, capsys):
    status = cli(["train", "trilobite-tiny", "--algo", "dqn", "--hidden", "32", "--no-progress", "--run-dir", str(trained)])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert status == 2 and len(errors) == 1 and "holds another network" in errors[0], err


def test_a_single_player_game_trains_and_its_q_network_plays_greedy(tmp_path):
    assert (
        dqn.main(
            [
                "threes",
                "--num-envs",
                "16",
                "--total-steps",
                str(16 * 20),
                "--learning-starts",
                "64",
                "--batch-size",
                "32",
                "--eval-every",
                "10",
                "--eval-games",
                "4",
                "--no-progress",
                "--reward-scale",
                "0.01",
                "--run-dir",
                str(tmp_path),
                "--out",
                str(tmp_path / "q.pt"),
            ]
        )
        == 0
    )
    assert load_checkpoint(tmp_path / "checkpoint.pt", game="threes")["metadata"]["iteration"] == 20
    game = make_game("threes")
    agent = make_agent(game, f"greedy:eval=learned:{tmp_path / 'q.pt'}")
    state, rng = game.new_initial_state(), np.random.default_rng(0)
    while state.current_player() == CHANCE:  # the deal
        state = state.child(sample_outcome(state, rng))
    assert agent(state, rng) in state.legal_actions()


@pytest.mark.parametrize(
    "argv, words",
    [
        (["train", "trilobite-tiny", "--algo", "sarsa"], "--algo must be ppo or dqn"),
        (["train", "trilobite-tiny", "--algo", "dqn", "--num-envs", "0"], "--num-envs must be >= 1"),
        (["train", "trilobite-tiny", "--algo", "dqn", "--gamma", "1.5"], "--gamma must lie in (0, 1]"),
        (["train", "trilobite-tiny", "--algo", "dqn", "--eps-end", "-0.1"], "--eps-end must lie in [0, 1]"),
        (
            ["train", "trilobite-tiny", "--algo", "dqn", "--learning-starts", "500", "--buffer-size", "200"],
            "--learning-starts (500) must be at most --buffer-size (200)",
        ),
        (
            ["train", "trilobite-tiny", "--algo", "dqn", "--num-envs", "64", "--buffer-size", "100"],
            "--buffer-size (100) must hold at least num_envs x n_step (192)",
        ),
        (["train", "nosuchgame", "--algo", "dqn"], "unknown game 'nosuchgame'"),
    ],
)
def test_bad_arguments_get_one_error_line(argv, words, capsys):
    assert_one_error_line(argv, words, capsys)


def test_double_dqn_values_the_online_choice_and_plain_dqn_the_target_s_legal_max():
    """Two fixed networks over one position with moves 0 and 2 legal: the online network prefers
    move 2, the target network prefers move 1 (illegal) and then move 0."""
    online = torch.nn.Linear(1, 3, bias=True)
    target = torch.nn.Linear(1, 3, bias=True)
    with torch.no_grad():
        for net, bias in ((online, [0.0, 5.0, 1.0]), (target, [3.0, 9.0, 2.0])):
            net.weight.zero_()
            net.bias.copy_(torch.tensor(bias))
    obs, mask = torch.zeros((1, 1)), torch.tensor([[True, False, True]])
    assert dqn.bootstrap(online, target, obs, mask, double=True).item() == 2.0  # target's Q of online's move 2
    assert dqn.bootstrap(online, target, obs, mask, double=False).item() == 3.0  # target's largest legal Q (move 0)
