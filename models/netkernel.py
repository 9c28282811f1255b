"""Compiled feed-forward networks: a stack of Linear layers with common activations, stored in one
float64 vector that numba kernels evaluate inside the searches without calling back into Python.

Any network of that shape plugs into a compiled search this way: tablegym's ValueMLP, a user's
``torch.nn.Sequential``, a Stable-Baselines3 critic (tablegym.models.export builds the vector).

Layout of ``params`` (every entry a float64)::

    [0] F inputs  [1] MAGIC  [2] L layers  [3] cache slots  [4] q (first-layer grid 2**-q, 0: none)
    [5] scratch offset  [6] reduce (0: output 0; 1: max over the legal actions' outputs)
    [7] E, the entries of the value cache (0: none)
    [8 + 5l : 13 + 5l]  layer l: inputs, outputs, activation code, activation parameter, W offset
    W_l as ``inputs`` rows of ``outputs`` (row i = input i's weights), then b_l, for every layer
    scratch: two activation buffers, the float32 input, an int64 index buffer (F + the widest
    layer: room for the features or the legal actions), then per slot
    the cached binary inputs (0/1 per feature), their count and list, and their first layer;
    last, the value cache: E position keys (int64) and E values

The scratch is written by every evaluation (one evaluator per search thread).

Binary inputs (a game's active features) are summed as weight rows. With cache slots, the first
layer of the last position evaluated for each player to move is kept and only the rows of the
features that changed are added or taken away: along a search path, siblings differ in a few
features, so a leaf costs a few rows instead of all (NNUE's accumulator, kept by the evaluator
itself, so no searcher needs push/pop hooks). The first layer's weights and bias are rounded to
multiples of 2**-q, with q chosen so that every partial sum is exact in float64: the result
does not depend on the order of the updates, and equals the full sum bit for bit.

The value cache (``cache`` entries, direct-mapped by position key) remembers the network's value
of recently evaluated positions: a depth-limited search reaches the same leaf by many move orders
(transpositions below its table's reach). A position's value does not depend on the path to it
(recomputed dense layers, or the exact incremental first layer), so a cached value is the value the
network would compute again, bit for bit: a hit changes nothing but the time.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.core import DRAW, ONGOING

MAGIC = 31_071_993.0
"""``params[1]`` of a network vector (where ValueMLP's older export has its first hidden width,
so kernels written for that layout can tell the two apart; both start with F)."""
HEADER = 8
LAYER = 5
IDENTITY, RELU, LEAKY_RELU, TANH, SIGMOID = range(5)
ACTIVATIONS = {"identity": IDENTITY, "relu": RELU, "leaky_relu": LEAKY_RELU, "tanh": TANH, "sigmoid": SIGMOID}
VALUE, MAX_LEGAL = 0, 1


def pack(layers: list[tuple[np.ndarray, np.ndarray, str, float]], *, reduce: int = VALUE, slots: int = 0,
         binary: bool = False, cache: int = 0) -> np.ndarray:
    """The parameter vector of ``layers``: (W of shape (out, in) as torch stores it, b, activation
    name, activation parameter) each. ``binary``: the inputs are 0/1 features, so the first layer
    is put on an exact grid (and may be kept incrementally in ``slots`` caches). ``cache``: entries
    of the value cache (a power of two, or 0)."""
    if cache & (cache - 1):
        raise ValueError(f"the value cache needs a power-of-two size, got {cache}")
    n = len(layers)
    f = layers[0][0].shape[1]
    h1 = layers[0][0].shape[0]
    widths = [w.shape[0] for w, _, _, _ in layers]
    head = np.zeros(HEADER + LAYER * n)
    head[:HEADER] = (f, MAGIC, n, slots, 0, 0, reduce, cache)
    blocks, offset = [], head.size
    for i, (w, b, act, param) in enumerate(layers):
        w = np.asarray(w, dtype=np.float64).T
        b = np.asarray(b, dtype=np.float64)
        if i == 0 and binary:
            q = _exact_grid(w, b)
            head[4] = q
            w = np.round(w * 2.0**q) / 2.0**q
            b = np.round(b * 2.0**q) / 2.0**q
        head[HEADER + LAYER * i: HEADER + LAYER * (i + 1)] = (w.shape[0], w.shape[1], ACTIVATIONS[act], param, offset)
        blocks += [w.reshape(-1), b]
        offset += w.size + b.size
    head[5] = offset
    fe = f + (f & 1)
    front = 2 * max(widths) + fe // 2 + fe + max(widths)
    scratch = np.zeros(front + slots * (2 * fe + 1 + h1))
    for slot in range(slots):  # an empty cache: no feature present, the first layer is its bias
        start = front + slot * (2 * fe + 1 + h1) + 2 * fe + 1
        scratch[start:start + h1] = blocks[1]
    return np.concatenate([head, *blocks, scratch, np.zeros(2 * cache)])


def clear_value_cache(params: np.ndarray) -> None:
    """Forget every remembered value (a benchmark that repeats a search times it cold); a no-op
    for parameter vectors that are not networks with a cache."""
    if params.shape[0] > HEADER and params[1] == MAGIC and params[7] > 0:
        e = int(params[7])
        params[params.shape[0] - 2 * e:params.shape[0] - e] = 0.0


def without_value_cache(params: np.ndarray) -> np.ndarray:
    """A copy of ``params`` that computes every value (a benchmark of the evaluation itself);
    other parameter vectors come back unchanged."""
    if params.shape[0] > HEADER and params[1] == MAGIC and params[7] > 0:
        params = params.copy()
        params[7] = 0
    return params


def _exact_grid(w: np.ndarray, b: np.ndarray) -> int:
    """The finest grid 2**-q on which every partial sum of first-layer rows and bias is an exact
    float64 (its largest magnitude, times 2**q, below 2**52)."""
    bound = np.abs(w).sum(axis=0).max() + np.abs(b).max() + 1.0
    return int(51 - np.ceil(np.log2(bound)))


@njit(cache=True, inline="always")
def _activate(x, code, param):
    if code == RELU:
        return x if x > 0.0 else 0.0
    if code == LEAKY_RELU:
        return x if x > 0.0 else param * x
    if code == TANH:
        return np.tanh(x)
    if code == SIGMOID:
        return 1.0 / (1.0 + np.exp(-x))
    return x


@njit(cache=True)
def _buffers(params):
    """(activation buffer a, activation buffer b, float32 input, int64 indices) in the scratch."""
    f = int(params[0])
    fe = f + (f & 1)
    n = int(params[2])
    width = 0
    for i in range(n):
        width = max(width, int(params[HEADER + LAYER * i + 1]))
    start = int(params[5])
    a = params[start:start + width]
    b = params[start + width:start + 2 * width]
    x = params[start + 2 * width:start + 2 * width + fe // 2].view(np.float32)[:f]
    idx = params[start + 2 * width + fe // 2:start + 2 * width + fe // 2 + fe + width].view(np.int64)
    return a, b, x, idx


@njit(cache=True)
def input_buffer(params):
    """The float32 scratch a game's observation kernel writes the network's input into."""
    return _buffers(params)[2]


@njit(cache=True)
def index_buffer(params):
    """The int64 scratch a game's feature or move kernel writes indices into."""
    return _buffers(params)[3]


