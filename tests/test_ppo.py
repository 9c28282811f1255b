"""Masked PPO over the compiled vector envs (training/ppo.py): it learns, its critic plays in the
searches, it resumes, and bad arguments get one line."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch

from tablegym.envs import make_game
from tablegym.models.agents import make_agent
from tablegym.models.checkpoint import load_checkpoint
from tablegym.training import ppo
from tests.cli_errors import assert_one_error_line
from tests.smoke import assert_plays_in_alphabeta, trained_run

QUIET = ["--eval-every", "0", "--no-progress"]
"""No evaluation matches and no progress bar: what most runs here leave out."""
TINY = ["--num-envs", "128", "--num-steps", "16", *QUIET]


def _updates(num_envs: int, num_steps: int, updates: int) -> list[str]:
    """The arguments of a run of ``updates`` rollouts of ``num_steps`` steps on ``num_envs`` boards."""
    return ["--num-envs", str(num_envs), "--num-steps", str(num_steps), "--total-steps", str(num_envs * num_steps * updates)]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """20 updates of PPO on TrilobiteTiny (3x3, three in a row; a quarter of the boards against a random
    player), critic written out."""
    return trained_run(
        ppo.main, tmp_path_factory, "ppo", ["trilobite-tiny", *TINY, "--total-steps", str(128 * 16 * 20)], "critic.pt"
    )


def _net(run) -> ppo.ActorCritic:
    payload = load_checkpoint(run / "checkpoint.pt", game="trilobite")  # the tiny board is trilobite 3x3
    shape = payload["metadata"]["ppo"]
    net = ppo.ActorCritic(shape["inputs"], shape["actions"], tuple(shape["hidden"]))
    net.load_state_dict(payload["model"])
    return net


def test_the_policy_learns_to_beat_a_random_player(trained):
    torch.manual_seed(0)
    untrained = ppo.ActorCritic(27, 3, (128, 128))
    before = ppo.evaluate(untrained, "tablegym/TrilobiteTiny-v0", 400, seed=1)
    after = ppo.evaluate(_net(trained), "tablegym/TrilobiteTiny-v0", 400, seed=1)
    # mean return over both seats against a random player: +1 a win, -1 a loss
    assert after >= 0.5 and after >= before + 0.3, (before, after)


def test_the_critic_runs_compiled_in_alpha_beta(trained):
    assert_plays_in_alphabeta(trained / "critic.pt")


def test_a_second_run_in_the_same_folder_resumes(trained, capsys):
    before = load_checkpoint(trained / "checkpoint.pt")["metadata"]["iteration"]
    assert ppo.main(["trilobite-tiny", *TINY, "--total-steps", str(128 * 16 * (before + 1)), "--run-dir", str(trained)]) == 0
    assert "resuming" in capsys.readouterr().out
    assert load_checkpoint(trained / "checkpoint.pt")["metadata"]["iteration"] == before + 1


@pytest.mark.parametrize("game", ["threes", "friday", "starship"])
def test_single_player_games_train(game, tmp_path):
    assert (
        ppo.main(
            [
                game,
                *_updates(16, 8, 2),
                "--eval-every",
                "2",
                "--eval-games",
                "4",
                "--no-progress",
                "--run-dir",
                str(tmp_path),
                "--reward-scale",
                "0.01",
            ]
        )
        == 0
    )
    assert load_checkpoint(tmp_path / "checkpoint.pt", game=game)["metadata"]["iteration"] == 2


def test_the_reward_flag_trains_on_the_env_s_other_reward_and_evaluates_the_default(tmp_path, monkeypatch):
    """``--reward score`` reaches the training boards only: the evaluation still plays Friday's
    default ``win`` reward (a mean in [-1, 1], not a score in the tens)."""
    made = []
    real = gymnasium.make_vec
    monkeypatch.setattr(gymnasium, "make_vec", lambda env_id, **kw: made.append(kw.get("reward")) or real(env_id, **kw))
    assert (
        ppo.main(
            [
                "friday",
                "--reward",
                "score",
                *_updates(8, 8, 1),
                "--eval-every",
                "1",
                "--eval-games",
                "4",
                "--no-progress",
                "--run-dir",
                str(tmp_path),
            ]
        )
        == 0
    )
    assert made[:2] == ["score", "score"] and made[-1] is None, made  # the check, the boards, then the evaluation


@pytest.mark.parametrize(
    "argv, words",
    [
        (["train", "trilobite-tiny", "--algo", "sarsa"], "--algo must be ppo"),
        (["train", "trilobite-tiny", "--algo", "ppo", "--num-envs", "0"], "--num-envs must be >= 1"),
        (
            ["train", "trilobite-tiny", "--algo", "ppo", "--num-envs", "6", "--num-steps", "1", "--minibatches", "4"],
            "--minibatches (4) must divide",
        ),
        (["train", "nosuchgame", "--algo", "ppo"], "unknown game 'nosuchgame'"),
        (["train", "starship", "--algo", "ppo", "--out", "critic.pt"], "starship has none"),
        (["train", "trilobite-tiny", "--algo", "ppo", "--pool-share", "0.8"], "with a sum <= 1"),
        (["train", "trilobite-tiny", "--algo", "ppo", "--opponent", "alphabeta:depth=-1"], "--opponent 'alphabeta:depth=-1'"),
        (["train", "trap", "--algo", "ppo", "--opponent", "medium", "easy"], "--opponent 'medium easy'"),
        (["train", "trap", "--algo", "ppo", "--opponent", "hard", "hard"], "one or more different opponents"),
        (["train", "trap", "--algo", "ppo", "--opening-moves", "-1"], "--opening-moves and --opening-plies must be >= 0"),
        (["train", "trap", "--algo", "ppo", "--opening-plies", "-2"], "--opening-moves and --opening-plies must be >= 0"),
        (["train", "threes", "--algo", "ppo", "--opening-plies", "2"], "--opening-plies is for two-player games"),
        (["train", "friday", "--algo", "ppo", "--reward", "moves"], "--reward 'moves': reward must be one of"),
        (["train", "friday", "--algo", "dqn", "--reward", "moves"], "--reward 'moves': reward must be one of"),
    ],
)
def test_bad_arguments_get_one_error_line(argv, words, capsys):
    assert_one_error_line(argv, words, capsys)


def test_the_policy_alone_plays_matches_as_an_agent(trained):
    """``policy:path=RUN/checkpoint.pt``: the greedy masked actor through make_agent and play_match,
    scoring against a random player what the trainer's own evaluation measured (both seats)."""
    from tablegym.experiments.match import play_match

    result = play_match(
        "trilobite-tiny", f"policy:path={trained / 'checkpoint.pt'}", "random", games=200, seed=3, opening_plies=0, progress=False
    )
    # ppo.evaluate's mean return >= 0.5 over both seats is a score (win 1, draw 1/2) >= 0.75
    assert result.score >= 0.75, result
    agent = make_agent(make_game("trilobite-tiny"), f"policy:path={trained / 'checkpoint.pt'}")
    state = make_game("trilobite-tiny").new_initial_state()
    x = torch.as_tensor(state.observation(0).reshape(1, -1), dtype=torch.float32)
    assert agent(state, np.random.default_rng(0)) == int(_net(trained).actor(x)[0].argmax())  # every move legal here


