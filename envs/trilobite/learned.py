"""Trilobite's learned-value kernel: the ValueMLP over the core's binary features, compiled."""

from __future__ import annotations

from numba import njit

from tablegym.envs.core import ONGOING
from tablegym.envs.trilobite import core as trilobite_core
from tablegym.models.learned import feature_buffer, mlp_value


@njit(cache=True)
def trilobite_value(s, player, params):
    k = trilobite_core
    active = feature_buffer(params)
    n = k.k_features(s, active) if k.k_outcome(s) == ONGOING else 0
    return mlp_value(k.k_outcome(s), k.k_to_move(s), player, active, n, params)


VALUE_KERNEL = (trilobite_value, 1.0)
"""The kernel ``LearnedEvaluator`` calls and its scale (search units per unit of network value)."""
