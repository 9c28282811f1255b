"""A Gymnasium 1.x vector env as a Stable-Baselines3 ``VecEnv`` (for sb3-contrib's MaskablePPO).

Why an adapter: SB3 has its own vector API. ``step`` returns ``(obs, rewards, dones, infos)``
with one info dict a board, and a board that ends is reset *in the same step*: the returned
observation is already the new episode's first one, and the last observation of the finished
episode travels in ``info["terminal_observation"]`` (with ``info["TimeLimit.truncated"]`` for
a truncation, so SB3 bootstraps it). Gymnasium 1.x vector envs (tablegym's compiled ones
included) reset on the *next* step instead (``AutoresetMode.NEXT_STEP``): the done step shows
the terminal observation and the following step ignores that board's action and shows the
reset observation. Fed to SB3 as it is, every episode would gain one spurious transition
(terminal observation, any action, reward 0, first observation).

So after a step in which boards ended, ``SB3VecEnv`` resets just those boards at once with
Gymnasium's partial reset, ``reset(options={"reset_mask": done})``, called through every
wrapper (``RecordEpisodeStatistics`` restarts those boards' counters on it), and hands SB3 the
new first observations with the terminal ones in the infos: each board plays exactly the
episodes it plays under the raw env, without the reset steps. A vector env in
``AutoresetMode.SAME_STEP`` needs no partial reset: its ``info["final_obs"]`` is used.

``action_masks`` reaches MaskablePPO through ``env_method("action_masks")``, one mask a board::

    import gymnasium, tablegym.envs
    from sb3_contrib import MaskablePPO
    from tablegym.training.sb3_vec import SB3VecEnv

    venv = SB3VecEnv(gymnasium.make_vec("tablegym/Trilobite-v0", num_envs=16))
    MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=256).learn(total_timesteps=10_000)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvObs, VecEnvStepReturn

__all__ = ["SB3VecEnv"]


def _board_infos(info: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """Gymnasium's batched info (``key`` with its mask ``_key``) as one dict a board."""
    out: list[dict[str, Any]] = [{} for _ in range(n)]
    for key, value in info.items():
        if key.startswith("_"):
            continue
        where = np.asarray(info.get("_" + key, np.ones(n, dtype=bool)), dtype=bool)
        for i in np.flatnonzero(where):
            if isinstance(value, dict):
                out[i][key] = {k: v[i] for k, v in value.items()}
            else:
                out[i][key] = value[i]
    return out


class SB3VecEnv(VecEnv):
    """A ``gymnasium.vector.VectorEnv`` (any wrappers on it) seen as an SB3 ``VecEnv``.

    ``venv`` must reset on the next step (and take ``options["reset_mask"]``, as Gymnasium's
    own vector envs and tablegym's compiled ones do) or in the same step. Rewards come out as
    float32, dones as ``terminated | truncated``; every other info entry is passed on, one dict
    a board (``info["episode"]`` of ``RecordEpisodeStatistics`` is the dict SB3's logger reads).
    """

    def __init__(self, venv: gymnasium.vector.VectorEnv) -> None:
        if not isinstance(venv, gymnasium.vector.VectorEnv):
            raise ValueError(f"SB3VecEnv takes a gymnasium.vector.VectorEnv (gymnasium.make_vec(...)), got {type(venv).__name__}")
        mode = venv.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
            raise ValueError(f"SB3VecEnv takes a vector env whose autoreset_mode is NEXT_STEP or SAME_STEP, got {mode!r}")
        self.venv = venv
        self.autoreset_mode = AutoresetMode(mode)
        self._actions: np.ndarray | None = None
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)

    def reset(self) -> VecEnvObs:
        """Reset every board (with the seeds given to ``seed()``, if any)."""
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        obs, info = self.venv.reset(seed=seeds)
        self.reset_infos = _board_infos(info, self.num_envs)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        """One step of every board; ended boards come back already reset (SB3's convention)."""
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async(actions)")
        obs, rewards, terms, truncs, info = self.venv.step(self._actions)
        self._actions = None
        dones = np.logical_or(terms, truncs)
        infos = _board_infos(info, self.num_envs)
        if self.autoreset_mode is AutoresetMode.SAME_STEP:
            final = info.get("final_obs")
            for i in np.flatnonzero(dones):
                infos[i].pop("final_obs", None)
                infos[i].pop("final_info", None)
                infos[i]["terminal_observation"] = final[i]
        elif dones.any():
            new_obs, new_info = self.venv.reset(options={"reset_mask": dones.copy()})
            fresh = _board_infos(new_info, self.num_envs)
            for i in np.flatnonzero(dones):
                self.reset_infos[i] = fresh[i]
                infos[i]["terminal_observation"] = obs[i]
            obs = np.where(dones.reshape((-1,) + (1,) * (obs.ndim - 1)), new_obs, obs)
        for i in np.flatnonzero(dones):
            infos[i]["TimeLimit.truncated"] = bool(truncs[i] and not terms[i])
        return obs, np.asarray(rewards, dtype=np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """``(num_envs, num_actions)`` bools: the legal actions of every board."""
        inner = self.venv.unwrapped
        if hasattr(inner, "action_masks"):  # a batched env's one call
            return np.asarray(inner.action_masks(), dtype=bool)
        return np.stack(self.venv.call("action_masks")).astype(bool)  # SyncVectorEnv: each single env's

    def close(self) -> None:
        self.venv.close()

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return [int(i) for i in indices]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The vector env's attribute, once a board (``render_mode``, ``action_masks``, ...)."""
        value = getattr(self, attr_name) if attr_name == "action_masks" else getattr(self.venv.unwrapped, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.venv.unwrapped, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any) -> list[Any]:
        """``action_masks``: one board's mask each; another method: the vector env's result, once a board."""
        rows = self._indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in rows]
        result = getattr(self.venv.unwrapped, method_name)(*method_args, **method_kwargs)
        return [result for _ in rows]

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None for _ in range(self.num_envs)]
