"""SB3 training with its progress bar on: tablegym draws it with tqdm (SB3's own bar needs rich,
which tablegym does not install, and raised ImportError before the first step)."""

from __future__ import annotations

import json
import warnings

import gymnasium
import pytest

import tablegym.envs  # noqa: F401  (registers the env ids)
from tablegym.training.sb3 import learn_and_save, progress_callbacks


def test_learn_and_save_with_the_progress_bar_trains_and_draws_it(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    env = gymnasium.make("tablegym/TrilobiteTiny-v0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    meta = learn_and_save(model, timesteps=64, run_dir=str(tmp_path), tb_log_name="ppo", progress=True)
    assert meta["timesteps"] == 64 and json.loads((tmp_path / "train.json").read_text())["timesteps"] == 64
    assert "64/64" in capsys.readouterr().err  # tqdm's bar reached the budget


def test_no_progress_adds_no_callback():
    assert progress_callbacks(False) == []


@pytest.mark.parametrize("tensorboard", [False, True])
def test_a_model_without_a_tensorboard_folder_leaves_no_folder_behind(tmp_path, monkeypatch, tensorboard):
    """SB3 gives a model without ``tensorboard_log`` a new empty SB3-<time> folder in the temp
    directory at every ``learn``; the models tablegym builds get a logger that writes nothing
    instead, and a model with a TensorBoard folder keeps its log there."""
    import tempfile

    from tablegym.experiments.rl_bench import sb3_model
    from tablegym.training.sb3 import build_model

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.delenv("SB3_LOGDIR", raising=False)
    logs = str(tmp_path / "tb") if tensorboard else None
    models = [
        build_model("maskableppo", gymnasium.make("tablegym/TrilobiteTiny-v0", opponent="random"), seed=0, tensorboard_log=logs)
    ]
    if not tensorboard:
        models.append(sb3_model("tablegym/TrilobiteTiny-v0", 4, 16, 2, (16,), single=False))
    for model in models:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.learn(total_timesteps=64)
    assert list((tmp_path / "tmp").iterdir()) == []
    assert (tmp_path / "tb").is_dir() == tensorboard  # the TensorBoard run went where it was asked
