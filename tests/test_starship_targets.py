"""Starship with targets (envs/starship/conditioned.py) and the targets report (targets_eval.py)."""

from __future__ import annotations

import json
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from tablegym.envs.starship.conditioned import TARGETS, TargetStarshipEnv, closeness, measures
from tablegym.envs.starship.env import Brush, StarshipEnv, apply_edit
from tablegym.envs.starship.pipeline import Pipeline
from tablegym.envs.starship.quality import quality
from tablegym.envs.starship.ship import BACKWARD, FORWARD, PORT, THRUSTER, WEAPON

KW = dict(size=16, masks="build", reward="gated", max_steps=96)


def test_measures_count_part_points():
    ship = Pipeline(size=16).generate(0, until=6)
    assert measures(ship, 0.0) == {"thrust_points": 0.0, "weapon_points": 0.0, "forward_firepower": 0.0}
    edits = [
        (Brush(THRUSTER, 2, BACKWARD), 4),
        (Brush(THRUSTER, 1, BACKWARD), 2),
        (Brush(WEAPON, 1, FORWARD), 4),
        (Brush(WEAPON, 0, PORT), 1),
    ]
    want = {THRUSTER: 0, WEAPON: 0}
    for brush, pts in edits:  # each part at the first place it fits, scanning the grid
        for y in range(16):
            if any(apply_edit(ship, brush, y, x) for x in range(16)):
                want[brush.kind] += pts
                break
    got = measures(ship, quality(ship).raw["forward_firepower"])
    assert (got["thrust_points"], got["weapon_points"]) == (want[THRUSTER], want[WEAPON]) == (6, 5)
    assert got["forward_firepower"] == quality(ship).raw["forward_firepower"]
    assert closeness(got, got) == 1.0
    far = {k: float(hi) if got[k] < hi / 2 else 0.0 for k, (_, hi) in TARGETS.items()}
    assert 0.0 <= closeness(got, far) < 0.6


def test_targets_are_drawn_per_seed_and_the_reward_adds_the_change_of_closeness():
    env = TargetStarshipEnv(**KW)
    check_env(env, skip_render_check=True)
    base = StarshipEnv(**KW)
    drawn = []
    for seed in (3, 4):
        obs, info = env.reset(seed=seed)
        base.reset(seed=seed)
        assert env.reset(seed=seed)[1]["targets"] == info["targets"]  # the seed fixes them
        drawn.append(info["targets"])
        for k, (lo, hi) in TARGETS.items():
            assert lo <= info["targets"][k] <= hi and info["targets"][k] == int(info["targets"][k])
        assert np.allclose(obs["targets"], [info["targets"][k] / TARGETS[k][1] for k in TARGETS])
        rng = np.random.default_rng(seed)
        before = 0.0
        for _ in range(96):
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            obs, reward, term, trunc, info = env.step(action)
            grid, base_reward, *_ = base.step(action)
            assert np.array_equal(obs["grid"], grid)
            ship = base.ship
            now = closeness(measures(ship, quality(ship).raw["forward_firepower"]), info["targets"]) if base.validity.ok else 0.0
            assert reward == pytest.approx(base_reward + now - before, abs=1e-12)
            before = now
            got = measures(ship, quality(ship).raw["forward_firepower"])
            want = [np.clip((info["targets"][k] - got[k]) / hi, -1, 1) for k, (_, hi) in TARGETS.items()]
            assert np.allclose(obs["deficits"], want) and obs in env.observation_space
            if term or trunc:
                break
    assert drawn[0] != drawn[1]
    asked = {"thrust_points": 12, "weapon_points": 8, "forward_firepower": 4}
    assert env.reset(seed=5, options={"targets": asked})[1]["targets"] == asked
    with pytest.raises(ValueError, match="target weapon_points must be in 4..24"):
        env.reset(seed=5, options={"targets": {"weapon_points": 40}})
    with pytest.raises(ValueError, match="unknown targets"):
        env.reset(seed=5, options={"targets": {"size": 10}})


