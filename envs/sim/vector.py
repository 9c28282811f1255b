"""Sim's batched env: ``gymnasium.make_vec("tablegym/Sim-v0", num_envs=N)`` plays N boards in
one compiled call a step (envs/vector.py), each as ``SimEnv`` with the same seed."""

from __future__ import annotations

from numba import njit

from tablegym.envs.sim.core import E_, k_observation
from tablegym.envs.sim.env import SimEnv
from tablegym.envs.vector import TwoPlayerVectorEnv


@njit(cache=True)
def observation(s, player, out):
    """``SimState.observation(player)`` flattened into ``out``."""
    k_observation(s, player, out.reshape(3, s[E_]))


class SimVectorEnv(TwoPlayerVectorEnv):
    """``num_envs`` boards of ``SimEnv`` stepped in one compiled call; arguments as
    ``TwoPlayerVectorEnv``."""

    single_env = SimEnv
    observation_kernel = observation
