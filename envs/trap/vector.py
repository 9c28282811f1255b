"""Trap's batched env: ``gymnasium.make_vec("tablegym/Trap-v0", num_envs=N)`` plays N boards in
one compiled call a step (envs/vector.py), each as ``TrapEnv`` with the same seed: the landings
of both players' traps come from each board's own stream."""

from __future__ import annotations

from tablegym.envs.trap.core import flat_observation
from tablegym.envs.trap.env import TrapEnv
from tablegym.envs.vector import TwoPlayerVectorEnv



class TrapVectorEnv(TwoPlayerVectorEnv):
    """``num_envs`` boards of ``TrapEnv`` stepped in one compiled call; arguments as
    ``TwoPlayerVectorEnv`` (one opponent: no league)."""

    single_env = TrapEnv
    observation_kernel = flat_observation
