"""Sim's batched env: ``gymnasium.make_vec("tablegym/Sim-v0", num_envs=N)`` plays N boards in
one compiled call a step (envs/vector.py), each as ``SimEnv`` with the same seed."""

from __future__ import annotations

from tablegym.envs.sim.core import flat_observation
from tablegym.envs.sim.env import SimEnv
from tablegym.envs.vector import TwoPlayerVectorEnv


class SimVectorEnv(TwoPlayerVectorEnv):
    """``num_envs`` boards of ``SimEnv`` stepped in one compiled call; arguments as
    ``TwoPlayerVectorEnv``."""

    single_env = SimEnv
    observation_kernel = flat_observation
