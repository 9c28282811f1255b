"""What several env test files share: a small seeded MaskablePPO trained on an env, and the lines a
person types at the terminal, scripted."""

from __future__ import annotations

import builtins
import warnings

import gymnasium
import pytest


def maskable_ppo(env: gymnasium.Env, *, n_steps: int, total_timesteps: int):
    """A MaskablePPO (MLP policy, minibatches of half a rollout, one epoch, seed 0, on the CPU)
    trained on ``env`` for ``total_timesteps`` steps; the test is skipped without sb3-contrib."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3's notes about CPU/GPU and batch size
        model = MaskablePPO("MlpPolicy", env, n_steps=n_steps, batch_size=n_steps // 2, n_epochs=1, seed=0, device="cpu")
        model.learn(total_timesteps=total_timesteps)
    return model


def scripted_input(monkeypatch: pytest.MonkeyPatch, lines) -> None:
    """``input()`` returns the next of ``lines`` whatever the prompt."""
    it = iter(lines)
    monkeypatch.setattr(builtins, "input", lambda prompt="": next(it))
