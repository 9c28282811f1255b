"""Best-first search over single-player games with chance, as in Fridai (rules/friday.md).

Every root action is applied and its child scored; then the best-scored state in a priority
queue is expanded (all its actions, each child scored and queued) until ``budget`` states have
been polled. A root action's value is the best score of any state generated under it, and the
search plays the root action of highest value. Chance is sampled once per expansion: a child
that stops at a pending draw has it resolved by ``sample`` at once, and all children of one
expansion use the same random numbers, so siblings see the same shuffle (the same cards come
up whichever action was taken, where the stacks agree). A game may also fix hidden orders
before the search (Friday's agent determinizes the fighting stack once per decision), so that
most draws are not chance at all inside the tree.
A state seen before in the same search is not queued again: this is the cycle guard (copy +
below the pile can loop) and also drops duplicate children.

The search is game-independent: it takes the game's kernels as numba first-class functions
(state = a compact ``int8`` array):

- ``moves(s, out) -> n``: the actions the search considers (a game may filter them);
- ``apply(s, a)``: play one of them in place;
- ``sample(s, rng_state)``: resolve pending chance with the splitmix64 state ``rng_state``;
- ``evaluate(s, params) -> float``: the leaf score (hand-made, or a network's weights in ``params``);
- ``status(s) -> int``: 0 while the game goes on;
- ``key(s) -> int64``: a hash of the state.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

STATE8_T = types.int8[::1]
MOVES8_T = types.FunctionType(types.int64(STATE8_T, types.int64[::1]))
APPLY8_T = types.FunctionType(types.none(STATE8_T, types.int64))
SAMPLE8_T = types.FunctionType(types.none(STATE8_T, types.int64[::1]))
EVAL8_T = types.FunctionType(types.float64(STATE8_T, types.float64[::1]))
INT_OF_STATE8_T = types.FunctionType(types.int64(STATE8_T))
MAX_MOVES = 512
_STRIDE = np.int64(((0x9E3779B97F4A7C15 * 4096 + 2**63) % 2**64) - 2**63)  # wrapped to int64
"""How far the splitmix64 counter in ``rng_state`` jumps between expansions (4,096 draws), so
consecutive expansions never share random numbers while siblings do."""

_SIGNATURE = types.UniTuple(types.int64, 3)(
    STATE8_T, types.int64, MOVES8_T, APPLY8_T, SAMPLE8_T, EVAL8_T, INT_OF_STATE8_T, INT_OF_STATE8_T,
    types.float64[::1], types.int64[::1], types.float64[::1])


@njit(cache=True)
def _better(score_a, seq_a, score_b, seq_b):
    """Heap order: higher score first; among equal scores, the state queued first."""
    return score_a > score_b or (score_a == score_b and seq_a < seq_b)


@njit(cache=True)
def _heap_push(hscore, hseq, hrow, size, score, seq, row):
    i = size
    hscore[i] = score
    hseq[i] = seq
    hrow[i] = row
    while i > 0:
        parent = (i - 1) // 2
        if not _better(hscore[i], hseq[i], hscore[parent], hseq[parent]):
            break
        hscore[i], hscore[parent] = hscore[parent], hscore[i]
        hseq[i], hseq[parent] = hseq[parent], hseq[i]
        hrow[i], hrow[parent] = hrow[parent], hrow[i]
        i = parent
    return size + 1


@njit(cache=True)
def _heap_pop(hscore, hseq, hrow, size):
    """Remove the best entry; returns (its row, the new size)."""
    row = hrow[0]
    size -= 1
    hscore[0] = hscore[size]
    hseq[0] = hseq[size]
    hrow[0] = hrow[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        best = left
        if left + 1 < size and _better(hscore[left + 1], hseq[left + 1], hscore[left], hseq[left]):
            best = left + 1
        if not _better(hscore[best], hseq[best], hscore[i], hseq[i]):
            break
        hscore[i], hscore[best] = hscore[best], hscore[i]
        hseq[i], hseq[best] = hseq[best], hseq[i]
        hrow[i], hrow[best] = hrow[best], hrow[i]
        i = best
    return row, size


@njit(cache=True)
def _seen(table, k):
    """Insert key ``k`` into the open-addressing set ``table``; True if it was already there."""
    if k == 0:
        k = 1
    mask = table.shape[0] - 1
    i = (k ^ (k >> 31)) & mask
    while table[i] != 0:
        if table[i] == k:
            return True
        i = (i + 1) & mask
    table[i] = k
    return False


@njit(cache=True)
def _grow2(a):
    b = np.empty((2 * a.shape[0], a.shape[1]), dtype=a.dtype)
    b[:a.shape[0]] = a
    return b


@njit(cache=True)
def _grow(a):
    b = np.empty(2 * a.shape[0], dtype=a.dtype)
    b[:a.shape[0]] = a
    return b


@njit(_SIGNATURE, cache=True)
def best_first(root, budget, moves, apply, sample, evaluate, status, key, params, rng_state, values):
    """Search from decision state ``root`` polling at most ``budget`` states.

    Returns (index of the chosen root action in ``moves(root)``, states polled, states
    generated); ``values[i]`` receives the value of root action i.
    """
    buf = np.empty(MAX_MOVES, dtype=np.int64)
    root_moves = np.empty(MAX_MOVES, dtype=np.int64)
    n_root = moves(root, root_moves)
    width = root.shape[0]
    cap = 1024
    pool = np.empty((cap, width), dtype=np.int8)
    origin = np.empty(cap, dtype=np.int64)
    free_rows = np.empty(cap, dtype=np.int64)
    n_free = 0
    used = 0
    hscore = np.empty(cap, dtype=np.float64)
    hseq = np.empty(cap, dtype=np.int64)
    hrow = np.empty(cap, dtype=np.int64)
    size = 0
    seq = 0
    table = np.zeros(1 << 16, dtype=np.int64)
    n_keys = 0
    generated = 0
    for i in range(n_root):
        values[i] = -np.inf
    shared = rng_state[0]
    for i in range(n_root):
        child = root.copy()
        apply(child, root_moves[i])
        rng_state[0] = shared
        sample(child, rng_state)
        generated += 1
        v = evaluate(child, params)
        values[i] = v
        _seen(table, key(child))
        n_keys += 1
        if status(child) == 0:
            pool[used] = child
            origin[used] = i
            size = _heap_push(hscore, hseq, hrow, size, v, seq, used)
            used += 1
            seq += 1
    rng_state[0] = shared + _STRIDE
    polled = 0
    while size > 0 and polled < budget:
        row, size = _heap_pop(hscore, hseq, hrow, size)
        polled += 1
        node = pool[row].copy()
        i_root = origin[row]
        free_rows[n_free] = row
        n_free += 1
        n = moves(node, buf)
        shared = rng_state[0]
        for k in range(n):
            child = node.copy()
            apply(child, buf[k])
            rng_state[0] = shared  # one determinization per expansion: siblings draw alike
            sample(child, rng_state)
            if 2 * n_keys >= table.shape[0]:  # keep the set at most half full
                old = table
                table = np.zeros(2 * old.shape[0], dtype=np.int64)
                for x in old:
                    if x != 0:
                        _seen(table, x)
            if _seen(table, key(child)):
                continue
            n_keys += 1
            generated += 1
            v = evaluate(child, params)
            if v > values[i_root]:
                values[i_root] = v
            if status(child) != 0:
                continue
            if n_free > 0:
                n_free -= 1
                slot = free_rows[n_free]
            else:
                if used == pool.shape[0]:
                    pool = _grow2(pool)
                    origin = _grow(origin)
                    free_rows = _grow(free_rows)
                slot = used
                used += 1
            if size == hscore.shape[0]:
                hscore = _grow(hscore)
                hseq = _grow(hseq)
                hrow = _grow(hrow)
            pool[slot] = child
            origin[slot] = i_root
            size = _heap_push(hscore, hseq, hrow, size, v, seq, slot)
            seq += 1
        rng_state[0] = shared + _STRIDE
    best = 0
    for i in range(1, n_root):
        if values[i] > values[best]:
            best = i
    return best, polled, generated
