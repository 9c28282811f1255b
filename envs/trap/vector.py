"""Trap's batched env: ``gymnasium.make_vec("tablegym/Trap-v0", num_envs=N)`` plays N boards in
one compiled call a step (envs/vector.py), each as ``TrapEnv`` with the same seed: the landings
of both players' traps come from each board's own stream. The course's Medium and Hard play the
other seat inside that call too (``opponent="medium"``, ``"hard"`` or ``"hard-sound"``), with the
choices of the single env's opponents of those names."""

from __future__ import annotations

from numba import njit

from tablegym.envs.trap.core import N_, NUM_DIRS, PHASE, THROW, flat_observation, is_free
from tablegym.envs.trap.env import TrapEnv
from tablegym.envs.trap.opponents import hard_decision, medium_decision, sound_hard_decision
from tablegym.envs.vector import TwoPlayerVectorEnv
from tablegym.envs.vector_step import DATA_BUFS, DATA_DEPTH, DATA_ROOT


@njit(cache=True)
def _or_fallback(choice, s, moves, buf):
    """``choice``, or where it is -1 (positions set up by hand only) what the classes fall back
    to: a throw at the first empty cell, else the first legal decision (Medium's random cell is
    not drawn here)."""
    if choice >= 0:
        return choice
    if s[PHASE] == THROW:
        for c in range(s[N_] * s[N_]):
            if is_free(s, c):
                return NUM_DIRS + c
    moves(s, buf)
    return buf[0]


@njit(cache=True)
def medium_move(s, moves, push, pop, to_move, outcome, key, chance, evaluate, data):
    """``MediumOpponent()``'s choice at ``s`` as a batch's other seat (``MoverOpponent``)."""
    root = data[DATA_ROOT]
    root[:] = s
    return _or_fallback(medium_decision(root), root, moves, data[DATA_BUFS][0])


@njit(cache=True)
def hard_move(s, moves, push, pop, to_move, outcome, key, chance, evaluate, data):
    """``HardOpponent(depth)``'s choice at ``s`` (``data[DATA_DEPTH]``: the depth) as a batch's other seat."""
    root = data[DATA_ROOT]
    root[:] = s
    return _or_fallback(hard_decision(root, data[DATA_DEPTH], True), root, moves, data[DATA_BUFS][0])


@njit(cache=True)
def sound_hard_move(s, moves, push, pop, to_move, outcome, key, chance, evaluate, data):
    """``SoundHardOpponent(depth)``'s choice at ``s`` as a batch's other seat."""
    root = data[DATA_ROOT]
    root[:] = s
    return _or_fallback(sound_hard_decision(root, data[DATA_DEPTH], True), root, moves, data[DATA_BUFS][0])


class TrapVectorEnv(TwoPlayerVectorEnv):
    """``num_envs`` boards of ``TrapEnv`` stepped in one compiled call; arguments as
    ``TwoPlayerVectorEnv`` (one opponent: no league), ``opponent`` also the course's "medium",
    "hard" (depth 3) or "hard-sound"."""

    single_env = TrapEnv
    observation_kernel = flat_observation
    reference_opponents = {"medium": (medium_move, 0), "hard": (hard_move, 3), "hard-sound": (sound_hard_move, 3)}
