"""Threes' kernels for exported networks (tablegym.models.export): a network trained on the
Gymnasium observation values positions inside the compiled searches (the generic expectimax)."""

from __future__ import annotations

from numba import njit

from tablegym.envs.threes.board import board_score
from tablegym.envs.threes.core import BOARD, flat_observation, k_moves, k_outcome, k_to_move
from tablegym.models.netkernel import solo_network_value


@njit(cache=True)
def final_score(s):
    """A finished game's worth: its score, as ``State.returns()`` says."""
    return float(board_score(s[BOARD]))


@njit(cache=True)
def network_value(s, player, params):
    """The network on the observation (its value, or its largest output over the legal swipes);
    a finished game is worth its score. Only a player node has swipes: at a chance node k_moves
    would list up to 48 outcome ids, more than the index buffer holds, so a Q-network is worth
    -inf there (no decision), as in Trap."""
    return solo_network_value(s, params, k_moves, k_outcome, k_to_move, flat_observation, final_score)
