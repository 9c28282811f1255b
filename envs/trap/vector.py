"""Trap's batched env: ``gymnasium.make_vec("tablegym/Trap-v0", num_envs=N)`` plays N boards in
one compiled call a step (envs/vector.py), each as ``TrapEnv`` with the same seed: the landings
of both players' traps come from each board's own stream."""

from __future__ import annotations

from numba import njit

from tablegym.envs.trap.core import N_, k_observation
from tablegym.envs.trap.env import TrapEnv
from tablegym.envs.vector import TwoPlayerVectorEnv


@njit(cache=True)
def observation(s, player, out):
    """``TrapState.observation(player)`` flattened into ``out``."""
    n = s[N_]
    k_observation(s, player, out.reshape(5, n, n))


class TrapVectorEnv(TwoPlayerVectorEnv):
    """``num_envs`` boards of ``TrapEnv`` stepped in one compiled call; arguments as
    ``TwoPlayerVectorEnv`` (one opponent: no league)."""

    single_env = TrapEnv
    observation_kernel = observation
