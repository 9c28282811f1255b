"""Compiled feed-forward networks: a stack of Linear layers with common activations, stored in one
float64 vector that numba kernels evaluate inside the searches without calling back into Python.

Any network of that shape plugs into a compiled search this way: tablegym's ValueMLP, a user's
``torch.nn.Sequential``, a Stable-Baselines3 critic (tablegym.models.export builds the vector).

Layout of ``params`` (every entry a float64)::

    [0] F inputs  [1] MAGIC  [2] L layers  [3] cache slots  [4] q (first-layer grid 2**-q, 0: none)
    [5] scratch offset  [6] reduce (0: output 0; 1: max over the legal actions' outputs)
    [7] E, the entries of the value cache (0: none)  [8] the widest layer
    [9 + 6l : 15 + 6l]  layer l: inputs, outputs, activation code, activation parameter, W offset,
                        offset of W's float32 copy (0: none)
    W_l as ``inputs`` rows of ``outputs`` (row i = input i's weights), then b_l, for every layer;
    then the float32 copies (each in whole float64 slots)
    scratch: two activation buffers, the float32 input, an int64 index buffer (F + the widest
    layer: room for the features or the legal actions, and a layer's non-zero activations),
    then per slot
    the cached binary inputs (0/1 per feature), their count and list, and their first layer;
    last, the value cache: E entries of a position key (int64) and its value, side by side

The scratch and the value cache are written by every evaluation, so an evaluator gives each
thread a copy of the vector of its own and keeps the packed one unwritten
(``tablegym.envs.evaluator.Evaluator.params``).

Binary inputs (a game's active features) are summed as weight rows. With cache slots, the first
layer of the last position evaluated for each player to move is kept and only the rows of the
features that changed are added or taken away: along a search path, siblings differ in a few
features, so a leaf costs a few rows instead of all (NNUE's accumulator, kept by the evaluator
itself, so no searcher needs push/pop hooks; an exported critic over 0/1 observation planes gets
the same through ``observed_value``). The first layer's weights and bias are rounded to
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
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from tablegym.envs.core import CHANCE, DRAW, KEY, ONGOING, TO_MOVE

MAGIC = 31_071_993.0
"""``params[1]`` of a network vector (where ValueMLP's older export has its first hidden width,
so kernels written for that layout can tell the two apart; both start with F)."""
HEADER = 9
LAYER = 6
IDENTITY, RELU, LEAKY_RELU, TANH, SIGMOID = range(5)
ACTIVATIONS = {"identity": IDENTITY, "relu": RELU, "leaky_relu": LEAKY_RELU, "tanh": TANH, "sigmoid": SIGMOID}
VALUE, MAX_LEGAL = 0, 1

CHUNK = 8
"""Activations ``_lister`` compares at once."""
COMPRESS = np.array(
    [[k for k in range(CHUNK) if mask >> k & 1] + [0] * (CHUNK - bin(mask).count("1")) for mask in range(1 << CHUNK)],
    dtype=np.int8,
)
"""Row ``mask``: the positions of the set bits of ``mask``, in order (zeros after them)."""


def pack(
    layers: list[tuple[np.ndarray, np.ndarray, str, float]],
    *,
    reduce: int = VALUE,
    slots: int = 0,
    binary: bool = False,
    cache: int = 0,
) -> np.ndarray:
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
    head[:HEADER] = (f, MAGIC, n, slots, 0, 0, reduce, cache, max(widths))
    blocks, offset = [], head.size
    for i, (w, b, act, param) in enumerate(layers):
        w = np.asarray(w, dtype=np.float64).T
        b = np.asarray(b, dtype=np.float64)
        if i == 0 and binary:
            q = _exact_grid(w, b)
            head[4] = q
            w = np.round(w * 2.0**q) / 2.0**q
            b = np.round(b * 2.0**q) / 2.0**q
        head[HEADER + LAYER * i : HEADER + LAYER * (i + 1) - 1] = (w.shape[0], w.shape[1], ACTIVATIONS[act], param, offset)
        blocks += [w.reshape(-1), b]
        offset += w.size + b.size
    for i, block in enumerate(blocks[0::2]):
        # A layer whose weights are float32 values (a network trained in float32, as torch does)
        # is also kept as float32: the same products, half the memory the searches stream.
        if i > 0 and np.array_equal(block.astype(np.float32).astype(np.float64), block):
            copy = block.astype(np.float32)
            copy = np.concatenate([copy, np.zeros(copy.size & 1, np.float32)]).view(np.float64)
            head[HEADER + LAYER * i + 5] = offset
            blocks.append(copy)
            offset += copy.size
    head[5] = offset
    fe = f + (f & 1)
    front = 2 * max(widths) + fe // 2 + fe + max(widths)
    scratch = np.zeros(front + slots * (2 * fe + 1 + h1))
    for slot in range(slots):  # an empty cache: no feature present, the first layer is its bias
        start = front + slot * (2 * fe + 1 + h1) + 2 * fe + 1
        scratch[start : start + h1] = blocks[1]
    return np.concatenate([head, *blocks, scratch, np.zeros(2 * cache)])


def clear_value_cache(params: np.ndarray) -> None:
    """Forget every remembered value (a benchmark that repeats a search times it cold); a no-op
    for parameter vectors that are not networks with a cache."""
    if params.shape[0] > HEADER and params[1] == MAGIC and params[7] > 0:
        e = int(params[7])
        params[params.shape[0] - 2 * e :: 2] = 0.0  # every key


def without_value_cache(params: np.ndarray) -> np.ndarray:
    """A copy of ``params`` that computes every value (a benchmark of the evaluation itself);
    other parameter vectors come back unchanged."""
    if params.shape[0] > HEADER and params[1] == MAGIC and params[7] > 0:
        params = params.copy()
        params[7] = 0
    return params


def evaluated_whole(params: np.ndarray) -> np.ndarray:
    """A copy of ``params`` that computes the whole network at every evaluation: no kept first
    layer, no value cache (the same values; the baseline of what those two save). Other parameter
    vectors come back unchanged."""
    params = without_value_cache(params)
    if params.shape[0] > HEADER and params[1] == MAGIC and params[3] > 0:
        params = params.copy()
        params[3] = 0
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
def index_buffer(params):
    """The int64 scratch a game's feature or move kernel writes indices into (asked at every
    leaf: computed alone)."""
    f = int(params[0])
    fe = f + (f & 1)
    width = int(params[8])
    start = int(params[5]) + 2 * width + fe // 2
    return params[start : start + fe + width].view(np.int64)


@njit(cache=True)
def _buffers(params):
    """(activation buffer a, activation buffer b, float32 input, int64 indices) in the scratch."""
    f = int(params[0])
    fe = f + (f & 1)
    width = int(params[8])
    start = int(params[5])
    a = params[start : start + width]
    b = params[start + width : start + 2 * width]
    x = params[start + 2 * width : start + 2 * width + fe // 2].view(np.float32)[:f]
    return a, b, x, index_buffer(params)


@njit(cache=True)
def _weights32(params, layer):
    """Layer ``layer``'s float32 copy of its weights (empty when it has none)."""
    h = HEADER + LAYER * layer
    at = int(params[h + 5])
    size = int(params[h]) * int(params[h + 1]) if at > 0 else 0
    return params[at : at + (size + 1) // 2].view(np.float32)[:size]


@njit(cache=True)
def input_buffer(params):
    """The float32 scratch a game's observation kernel writes the network's input into."""
    return _buffers(params)[2]


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


LANES, VECTORS = 4, 8
BLOCK = LANES * VECTORS
"""Outputs ``_rows_block`` adds per pass: 8 vectors of 4 doubles, which stay in registers on
AVX2 (16 vector registers) and AVX-512 alike."""


@intrinsic
def _rows_block(typingctx, acc, x, rows, m, weights, out, j0):
    """``acc[j0:j0 + BLOCK] += x[k] * weights[k * out + j0:...]`` for ``k`` in ``rows[:m]``, in
    that order, one fused multiply-add per output and row: the sums ``_add_rows`` made before,
    bit for bit.

    Why LLVM IR: a numba loop over the outputs keeps ``acc`` in memory, so every row waits for
    the previous row's stores (a 128 x 64 layer: about 8 ns a row on this machine); numba does
    not vectorise a block of scalar accumulators either. Here the block's accumulators are
    vectors held in registers across all the rows (1.5x faster on the layer, measured).
    """
    sig = types.void(acc, x, rows, m, weights, out, j0)

    def codegen(context, builder, signature, args):
        acc_v, x_v, rows_v, m_v, w_v, out_v, j0_v = args
        data = [context.make_array(signature.args[i])(context, builder, args[i]).data for i in (0, 1, 2, 4)]
        acc_p, x_p, rows_p, w_p = data
        i32, i64 = ir.IntType(32), ir.IntType(64)
        vec = ir.VectorType(ir.DoubleType(), LANES)
        single = signature.args[4].dtype == types.float32  # float32 weights, widened exactly
        wvec = ir.VectorType(ir.FloatType(), LANES) if single else vec
        fma = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vec, [vec, vec, vec]), f"llvm.fma.v{LANES}f64")

        def at(base, offset, kind=vec):  # the vector at base[offset]
            return builder.bitcast(builder.gep(base, [offset]), kind.as_pointer())

        block = builder.gep(acc_p, [j0_v])
        sums = []
        for b in range(VECTORS):
            slot = cgutils.alloca_once(builder, vec)  # promoted to a register by LLVM
            builder.store(builder.load(at(block, ir.Constant(i64, LANES * b)), align=8), slot)
            sums.append(slot)
        with cgutils.for_range(builder, m_v) as loop:
            k = builder.load(builder.gep(rows_p, [loop.index]))
            v = builder.load(builder.gep(x_p, [k]))
            if signature.args[1].dtype == types.float32:  # a float32 input (an observation), widened exactly
                v = builder.fpext(v, ir.DoubleType())
            v = builder.insert_element(ir.Constant(vec, ir.Undefined), v, ir.Constant(i32, 0))
            v = builder.shuffle_vector(v, ir.Constant(vec, ir.Undefined), ir.Constant(ir.VectorType(i32, LANES), [0] * LANES))
            row = builder.gep(w_p, [builder.add(builder.mul(k, out_v), j0_v)])
            for b in range(VECTORS):
                w = builder.load(at(row, ir.Constant(i64, LANES * b), wvec), align=4 if single else 8)
                if single:
                    w = builder.fpext(w, vec)
                builder.store(builder.call(fma, [v, w, builder.load(sums[b])]), sums[b])
        for b in range(VECTORS):
            builder.store(builder.load(sums[b]), at(block, ir.Constant(i64, LANES * b)), align=8)

    return sig, codegen


