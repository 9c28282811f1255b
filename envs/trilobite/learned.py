"""Trilobite's learned-value kernels: the ValueMLP over the core's binary features, and any
exported network (tablegym.models.export) over the Gymnasium observation, compiled."""

from __future__ import annotations

from numba import njit

from tablegym.envs.core import KEY, ONGOING
from tablegym.envs.trilobite import core as trilobite_core
from tablegym.envs.trilobite.core import flat_observation, k_moves, k_outcome, k_to_move
from tablegym.models.learned import feature_buffer, keyed_mlp_value, remembered_value
from tablegym.models.netkernel import index_buffer, input_buffer, observation_value, wants_legal


@njit(cache=True)
def trilobite_value(s, player, params):
    k = trilobite_core
    v = remembered_value(k.k_outcome(s), k.k_to_move(s), player, s[KEY], params)
    if v == v:
        return v
    active = feature_buffer(params)
    n = k.k_features(s, active) if k.k_outcome(s) == ONGOING else 0
    return keyed_mlp_value(k.k_outcome(s), k.k_to_move(s), player, s[KEY], active, n, params)


VALUE_KERNEL = (trilobite_value, 1.0)
"""The kernel ``LearnedEvaluator`` calls and its scale (search units per unit of network value)."""



@njit(cache=True)
def network_value(s, player, params):
    """An exported network on the mover's observation, seen by ``player`` (+-1/0 once finished)."""
    x, legal = input_buffer(params), index_buffer(params)
    n = k_moves(s, legal) if wants_legal(params) else 0
    if k_outcome(s) == ONGOING:
        flat_observation(s, k_to_move(s), x)
    return observation_value(k_outcome(s), k_to_move(s), player, x, legal, n, params, 1.0)
