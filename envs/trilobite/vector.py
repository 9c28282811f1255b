"""Trilobite's batched env: ``gymnasium.make_vec("tablegym/Trilobite-v0", num_envs=N)`` plays
N boards in one compiled call a step (envs/vector.py), each as ``TrilobiteEnv`` with the same seed."""

from __future__ import annotations

from tablegym.envs.trilobite.core import flat_observation
from tablegym.envs.trilobite.env import TrilobiteEnv
from tablegym.envs.vector import TwoPlayerVectorEnv


class TrilobiteVectorEnv(TwoPlayerVectorEnv):
    """``num_envs`` boards of ``TrilobiteEnv`` (any size: Trilobite-v0, TrilobiteTiny-v0)
    stepped in one compiled call; arguments as ``TwoPlayerVectorEnv``."""

    single_env = TrilobiteEnv
    observation_kernel = flat_observation
