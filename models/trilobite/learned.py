"""Trilobite's learned-value kernels: the ValueMLP over the core's binary features, and any
exported network (tablegym.models.export) over the Gymnasium observation, compiled (one-line
bindings of the shared glue to this game's kernels: numba caches only module-level functions)."""

from numba import njit

from tablegym.envs.trilobite.core import flat_observation, k_features, k_moves, k_outcome, k_to_move
from tablegym.models.learned import feature_value
from tablegym.models.netkernel import network_value as net_value


@njit(cache=True)
def trilobite_value(s, player, params):
    """The ValueMLP's value of ``s`` for ``player`` (tablegym.models.learned.feature_value)."""
    return feature_value(s, player, params, k_outcome, k_to_move, k_features)


VALUE_KERNEL = (trilobite_value, 1.0)
"""The kernel ``LearnedEvaluator`` calls and its scale (search units per unit of network value)."""


@njit(cache=True)
def network_value(s, player, params):
    """An exported network on the mover's observation, seen by ``player`` (+-1/0 once finished)."""
    return net_value(s, player, params, k_moves, k_outcome, k_to_move, flat_observation)
