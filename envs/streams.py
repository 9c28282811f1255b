"""NumPy's ``Generator(PCG64)`` streams inside compiled code, one per env of a batch.

A single env draws every random event (a chance node, a random opponent's move) from its
``np_random``, a ``numpy.random.Generator`` over PCG64. The batched envs of envs/vector.py step
thousands of boards in one numba call, where a Generator object per board cannot go; they keep
each board's PCG64 state as a row of a ``uint64`` array instead and draw from it with the
functions below, which repeat NumPy's algorithms bit for bit. So board ``i`` of a batch seeded
``s`` plays exactly the game of a single env seeded ``s + i`` (what ``SyncVectorEnv`` gives).

A stream row (``STREAM_WIDTH`` words)::

    [0] state, high 64 bits   [1] state, low 64 bits   [2] increment, high   [3] increment, low
    [4] has_uint32 (a buffered half-word is waiting)   [5] that half-word

What is repeated: ``next_uint64`` / ``next_uint32`` / ``next_double`` of NumPy's PCG64 (XSL-RR
128/64), ``Generator.integers(n)`` (Lemire's bounded method on 32 bits; no draw when ``n == 1``)
and ``Generator.choice(n, p=p / p.sum())`` (pairwise sum, cumulative sum, one double,
``searchsorted(side="right")``), which is how envs/core.py's ``sample_outcome`` samples a chance node.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit

STREAM_WIDTH = 6
_MASK64 = (1 << 64) - 1
_MULT_HI = np.uint64(0x2360ED051FC65DA4)
_MULT_LO = np.uint64(0x4385DF649FCCF645)
_M32 = np.uint64(0xFFFFFFFF)


def stream_rows(seeds: list[int | None] | np.ndarray) -> np.ndarray:
    """The stream rows of ``numpy.random.default_rng(seed)`` for each seed (None: fresh entropy),
    i.e. of the ``np_random`` a Gymnasium env gets from ``reset(seed=seed)``."""
    rows = np.empty((len(seeds), STREAM_WIDTH), dtype=np.uint64)
    for i, seed in enumerate(seeds):
        rows[i] = state_row(np.random.PCG64(np.random.SeedSequence(seed)).state)
    return rows


def state_row(state: Mapping[str, Any]) -> np.ndarray:
    """A stream row from a PCG64 ``bit_generator.state`` dict."""
    if state.get("bit_generator") != "PCG64":
        raise ValueError(f"a stream row holds a PCG64 state, got a {state.get('bit_generator')!r} one")
    st, inc = state["state"]["state"], state["state"]["inc"]
    return np.array([st >> 64, st & _MASK64, inc >> 64, inc & _MASK64, state["has_uint32"], state["uinteger"]], dtype=np.uint64)


def row_state(row: np.ndarray) -> dict:
    """The PCG64 ``bit_generator.state`` dict of a stream row (to continue it in NumPy)."""
    w = [int(x) for x in row]
    return {
        "bit_generator": "PCG64",
        "state": {"state": (w[0] << 64) | w[1], "inc": (w[2] << 64) | w[3]},
        "has_uint32": w[4],
        "uinteger": w[5],
    }


@njit(cache=True)
def _mulhi(a, b):
    """The high 64 bits of the 128-bit product of two uint64."""
    a_lo, a_hi = a & _M32, a >> np.uint64(32)
    b_lo, b_hi = b & _M32, b >> np.uint64(32)
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    cross = (lo_lo >> np.uint64(32)) + (hi_lo & _M32) + lo_hi
    return a_hi * b_hi + (hi_lo >> np.uint64(32)) + (cross >> np.uint64(32))


@njit(cache=True)
def next_uint64(row):
    """PCG64's next 64-bit output: step the 128-bit LCG, then XSL-RR of the new state."""
    s_hi, s_lo = row[0], row[1]
    lo = s_lo * _MULT_LO
    hi = _mulhi(s_lo, _MULT_LO) + s_hi * _MULT_LO + s_lo * _MULT_HI
    new_lo = lo + row[3]
    carry = np.uint64(1) if new_lo < lo else np.uint64(0)
    new_hi = hi + row[2] + carry
    row[0] = new_hi
    row[1] = new_lo
    x = new_hi ^ new_lo
    rot = new_hi >> np.uint64(58)
    return (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))


@njit(cache=True)
def next_uint32(row):
    """PCG64's next 32-bit output: the buffered high half of the last word, else a new word's low half."""
    if row[4] != 0:
        row[4] = 0
        return row[5]
    word = next_uint64(row)
    row[4] = 1
    row[5] = word >> np.uint64(32)
    return word & _M32


@njit(cache=True)
def next_double(row):
    """``Generator.random()``: a double in [0, 1) from the top 53 bits of a word."""
    return np.float64(next_uint64(row) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def integers(row, n):
    """``Generator.integers(n)`` for 1 <= n < 2**32: Lemire's bounded draw on 32-bit words."""
    rng = np.uint64(n - 1)
    if rng == 0:
        return 0
    if rng == _M32:
        return np.int64(next_uint32(row))
    excl = rng + np.uint64(1)
    m = next_uint32(row) * excl
    leftover = m & _M32
    if leftover < excl:
        threshold = (_M32 - rng) % excl
        while leftover < threshold:
            m = next_uint32(row) * excl
            leftover = m & _M32
    return np.int64(m >> np.uint64(32))


@njit(cache=True)
def _pairwise_block(a, lo, n):
    """NumPy's sum of at most 128 float64: a plain loop under 8, else 8 running sums."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]  # eight scalars: no array a call
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - (n % 8):
        j = lo + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True)
def pairwise_sum(a, lo, n):
    """NumPy's pairwise float64 sum of ``a[lo:lo + n]`` (the rounding of ``ndarray.sum``): blocks
    of 128 summed as ``_pairwise_block``, longer runs split in halves (a multiple of 8 on the
    left) and added; the halving runs on a stack (numba's cache refuses a recursive function)."""
    if n <= 128:
        return _pairwise_block(a, lo, n)
    task_lo, task_n = np.empty(128, np.int64), np.empty(128, np.int64)  # task_n -1: add the top two sums
    sums = np.empty(128)
    tasks = 1
    task_lo[0], task_n[0] = lo, n
    k = 0
    while tasks:
        tasks -= 1
        t_lo, t_n = task_lo[tasks], task_n[tasks]
        if t_n < 0:
            k -= 1
            sums[k - 1] += sums[k]
        elif t_n <= 128:
            sums[k] = _pairwise_block(a, t_lo, t_n)
            k += 1
        else:
            half = t_n // 2
            half -= half % 8
            task_lo[tasks], task_n[tasks] = 0, -1
            task_lo[tasks + 1], task_n[tasks + 1] = t_lo + half, t_n - half
            task_lo[tasks + 2], task_n[tasks + 2] = t_lo, half
            tasks += 3
    return sums[0]


@njit(cache=True)
def choice(row, probs, n):
    """``Generator.choice(n, p=probs[:n] / probs[:n].sum())``: the index one double falls on.
    NumPy's cumulative sum is summed twice in the same order instead of kept in an array (the
    same doubles, no allocation: this runs at every chance node of every board)."""
    total = 0.0 + pairwise_sum(probs, 0, n)
    last = 0.0
    for i in range(n):
        last += probs[i] / total
    u = next_double(row)
    acc = 0.0
    k = 0
    for i in range(n):
        acc += probs[i] / total
        if acc / last <= u:
            k = i + 1
    return k