@njit(cache=True, fastmath=True)
def _activate_all(x, n, code, param):
    if code == RELU:
        for j in range(n):
            x[j] = max(x[j], 0.0)
    elif code == LEAKY_RELU:
        for j in range(n):
            x[j] = x[j] if x[j] > 0.0 else param * x[j]
    elif code == TANH:
        for j in range(n):
            x[j] = np.tanh(x[j])
    elif code == SIGMOID:
        for j in range(n):
            x[j] = 1.0 / (1.0 + np.exp(-x[j]))


@njit(cache=True, fastmath=True, inline="always")
def _add_rows(acc, x, n, weights, out):
    """``acc += x[:n] @ weights`` (``n`` rows of ``out``), skipping the zero entries of ``x``.

    The non-zero entries are listed first, without a branch: after a ReLU about half the
    activations are zero in no pattern a branch predictor learns, and a skip decided row by row
    was mispredicted often enough to cost more than the rows (1.6-2x slower, measured on varied
    inputs). Each ``acc[j]`` still adds its rows in increasing order: the same sums, bit for bit.
    """
    nz = np.empty(n, np.int64)
    m = 0
    for k in range(n):
        nz[m] = k
        m += x[k] != 0.0
    for t in range(m):
        k = nz[t]
        v = x[k]
        row = weights[k * out:k * out + out]
        for j in range(out):
            acc[j] += v * row[j]


@njit(cache=True, fastmath=True)
def _forward_from(cur, layer, params, legal, n_legal):
    """Finish the network from ``cur``, layer ``layer``'s pre-activations (an array of its own,
    overwritten: activations outside ``params`` let the compiler vectorise, knowing they do not
    overlap the weights), and reduce the output. A one-output last layer is a dot product."""
    n = int(params[2])
    width = int(params[HEADER + LAYER * layer + 1])
    for i in range(layer, n):
        h = HEADER + LAYER * i
        _activate_all(cur, width, int(params[h + 2]), params[h + 3])
        if i + 1 == n:
            break
        h2 = h + LAYER
        out = int(params[h2 + 1])
        w = int(params[h2 + 4])
        if out == 1 and i + 2 == n and int(params[6]) != MAX_LEGAL:
            column = params[w:w + width]
            acc = params[w + width]
            for k in range(width):
                acc += cur[k] * column[k]
            return _activate(acc, int(params[h2 + 2]), params[h2 + 3])
        weights = params[w:w + width * out]
        nxt = params[w + width * out:w + width * out + out].copy()
        _add_rows(nxt, cur, width, weights, out)
        cur = nxt
        width = out
    if int(params[6]) == MAX_LEGAL:
        best = -np.inf
        for k in range(n_legal):
            if cur[legal[k]] > best:
                best = cur[legal[k]]
        return best
    return cur[0]