@njit(cache=True, fastmath=True)
def _add_listed(acc, x, rows, m, weights, out):
    """``acc += x[k] * weights[k]`` (row ``k`` of ``out`` weights) for ``k`` in ``rows[:m]``, in
    that order: whole blocks of outputs in registers, the rest in a loop.

    Not inlined: numba would compile the loop under its caller's float flags, and a caller
    without ``fastmath`` would round each product before adding it instead of fusing the two
    as every other path does (the last bit of some values differed)."""
    j0 = 0
    while j0 + BLOCK <= out:
        _rows_block(acc, x, rows, m, weights, out, j0)
        j0 += BLOCK
    if j0 < out:
        for t in range(m):
            k = rows[t]
            v = x[k]
            row = weights[k * out : k * out + out]
            for j in range(j0, out):
                acc[j] += v * row[j]


def _lister(positive: bool):
    """An intrinsic ``(x, n, rows, table) -> m`` that writes the indices ``k < n`` with
    ``x[k] > 0`` (``positive``: a ReLU's non-zero outputs, from its inputs) or ``x[k] != 0``
    into ``rows[:m]``, in increasing order (``rows`` has room for ``n``); ``table`` is
    ``COMPRESS``.

    Why LLVM IR: a loop that tests one activation at a time costs as much as a third of the rows
    it lists (a branch on the test is mispredicted on about half of them after a ReLU, and a
    branch-free loop waits on its count at every step). Here ``CHUNK`` activations are compared
    at once into a bit mask, whose ``COMPRESS`` row holds the positions of its set bits: those
    are stored as a whole vector (at most up to ``rows[n - 1]``: the count never passes the
    chunk's start), and the count moves on by the mask's population.
    """

    @intrinsic
    def lister(typingctx, x, n, rows, table):
        sig = types.int64(x, n, rows, table)

        def codegen(context, builder, signature, args):
            x_p, rows_p, table_p = (context.make_array(signature.args[i])(context, builder, args[i]).data for i in (0, 2, 3))
            n_v = args[1]
            i8, i64 = ir.IntType(8), ir.IntType(64)
            kind = ir.FloatType() if signature.args[0].dtype == types.float32 else ir.DoubleType()
            vec, ivec = ir.VectorType(kind, CHUNK), ir.VectorType(i64, CHUNK)

            def test(value, zero):
                return builder.fcmp_ordered(">", value, zero) if positive else builder.fcmp_unordered("!=", value, zero)

            ctpop = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i8, [i8]), "llvm.ctpop.i8")
            count = cgutils.alloca_once_value(builder, ir.Constant(i64, 0))
            chunks = builder.lshr(n_v, ir.Constant(i64, CHUNK.bit_length() - 1))
            with cgutils.for_range(builder, chunks) as loop:
                base = builder.mul(loop.index, ir.Constant(i64, CHUNK))
                values = builder.load(builder.bitcast(builder.gep(x_p, [base]), vec.as_pointer()), align=4)
                mask = builder.bitcast(test(values, ir.Constant(vec, [0.0] * CHUNK)), i8)
                where = builder.gep(table_p, [builder.mul(builder.zext(mask, i64), ir.Constant(i64, CHUNK))])
                where = builder.zext(builder.load(builder.bitcast(where, ir.VectorType(i8, CHUNK).as_pointer()), align=1), ivec)
                start = builder.insert_element(ir.Constant(ivec, ir.Undefined), base, ir.Constant(ir.IntType(32), 0))
                splat = ir.Constant(ir.VectorType(ir.IntType(32), CHUNK), [0] * CHUNK)  # lane 0 everywhere
                start = builder.shuffle_vector(start, ir.Constant(ivec, ir.Undefined), splat)
                m = builder.load(count)
                builder.store(builder.add(where, start), builder.bitcast(builder.gep(rows_p, [m]), ivec.as_pointer()), align=8)
                builder.store(builder.add(m, builder.zext(builder.call(ctpop, [mask]), i64)), count)
            with cgutils.for_range(builder, n_v, start=builder.mul(chunks, ir.Constant(i64, CHUNK))) as loop:
                m = builder.load(count)
                builder.store(loop.index, builder.gep(rows_p, [m]))
                hit = test(builder.load(builder.gep(x_p, [loop.index])), ir.Constant(kind, 0.0))
                builder.store(builder.add(m, builder.zext(hit, i64)), count)
            return builder.load(count)

        return sig, codegen

    return lister


