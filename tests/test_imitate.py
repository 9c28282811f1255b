"""Imitation (training/imitate.py): the teacher's decisions are recorded as played, resumably;
PPO's network fitted to them picks the teacher's moves, plays as ``policy:path=`` and is where
``--algo ppo`` goes on from; bad arguments get one line."""

from __future__ import annotations

import json
import shutil

import gymnasium
import numpy as np
import pytest

from tablegym.envs import make_game
from tablegym.models.agents import make_agent
from tablegym.models.checkpoint import load_checkpoint
from tablegym.models.policy import load_actor_critic
from tablegym.training import imitate, ppo
from tests.cli_errors import assert_one_error_line


@pytest.mark.parametrize("name", ["friday", "threes", "trilobite-tiny", "sim"])
def test_each_recorded_decision_is_the_teachers_legal_move_with_its_mover_s_return(name):
    envs = gymnasium.make_vec(ppo.env_id_of(name), num_envs=1)
    inputs, actions = int(np.prod(envs.single_observation_space.shape)), int(envs.single_action_space.n)
    envs.close()
    task = (name, json.dumps({}), "random", 3, 0, 2, 2, actions)
    demos = imitate.record_chunk(task)
    assert demos["obs"].shape == (len(demos["moves"]), inputs) and demos["masks"].shape == (len(demos["moves"]), actions)
    assert demos["masks"][np.arange(len(demos["moves"])), demos["moves"]].all()  # every move legal where it was played
    assert len(demos["game_returns"]) == 2 and set(demos["games"]) == {0, 1}
    # each decision carries its game's return for its mover: player 0's is the game's own, and the
    # two-player games here are zero-sum, so player 1's is its negation
    own = demos["game_returns"][demos["games"]]
    assert np.array_equal(demos["returns"], np.where(demos["players"] == 0, own, -own))
    again = imitate.record_chunk(task)  # seeded deals and teacher: the same decisions
    assert all(np.array_equal(demos[k], again[k]) for k in demos)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """TrilobiteTiny: depth-3 alpha-beta's moves over 40 games (2 random opening plies), fitted 30 epochs."""
    run = tmp_path_factory.mktemp("imitate")
    argv = [
        "trilobite-tiny",
        "--teacher",
        "alphabeta:depth=3,eval=advanced",
        "--games",
        "40",
        "--chunk",
        "4",
        "--epochs",
        "30",
        "--eval-games",
        "0",
        "--no-progress",
        "--run-dir",
        str(run),
    ]
    assert imitate.main(argv) == 0
    return run, argv


def test_the_fitted_policy_picks_the_teachers_moves(fitted):
    run, _ = fitted
    train, held, games = imitate.load_demos(run / "demos")
    assert games == 40 and len(held["moves"]) > 0
    net = load_actor_critic(run / "checkpoint.pt", make_game("trilobite-tiny"))
    untrained = imitate.ImitationLearner(imitate.Args(teacher="random"), make_game("trilobite-tiny"), 27, 3).net
    # the teacher's move among 1-3 legal ones: an untrained policy agrees about half the time
    assert imitate.agreement(net, train) >= 0.75 > imitate.agreement(untrained, train), imitate.agreement(untrained, train)
    agent = make_agent(make_game("trilobite-tiny"), f"policy:path={run / 'checkpoint.pt'}")
    state = make_game("trilobite-tiny").new_initial_state()
    assert agent(state, np.random.default_rng(0)) in state.legal_actions()


def test_a_rerun_records_only_the_missing_games_and_ppo_goes_on_from_the_fit(fitted, tmp_path):
    run, argv = fitted
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    before = {p.name: p.stat().st_mtime_ns for p in (copy / "demos").iterdir()}
    argv = [a if a != str(run) else str(copy) for a in argv]
    argv[argv.index("--games") + 1], argv[argv.index("--epochs") + 1] = "48", "32"
    assert imitate.main(argv) == 0
    after = {p.name: p.stat().st_mtime_ns for p in (copy / "demos").iterdir()}
    assert {k: after[k] for k in before} == before and len(after) == len(before) + 2
    assert load_checkpoint(copy / "checkpoint.pt")["metadata"]["iteration"] == 32
    assert (
        ppo.main(
            [
                "trilobite-tiny",
                "--run-dir",
                str(copy),
                "--num-envs",
                "16",
                "--num-steps",
                "8",
                "--total-steps",
                str(16 * 8 * 34),
                "--eval-every",
                "0",
                "--no-progress",
            ]
        )
        == 0
    )
    assert load_checkpoint(copy / "checkpoint.pt")["metadata"]["iteration"] == 34  # PPO's updates 33 and 34


@pytest.mark.parametrize(
    "argv, words",
    [
        (["train", "trilobite-tiny", "--algo", "imitate"], "--teacher is required"),
        (["train", "trilobite-tiny", "--algo", "imitate", "--teacher", "nosuchagent"], "nosuchagent"),
        (["train", "trilobite-tiny", "--algo", "imitate", "--teacher", "random", "--games", "0"], "--games must be >= 1"),
        (["train", "starship", "--algo", "imitate", "--teacher", "random"], "starship"),
    ],
)
def test_bad_arguments_get_one_error_line(argv, words, capsys):
    assert_one_error_line(argv, words, capsys)
