"""The positions one or two moves ahead of every board of a batch, computed in one compiled call
each: what the afterstate learners value (training/negamax_dqn.py, training/afterstate_dqn.py).
The boards themselves are left as they were."""

from __future__ import annotations

import numpy as np
from numba import types

from tablegym.envs.core import CHANCE, KEY, ONGOING
from tablegym.envs.kernel_sets import chance_of, moves_of, observe_of, outcome_of, push_of, to_move_of
from tablegym.envs.vector_step import _B2, _B3, _D2, _D3, _F1, _F2, _I, _I1, _I2, _M2, _kernels_at, _quiet_njit, _reward_of

_CHILDREN_ARGS = (_I2, _M2, types.float32[:, :, ::1], _B2, _D2, _I1)


@_quiet_njit(types.none(*_CHILDREN_ARGS))
def children_of(states, masks, obs, ended, result, kernels):
    """Each board's children: for every legal move ``a`` of board ``i`` (``masks``), the position
    after it, as the observation of the player to move there (``obs[i, a]``), whether the move
    ended the game (``ended[i, a]``) and then the game's result for the board's mover
    (``result[i, a]``: +1 won, -1 lost, 0 drawn). Games without chance only: the mover's
    opponent is to move in every unfinished child. What an afterstate learner values
    (training/negamax_dqn.py); the boards are left as they were."""
    kern = _kernels_at(kernels)
    child = np.empty(states.shape[1], np.int64)
    for i in range(states.shape[0]):
        s = states[i]
        mover = to_move_of(kern, s)
        for a in range(masks.shape[1]):
            ended[i, a] = False
            result[i, a] = 0.0
            if masks[i, a] == 0:
                continue
            child[:] = s
            push_of(kern, child, a)
            if outcome_of(kern, child) != ONGOING:
                ended[i, a] = True
                result[i, a] = _reward_of(child, mover, kern)
            else:
                observe_of(kern, child, to_move_of(kern, child), obs[i, a])


_GRANDCHILDREN_ARGS = (_I2, _M2, types.float32[:, :, :, ::1], _B3, _D3, _B3, _I1, _I)


@_quiet_njit(types.none(*_GRANDCHILDREN_ARGS))
def grandchildren_of(states, masks, obs, ended, result, legal, kernels, width):
    """Each board's positions two moves on: for every legal move ``a`` of board ``i`` that does
    not end the game and every legal reply ``b`` (``legal[i, a, b]``), the position after both,
    as its player to move (the board's mover again) observes it (``obs[i, a, b]``), whether the
    reply ended the game (``ended[i, a, b]``) and then the result for the board's mover
    (``result[i, a, b]``). Games without chance only (``children_of``)."""
    kern = _kernels_at(kernels)
    child = np.empty(states.shape[1], np.int64)
    grandchild = np.empty(states.shape[1], np.int64)
    buf = np.empty(width, np.int64)
    for i in range(states.shape[0]):
        s = states[i]
        mover = to_move_of(kern, s)
        for a in range(masks.shape[1]):
            legal[i, a, :] = False
            ended[i, a, :] = False
            result[i, a, :] = 0.0
            if masks[i, a] == 0:
                continue
            child[:] = s
            push_of(kern, child, a)
            if outcome_of(kern, child) != ONGOING:
                continue
            for k in range(moves_of(kern, child, buf)):
                b = buf[k]
                legal[i, a, b] = True
                grandchild[:] = child
                push_of(kern, grandchild, b)
                if outcome_of(kern, grandchild) != ONGOING:
                    ended[i, a, b] = True
                    result[i, a, b] = _reward_of(grandchild, mover, kern)
                else:
                    observe_of(kern, grandchild, to_move_of(kern, grandchild), obs[i, a, b])


_OUTCOMES_ARGS = (_I2, _M2, _F2, _I1, _I1, _F1, _I1, _F1, _I1, _I)


@_quiet_njit(types.UniTuple(_I, 2)(*_OUTCOMES_ARGS))
def outcomes_of(states, masks, obs, keys, index, weight, position, result, kernels, width):
    """Each board's children in a game with chance, as rows: for every legal move ``a`` of board
    ``i`` and, where the move leads to a chance node, every outcome of it: ``index[r] = i * A +
    a``; ``weight[r]`` the outcome's probability, negative where the player to move there is
    the board's mover's opponent (so ``sum weight * V`` is the move's expected value for the
    mover); ``position[r]`` the row of ``obs`` holding the position reached, as its player to
    move observes it, or -1 where the game ended, with ``result[r]`` the result for the board's
    mover. A board's positions are kept once (by the header's position key, ``keys``): Trap's
    throws land on the same few cells. A game without chance has one row a move.

    Returns (rows, positions) needed: at most ``len(index)`` rows and ``len(obs)`` positions are
    written, so a caller whose arrays were too short calls again with longer ones. One chance
    node a move at most (a second in a row raises). What training/negamax_dqn.py values."""
    kern = _kernels_at(kernels)
    child = np.empty(states.shape[1], np.int64)
    grandchild = np.empty(states.shape[1], np.int64)
    cells = np.empty(width, np.int64)
    probs = np.empty(width)
    rows, places = index.shape[0], obs.shape[0]
    r = 0
    p = 0
    for i in range(states.shape[0]):
        s = states[i]
        mover = to_move_of(kern, s)
        first = p  # this board's positions start here
        for a in range(masks.shape[1]):
            if masks[i, a] == 0:
                continue
            child[:] = s
            push_of(kern, child, a)
            at_chance = outcome_of(kern, child) == ONGOING and to_move_of(kern, child) == CHANCE
            n = chance_of(kern, child, cells, probs) if at_chance else 1
            for k in range(n):
                grandchild[:] = child
                prob = 1.0
                if at_chance:
                    push_of(kern, grandchild, cells[k])
                    prob = probs[k]
                at = -1
                sign = 1.0
                if outcome_of(kern, grandchild) == ONGOING:
                    player = to_move_of(kern, grandchild)
                    if player == CHANCE:
                        raise ValueError("outcomes_of: two chance nodes in a row")
                    sign = 1.0 if player == mover else -1.0
                    key = grandchild[KEY] * 2 + (player != mover)
                    for j in range(first, min(p, places)):
                        if keys[j] == key:
                            at = j
                            break
                    if at < 0:
                        at = p
                        if p < places:
                            keys[p] = key
                            observe_of(kern, grandchild, player, obs[p])
                        p += 1
                if r < rows:
                    index[r] = i * masks.shape[1] + a
                    weight[r] = sign * prob
                    position[r] = at
                    result[r] = _reward_of(grandchild, mover, kern) if at < 0 else 0.0
                r += 1
    return r, p
