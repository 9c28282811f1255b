"""Tic-tac-toe's learned-value kernel: the ValueMLP over the core's binary features, compiled
(the pattern of models/trilobite/learned.py; the record's ``learned`` names ``VALUE_KERNEL``)."""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.core import ONGOING
from tablegym.models.learned import mlp_value
from tests.tictactoe import core as ttt


@njit(cache=True)
def tictactoe_value(s, player, params):
    active = np.empty(int(params[0]), dtype=np.int64)
    n = ttt.k_features(s, active) if ttt.k_outcome(s) == ONGOING else 0
    return mlp_value(ttt.k_outcome(s), ttt.k_to_move(s), player, active, n, params)


VALUE_KERNEL = (tictactoe_value, 1.0)
"""The kernel ``LearnedEvaluator`` calls and its scale (search units per unit of network value)."""
