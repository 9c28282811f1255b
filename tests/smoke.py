"""What several test files share: a trainer's run folder, a small seeded MaskablePPO trained on an
env, a trained network as the compiled alpha-beta's evaluator, and the lines a person types at the
terminal, scripted."""

from __future__ import annotations

import builtins
import warnings

import gymnasium
import numpy as np
import pytest


def trained_run(main, tmp_path_factory: pytest.TempPathFactory, name: str, argv: list[str], out: str):
    """A new folder ``name`` of pytest's, filled by the trainer's command line ``main`` run with
    ``argv``, the folder as its run folder and the file ``out`` there as its network (the run must
    succeed)."""
    run = tmp_path_factory.mktemp(name)
    assert main([*argv, "--run-dir", str(run), "--out", str(run / out)]) == 0
    return run


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


def assert_plays_in_alphabeta(network) -> None:
    """The network file ``network`` evaluates the leaves of the compiled alpha-beta (depth 3),
    which then plays a legal first move of TrilobiteTiny."""
    from tablegym.envs import make_game
    from tablegym.models.agents import make_agent

    game = make_game("trilobite-tiny")
    agent = make_agent(game, f"alphabeta:depth=3,eval=learned:{network}")
    state = game.new_initial_state()
    assert agent(state, np.random.default_rng(0)) in state.legal_actions()


def scripted_input(monkeypatch: pytest.MonkeyPatch, lines) -> None:
    """``input()`` returns the next of ``lines`` whatever the prompt."""
    it = iter(lines)
    monkeypatch.setattr(builtins, "input", lambda prompt="": next(it))
