"""Friday's batched env: ``gymnasium.make_vec("tablegym/Friday-v1", num_envs=N)`` plays N games
in one compiled call a step (envs/vector.py), each as ``FridayEnv`` with the same seed: every card
is drawn from the board's own stream as ``sample_chance`` draws it (one ``Generator.random()`` a
draw, falling on the outcomes' cumulative probabilities)."""

from __future__ import annotations

from typing import Any

import gymnasium
from numba import njit

from tablegym.envs.core import PLY
from tablegym.envs.friday.decisions import k_score
from tablegym.envs.friday.env import FridayEnv
from tablegym.envs.friday.layout import LIFE, RESULT, STEPI, WON, body
from tablegym.envs.friday.observation import flat_observation
from tablegym.envs.streams import next_double
from tablegym.envs.vector import SinglePlayerVectorEnv


@njit(cache=True)
def cumulative_draw(row, probs, n):
    """``k_sample``'s draw: the first outcome whose cumulative probability exceeds one
    ``Generator.random()`` (the last one if rounding leaves none)."""
    u = next_double(row)
    acc = 0.0
    for i in range(n):
        acc += probs[i]
        if u < acc:
            return i
    return n - 1


@njit(cache=True)
def win_reward(s):
    """``reward="win"``: +1 won, -1 lost, 0 before the end (a step's reward is its change)."""
    r = body(s)[RESULT]
    return 1.0 if r == WON else -1.0 if r != 0 else 0.0


@njit(cache=True)
def score_reward(s):
    """``reward="score"``: the win reward plus the game's score (its change is the step's reward)."""
    return win_reward(s) + float(k_score(body(s)))


@njit(cache=True)
def info(s, out):
    """``FridayEnv``'s integer ``info``: score, life, step reached, won (0/1), decisions made."""
    b = body(s)
    out[0] = k_score(b)
    out[1] = b[LIFE]
    out[2] = b[STEPI]
    out[3] = 1 if b[RESULT] == WON else 0
    out[4] = s[PLY]


class FridayVectorEnv(SinglePlayerVectorEnv):
    """``num_envs`` games of ``FridayEnv`` stepped in one compiled call.

    Arguments: ``FridayEnv``'s (``level``, the rule options, ``reward``, ``illegal_action``,
    ``max_steps``), ``num_envs`` and ``autoreset_mode``; ``render_mode`` "ansi" or None. ``info``
    holds "action_mask", "score", "life", "step", "won" (0/1) and "decisions", one entry a board.
    """

    single_env = FridayEnv
    observation_kernel = flat_observation
    draw_kernel = cumulative_draw
    score_kernel = win_reward
    info_kernel = info
    info_keys = ("score", "life", "step", "won", "decisions")
    limit_keyword = "max_steps"
    illegal_reward = -1.0
    score_from_start = True

    def _score_kernel(self, proto: gymnasium.Env) -> Any:
        return score_reward if getattr(proto, "reward", "win") == "score" else win_reward