def test_a_conditioned_generator_is_asked_for_targets_and_the_report_compares_it(tmp_path):
    pytest.importorskip("sb3_contrib")
    from tablegym.experiments.starship import rl as starship_rl
    from tablegym.experiments.starship import targets_eval
    from tablegym.models.checkpoint import CheckpointError
    from tablegym.models.starship.learned import LearnedGenerator, export

    args = starship_rl.parse_args(
        ["--size", "16", "--max-steps", "96", "--masks", "build", "--reward", "gated", "--targets", "--n-envs", "1"]
    )
    env = starship_rl.make_env(starship_rl.env_kwargs(args), targets=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = starship_rl.build_model(env, args)
    path = export(model, starship_rl.env_kwargs(args), tmp_path / "gen.pt", radius=args.crop_radius, targets=True)
    gen = LearnedGenerator.load(path)
    asked = {"thrust_points": 10, "weapon_points": 6, "forward_firepower": 2}
    ship, info = gen.generate(2, asked)
    assert info["targets"] == asked and ship == gen.env.ship
    plain = export(model, starship_rl.env_kwargs(args), tmp_path / "plain.pt", radius=args.crop_radius)
    # the first layer expects the targets: a plain export does not load
    with pytest.raises(CheckpointError, match="does not match its network description"):
        LearnedGenerator.load(plain)

    out = tmp_path / "targets.md"
    argv = ["--checkpoint", str(path), "--episodes", "3", "--out", str(out), "--no-progress"]
    text = targets_eval.main(argv)
    rows = [line for line in text.splitlines() if line.startswith(("| learned", "| staged"))]
    assert len(rows) == 3 and out.read_text() == text
    journal = out.with_suffix(".jsonl").read_text()
    assert journal.count("\n") == 9
    # every ship carries quality v2 = quality x share of the audit's layout rules passed
    from tablegym.envs.starship.layout import RULES

    for record in map(json.loads, journal.splitlines()):
        assert 0 <= record["rules"] <= len(RULES)
        assert record["quality_v2"] == pytest.approx(record["quality"] * record["rules"] / len(RULES))
    targets_eval.main(argv)
    assert out.with_suffix(".jsonl").read_text() == journal  # resumed: nothing built again
    with pytest.raises(SystemExit):
        targets_eval.main(["--checkpoint", str(tmp_path / "missing.pt"), "--out", str(out)])


def _tiny_args(*extra: str):
    from tablegym.experiments.starship import rl as starship_rl

    return starship_rl.parse_args(
        [
            "--size",
            "16",
            "--max-steps",
            "96",
            "--masks",
            "safe",
            "--reward",
            "gated",
            "--n-envs",
            "1",
            "--n-steps",
            "64",
            "--batch-size",
            "64",
            *extra,
        ]
    )


def test_a_targets_policy_started_from_a_generator_acts_as_it_did(tmp_path):
    """--init-from GENERATOR.pt: the new inputs (targets, deficits) start with zero weights, so
    the conditioned policy plays the plain generator's moves until training moves it."""
    pytest.importorskip("sb3_contrib")
    from tablegym.experiments.starship import rl as starship_rl
    from tablegym.models.starship.learned import LearnedGenerator, export

    plain_args, args = _tiny_args(), _tiny_args("--targets")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = starship_rl.build_model(starship_rl.make_env(starship_rl.env_kwargs(plain_args)), plain_args)
        model = starship_rl.build_model(starship_rl.make_env(starship_rl.env_kwargs(args), targets=True), args)
    path = export(plain, starship_rl.env_kwargs(plain_args), tmp_path / "gen.pt", radius=4)
    starship_rl.load_generator_policy(model, path)
    gen = LearnedGenerator.load(path)
    env = TargetStarshipEnv(**starship_rl.env_kwargs(args))
    obs, _ = env.reset(seed=1)
    grid, _ = gen.env.reset(seed=1)
    moved = 0
    for _ in range(96):
        ours, _ = model.predict(obs, deterministic=True, action_masks=env.action_masks())
        theirs = gen.act(grid, gen.env.action_masks())
        assert int(ours) == theirs
        obs, _, term, trunc, _ = env.step(theirs)
        grid, *_ = gen.env.step(theirs)
        moved += 1
        if term or trunc:
            break
    assert moved > 10
    wrong = export(model, starship_rl.env_kwargs(args), tmp_path / "wide.pt", radius=4, targets=True)
    with pytest.raises(ValueError, match="layer 0 is"):  # more inputs than this plain policy has
        starship_rl.load_generator_policy(plain, wrong)


def test_value_warmup_trains_the_value_head_and_leaves_the_policy():
    pytest.importorskip("sb3_contrib")
    import torch

    from tablegym.experiments.starship import rl as starship_rl

    args = _tiny_args("--targets", "--timesteps", "128", "--value-warmup", "64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = starship_rl.build_model(starship_rl.make_env(starship_rl.env_kwargs(args), targets=True), args)
    policy = model.policy
    before = {k: v.clone() for k, v in policy.state_dict().items()}
    starship_rl.train_policy(model, False)
    model.learn(64)
    after = policy.state_dict()
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert changed and all(k.startswith(("mlp_extractor.value_net", "value_net")) for k in changed)
    starship_rl.train_policy(model, True)
    model.learn(64)
    assert not torch.equal(before["action_net.weight"], policy.state_dict()["action_net.weight"])


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--timesteps", "100", "--value-warmup", "100"], "--value-warmup must be in 0..99"),
        (["--target-weight", "2"], "--target-weight must be >= 0 and goes with --targets"),
        (["--targets", "--target-weight", "-1"], "--target-weight must be >= 0"),
    ],
)
def test_bad_warmup_or_target_weight_is_one_line(argv, message, capsys):
    from tablegym.experiments.starship import rl as starship_rl

    with pytest.raises(SystemExit):
        starship_rl.parse_args(argv)
    assert message in capsys.readouterr().err


