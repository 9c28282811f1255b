"""Threes' kernels for exported networks (tablegym.models.export): a network trained on the
Gymnasium observation values positions inside the compiled searches (the generic expectimax)."""

from __future__ import annotations

from numba import njit

from tablegym.envs.core import ONGOING
from tablegym.envs.threes.board import board_score
from tablegym.envs.threes.core import BOARD, OUTCOME, PHASE, PLAY, k_moves, k_observation
from tablegym.models.netkernel import forward_dense, index_buffer, input_buffer, wants_legal



@njit(cache=True)
def network_value(s, player, params):
    """The network on the observation (its value, or its largest output over the legal swipes);
    a finished game is worth its score, as ``State.returns()`` says. Only a player node has
    swipes: at a chance node k_moves would list up to 48 outcome ids, more than the index buffer
    holds, so a Q-network is worth -inf there (no decision), as in Trap."""
    if s[OUTCOME] != ONGOING:
        return float(board_score(s[BOARD]))
    x, legal = input_buffer(params), index_buffer(params)
    n = k_moves(s, legal) if wants_legal(params) and s[PHASE] == PLAY else 0
    k_observation(s, x)
    return forward_dense(x, params, legal, n)
