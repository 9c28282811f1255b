"""Smoke tests of the starship PPO experiment (experiments/starship/rl.py): a 128-step training on a
16 x 16 grid with 64-step episodes, four evaluation seeds per row."""

from __future__ import annotations

import json
import warnings

import gymnasium
import numpy as np
import pytest
import torch

pytest.importorskip("stable_baselines3")

from tablegym.envs.starship.env import OBS_CHANNELS  # noqa: E402
from tablegym.envs.starship.pipeline import Pipeline  # noqa: E402
from tablegym.experiments.starship import rl as starship_rl  # noqa: E402

TINY = [
    "--timesteps",
    "128",
    "--n-envs",
    "2",
    "--n-steps",
    "64",
    "--batch-size",
    "64",
    "--n-epochs",
    "1",
    "--size",
    "16",
    "--max-steps",
    "64",
    "--episodes",
    "4",
    "--seed",
    "0",
    "--no-progress",
]


def run_main(argv: list[str]) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3's notes about CPU/GPU
        return starship_rl.main(argv)


def table_rows(text: str) -> dict[str, list[str]]:
    """The results table's data rows by row name: their cells."""
    rows = {}
    for line in text.splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows[cells[0].strip("`")] = cells
    return rows


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """One tiny run of the command line: train, evaluate every row, write the table and pictures."""
    root = tmp_path_factory.mktemp("starship-rl")
    run_dir, out = root / "run", root / "results" / "starship_rl.md"
    text = run_main([*TINY, "--run-dir", str(run_dir), "--out", str(out)])
    return run_dir, out, text


def test_writes_the_table_with_four_rows_and_one_picture_each(tiny_run):
    _, out, text = tiny_run
    assert out.read_text() == text
    rows = table_rows(text)
    assert list(rows) == ["ppo", "staged", "random", "start"]
    assert all(cells[2] == "4" for cells in rows.values())  # episodes
    assert "for a budget of 128 env steps:" in text and "seeds 10000..10003" in text
    for row in rows:
        png = out.parent / f"starship_rl_{row}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png


def test_the_side_by_side_picture_shows_every_row_on_the_pictured_seeds(tiny_run):
    from tablegym.envs.starship.render import draw_ships

    run_dir, out, text = tiny_run
    png = out.parent / "starship_rl_seeds.png"
    assert f"[{png.name}]({png.name})" in text and "seeds 10000..10003" in text
    records = [json.loads(line) for line in (run_dir / "eval_episodes.jsonl").read_text().splitlines()]
    assert sorted((r["row"], r["seed"]) for r in records if "ship" in r) == sorted(
        (row, s) for row in starship_rl.ROWS for s in range(10_000, 10_004)
    )
    titled = [(str(i), starship_rl.ship_of(r)) for i, r in enumerate(records) if "ship" in r]
    width = draw_ships(titled, cell=6, columns=4).shape[1]  # 4 columns of ships, one per seed
    header = np.frombuffer(png.read_bytes()[16:24], ">u4")
    assert header[0] == width and header[1] > 4 * 16 * 6  # four rows of 16 x 16 tiles


def test_staged_generator_row_is_all_valid(tiny_run):
    _, _, text = tiny_run
    staged = table_rows(text)["staged"]
    assert staged[3] == "4/4" and staged[4].startswith("1.000 [")
    assert table_rows(text)["start"][3] == "0/4"  # the partial ship has no thruster yet


