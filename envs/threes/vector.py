"""Threes!' batched env: ``gymnasium.make_vec("tablegym/Threes-v0", num_envs=N)`` plays N
games in one compiled call a step (envs/vector.py), each as ``ThreesEnv`` with the same seed."""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.core import PLY
from tablegym.envs.threes.board import board_score, highest_rank, swipe
from tablegym.envs.threes.core import BOARD, HINT, PHASE, PLAY, flat_observation
from tablegym.envs.threes.env import ThreesEnv
from tablegym.envs.vector import SinglePlayerVectorEnv


@njit(cache=True)
def score(s):
    """The board score; a step's reward is its change (``ThreesEnv``'s Rewards)."""
    return float(board_score(s[BOARD]))


@njit(cache=True)
def info(s, out):
    """``ThreesEnv``'s integer ``info``: score, the highest card's value, swipes made."""
    out[0] = board_score(s[BOARD])
    r = highest_rank(s[BOARD])
    out[1] = r if r < 3 else 3 * 2 ** (r - 3)
    out[2] = s[PLY]


class ThreesVectorEnv(SinglePlayerVectorEnv):
    """``num_envs`` games of ``ThreesEnv`` stepped in one compiled call.

    Arguments: ``ThreesEnv``'s (``hint``, ``illegal_action``, ``max_moves``), ``num_envs`` and
    ``autoreset_mode``; ``render_mode`` "ansi" or None. ``info`` holds "action_mask", "score",
    "highest" and "moves", as ``ThreesEnv`` does, one entry a board.
    """

    single_env = ThreesEnv
    observation_kernel = flat_observation
    score_kernel = score
    info_kernel = info
    info_keys = ("score", "highest", "moves")
    limit_keyword = "max_moves"

    def afterstates(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Each board's afterstates, for learners that value them (Q(s, a) = the swipe's gain +
        V(afterstate), training/afterstate_dqn.py): ``(keys, hints, gains, legal)`` of shapes
        (N, 4), (N,), (N, 4), (N, 4): the 64-bit board after each swipe, before the new card
        enters; the code of the card about to enter; the score the swipe adds; whether it moves.
        A board waiting for its auto-reset has no legal swipe here (its next step restarts it)."""
        n = self.num_envs
        keys, gains = np.zeros((n, 4), dtype=np.int64), np.zeros((n, 4))
        legal = np.zeros((n, 4), dtype=bool)
        _afterstates(self._states, self._pending, keys, gains, legal)
        return keys, self._states[:, HINT].copy(), gains, legal


@njit(cache=True)
def _afterstates(states, pending, keys, gains, legal):
    for i in range(states.shape[0]):
        if pending[i] or states[i, PHASE] != PLAY:
            continue
        board = states[i, BOARD]
        before = board_score(board)
        for d in range(4):
            after, moved = swipe(board, d)
            keys[i, d] = after
            gains[i, d] = board_score(after) - before
            legal[i, d] = moved != 0