@pytest.mark.parametrize(
    "spec, words",
    [
        ("policy", "needs path=RUN/checkpoint.pt"),
        ("policy:path=/nonexistent/c.pt", "does not exist"),
        ("policy:path={critic}", "holds no PPO policy"),
        ("policy:path={ckpt},depth=2", "takes no option depth"),
    ],
)
def test_a_bad_policy_spec_is_one_line(trained, spec, words):
    spec = spec.format(critic=trained / "critic.pt", ckpt=trained / "checkpoint.pt")
    with pytest.raises(ValueError, match=words):
        make_agent(make_game("trilobite-tiny"), spec)


def test_a_policy_of_another_board_is_refused(trained):
    with pytest.raises(ValueError, match="trained with other rule options|is for game"):
        make_agent(make_game("trilobite"), f"policy:path={trained / 'checkpoint.pt'}")


def _scalars(run_dir) -> dict[str, list[float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir))
    events.Reload()
    return {tag: [e.value for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


def test_opening_moves_are_random_and_not_trained_on(tmp_path):
    """--opening-moves: a game's first steps are random legal moves that no update learns from;
    with every step an opening step the network ends as it began (as with a zero step size)."""
    common = [
        "trilobite-tiny",
        *_updates(16, 8, 3),
        *QUIET,
        "--random-share",
        "0.5",
        "--opponent",
        "alphabeta:eval=win-loss,depth=2",
    ]
    assert ppo.main(common + ["--opening-moves", "100", "--run-dir", str(tmp_path / "open")]) == 0
    assert ppo.main(common + ["--lr", "0", "--run-dir", str(tmp_path / "still")]) == 0
    assert ppo.main(common + ["--opening-moves", "1", "--run-dir", str(tmp_path / "one")]) == 0
    opened, still, one = (_net(tmp_path / d).state_dict() for d in ("open", "still", "one"))
    assert all(torch.equal(opened[k], still[k]) for k in still)
    assert not all(torch.equal(one[k], still[k]) for k in still)


def test_opening_plies_reach_every_board_and_the_run_trains(tmp_path, monkeypatch):
    """--opening-plies 2: the env's opening plies on the self-play and the fixed boards alike."""
    made = []
    make_vec = gymnasium.make_vec
    monkeypatch.setattr(gymnasium, "make_vec", lambda *a, **kw: made.append(kw) or make_vec(*a, **kw))
    argv = [
        "trilobite-tiny",
        *_updates(8, 4, 2),
        *QUIET,
        "--random-share",
        "0.5",
        "--opening-plies",
        "2",
        "--run-dir",
        str(tmp_path / "r"),
    ]
    assert ppo.main(argv) == 0
    boards = [kw for kw in made if kw.get("num_envs") == 4]
    assert len(boards) == 2 and all(kw["opening_plies"] == 2 for kw in boards)


def test_a_league_of_past_snapshots(tmp_path):
    """Half the boards against snapshots of the policy (three kept, one every three updates), a
    quarter against a random player: the pool's scores are logged, and the policy still learns
    to beat a random player."""
    assert (
        ppo.main(
            [
                "trilobite-tiny",
                *_updates(64, 16, 30),
                "--pool-share",
                "0.5",
                "--snapshot-every",
                "3",
                "--pool-size",
                "3",
                *QUIET,
                "--run-dir",
                str(tmp_path),
            ]
        )
        == 0
    )
    scalars = _scalars(tmp_path)
    assert max(scalars["pool/snapshots"]) == 3 and scalars["pool/snapshots"][0] == 1
    assert all(-1 <= v <= 1 for v in scalars["pool/return"])
    assert ppo.evaluate(_net(tmp_path), "tablegym/TrilobiteTiny-v0", 400, seed=1) >= 0.5


def test_the_fixed_boards_shared_out_among_several_opponents(tmp_path):
    """--opponent medium hard random: each plays a third of the fixed boards inside the batch and
    gets its own logged return; a random policy does worst against Hard and best against random."""
    assert (
        ppo.main(
            [
                "trap",
                *_updates(48, 40, 3),
                "--random-share",
                "1",
                "--lr",
                "0",
                *QUIET,
                "--opponent",
                "medium",
                "hard",
                "random",
                "--run-dir",
                str(tmp_path),
            ]
        )
        == 0
    )
    last = {name: _scalars(tmp_path)[f"charts/return_vs/{name}"][-1] for name in ("medium", "hard", "random")}
    assert last["hard"] < last["random"] - 0.5 and last["medium"] < last["random"] - 0.5, last
    boards = ppo.Boards("tablegym/Trap-v0", 2, 5, {}, opponent=("medium", "hard"))
    assert boards.opponent_of == [None, None, "medium", "medium", "medium", "hard", "hard"]
    assert boards.sizes == [2, 3, 2]


def test_a_compiled_search_as_the_fixed_opponent(tmp_path):
    """--opponent: the fixed boards play alpha-beta inside the batch; against it, a random
    policy's episodes score below a random opponent's (the logged returns say who it played)."""
    common = [
        "trilobite-tiny",
        *_updates(64, 16, 2),
        "--random-share",
        "1",
        "--lr",
        "0",
        *QUIET,
    ]
    assert ppo.main(common + ["--opponent", "alphabeta:eval=win-loss,depth=4", "--run-dir", str(tmp_path / "s")]) == 0
    assert ppo.main(common + ["--run-dir", str(tmp_path / "r")]) == 0
    searched = _scalars(tmp_path / "s")["charts/episode_return"][-1]
    random = _scalars(tmp_path / "r")["charts/episode_return"][-1]
    assert searched < random - 0.3, (searched, random)


def _minibatch(scale: float = 1.0, *, logp_noise: float = 0.0):
    """A minibatch as the update sees it: 128 steps of sparse +-1 rewards (some ending their
    board, most handing the move over, a tenth invalid) times ``scale``, with values of a critic
    that has learned the scaled returns (also times ``scale``); the actions are the policy's own,
    and their old log-probabilities are the policy's, off by ``logp_noise`` at most."""
    g = torch.Generator().manual_seed(0)
    T, N = 8, 16
    rewards = torch.randint(-1, 2, (T, N), generator=g).float() * (torch.rand(T, N, generator=g) < 0.3)
    values = torch.rand(T, N, generator=g) - 0.3
    next_value = torch.rand(N, generator=g) - 0.3
    signs = torch.where(torch.rand(T, N, generator=g) < 0.8, -1.0, 1.0)
    valid = (torch.rand(T, N, generator=g) > 0.1).float()
    adv = ppo.advantages(
        rewards * scale, values * scale, next_value * scale, (rewards != 0).float(), signs, valid, gamma=0.99, lam=0.95
    )
    torch.manual_seed(1)
    net = ppo.ActorCritic(27, 3, (16, 16))
    obs = torch.rand(T * N, 27, generator=g)
    mask = torch.rand(T * N, 3, generator=g) < 0.7
    mask[:, 0] = True
    with torch.no_grad():
        dist = net.policy(obs, mask)
        actions = dist.sample()
        old_logp = dist.log_prob(actions) + logp_noise * (2 * torch.rand(T * N, generator=g) - 1)
    return net, (obs, mask, actions, old_logp, adv.reshape(-1), (adv + values * scale).reshape(-1), valid.reshape(-1))


def _loss(net, batch):
    return ppo.minibatch_loss(net, *batch, clip=0.2, vf_coef=0.5, ent_coef=0.01)


def test_the_policy_loss_is_zero_while_the_policy_is_the_one_that_played():
    # The first minibatch of an update sees ratio 1: the clipped loss is minus the mean advantage,
    # which normalisation makes 0 (the raw advantages' mean is far from it).
    net, batch = _minibatch()
    adv, valid = batch[4], batch[6]
    assert abs(float((adv * valid).sum() / valid.sum())) > 0.05
    losses = _loss(net, batch)
    assert float(losses.pg) == pytest.approx(0.0, abs=1e-6)
    assert float(losses.clipfrac) == 0.0


def test_scaling_every_reward_leaves_the_policy_loss_unchanged():
    # Normalised advantages are the same for rewards (and the values learned from them) in any
    # unit, so one step size fits Threes' scores and Trilobite's +-1; the value loss is not.
    net, batch = _minibatch(1.0, logp_noise=0.5)
    _, scaled = _minibatch(100.0, logp_noise=0.5)
    one, hundred = _loss(net, batch), _loss(net, scaled)
    assert float(one.clipfrac) > 0 and abs(float(one.pg)) > 1e-3  # ratios away from 1, some clipped
    assert float(hundred.pg) == pytest.approx(float(one.pg), rel=1e-5)
    assert float(hundred.vf) > 100 * float(one.vf)


RECORDED_LOSSES = {
    "losses/pg": [-0.0006642389926128089, -0.0020624829921871424, -0.0020155394449830055],
    "losses/vf": [0.61725252866745, 0.3630968928337097, 0.43593838810920715],
    "losses/entropy": [0.960706353187561, 0.8857114315032959, 0.8979445099830627],
    "losses/clipfrac": [0.0, 0.0, 0.0],
}
"""The losses logged by the run below (torch's CPU float32 kernels, one thread)."""


def test_a_seeded_run_logs_the_recorded_losses(tmp_path):
    # Three updates of 32 boards x 8 steps on the tiny board: rollout, GAE and update together.
    assert (
        ppo.main(
            [
                "trilobite-tiny",
                *_updates(32, 8, 3),
                "--seed",
                "0",
                *QUIET,
                "--run-dir",
                str(tmp_path),
            ]
        )
        == 0
    )
    logged = {tag: values for tag, values in _scalars(tmp_path).items() if tag.startswith("losses/")}
    assert logged.keys() == RECORDED_LOSSES.keys()
    for tag, values in RECORDED_LOSSES.items():
        assert logged[tag] == pytest.approx(values, rel=1e-4, abs=1e-5), tag