def test_training_saves_the_model_its_budget_and_tensorboard_charts(tiny_run):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run_dir, _, _ = tiny_run
    meta = json.loads((run_dir / "train.json").read_text())
    assert (run_dir / "model.zip").exists()
    assert meta["timesteps"] == 128 and meta["train_seconds"] >= 0 and meta["env_kwargs"]["size"] == 16
    events = EventAccumulator(str(run_dir / "ppo_1"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {
        "charts/episodic_return",
        "charts/episode_quality",
        "charts/SPS",
        "losses/value_loss",
        "losses/policy_loss",
        "losses/entropy",
    } <= tags


def test_eval_only_loads_the_model_and_reuses_the_recorded_episodes(tiny_run, capsys):
    run_dir, out, text = tiny_run
    episodes = (run_dir / "eval_episodes.jsonl").read_text()
    argv = [a for a in TINY if a not in ("--timesteps", "128")]
    again = run_main([*argv, "--eval-only", "--run-dir", str(run_dir), "--out", str(out)])
    assert (run_dir / "eval_episodes.jsonl").read_text() == episodes  # nothing replayed
    assert table_rows(again) == table_rows(text)
    assert "evaluated" not in capsys.readouterr().out


def test_partial_start_is_the_staged_generators_ship_after_stage_6():
    env = gymnasium.make(starship_rl.MAKE_ID, size=16)
    for seed in (10_000, 10_001):
        env.reset(seed=seed)
        assert env.unwrapped.ship == Pipeline(size=16).generate(seed, until=6)


def test_cursor_view_crops_the_tiles_around_the_cursor():
    space = gymnasium.spaces.Box(0, 1, (OBS_CHANNELS, 8, 8), np.uint8)
    view = starship_rl.CursorView(space, radius=2)
    obs = torch.rand(2, OBS_CHANNELS, 8, 8)
    obs[:, -1] = 0
    obs[0, -1, 0, 7] = 1  # cursor in the top-right corner
    obs[1, -1, 4, 3] = 1
    crop = view.crop(obs)
    assert crop.shape == (2, OBS_CHANNELS, 5, 5)
    torch.testing.assert_close(crop[0, :, 2:, :3], obs[0, :, 0:3, 5:8])  # rows -2, -1 and columns 8, 9: off the grid
    assert not crop[0, :, :2].any() and not crop[0, :, :, 3:].any()
    torch.testing.assert_close(crop[1], obs[1, :, 2:7, 1:6])
    obs[:, -1] = 0  # no cursor ("wide"): no crop
    assert not view.crop(obs).any()
    assert view(obs).shape == (2, 256)


def test_the_exported_generator_plays_the_masked_policy_with_float16_weights(tmp_path, capsys):
    """``learned.export`` keeps the policy's layers in float16; the generator then takes exactly
    MaskablePPO's deterministic masked actions (with the same weights rounded to float16), and
    the command line builds a ship from it; a foreign or damaged file is one line."""
    from tablegym.experiments.cli import main
    from tablegym.models.checkpoint import CheckpointError
    from tablegym.models.starship.learned import LearnedGenerator, export

    args = starship_rl.parse_args(
        [
            "--size",
            "16",
            "--max-steps",
            "64",
            "--masks",
            "build",
            "--reward",
            "gated",
            "--n-steps",
            "32",
            "--batch-size",
            "32",
            "--n-envs",
            "1",
        ]
    )
    env = gymnasium.make(starship_rl.MAKE_ID, **starship_rl.env_kwargs(args))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = starship_rl.build_model(env, args)
        model.learn(64)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.copy_(p.half().float())
    path = export(model, starship_rl.env_kwargs(args), tmp_path / "gen.pt", radius=args.crop_radius)
    gen = LearnedGenerator.load(path)
    assert gen.env_kwargs == {
        "representation": "narrow",
        "start": "partial",
        "size": 16,
        "max_steps": 64,
        "reward": "gated",
        "masks": "build",
    }
    obs, _ = gen.env.reset(seed=3)
    for _ in range(40):
        mask = gen.env.action_masks()
        want, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert gen.act(obs, mask) == int(want)
        obs, *_ = gen.env.step(int(want))
    ship, info = gen.generate(4)
    assert ship == gen.env.ship and info["steps"] == 64  # the env's end: truncated at max_steps (not valid yet)

    png = tmp_path / "ship.png"
    assert (
        main(["starship", "--generator", "learned", "--checkpoint", str(path), "--seed", "4", "--out", str(png), "--quiet"]) == 0
    )
    assert png.read_bytes()[:4] == b"\x89PNG" and "seed 4: " in capsys.readouterr().out
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="corrupt or not a torch file"):
        LearnedGenerator.load(bad)
    assert main(["starship", "--generator", "learned", "--checkpoint", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "corrupt" in err


def test_resume_trains_the_saved_model_further(tmp_path):
    run_dir = tmp_path / "run"
    common = [
        *[a for a in TINY if a not in ("--episodes", "4")],
        "--episodes",
        "1",
        "--pictures",
        "1",
        "--masks",
        "build",
        "--run-dir",
        str(run_dir),
        "--out",
        str(tmp_path / "r.md"),
    ]
    run_main(common)
    first = json.loads((run_dir / "train.json").read_text())
    run_main([*common, "--resume"])
    meta = json.loads((run_dir / "train.json").read_text())
    assert (first["timesteps"], meta["timesteps"], meta["budget"]) == (128, 256, 256)
    assert meta["train_seconds"] > first["train_seconds"]
    with pytest.raises(SystemExit):
        starship_rl.parse_args(["--resume", "--run-dir", str(tmp_path / "nothing")])

    # --init-from: a new run (other masks) that starts from those weights, its steps counted from 0
    other = tmp_path / "other"
    run_main(
        [
            *common[:-4],
            "--masks",
            "safe",
            "--init-from",
            str(run_dir / "model.zip"),
            "--run-dir",
            str(other),
            "--out",
            str(tmp_path / "o.md"),
        ]
    )
    meta = json.loads((other / "train.json").read_text())
    assert (meta["timesteps"], meta["init_from"], meta["env_kwargs"]["masks"]) == (128, str(run_dir / "model.zip"), "safe")
    with pytest.raises(SystemExit):
        starship_rl.parse_args(["--init-from", str(tmp_path / "missing.zip")])
    with pytest.raises(SystemExit, match="cannot continue .* as PPO"):  # a masked model, no masks asked
        run_main(
            [
                *common[:-6],
                "--init-from",
                str(run_dir / "model.zip"),
                "--run-dir",
                str(tmp_path / "x"),
                "--out",
                str(tmp_path / "x.md"),
            ]
        )


def test_the_shipped_generator_builds_a_ship_from_the_command_line(tmp_path, capsys):
    """The shipped generator (models/checkpoints/starship_imitated.pt) and the PPO one beside it
    (starship.pt) load (float16 layers, the env each was trained in), and ``tablegym starship
    --generator learned`` draws the ship the shipped one builds, the same every time."""
    from tablegym.envs.starship.quality import validate
    from tablegym.experiments.cli import main
    from tablegym.models.starship.learned import CHECKPOINT, PPO_CHECKPOINT, LearnedGenerator

    ppo = LearnedGenerator.load(PPO_CHECKPOINT)
    assert PPO_CHECKPOINT.stat().st_size < 4_000_000 and ppo.env_kwargs["masks"] == "safe"
    gen = LearnedGenerator.load()
    assert CHECKPOINT.stat().st_size < 8_000_000 and gen.env_kwargs["masks"] == "safe"
    assert gen.metadata["decode"] == "sample" and gen.metadata["imitated"] == "staged"
    ship, info = gen.generate(7)
    assert ship == gen.generate(7)[0] and info["valid"] == validate(ship).ok
    png = tmp_path / "ship.png"
    assert main(["starship", "--generator", "learned", "--seed", "7", "--out", str(png), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert png.read_bytes()[:4] == b"\x89PNG" and out.startswith(f"seed 7: {validate(ship)}")


def test_python_dash_m_trains_and_evaluates_the_model_it_saved(tmp_path):
    """``python -m tablegym.experiments.starship.rl`` (the Makefile's route): the model it saves names
    its network class by module, so the safe loader reads it back for the evaluation (run as
    ``__main__`` the class was pickled as code and refused after training)."""
    import subprocess
    import sys

    tiny = [a if a != "4" else "1" for a in TINY]  # one evaluation episode a row
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tablegym.experiments.starship.rl",
            *tiny,
            "--run-dir",
            str(tmp_path / "run"),
            "--out",
            str(tmp_path / "r.md"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert (tmp_path / "run" / "generator.pt").is_file() and (tmp_path / "r.md").is_file()
