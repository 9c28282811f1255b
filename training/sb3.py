"""What the Stable-Baselines3 baselines share (experiments/sb3_baseline.py, experiments/starship/rl.py):
observation scaling, the default model, timed training that saves ``model.zip`` and ``train.json``,
loading, and a deterministic policy over legal actions only, also as an agent on the rules core.

A training locks its run folder and writes every file there atomically (training.files), as
``training.runs.Run`` does: ``model.zip`` through ``save_model``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import torch

from tablegym.envs.rates import per_second
from tablegym.training.files import lock_run_dir, prepare_run_dir, replacing, write_text_atomic

__all__ = [
    "ALGOS",
    "HYPER",
    "SB3Agent",
    "ScaleObservation",
    "Truncated",
    "build_model",
    "learn_and_save",
    "legal_argmax",
    "load_meta",
    "load_model",
    "make_policy",
    "no_log_folder",
    "progress_callbacks",
    "save_model",
    "write_report",
]

ALGOS = ("dqn", "maskableppo")

HYPER = {
    "dqn": dict(
        learning_rate=1e-4,
        buffer_size=200_000,
        learning_starts=10_000,
        batch_size=128,
        gamma=0.99,
        train_freq=4,
        gradient_steps=1,
        target_update_interval=5_000,
        exploration_fraction=0.2,
        exploration_initial_eps=1.0,
        exploration_final_eps=0.01,
        max_grad_norm=10.0,
    ),
    "maskableppo": dict(
        learning_rate=3e-4,
        n_steps=256,
        batch_size=256,
        n_epochs=4,
        gamma=0.99,
        gae_lambda=0.95,
        clip_range=0.2,
        ent_coef=0.01,
        vf_coef=0.5,
    ),
}
"""Each algorithm's hyper-parameters where a game's configuration does not override them."""

MLP = dict(net_arch=[256, 256], activation_fn=torch.nn.ReLU)
"""The default network: a [256, 256] ReLU MLP (SB3's tanh saturated the value net on Threes)."""


class ScaleObservation(gymnasium.ObservationWrapper):
    """Divide the observation by the Box's high: every entry in [0, 1]."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.high = env.observation_space.high.astype(np.float32)
        self.observation_space = gymnasium.spaces.Box(0.0, 1.0, env.observation_space.shape, np.float32)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return (observation / self.high).astype(np.float32)


def no_log_folder(model):
    """``model`` with a logger that writes nothing, where it has no TensorBoard folder and prints
    nothing (``verbose=0``); returned for chaining.

    Why: SB3 gives such a model a logger at every ``learn`` through ``configure(None)``, which
    makes a new empty folder in the temp directory each time (``SB3-<date and time>``): one per
    run of ``tablegym bench rl`` or a Starship training, hundreds per test run."""
    from stable_baselines3.common.logger import Logger

    if model.tensorboard_log is None and model.verbose == 0:
        model.set_logger(Logger(folder=None, output_formats=[]))
    return model


def progress_callbacks(progress: bool) -> list:
    """A progress bar over an SB3 ``learn`` (training.progress: plain lines off a terminal) when
    ``progress`` (for ``learn(callback=...)``), else none.

    Why not SB3's ``progress_bar=True``: its bar needs ``rich`` (SB3's ``extra``), which tablegym
    does not install, so the flag raised ImportError before the first step."""
    if not progress:
        return []
    from stable_baselines3.common.callbacks import BaseCallback

    from tablegym.training.progress import progress_bar

    class ProgressBar(BaseCallback):
        def _on_training_start(self) -> None:
            self.bar = progress_bar(total=self.locals["total_timesteps"] - self.model.num_timesteps, unit="step")

        def _on_step(self) -> bool:
            self.bar.update(self.training_env.num_envs)
            return True

        def _on_training_end(self) -> None:
            self.bar.close()

    return [ProgressBar()]


def build_model(algo: str, env, *, seed: int, tensorboard_log: str | None, policy_kwargs: dict | None = None, **hyper: Any):
    """The SB3 model for ``algo``: ``HYPER[algo]`` with ``hyper`` over it, the ``MLP`` network unless
    ``policy_kwargs`` names another, one CPU device, silent."""
    if algo not in ALGOS:
        raise ValueError(f"algo must be one of {ALGOS}, got {algo!r}")
    if algo == "dqn":
        from stable_baselines3 import DQN as algorithm
    else:
        from sb3_contrib import MaskablePPO as algorithm
    return no_log_folder(
        algorithm(
            "MlpPolicy",
            env,
            **{**HYPER[algo], **hyper},
            policy_kwargs=policy_kwargs or MLP,
            tensorboard_log=tensorboard_log,
            seed=seed,
            device="cpu",
            verbose=0,
        )
    )


def learn_and_save(model, *, timesteps: int, run_dir: str, tb_log_name: str, progress: bool = True, **meta) -> dict:
    """Train ``model`` for ``timesteps`` env steps, timed (TensorBoard run ``tb_log_name``); save
    run_dir/model.zip and run_dir/train.json: ``meta`` plus timesteps, train_seconds and steps_per_s.
    The run folder is locked meanwhile: one already in use is refused (training.files.RunFolderError).
    """
    lock = lock_run_dir(prepare_run_dir(run_dir))
    try:
        start = time.perf_counter()
        model.learn(total_timesteps=timesteps, tb_log_name=tb_log_name, callback=progress_callbacks(progress))
        seconds = time.perf_counter() - start
        save_model(model, Path(run_dir) / "model.zip")
        meta = {
            **meta,
            "timesteps": int(model.num_timesteps),
            "train_seconds": seconds,
            "steps_per_s": per_second(model.num_timesteps, seconds),
        }
        write_text_atomic(Path(run_dir) / "train.json", json.dumps(meta, indent=1) + "\n")
    finally:
        lock.release()
    return meta


def save_model(model, path: str | Path) -> Path:
    """``model.save(path)`` atomically: SB3 writes a new file beside ``path``, which then replaces
    it (a link there is replaced, never written through); ``path``."""
    with replacing(path) as tmp:
        model.save(tmp)
    return Path(path)


def load_model(algo: str, run_dir: str, env, *, build: Callable | None = None):
    """The model a run saved (run_dir/model.zip), rebuilt here by ``build(env)`` (default: this
    module's ``build_model`` for ``algo``) and given the file's weights and step count
    (tablegym.models.sb3_files.restore): nothing in the file is unpickled, so a run directory
    from elsewhere cannot run code. ``env`` gives the spaces (the script's own env)."""
    from tablegym.models.sb3_files import restore

    model = build(env) if build is not None else build_model(algo, env, seed=0, tensorboard_log=None)
    return restore(model, Path(run_dir) / "model.zip")


def legal_argmax(values: np.ndarray, mask: np.ndarray) -> int:
    """The best-valued action among those the mask allows (ties: the lowest index)."""
    return int(np.argmax(np.where(np.asarray(mask, dtype=bool), values, -np.inf)))


def make_policy(algo: str, model) -> Callable[[np.ndarray, np.ndarray], int]:
    """``policy(scaled_obs, bool_mask) -> swipe``, always one the mask allows."""
    if algo == "dqn":
        q_net = model.q_net

        def dqn_policy(obs: np.ndarray, mask: np.ndarray) -> int:
            with torch.no_grad():
                q = q_net(torch.as_tensor(obs, dtype=torch.float32).unsqueeze(0))[0].numpy()
            return legal_argmax(q, mask)

        return dqn_policy

    def ppo_policy(obs: np.ndarray, mask: np.ndarray) -> int:
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        return int(action)

    return ppo_policy


def load_meta(run_dir: str, model) -> dict:
    """run_dir/train.json, or what the model itself knows when it is missing."""
    path = Path(run_dir) / "train.json"
    if path.exists():
        return json.loads(path.read_text())
    return {"timesteps": int(model.num_timesteps), "train_seconds": float("nan")}


def write_report(text: str, out: str | None) -> str:
    """Print a script's markdown report and write it to ``out`` when given (atomically: a link
    there is replaced, not written through). The trainers refuse an ``--out`` whose folder is
    missing before they start; for a script that does not, the folder is made here."""
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out, text)
    print(text, end="")
    return text


class Truncated(Exception):
    """Raised by ``SB3Agent`` when a game has used its ``max_decisions``."""

    def __init__(self, state: Any) -> None:
        super().__init__("the game reached max_decisions decisions")
        self.state = state


class SB3Agent:
    """A trained model as an agent ``(state, rng) -> action`` on the rules core: deterministic and
    always legal (``make_policy``), seeing ``observe(state.observation(player))``, what its training
    env's wrappers made of the same observation.

    With ``max_decisions`` it counts the decisions of the current game, a game being one ``rng``
    (a game loop makes one per game; the agent holds the last, so a new one is never mistaken for
    it), and raises ``Truncated`` when asked for one more: the env's truncation, which a rules core
    does not have, so a deterministic policy that cycles still ends.
    """

    def __init__(
        self,
        model: Any,
        algo: str = "maskableppo",
        *,
        observe: Callable[[np.ndarray], np.ndarray] | None = None,
        max_decisions: int | None = None,
    ) -> None:
        if algo not in ALGOS:
            raise ValueError(f"algo must be one of {ALGOS}, got {algo!r}")
        self.name = f"sb3-{algo}"
        self.policy = make_policy(algo, model)
        self.transform = observe
        self.max_decisions = max_decisions
        self.decisions = 0
        self._game_rng: np.random.Generator | None = None

    def observe(self, state: Any) -> np.ndarray:
        """What the network sees in ``state``: the observation the training env gives there."""
        obs = state.observation(state.current_player())
        return obs if self.transform is None else self.transform(obs)

    def __call__(self, state: Any, rng: np.random.Generator | None = None) -> int:
        if self.max_decisions is not None:
            if rng is None or rng is not self._game_rng:
                self._game_rng, self.decisions = rng, 0
            if self.decisions >= self.max_decisions:
                raise Truncated(state)
            self.decisions += 1
        return self.policy(self.observe(state), state.legal_action_mask().astype(bool))