_list_nonzero = _lister(positive=False)
_list_positive = _lister(positive=True)


@njit(cache=True, fastmath=True, inline="always")
def _add_rows(acc, x, n, weights, out):
    """``acc += x[:n] @ weights`` (``n`` rows of ``out``), skipping the zero entries of ``x``.
    Each ``acc[j]`` adds its rows in increasing order: the same sums, bit for bit, however the
    rows are grouped."""
    rows = np.empty(n, np.int64)
    m = _list_nonzero(x, n, rows, COMPRESS)
    _add_listed(acc, x, rows, m, weights, out)


@njit(cache=True, fastmath=True)
def _dot_out(cur, width, params, h):
    """A one-output last layer (record ``h``) on the activations ``cur[:width]``: its dot
    product and activation. One compiled function for every path, so each sums in the same
    order (the compiler splits this reduction into partial sums of its choosing)."""
    w = int(params[h + 4])
    column = params[w : w + width]
    acc = params[w + width]
    for k in range(width):
        acc += cur[k] * column[k]
    return _activate(acc, int(params[h + 2]), params[h + 3])


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
            return _dot_out(cur, width, params, h2)
        nxt = params[w + width * out : w + width * out + out].copy()
        w32 = _weights32(params, i + 1)
        if w32.shape[0] > 0:
            _add_rows(nxt, cur, width, w32, out)
        else:
            _add_rows(nxt, cur, width, params[w : w + width * out], out)
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
    weights = params[w : w + f * out]
    b = params[w + f * out : w + f * out + out].copy()
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
    weights = params[w : w + f * out]
    for j in range(out):
        hid[j] = params[w + f * out + j]
    for k in range(n):
        row = active[k] * out
        for j in range(out):
            hid[j] += weights[row + j]


