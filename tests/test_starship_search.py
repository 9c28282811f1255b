"""The searching starship generator: the editing policy built from the empty hull, boards copied
for branching, the cheaper forward pass, and the value network's trainer."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tablegym.envs.starship.env import StarshipEnv
from tablegym.envs.starship.pipeline import Pipeline
from tablegym.envs.starship.quality import validate
from tablegym.models.checkpoint import CheckpointError
from tablegym.models.starship.learned import LearnedGenerator, num_inputs, policy_inputs, policy_layers, save_policy
from tablegym.models.starship.search import Branches, SearchGenerator, num_value_inputs, score, value_layers
from tablegym.training.starship.imitate import demonstrate, editing_env
from tablegym.training.starship.value import main

SIDE = 12
SMALL = {**editing_env(2, "empty"), "size": SIDE, "max_steps": 2 * SIDE * SIDE}


@pytest.mark.parametrize("seed", [0, 5])
def test_the_teacher_builds_the_staged_ship_from_the_empty_hull_with_no_edit_masked(seed):
    """From the hull alone (stages 1-2) the cursor's two passes place the cockpit, the reactor,
    their armour and the rest: the staged ship tile for tile, every edit allowed under "safe"
    masks (before the cockpit is down nothing can be sealed in, so nothing is masked for it)."""
    _, masks, actions, ship = demonstrate(seed, editing_env(2, "empty"))
    staged = Pipeline().generate(seed)
    assert (ship.tiles == staged.tiles).all() and ((ship.part >= 0) == (staged.part >= 0)).all()
    assert sorted(map(tuple, ship.parts.tolist())) == sorted(map(tuple, staged.parts.tolist()))
    assert masks[np.arange(len(actions)), actions].all()
    assert validate(ship).ok


def _policy(kwargs=SMALL, seed=0):
    env = StarshipEnv(**kwargs)
    torch.manual_seed(seed)
    return policy_layers(num_inputs(env.observation_space, 1, 2), [16], int(env.action_space.n)), env


def test_a_copied_board_steps_as_its_source():
    """``take_boards``: after board i takes board j's state, the same actions give both the same
    ships, observations, masks and rewards."""
    from tablegym.envs.starship.vector import StarshipVectorEnv

    venv = StarshipVectorEnv(num_envs=3, **SMALL)
    venv.reset(seed=[4, 5, 6])
    rng = np.random.default_rng(0)
    for _ in range(40):
        masks = venv.action_masks()
        venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    venv.take_boards(np.array([0, 0, 2]))
    for _ in range(60):
        a = rng.choice(np.flatnonzero(venv.action_masks()[0]))
        obs, rewards, _, _, info = venv.step(np.array([a, a, 0]))
        assert (obs[0] == obs[1]).all() and rewards[0] == rewards[1] and (info["action_mask"][0] == info["action_mask"][1]).all()
    a, b = venv.ship(0), venv.ship(1)
    assert (a.tiles == b.tiles).all() and (a.parts == b.parts).all()
    with pytest.raises(ValueError, match="one board index"):
        venv.take_boards(np.array([0, 3, 1]))


def test_the_cheaper_forward_pass_gives_the_policys_logits():
    """``Branches.logits`` (the pooled grid's share kept a board, the cursor's column added) is
    the policy on ``policy_inputs``, board by board, while the boards edit and branch."""
    net, _ = _policy()
    b = Branches(net, SMALL, radius=1, pool=2, boards=4)
    b.reset(3)
    rng = np.random.default_rng(1)
    for k in range(5):
        b.advance(37, rng)
        with torch.no_grad():
            plain = net(policy_inputs(b.observations(), 1, 2))
        assert torch.allclose(plain, b.logits(), atol=1e-5)
        b.take(np.array([k % 4, 0, 1, k % 4]))
    assert b.steps == 5 * 37


def test_a_search_is_the_same_ship_every_time_and_survives_its_checkpoint(tmp_path):
    net, env = _policy()
    value = value_layers(num_value_inputs(env.observation_space.shape), [8])
    gen = SearchGenerator(net, value, SMALL, 1, 2, {}, beam=2, branch=2, segment=SIDE)
    ship, info = gen.generate(9)
    assert info["score"] == max(info["scores"]) == pytest.approx(score(ship)) and len(info["scores"]) == 4
    again, _ = gen.generate(9)
    assert (again.tiles == ship.tiles).all()
    path = gen.save(tmp_path / "search.pt")
    loaded = LearnedGenerator.load(path)
    assert isinstance(loaded, SearchGenerator) and (loaded.beam, loaded.branch, loaded.segment) == (2, 2, SIDE)
    assert (loaded.generate(9)[0].tiles == ship.tiles).all()
    # a search asking for 10^12 boards is refused before one is made
    payload = torch.load(path, weights_only=False)
    payload["metadata"]["search"] = {"beam": 10**6, "branch": 10**6, "segment": 1}
    torch.save(payload, tmp_path / "huge.pt")
    with pytest.raises(CheckpointError, match="beam x branch must be at most 1024 boards"):
        LearnedGenerator.load(tmp_path / "huge.pt")
    # a truncated state dict is refused in one line, naming the file
    payload = torch.load(path, weights_only=False)
    payload["model"] = {k: v for k, v in payload["model"].items() if not k.startswith("value.")}
    torch.save(payload, tmp_path / "broken.pt")
    with pytest.raises(CheckpointError, match="not a searching starship generator"):
        LearnedGenerator.load(tmp_path / "broken.pt")


def test_one_branch_of_width_one_is_the_policy_drawing_alone():
    """beam 1, branch 1: no choice is made, so the search's ship is the policy's own draw from
    the same stream."""
    net, env = _policy()
    value = value_layers(num_value_inputs(env.observation_space.shape), [8])
    ship, _ = SearchGenerator(net, value, SMALL, 1, 2, {}, beam=1, branch=1, segment=7).generate(2)
    b = Branches(net, SMALL, 1, 2, 1)
    b.reset(2)
    from tablegym.models.starship.learned import sample_stream

    b.advance(b.max_steps, sample_stream(2))
    assert (b.ship(0).tiles == ship.tiles).all()


def test_the_value_trainer_records_fits_and_writes_a_searching_generator(tmp_path, capsys):
    net, _ = _policy()
    policy = save_policy(net, SMALL, tmp_path / "policy.pt", radius=1, pool=2, metadata={"decode": "sample"})
    out = tmp_path / "search.pt"
    argv = ["--policy", str(policy), "--seeds", "2", "--boards", "2", "--segment", str(SIDE), "--epochs", "2"]
    argv += ["--workers", "1", "--data", str(tmp_path / "v.npz"), "--out", str(out)]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("recorded ") and lines[-1].startswith("epoch 2:")
    gen = LearnedGenerator.load(out)
    assert isinstance(gen, SearchGenerator) and gen.metadata["value_seeds"] == [20000, 20001]
    data = np.load(tmp_path / "v.npz")
    assert data["x"].shape == (2 * 2 * (2 * SIDE - 1), num_value_inputs((17, SIDE, SIDE)))
    assert ((data["y"] >= 0) & (data["y"] <= 1)).all()


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--policy", "missing.pt"], "--policy: checkpoint 'missing.pt' does not exist"),
        (["--policy", "p.pt", "--boards", "0"], "--boards must be at least 1"),
        (["--policy", "p.pt", "--seeds", "1"], "--seeds must be at least 2"),
        (["--policy", "p.pt", "--lr", "0"], "--lr must be positive"),
        (["--policy", "p.pt", "--beam", "64", "--branch", "64"], "must be at most 1024 boards, got 4096"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(argv, words, capsys, tmp_path):
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--data", str(tmp_path / "d.npz"), "--out", str(tmp_path / "g.pt")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and words in err.splitlines()[-1]
    assert not (tmp_path / "d.npz").exists()


def test_without_a_value_network_the_branches_are_drawn_whole_and_the_best_finished_ship_wins(tmp_path):
    """value=None: ``branch`` ships drawn side by side from the seed's stream, no choice before
    the end; the ship is the best of them by the exact score, and the file keeps no value network."""
    net, _ = _policy()
    gen = SearchGenerator(net, None, SMALL, 1, 2, {}, beam=1, branch=3, segment=5)
    ship, info = gen.generate(4)
    b = Branches(net, SMALL, 1, 2, 3)
    b.reset(4)
    from tablegym.models.starship.learned import sample_stream

    b.advance(b.max_steps, sample_stream(4))
    drawn = [score(b.ship(i)) for i in range(3)]
    assert info["scores"] == drawn and info["score"] == max(drawn)
    loaded = LearnedGenerator.load(gen.save(tmp_path / "best_of.pt"))
    assert loaded.value is None and (loaded.generate(4)[0].tiles == ship.tiles).all()
    with pytest.raises(ValueError, match="beam must be 1"):
        SearchGenerator(net, None, SMALL, 1, 2, {}, beam=2, branch=3)


def test_the_shipped_searching_generator_builds_a_valid_ship_from_the_command_line(tmp_path, capsys):
    """``tablegym starship --generator learned --checkpoint models/checkpoints/starship_search.pt``:
    the shipped policy's 16 draws, the best kept; valid, and the same ship as the Python call."""
    from tablegym.experiments.cli import main as cli
    from tablegym.models.starship.search import CHECKPOINT

    gen = LearnedGenerator.load(CHECKPOINT)
    assert isinstance(gen, SearchGenerator) and gen.value is None and (gen.beam, gen.branch) == (1, 16)
    ship, info = gen.generate(7)
    assert validate(ship).ok and info["score"] == max(info["scores"])
    png = tmp_path / "ship.png"
    assert (
        cli(["starship", "--generator", "learned", "--checkpoint", str(CHECKPOINT), "--seed", "7", "--out", str(png), "--quiet"])
        == 0
    )
    assert png.read_bytes()[:4] == b"\x89PNG" and capsys.readouterr().out.startswith(f"seed 7: {validate(ship)}")


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--checkpoint", "missing.pt"], "checkpoint 'missing.pt' does not exist"),
        (["--checkpoint", "g.pt", "--seeds", "12"], "--seeds takes first:stop, got '12'"),
        (["--checkpoint", "g.pt", "--seeds", "5:5"], "--seeds must be first:stop with 0 <= first < stop"),
        (["--checkpoint", "g.pt", "--branch", "0"], "--branch must be at least 1"),
    ],
)
def test_the_tuning_experiment_refuses_bad_arguments_in_one_line(argv, words, capsys):
    from tablegym.experiments.starship.search_tuning import main as tuning

    with pytest.raises(SystemExit) as stop:
        tuning(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and words in err.splitlines()[-1]


def test_the_tuning_experiment_reports_a_row_and_the_rules_selection_picks_by_rules(tmp_path, capsys):
    """A plain policy searched without a value network on two small seeds: the row counts them,
    and ``--select rules`` keeps a ship passing at least as many rules as the score's choice."""
    from tablegym.experiments.starship.search_tuning import main as tuning

    net, _ = _policy()
    policy = save_policy(net, SMALL, tmp_path / "p.pt", radius=1, pool=2, metadata={"decode": "sample"})
    row = tuning(["--checkpoint", str(policy), "--branch", "3", "--seeds", "4:6"])
    assert "beam 1 x branch 3, drawn whole, select score | " in row and capsys.readouterr().out.count("\n") >= 4
    by_rules = tuning(["--checkpoint", str(policy), "--branch", "3", "--seeds", "4:6", "--select", "rules"])
    assert float(by_rules.split("|")[4]) >= float(row.split("|")[4])
