"""Q-learning over afterstates (training/afterstate_dqn.py, ``tablegym train threes --algo dqn
--afterstate``): the vector env's afterstates are the rules' own, the n-tuple network's fast
paths agree with its torch definition, the learner beats a random player by far, its file plays
in the searches, it resumes, and bad arguments get one line."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch

import tablegym.envs  # noqa: F401
from tablegym.envs import make_game
from tablegym.experiments.cli import main as cli
from tablegym.models.agents import make_agent
from tablegym.models.checkpoint import load_checkpoint
from tablegym.models.threes.ntuple_net import NTupleNet, load_ntuple, ranks_tensor
from tablegym.training import afterstate_dqn
from tests.cli_errors import assert_one_error_line
from tests.smoke import trained_run

ENV = "tablegym/Threes-v0"
TINY = ["--num-envs", "64", "--learning-starts", "2000", "--eval-every", "0", "--no-progress", "--tc", "--alpha", "1.0"]
ITERATIONS = 1000


def _played(n: int, moves: int, seed: int):
    envs = gymnasium.make_vec(ENV, num_envs=n)
    envs.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        masks = envs.unwrapped.action_masks()
        envs.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
    return envs


def test_afterstates_are_the_boards_the_rules_swipe_to():
    envs = _played(16, 40, seed=3)
    boards = envs.unwrapped
    keys, hints, gains, legal = boards.afterstates()
    pending = boards.action_masks().all(1) & ~legal.any(1)
    assert not pending.all()
    for i in np.flatnonzero(~pending):
        state = boards.game_state(i)
        assert sorted(np.flatnonzero(legal[i])) == sorted(state.legal_actions())
        for d in state.legal_actions():
            child = state.child(d)  # the swipe, the new card not yet entered
            assert keys[i, d] == child.board
            assert gains[i, d] == child.score - state.score
    # a step enters one card on a cell the afterstate left empty, and nothing else changes
    action = np.array([np.flatnonzero(row)[0] if row.any() else 0 for row in legal])
    envs.step(action)
    for i in np.flatnonzero(~pending):
        before, after = keys[i, action[i]], boards.game_state(i).board
        changed = [c for c in range(16) if (before >> 4 * c) & 15 != (after >> 4 * c) & 15]
        assert len(changed) == 1 and (before >> 4 * changed[0]) & 15 == 0, (i, changed)
    envs.close()


def test_the_fast_values_are_the_networks_own():
    net = load_ntuple()
    envs = _played(32, 60, seed=5)
    keys, hints, _, legal = envs.unwrapped.afterstates()
    keys, hints = keys[legal], np.repeat(hints, 4).reshape(-1, 4)[legal]
    reference = net(ranks_tensor(keys), torch.as_tensor(hints)).detach()
    assert torch.allclose(net.value_of(keys, hints), reference)  # table rows from compiled code
    with torch.no_grad():
        assert torch.allclose(net.value_of(keys, hints), reference)  # the compiled sums
    envs.close()


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    return trained_run(
        afterstate_dqn.main, tmp_path_factory, "afterstate", ["threes", *TINY, "--total-steps", str(64 * ITERATIONS)], "net.pt"
    )


def test_it_learns_far_beyond_a_random_player(trained):
    random_player = NTupleNet.for_training()  # all zeros: Q is the swipe's gain alone
    net, meta = NTupleNet.load_with_metadata(trained / "checkpoint.pt")
    assert meta["iteration"] == ITERATIONS
    before = afterstate_dqn.evaluate(random_player, ENV, 200, seed=1).mean()
    after = afterstate_dqn.evaluate(net, ENV, 200, seed=1).mean()
    assert after > 2 * before, (before, after)


def test_its_file_plays_in_the_searches(trained):
    game = make_game("threes")
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    while state.current_player() < 0:
        state = state.child(int(rng.choice(state.legal_actions())))
    for spec in (f"greedy:eval=learned:{trained / 'net.pt'}", f"expectimax:depth=2,eval=learned:{trained / 'net.pt'}"):
        assert make_agent(game, spec)(state, rng) in state.legal_actions()


def test_a_second_run_in_the_same_folder_resumes(trained, capsys):
    saved = load_checkpoint(trained / "checkpoint.pt")
    before = saved["metadata"]["iteration"]
    assert (
        cli(
            [
                "train",
                "threes",
                "--algo",
                "dqn",
                "--afterstate",
                *TINY,
                "--total-steps",
                str(64 * (before + 1)),
                "--run-dir",
                str(trained),
            ]
        )
        == 0
    )
    assert "resuming" in capsys.readouterr().out
    resumed = load_checkpoint(trained / "checkpoint.pt")
    assert resumed["metadata"]["iteration"] == before + 1
    # one iteration with the replay buffer empty learns nothing: the same entries and the same
    # coherence sums of temporal coherence learning come back
    assert saved["model"]["tc_rows"].numel() > 0
    assert all(torch.equal(resumed["model"][k], saved["model"][k]) for k in saved["model"])
    assert "tc_rows" not in load_checkpoint(trained / "net.pt")["model"]  # the --out file: the network only


@pytest.mark.parametrize(
    "argv, words",
    [
        (["friday", "--afterstate"], "'friday' is neither"),  # one player, and no afterstate network in its record
        (["threes", "--afterstate", "--alpha", "0"], "--alpha must be > 0"),
        (["threes", "--afterstate", "--option", "hint=candidates"], "saved for the default rules"),
        (["threes", "--afterstate", "--learning-starts", "10", "--buffer-size", "5"], "--learning-starts (10)"),
        (["threes", "--afterstate", "--tuples", "0,1,x"], "bad tuple '0,1,x'"),
        (["threes", "--afterstate", "--stage-ranks", "20"], "stage_ranks must be increasing ranks in 1..15"),
    ],
)
def test_bad_arguments_get_one_error_line(argv, words, capsys, tmp_path):
    assert_one_error_line(["train", argv[0], "--algo", "dqn", *argv[1:], "--run-dir", str(tmp_path / "r")], words, capsys)
    assert not (tmp_path / "r").exists()  # refused before a run directory was made


@pytest.mark.parametrize(
    "change, words", [(["--tuples", "0,1,2,3"], "holds another network"), (["--no-tc"], "was trained with --tc")]
)
def test_a_run_of_another_network_or_rule_is_refused_in_one_line(trained, change, words, capsys):
    assert cli(["train", "threes", "--algo", "dqn", "--afterstate", *TINY, *change, "--run-dir", str(trained)]) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1 and words in errors[0], err


def test_coherent_sgd_steps_by_the_mean_gradient_times_the_coherence_of_each_entry():
    table = torch.nn.EmbeddingBag(4, 1, mode="sum", sparse=True, _weight=torch.zeros(4, 1))
    opt = afterstate_dqn.CoherentSGD(table.parameters(), lr=0.5)

    def step(bags, grads):
        opt.zero_grad()
        (table(torch.tensor(bags)).view(-1) * torch.tensor(grads)).sum().backward()
        opt.step()
        return table.weight.detach().view(-1).tolist()

    # fresh entries move at rate 1 by the mean of their gradients: entry 1 is read by both
    # samples (gradients 2 and 4: mean 3), entries 0 and 2 by one each, entry 3 by none
    assert step([[0, 1], [1, 2]], [2.0, 4.0]) == [-1.0, -1.5, -2.0, 0.0]
    # entry 1's gradients so far: +3 (the batch mean); now -3: |3 - 3| / (3 + 3) = 0 next time
    assert step([[1]], [-3.0]) == [-1.0, 0.0, -2.0, 0.0]
    assert step([[1]], [5.0]) == [-1.0, 0.0, -2.0, 0.0]
    # entry 0: +2, then +2 again: fully coherent, rate 1
    assert step([[0]], [2.0]) == [-2.0, 0.0, -2.0, 0.0]


def test_the_trainer_called_directly_refuses_a_game_without_an_afterstate_network(capsys):
    assert afterstate_dqn.main(["trilobite", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "names no afterstate network" in err and "negamax_dqn" in err