@njit(cache=True)
def _add_row(hid, params, row, out, sign):
    weights = params[row : row + out]
    for j in range(out):
        hid[j] += sign * weights[j]


@njit(cache=True)
def forward_binary(active, n, slot, params):
    """The network on the binary features ``active[:n]``; with ``params[3]`` cache slots, the
    first layer is updated from the one last computed in ``slot`` (see the module docstring)."""
    f = int(params[0])
    fe = f + (f & 1)
    slots = int(params[3])
    a, b, _, idx = _buffers(params)
    if slots == 0:
        _first_layer_full(active, n, params, b)
        return _forward_from(b, 0, params, active, 0)
    out = int(params[HEADER + 1])
    w = int(params[HEADER + 4])
    width = a.shape[0]
    base = int(params[5]) + 3 * width + fe // 2 + fe + (slot % slots) * (2 * fe + 1 + out)
    present = params[base : base + f]
    old = params[base + fe : base + 2 * fe].view(np.int64)
    hid = params[base + 2 * fe + 1 : base + 2 * fe + 1 + out]
    n_old = int(params[base + 2 * fe])
    # Leaves evaluated one after another (siblings, cousins) list mostly the same features: the
    # two lists agree on a prefix and a suffix, whose rows are in the kept layer already, so
    # only the features between them are looked up (each list names a feature at most once).
    lim = min(n, n_old)
    p = 0
    while p < lim and active[p] == old[p]:
        p += 1
    q = 0
    while q < lim - p and active[n - 1 - q] == old[n_old - 1 - q]:
        q += 1
    for k in range(p, n - q):
        c = active[k]
        if present[c] == 0.0:
            _add_row(hid, params, w + c * out, out, 1.0)
        present[c] = 2.0
    for k in range(p, n_old - q):
        c = old[k]
        if present[c] == 1.0:
            _add_row(hid, params, w + c * out, out, -1.0)
            present[c] = 0.0
    for k in range(p, n):
        c = active[k]
        present[c] = 1.0
        old[k] = c
    params[base + 2 * fe] = n
    h2 = HEADER + LAYER
    if (
        int(params[2]) < 2
        or int(params[HEADER + 2]) != RELU
        or (int(params[h2 + 1]) == 1 and int(params[2]) == 2 and int(params[6]) != MAX_LEGAL)
    ):
        return _forward_from(hid.copy(), 0, params, active, 0)  # (which ends in its dot product)
    # The second layer straight from the kept first layer, in the scratch: its ReLU keeps the
    # positive entries, which are the rows to add (no copy, no allocation at a leaf).
    nxt = int(params[h2 + 1])
    w2 = int(params[h2 + 4])
    rows = idx[fe : fe + out]
    m = _list_positive(hid, out, rows, COMPRESS)
    for j in range(nxt):
        a[j] = params[w2 + out * nxt + j]
    w32 = _weights32(params, 1)
    if w32.shape[0] > 0:
        _add_listed(a, hid, rows, m, w32, nxt)
    else:
        _add_listed(a, hid, rows, m, params[w2 : w2 + out * nxt], nxt)
    h3 = h2 + LAYER
    if int(params[2]) == 3 and int(params[h2 + 2]) == RELU and int(params[h3 + 1]) == 1 and int(params[6]) != MAX_LEGAL:
        for j in range(nxt):  # the usual value network: ReLU, then one output
            a[j] = max(a[j], 0.0)
        return _dot_out(a, nxt, params, h3)
    return _forward_from(a[:nxt], 1, params, active, 0)


