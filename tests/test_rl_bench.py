"""``tablegym bench rl``: tablegym's PPO and sb3-contrib's MaskablePPO on the same vector env, rows
with rates and ratios, through the CLI; bad sizes are one line."""

from __future__ import annotations

import math

import pytest

from tablegym.experiments.cli import main as cli
from tablegym.experiments.rl_bench import bench_rl

TINY = dict(steps=256, warmup=0, num_envs=8, num_steps=8, single_steps=64, hidden="8")


def test_every_trainer_gets_a_rate_and_a_ratio_against_tablegym_ppo():
    rows = bench_rl("trilobite-tiny", **TINY)
    assert list(rows) == ["trilobite-tiny tablegym ppo", "trilobite-tiny sb3 vec", "trilobite-tiny sb3 single"]
    for name, cells in rows.items():
        assert cells["steps/s"] > 0 and math.isfinite(cells["steps/s"])
        assert cells["boards"] == (1 if name.endswith("single") else 8)
    assert rows["trilobite-tiny tablegym ppo"]["tablegym ppo / this"] == 1.0
    ours = rows["trilobite-tiny tablegym ppo"]["steps/s"]
    assert rows["trilobite-tiny sb3 vec"]["tablegym ppo / this"] == pytest.approx(
        ours / rows["trilobite-tiny sb3 vec"]["steps/s"]
    )


def test_a_single_player_game_and_the_cli_route(capsys):
    assert (
        cli(
            [
                "bench",
                "rl",
                "--param",
                "game=threes",
                "--param",
                "steps=128",
                "--param",
                "warmup=0",
                "--param",
                "num_envs=4",
                "--param",
                "num_steps=8",
                "--param",
                "single_steps=0",
                "--param",
                "hidden=8",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "threes tablegym ppo" in out and "threes sb3 vec" in out and "sb3 single" not in out


@pytest.mark.parametrize("bad", [{"steps": 0}, {"hidden": "a,b"}, {"game": "chess"}])
def test_bad_sizes_are_one_line(bad, capsys):
    params = {**TINY, "game": "trilobite-tiny", **bad}
    argv = ["bench", "rl"] + [x for k, v in params.items() for x in ("--param", f"{k}={v}")]
    with pytest.raises(SystemExit) as exit_info:
        cli(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tablegym bench: error: bench rl: "), err
