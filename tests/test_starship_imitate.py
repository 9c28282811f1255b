"""The staged generator's edits as demonstrations, and the generator fitted to them."""

from __future__ import annotations

import numpy as np
import pytest

from tablegym.envs.starship.env import BRUSHES, StarshipEnv
from tablegym.envs.starship.pipeline import Pipeline
from tablegym.envs.starship.quality import validate
from tablegym.envs.starship.ship import ARMOR, CORRIDOR, FIRST_PART
from tablegym.models.starship.learned import CHECKPOINT, LearnedGenerator
from tablegym.training.starship.imitate import ENV_KWARGS, FIRST_SEED, demonstrate, editing_env, main, teacher_action


@pytest.mark.parametrize("seed", [0, 7, FIRST_SEED])
def test_the_teacher_builds_the_staged_ship_and_no_edit_of_it_is_masked(seed):
    obs, masks, actions, ship = demonstrate(seed, editing_env(3))
    assert (demonstrate(seed)[2] == actions[: 2 * 32 * 32]).all()  # the shipped env: the first two passes
    staged = Pipeline().generate(seed)
    differ = ship.tiles != staged.tiles  # only where the fill pass armoured a corridor the staged fill left open
    assert ((staged.tiles[differ] == CORRIDOR) & (ship.tiles[differ] == ARMOR)).all() and differ.sum() <= 2
    assert ((ship.part >= 0) == (staged.part >= 0)).all()
    assert sorted(map(tuple, ship.parts.tolist())) == sorted(map(tuple, staged.parts.tolist()))  # (stamped in another order)
    assert masks[np.arange(len(actions)), actions].all()  # every teacher edit is allowed under masks="safe"
    steps = 32 * 32
    assert len(actions) == 3 * steps and ENV_KWARGS["max_steps"] == 2 * steps
    kinds = np.array([BRUSHES[a - 1].kind if a else -1 for a in actions])
    parts, tiles, fill = kinds[:steps], kinds[steps : 2 * steps], kinds[2 * steps :]
    assert (parts >= FIRST_PART).sum() > 0 and not ((parts >= 0) & (parts < FIRST_PART)).any()  # parts first,
    assert (tiles >= 0).sum() > 0 and not (tiles >= FIRST_PART).any()  # then tiles,
    assert set(fill.tolist()) <= {-1, ARMOR}  # then armour only
    assert obs.shape == (len(actions), (17 * 32 * 32 + 7) // 8)


def test_the_fill_pass_on_a_drawn_ship_armours_only_corridor_no_path_needs():
    """The third pass recorded on a policy's ship (what the fit learns the fill from): the first
    two passes drawn by the policy and not recorded, then armour only on corridor tiles that
    were open (no crew path needs them), so the ship keeps every part reachable and ends with
    no more open corridor than it had."""
    import torch

    from tablegym.envs.starship.layout import audit
    from tablegym.models.starship.learned import policy_inputs, policy_layers

    side = 16  # (a smaller grid: the policy's passes are torch forward passes, one a step)
    kwargs = {**editing_env(3), "size": side, "max_steps": 3 * side * side}
    env = StarshipEnv(**kwargs)
    obs, _ = env.reset(seed=11)
    n_in = policy_inputs(torch.as_tensor(obs[None], dtype=torch.float32), 1, 2).shape[1]
    torch.manual_seed(1)
    policy = LearnedGenerator(
        policy_layers(n_in, [8], env.action_space.n), kwargs, radius=1, pool=2, metadata={"decode": "sample"}
    )
    obs, masks, actions, ship = demonstrate(11, kwargs, policy=policy, record_from=2)
    armor = 1 + next(i for i, b in enumerate(BRUSHES) if b.kind == ARMOR)
    assert len(actions) == side * side and set(actions.tolist()) <= {0, armor}
    # the same seed and stream without the fill pass: the policy's ship after its two passes
    _, _, none, drawn = demonstrate(11, {**kwargs, "max_steps": 2 * side * side}, policy=policy, record_from=2)
    assert len(none) == 0
    changed = drawn.tiles != ship.tiles
    assert (drawn.tiles[changed] == CORRIDOR).all() and (ship.tiles[changed] == ARMOR).all()
    assert (actions != 0).sum() == changed.sum() > 0  # (20 tiles on this seed)
    assert audit(ship).stats["open_corridor"] <= audit(drawn).stats["open_corridor"]
    assert validate(ship).ok or not validate(drawn).ok


def test_the_teacher_does_nothing_once_the_ship_is_the_staged_one():
    staged = Pipeline().generate(3)
    H, W = staged.tiles.shape
    assert all(teacher_action(staged, staged, y, x, p) == 0 for y in range(H) for x in range(W) for p in (0, 1))


def test_a_fit_writes_a_generator_that_loads_and_draws_the_same_ship_for_a_seed(tmp_path, capsys):
    out = tmp_path / "gen.pt"
    assert (
        main(
            [
                "--seeds",
                "2",
                "--epochs",
                "2",
                "--hidden",
                "32",
                "--data",
                str(tmp_path / "d.npz"),
                "--out",
                str(out),
                "--passes",
                "3",
                "--rollouts",
                "1",
                "--rollout-epochs",
                "1",
                "--workers",
                "1",
                "--fill-weight",
                "5",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "demonstrations epoch 1",
        "demonstrations epoch 2",
        "fill passes on 1 drawn ships",
        "with fill passes epoch 1",
    ]
    gen = LearnedGenerator.load(out)
    assert gen.metadata["imitated"] == "staged" and gen.metadata["seeds"] == [FIRST_SEED, FIRST_SEED + 1]
    assert gen.metadata["epochs"] == 3 and gen.metadata["rollouts"] == 1
    assert gen.env_kwargs == editing_env(3)
    assert gen.metadata["decode"] == "sample"
    short = LearnedGenerator(gen.net, {**editing_env(3), "max_steps": 96}, gen.radius, gen.pool, gen.metadata)
    ship, info = short.generate(2000)
    assert info["steps"] == 96 and info["valid"] in (True, False)
    assert ship == short.generate(2000)[0]  # drawn from the seed's own stream: the same ship every time
    # the recorded demonstrations are reused: a second fit with the same --data records nothing
    assert (
        main(
            [
                "--seeds",
                "2",
                "--epochs",
                "0",
                "--hidden",
                "32",
                "--data",
                str(tmp_path / "d.npz"),
                "--out",
                str(tmp_path / "again.pt"),
                "--resume",
                str(out),
                "--passes",
                "3",
            ]
        )
        == 0
    )
    again = LearnedGenerator.load(tmp_path / "again.pt")  # --epochs 0: the resumed weights as they were
    assert all((again.net.state_dict()[k] == gen.net.state_dict()[k]).all() for k in gen.net.state_dict())


@pytest.mark.parametrize(
    "argv,words",
    [
        (["--seeds", "1"], "--seeds must be at least 2"),
        (["--epochs", "0"], "--epochs must be at least 1 (0 only with --resume)"),
        (["--rollouts", "5", "--seeds", "4"], "--rollouts must be 0..--seeds (4)"),
        (["--rollouts", "2"], "--rollouts record the fill pass: give --passes 3"),
        (["--fill-weight", "0"], "--fill-weight must be positive, got 0.0"),
        (["--resume", "missing.pt", "--seeds", "2"], "--resume: "),
        (
            ["--resume", str(CHECKPOINT), "--seeds", "2", "--hidden", "8"],
            "a generator of another shape than --hidden 8 --radius 4",
        ),
        (["--hidden", "0"], "--hidden sizes must be at least 1"),
        (["--lr", "-1"], "--lr must be positive"),
        (["--stop-after", "7"], "--stop-after must be 1..--epochs (6), got 7"),
        (["--start", "stage1"], "argument --start: invalid choice: 'stage1'"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(argv, words, capsys, tmp_path):
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--data", str(tmp_path / "d.npz"), "--out", str(tmp_path / "g.pt")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and words in err.splitlines()[-1]
    assert not (tmp_path / "d.npz").exists()  # refused before anything is recorded


def test_a_drawn_action_is_always_an_allowed_one_and_follows_the_policy():
    """``LearnedGenerator.act`` with a stream: never a masked action, and the allowed ones as
    often as their probabilities say (a chi-square-sized tolerance over 2,000 draws)."""
    import torch

    from tablegym.models.starship.learned import policy_inputs, policy_layers

    env = StarshipEnv(**ENV_KWARGS)
    obs, info = env.reset(seed=5)
    n_in = policy_inputs(torch.as_tensor(obs[None], dtype=torch.float32), 1, 2).shape[1]
    torch.manual_seed(0)
    gen = LearnedGenerator(policy_layers(n_in, [8], env.action_space.n), ENV_KWARGS, radius=1, pool=2)
    rng = np.random.default_rng(0)
    mask = np.zeros(env.action_space.n, bool)
    mask[[0, 3, 7, 8]] = True
    draws = np.bincount([gen.act(obs, mask, rng) for _ in range(2000)], minlength=len(mask))
    assert draws[~mask].sum() == 0
    with torch.no_grad():
        logits = gen.net(policy_inputs(torch.as_tensor(obs[None], dtype=torch.float32), 1, 2))[0][mask]
    p = torch.softmax(logits.double(), 0).numpy()
    assert np.abs(draws[mask] / 2000 - p).max() < 4 * np.sqrt(p * (1 - p) / 2000).max() + 1e-3
    assert gen.act(obs, mask) == np.flatnonzero(mask)[int(np.argmax(p))]  # no stream: the highest allowed logit


def test_demonstrations_of_another_number_of_passes_are_refused(tmp_path, capsys):
    from tablegym.training.starship.imitate import record

    np.savez(tmp_path / "d.npz", **record(range(FIRST_SEED, FIRST_SEED + 2), progress=False))  # two passes
    with pytest.raises(SystemExit) as stop:
        main(["--seeds", "2", "--passes", "3", "--data", str(tmp_path / "d.npz"), "--out", str(tmp_path / "g.pt")])
    assert stop.value.code == 2 and "another number of passes than 3" in capsys.readouterr().err
    assert not (tmp_path / "g.pt").exists()


def test_weighted_rows_count_more_in_the_fit():
    """``fit`` with a "weight" column: all ones is the plain fit, and the teacher's edits weighted
    up end with more of the policy's probability on those edits than the plain fit gives them."""
    import torch

    from tablegym.models.starship.learned import num_inputs, policy_layers
    from tablegym.training.starship.imitate import _logits, fit, record

    env = StarshipEnv(**ENV_KWARGS)
    data = record(range(FIRST_SEED, FIRST_SEED + 1), progress=False)
    edits = np.flatnonzero(data["action"] != 0)
    train = np.union1d(np.arange(0, len(data["action"]), 16), edits)
    shape = env.observation_space.shape

    def fitted(weights):
        torch.manual_seed(0)
        net = policy_layers(num_inputs(env.observation_space, 1, 2), [16], int(env.action_space.n))
        fit(
            net,
            data if weights is None else {**data, "weight": weights},
            train,
            shape,
            radius=1,
            pool=2,
            epochs=2,
            batch=32,
            lr=3e-3,
            rng=np.random.default_rng(0),
        )
        return net

    def edit_probability(net):
        with torch.no_grad():
            logits = _logits(net, data, edits, shape, 1, 2)  # the masked logits the fit trains on
            return float(torch.softmax(logits, 1)[torch.arange(len(edits)), data["action"][edits]].mean())

    plain = fitted(None)
    ones = fitted(np.ones(len(data["action"]), np.float32))
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(plain.parameters(), ones.parameters()))
    up = np.ones(len(data["action"]), np.float32)
    up[edits] = 10.0
    assert edit_probability(fitted(up)) > edit_probability(plain) + 0.05


def test_a_fit_from_the_empty_hull_stops_where_asked_and_refuses_demonstrations_from_the_other_start(tmp_path, capsys):
    data, out = str(tmp_path / "d.npz"), tmp_path / "g.pt"
    argv = ["--seeds", "2", "--hidden", "8", "--data", data, "--out", str(out)]
    assert main([*argv, "--start", "empty", "--epochs", "3", "--stop-after", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["demonstrations epoch 1"]
    gen = LearnedGenerator.load(out)
    assert gen.env_kwargs["start"] == "empty" and gen.metadata["epochs"] == 1
    with pytest.raises(SystemExit) as stop:
        main(argv)  # the default start is "partial"
    assert stop.value.code == 2 and "from the empty start, not partial" in capsys.readouterr().err