@njit(cache=True)
def cached_value(params, key):
    """The value remembered for position ``key`` (NaN when it is not in the cache)."""
    e = int(params[7])
    if e == 0 or key == 0:
        return np.nan
    at = params.shape[0] - 2 * e + 2 * (key & (e - 1))  # the entry's key, then its value
    if params[at : at + 1].view(np.int64)[0] == key:
        return params[at + 1]
    return np.nan


@njit(cache=True)
def remember_value(params, key, value):
    """Keep ``value`` as position ``key``'s in the cache (replacing whatever shared its entry)."""
    e = int(params[7])
    if e == 0 or key == 0:
        return value
    at = params.shape[0] - 2 * e + 2 * (key & (e - 1))
    params[at : at + 1].view(np.int64)[0] = key
    params[at + 1] = value
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
def observed_value(x, slot, params):
    """The network (one output, packed with cache ``slots``) on the observation ``x``: where every
    entry is 0 or 1 (board planes) its first layer is kept in ``slot`` and only the rows of the
    entries that changed since that slot's last position are added or taken away, as for a
    game's binary features (``forward_binary``); otherwise the whole network. Both give the same
    value bit for bit (the first layer is on the exact grid), so which path ran never shows."""
    f = int(params[0])
    active = index_buffer(params)[:f]
    n = _list_nonzero(x, f, active, COMPRESS)
    for k in range(n):
        if x[active[k]] != 1.0:
            return forward_dense(x, params, active, 0)
    return forward_binary(active, n, slot, params)


