"""``tablegym bench rl``: env+learner steps per second of tablegym's masked PPO against sb3-contrib's
MaskablePPO with the same network and the same PPO settings, in one process.

Why this shape: what a user waits for is a training step, env and learner together. Each row
trains from scratch for ``steps`` env steps (the first ``warmup`` outside the timing, so the
compiled kernels and torch's first calls are not counted) and reports steps per second:

- ``tablegym ppo``: training/ppo.py over ``num_envs`` boards of the compiled vector env
  (two-player games: self-play boards and a share against a random player, its default);
- ``sb3 vec``: MaskablePPO over the *same* compiled vector env through ``SB3VecEnv`` (a random
  opponent for two-player games), the same number of boards, rollout length, minibatches and
  epochs, the same actor and critic (separate ReLU MLPs of ``hidden`` widths);
- ``sb3 single``: MaskablePPO over one Gymnasium env (``DummyVecEnv``, SB3's own defaults for
  ``n_steps``), the route the project's earlier SB3 tables took.

Ratios are against ``tablegym ppo`` of the same run; one torch thread everywhere (the trainers'
default here), so the figures compare code, not thread pools.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from typing import Any

import gymnasium
import torch

import tablegym.envs
from tablegym.envs.rates import per_second
from tablegym.training import ppo, vector_rl
from tablegym.training.sb3 import no_log_folder


def _ppo_rate(game: str, steps: int, warmup: int, num_envs: int, num_steps: int, hidden: tuple[int, ...]) -> float:
    batch = num_envs * num_steps
    common = [
        game,
        "--num-envs",
        str(num_envs),
        "--num-steps",
        str(num_steps),
        "--eval-every",
        "0",
        "--save-every",
        "1000000",
        "--no-progress",
        "--hidden",
        *map(str, hidden),
    ]
    with tempfile.TemporaryDirectory() as run:
        if ppo.main(common + ["--total-steps", str(max(batch, warmup)), "--run-dir", run]) != 0:
            raise ValueError(f"tablegym's PPO does not train {game!r} (its error is above)")
        done = max(1, max(batch, warmup) // batch) * batch
        start = time.perf_counter()
        ppo.main(common + ["--total-steps", str(done + steps), "--run-dir", run])
        seconds = time.perf_counter() - start
    return per_second(max(1, (done + steps) // batch) * batch - done, seconds)


def sb3_model(env_id: str, num_envs: int, num_steps: int, minibatches: int, hidden: tuple[int, ...], single: bool, seed: int = 0):
    """sb3-contrib's MaskablePPO with tablegym PPO's network (separate ReLU MLPs of ``hidden``)
    over the compiled vector env (``single``: one Gymnasium env, SB3's own rollout length)."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from tablegym.training.sb3_vec import SB3VecEnv

    two_player = env_id in tablegym.envs.ENV_IDS
    kw = {"opponent": "random"} if two_player else {}
    policy = {"net_arch": {"pi": list(hidden), "vf": list(hidden)}, "activation_fn": torch.nn.ReLU}
    if single:
        from sb3_contrib.common.wrappers import ActionMasker

        def one():
            env = gymnasium.make(env_id, **kw)
            return ActionMasker(env, lambda e: e.unwrapped.action_masks())

        return no_log_folder(
            MaskablePPO("MlpPolicy", DummyVecEnv([one]), policy_kwargs=policy, seed=seed, verbose=0, device="cpu")
        )
    venv = SB3VecEnv(gymnasium.make_vec(env_id, num_envs=num_envs, **kw))
    return no_log_folder(
        MaskablePPO(
            "MlpPolicy",
            venv,
            n_steps=num_steps,
            batch_size=num_envs * num_steps // minibatches,
            n_epochs=4,
            policy_kwargs=policy,
            seed=seed,
            verbose=0,
            device="cpu",
        )
    )


def _sb3_rate(model, steps: int, warmup: int) -> float:
    model.learn(total_timesteps=warmup)
    start = time.perf_counter()
    before = model.num_timesteps
    model.learn(total_timesteps=steps, reset_num_timesteps=False)
    return per_second(model.num_timesteps - before, time.perf_counter() - start)


def bench_rl(
    game: str = "trilobite",
    steps: int = 100_000,
    warmup: int = 20_000,
    num_envs: int = 256,
    num_steps: int = 32,
    single_steps: int = 10_000,
    repeats: int = 1,
    hidden: str = "128,128",
) -> dict[str, dict[str, Any]]:
    """Rows "<game> <trainer>": env+learner steps/s (median of ``repeats``) and the ratio of
    tablegym's PPO to it. ``single_steps`` (0: skip) sizes the slow one-env SB3 row."""
    try:
        widths = tuple(int(h) for h in str(hidden).split(","))
    except ValueError:
        raise ValueError(f"hidden must be comma-separated layer widths such as 128,128; got {hidden!r}") from None
    if steps < 1 or warmup < 0 or num_envs < 1 or num_steps < 1 or repeats < 1 or single_steps < 0 or not widths:
        raise ValueError(
            f"steps, num_envs, num_steps, repeats >= 1, warmup, single_steps >= 0 and hidden as "
            f"comma-separated widths; got {steps}, {num_envs}, {num_steps}, {repeats}, {warmup}, "
            f"{single_steps}, {hidden!r}"
        )
    env_id = vector_rl.env_id_of(game)
    torch.set_num_threads(1)
    minibatches = ppo.Args.minibatches
    figures: dict[str, list[float]] = {"tablegym ppo": [], "sb3 vec": [], "sb3 single": []}
    for _ in range(repeats):
        figures["tablegym ppo"].append(_ppo_rate(game, steps, warmup, num_envs, num_steps, widths))
        model = sb3_model(env_id, num_envs, num_steps, minibatches, widths, single=False)
        figures["sb3 vec"].append(_sb3_rate(model, steps, warmup))
        if single_steps:
            model = sb3_model(env_id, 1, 2048, minibatches, widths, single=True)
            figures["sb3 single"].append(_sb3_rate(model, single_steps, min(warmup, 2048)))
    ours = statistics.median(figures["tablegym ppo"])
    rows = {}
    for name, values in figures.items():
        if values:
            med = statistics.median(values)
            rows[f"{game} {name}"] = {
                "steps/s": med,
                "tablegym ppo / this": ours / med,
                "boards": 1 if name == "sb3 single" else num_envs,
            }
    return rows