@njit(cache=True, fastmath=True)
def forward_mixed(dense, active, n, params, legal, n_legal):
    """The network on real inputs ``dense`` (features 0..len-1, zeros skipped) plus the binary
    features ``active[:n]``."""
    out = int(params[HEADER + 1])
    w = int(params[HEADER + 4])
    f = int(params[0])
    # Weights through a view that starts at 0 and activations in an array of their own: with
    # offsets into ``params`` the compiler does not vectorise these loops (2.3x slower, measured).
    weights = params[w:w + f * out]
    b = params[w + f * out:w + f * out + out].copy()
    _add_rows(b, dense, dense.shape[0], weights, out)
    for k in range(n):
        row = active[k] * out
        for j in range(out):
            b[j] += weights[row + j]
    return _forward_from(b, 0, params, legal, n_legal)


_NO_INDEX = np.zeros(0, dtype=np.int64)


@njit(cache=True)
def forward_dense(x, params, legal, n_legal):
    """The network on real inputs ``x``; with ``params[6] == MAX_LEGAL`` the largest output among
    the actions ``legal[:n_legal]`` (a Q-network's value)."""
    return forward_mixed(x, _NO_INDEX, 0, params, legal, n_legal)


@njit(cache=True)
def _first_layer_full(active, n, params, hid):
    out = int(params[HEADER + 1])
    w = int(params[HEADER + 4])
    f = int(params[0])
    weights = params[w:w + f * out]
    for j in range(out):
        hid[j] = params[w + f * out + j]
    for k in range(n):
        row = active[k] * out
        for j in range(out):
            hid[j] += weights[row + j]


@njit(cache=True)
def _add_row(hid, params, row, out, sign):
    weights = params[row:row + out]
    for j in range(out):
        hid[j] += sign * weights[j]


@njit(cache=True)
def forward_binary(active, n, slot, params):
    """The network on the binary features ``active[:n]``; with ``params[3]`` cache slots, the
    first layer is updated from the one last computed in ``slot`` (see the module docstring)."""
    f = int(params[0])
    fe = f + (f & 1)
    slots = int(params[3])
    a, b, _, _ = _buffers(params)
    if slots == 0:
        _first_layer_full(active, n, params, b)
        return _forward_from(b, 0, params, active, 0)
    out = int(params[HEADER + 1])
    w = int(params[HEADER + 4])
    width = 0
    for i in range(int(params[2])):
        width = max(width, int(params[HEADER + LAYER * i + 1]))
    base = int(params[5]) + 3 * width + fe // 2 + fe + (slot % slots) * (2 * fe + 1 + out)
    present = params[base:base + f]
    old = params[base + fe:base + 2 * fe].view(np.int64)
    hid = params[base + 2 * fe + 1:base + 2 * fe + 1 + out]
    n_old = int(params[base + 2 * fe])
    for k in range(n):
        c = active[k]
        if present[c] == 0.0:
            _add_row(hid, params, w + c * out, out, 1.0)
        present[c] = 2.0
    for k in range(n_old):
        c = old[k]
        if present[c] == 1.0:
            _add_row(hid, params, w + c * out, out, -1.0)
            present[c] = 0.0
    for k in range(n):
        c = active[k]
        present[c] = 1.0
        old[k] = c
    params[base + 2 * fe] = n
    return _forward_from(hid.copy(), 0, params, active, 0)


@njit(cache=True)
def cached_value(params, key):
    """The value remembered for position ``key`` (NaN when it is not in the cache)."""
    e = int(params[7])
    if e == 0 or key == 0:
        return np.nan
    base = params.shape[0] - 2 * e
    i = key & (e - 1)
    if params[base:base + e].view(np.int64)[i] == key:
        return params[base + e + i]
    return np.nan


@njit(cache=True)
def remember_value(params, key, value):
    """Keep ``value`` as position ``key``'s in the cache (replacing whatever shared its entry)."""
    e = int(params[7])
    if e == 0 or key == 0:
        return value
    base = params.shape[0] - 2 * e
    i = key & (e - 1)
    params[base:base + e].view(np.int64)[i] = key
    params[base + e + i] = value
    return value


@njit(cache=True)
def terminal_or(outcome, mover, player, value, win):
    """``win``/-``win``/0 for ``player`` at a finished game (``outcome``), else ``value`` (seen by
    the player to move) seen by ``player``."""
    if outcome != ONGOING:
        if outcome == DRAW:
            return 0.0
        return win if outcome == player else -win
    return value if mover == player else -value


@njit(cache=True)
def observation_value(outcome, mover, player, x, legal, n_legal, params, win):
    """What a game's observation-value kernel returns: ``win``/-``win``/0 at a finished game, else
    the network on the observation ``x`` of the player to move (its value for that player, or its
    largest output over ``legal[:n_legal]``), seen by ``player``."""
    v = forward_dense(x, params, legal, n_legal) if outcome == ONGOING else 0.0
    return terminal_or(outcome, mover, player, v, win)


@njit(cache=True)
def wants_legal(params):
    """Whether the network's value is a maximum over the legal actions (a Q-network)."""
    return int(params[6]) == MAX_LEGAL