@njit(cache=True, inline="always")
def network_value(s, player, params, moves, outcome, to_move, observe):
    """The glue between a two-player game's kernels and an exported network (tablegym.models.export):
    the network on the flat observation of the player deciding (the header's ``TO_MOVE``: the
    thrower while Trap's trap is in the air), its value seen by ``player``; +-1/0 once the game is
    over. A Q-network's best output is over the legal actions where that player decides, -inf at
    a chance node (no decision there). A game's ``network_value`` kernel calls this with its own
    kernels: numba compiles one copy a game and caches it with the game's kernel."""
    x, legal = input_buffer(params), index_buffer(params)
    mover = s[TO_MOVE]
    if int(params[3]) > 0 and outcome(s) == ONGOING:  # a critic kept incrementally (see observed_value)
        v = cached_value(params, s[KEY])
        if v != v:
            observe(s, mover, x)
            v = remember_value(params, s[KEY], observed_value(x, mover, params))
        return v if mover == player else -v
    n = moves(s, legal) if wants_legal(params) and to_move(s) == mover else 0
    if outcome(s) == ONGOING:
        observe(s, mover, x)
    return observation_value(outcome(s), mover, player, x, legal, n, params, 1.0)


@njit(cache=True, inline="always")
def solo_network_value(s, params, moves, outcome, to_move, observe, finished):
    """``network_value`` for a single-player game: ``finished(s)`` once the game is over (its
    return as ``State.returns()`` gives it), else the network on the observation (a Q-network's
    best legal output at a decision, -inf at a chance node)."""
    if outcome(s) != ONGOING:
        return finished(s)
    x, legal = input_buffer(params), index_buffer(params)
    n = moves(s, legal) if wants_legal(params) and to_move(s) != CHANCE else 0
    observe(s, 0, x)
    return forward_dense(x, params, legal, n)


@njit(cache=True)
def wants_legal(params):
    """Whether the network's value is a maximum over the legal actions (a Q-network)."""
    return int(params[6]) == MAX_LEGAL
