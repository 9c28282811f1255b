"""Threes!' batched env: ``gymnasium.make_vec("tablegym/Threes-v0", num_envs=N)`` plays N
games in one compiled call a step (envs/vector.py), each as ``ThreesEnv`` with the same seed."""

from __future__ import annotations

from numba import njit

from tablegym.envs.core import PLY
from tablegym.envs.threes.board import board_score, highest_rank
from tablegym.envs.threes.core import BOARD, flat_observation
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