def test_caps_keep_thrust_and_weapon_points_within_their_targets():
    env = TargetStarshipEnv(caps=True, **KW)
    plain = TargetStarshipEnv(**KW)
    forbidden = 0
    for seed in range(4):
        obs, info = env.reset(seed=seed, options={"targets": {"thrust_points": 9, "weapon_points": 5, "forward_firepower": 2}})
        plain.reset(seed=seed, options={"targets": info["targets"]})
        rng = np.random.default_rng(seed)
        for _ in range(96):
            mask, wider = env.action_masks(), plain.action_masks()
            assert not (mask & ~wider).any()  # caps only take actions away
            forbidden += int((wider & ~mask).sum())
            action = int(rng.choice(np.flatnonzero(mask)))
            obs, _, term, trunc, info = env.step(action)
            plain.step(action)
            got = info["measures"]
            assert got["thrust_points"] <= 9 and got["weapon_points"] <= 5
            if term or trunc:
                break
    assert forbidden > 0
    with pytest.raises(ValueError, match="caps=True needs action masks"):
        TargetStarshipEnv(caps=True, size=16)


@pytest.mark.parametrize("vector", [False, True])
@pytest.mark.parametrize(
    "bad, message",
    [
        ([1, 2], r"options\['targets'\] must be a dict of target -> number"),
        (5, r"options\['targets'\] must be a dict of target -> number"),
        ({"thrust_points": "x"}, "target thrust_points must be in 8..40, got 'x'"),
        ({"thrust_points": True}, "target thrust_points must be in 8..40, got True"),
        ({"thrust_points": float("nan")}, "target thrust_points must be in 8..40, got nan"),
        ({3: 10}, r"unknown targets \['3'\]"),
    ],
)
def test_malformed_targets_are_refused_in_one_line_by_both_envs(vector, bad, message):
    """The single env and the compiled vector env check ``options["targets"]`` alike (one check)."""
    env = (
        gymnasium.make_vec("tablegym/StarshipTargets-v0", num_envs=2, size=12)
        if vector
        else gymnasium.make("tablegym/StarshipTargets-v0", size=12)
    )
    with pytest.raises(ValueError, match=message):
        env.reset(seed=0, options={"targets": bad})
    _, info = env.reset(seed=0, options={"targets": {"thrust_points": np.int64(20)}})
    assert np.all(np.asarray(info["targets"]["thrust_points"]) == 20.0)
