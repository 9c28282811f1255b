"""A true canonical form for Sim boards: one key per board up to relabelling of the points.

A board is an edge 2-colouring (partial) of K_n. Its *code* is the base-3 number
``sum(colour(e) * 3**e)`` over the edges in Sim's lexicographic numbering (colour 0 none,
1 player 0, 2 player 1; edge 0 = (0, 1) is the least significant digit). The canonical key of
a board is the MINIMUM code over a set of relabellings of its points that is itself invariant
under relabelling, so two boards get the same key exactly when they are isomorphic:

1. Points are split into classes by an invariant: (player-0 degree, player-1 degree), refined
   like colour refinement (1-dimensional Weisfeiler-Leman): a point's new invariant is its
   class plus, per class, how many player-0 and player-1 edges it has into that class, until
   the partition stops splitting. Classes are numbered by their invariant values, so the
   numbering does not depend on the labels.
2. Only relabellings that put class 0 on the lowest new labels, class 1 on the next, ... are
   tried. New labels are handed out from the top (n-1 first); each new point fixes the next
   most significant digits of the code, so a depth-first search prunes every branch whose
   digits already exceed the best found (branch and bound on the lexicographic minimum).
3. Two unplaced points of one class that are *twins* (swapping them is an automorphism of the
   board) lead to identical subtrees; only the first is tried. This keeps boards with large
   symmetry groups (the empty board: n! relabellings) down to a handful of leaves.

Everything works on per-point neighbour bitmasks (bit v of ``mask[c][u]`` set when edge u-v
has colour c+1), for n = 3..8 (28 edges: codes stay below 3**28 < 2**45).

``k_canonical(s)`` reads Sim's compact state (envs/sim/core.py) through two facts of its
layout only: ``s[N_] = n`` (its first slot after the common header) and the 2n colour masks
fill the LAST 2n slots of the array. This module imports nothing from core.py, so core.py can
use it for its canonical features.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.core import HEADER

N_ = HEADER
"""The slot of n in Sim's compact state."""
MIN_N = 3
MAX_N = 8
MAX_EDGES = MAX_N * (MAX_N - 1) // 2


def _edge_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per n: the endpoints of edge e, and the edge id of a point pair (-1 on the diagonal)."""
    eu = np.full((MAX_N + 1, MAX_EDGES), -1, dtype=np.int64)
    ev = np.full((MAX_N + 1, MAX_EDGES), -1, dtype=np.int64)
    eid = np.full((MAX_N + 1, MAX_N, MAX_N), -1, dtype=np.int64)
    for n in range(MIN_N, MAX_N + 1):
        e = 0
        for i in range(n):
            for j in range(i + 1, n):
                eu[n, e], ev[n, e] = i, j
                eid[n, i, j] = eid[n, j, i] = e
                e += 1
    return eu, ev, eid


EDGE_U, EDGE_V, EDGE_ID = _edge_tables()
POW3 = 3 ** np.arange(MAX_EDGES + 1, dtype=np.int64)
POPCOUNT = np.array([bin(m).count("1") for m in range(1 << MAX_N)], dtype=np.int64)
_BIG = np.int64(1) << 62


def edges_of(n: int) -> list[tuple[int, int]]:
    """The point pairs of K_n in Sim's edge order: (0,1), (0,2), ..., (n-2, n-1)."""
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


@njit(cache=True)
def _rank(vals, cls, srt, n):
    """Write to cls[v] the rank of vals[v] among the distinct values; return how many there are."""
    k = 0
    for v in range(n):  # insertion sort of the distinct values into srt[:k]
        x = vals[v]
        i = k
        while i > 0 and srt[i - 1] > x:
            i -= 1
        if i > 0 and srt[i - 1] == x:
            continue
        for j in range(k, i, -1):
            srt[j] = srt[j - 1]
        srt[i] = x
        k += 1
    for v in range(n):
        i = 0
        while srt[i] != vals[v]:
            i += 1
        cls[v] = i
    return k


@njit(cache=True)
def canonical_code(n, s, base, perm):
    """Canonical code of the board whose masks are ``s[base:base+n]`` (colour 1), ``s[base+n:base+2n]`` (colour 2).

    Writes to ``perm[v]`` the new label of point v in one relabelling that reaches the code.
    """
    work = np.empty(9 * MAX_N, dtype=np.int64)
    cls = work[0:MAX_N]
    vals = work[MAX_N : 2 * MAX_N]
    cmask = work[2 * MAX_N : 3 * MAX_N]  # class -> bitmask of its points
    pos_cls = work[3 * MAX_N : 4 * MAX_N]  # new label -> class that owns it
    best = work[4 * MAX_N : 5 * MAX_N]  # best digits per level (level L places label n-1-L)
    chosen = work[5 * MAX_N : 6 * MAX_N]  # old point placed at each level
    rem = work[6 * MAX_N : 7 * MAX_N]  # candidates not yet tried at each level
    tried = work[7 * MAX_N : 8 * MAX_N]  # candidates tried at each level (for the twin test)
    srt = work[8 * MAX_N : 9 * MAX_N]
    m1 = s[base : base + n]
    m2 = s[base + n : base + 2 * n]

    # 1. invariant classes, refined until stable
    for v in range(n):
        vals[v] = POPCOUNT[m1[v]] * 16 + POPCOUNT[m2[v]]
    k = _rank(vals, cls, srt, n)
    while k < n:
        for c in range(k):
            cmask[c] = 0
        for v in range(n):
            cmask[cls[v]] |= np.int64(1) << v
        for v in range(n):
            sig = cls[v]
            for c in range(k):
                sig = sig * 64 + POPCOUNT[m1[v] & cmask[c]] * 8 + POPCOUNT[m2[v] & cmask[c]]
            vals[v] = sig
        k2 = _rank(vals, cls, srt, n)
        if k2 == k:
            break
        k = k2
    for c in range(k):
        cmask[c] = 0
    for v in range(n):
        cmask[cls[v]] |= np.int64(1) << v
    q = 0
    for c in range(k):
        for _ in range(POPCOUNT[cmask[c]]):
            pos_cls[q] = c
            q += 1

    # 2. branch and bound over class-respecting relabellings, labels from the top
    for lv in range(n):
        best[lv] = _BIG
    lvl = 0
    used = np.int64(0)
    rem[0] = cmask[pos_cls[n - 1]]
    tried[0] = 0
    while lvl >= 0:
        r = rem[lvl]
        if r == 0:
            lvl -= 1
            if lvl >= 0:
                used &= ~(np.int64(1) << chosen[lvl])
            continue
        v = 0
        while not (r >> v) & 1:
            v += 1
        rem[lvl] = r & (r - 1)
        # 3. twins: swapping v with an already tried candidate u fixes the board
        t = tried[lvl]
        twin = False
        while t:
            u = 0
            while not (t >> u) & 1:
                u += 1
            t &= t - 1
            bu = np.int64(1) << u
            bv = np.int64(1) << v
            if (m1[u] & ~bv) == (m1[v] & ~bu) and (m2[u] & ~bv) == (m2[v] & ~bu):
                twin = True
                break
        if twin:
            continue
        tried[lvl] |= np.int64(1) << v
        # digits of edges (q, r), r = n-1 .. q+1, most significant first
        dig = 0
        for j in range(lvl):
            u = chosen[j]
            dig = dig * 3 + ((m1[v] >> u) & 1) + 2 * ((m2[v] >> u) & 1)
        if dig > best[lvl]:
            continue
        if dig < best[lvl]:
            best[lvl] = dig
            for j in range(lvl + 1, n):
                best[j] = _BIG
        chosen[lvl] = v
        if lvl == n - 1:
            for j in range(n):
                perm[chosen[j]] = n - 1 - j
            continue
        used |= np.int64(1) << v
        lvl += 1
        rem[lvl] = cmask[pos_cls[n - 1 - lvl]] & ~used
        tried[lvl] = 0

    code = np.int64(0)
    for lvl in range(1, n):
        q = n - 1 - lvl
        code += best[lvl] * POW3[EDGE_ID[n, q, q + 1]]
    return code


@njit(cache=True)
def k_canonical(s):
    """Canonical code of a Sim compact state (``s[N_] = n``, masks in the last 2n slots)."""
    n = s[N_]
    perm = np.empty(MAX_N, dtype=np.int64)
    return canonical_code(n, s, s.shape[0] - 2 * n, perm)


@njit(cache=True)
def code_masks(n, code, out):
    """Write the colour masks of the board with base-3 ``code`` to ``out[:2n]``."""
    for v in range(2 * n):
        out[v] = 0
    e = 0
    for i in range(n):
        for j in range(i + 1, n):
            d = (code // POW3[e]) % 3
            if d:
                c = (d - 1) * n
                out[c + i] |= np.int64(1) << j
                out[c + j] |= np.int64(1) << i
            e += 1


def check_n(n: int) -> int:
    """``n`` as an int, or a ValueError unless it is a board size Sim supports (3..8)."""
    if not (isinstance(n, (int, np.integer)) and not isinstance(n, bool) and MIN_N <= n <= MAX_N):
        raise ValueError(f"Sim needs n in {MIN_N}..{MAX_N} points, got {n!r}")
    return int(n)


def encode(colours: np.ndarray) -> int:
    """The base-3 code of a board given as colours per edge (0 none, 1 player 0, 2 player 1)."""
    c = np.asarray(colours, dtype=np.int64)
    return int(np.dot(c, POW3[: len(c)]))


def decode_key(key: int, n: int) -> np.ndarray:
    """The board (int8 colour per edge) whose base-3 code is ``key``: decodes canonical keys."""
    n = check_n(n)
    m = n * (n - 1) // 2
    if not 0 <= key < int(POW3[m]):
        raise ValueError(f"{key!r} is not a board code of K{n} (0 <= code < 3**{m})")
    return ((int(key) // POW3[:m]) % 3).astype(np.int8)


def masks_of(colours: np.ndarray, n: int) -> np.ndarray:
    """The 2n per-point colour bitmasks of a board (the board part of Sim's compact state)."""
    out = np.empty(2 * n, dtype=np.int64)
    code_masks(n, encode(colours), out)
    return out


def relabel(colours: np.ndarray, perm: np.ndarray, n: int) -> np.ndarray:
    """The board with point v renamed ``perm[v]`` (an isomorphic board)."""
    out = np.zeros_like(np.asarray(colours, dtype=np.int8))
    for e, (i, j) in enumerate(edges_of(n)):
        out[EDGE_ID[n, perm[i], perm[j]]] = colours[e]
    return out


def canonical_form(colours: np.ndarray, n: int) -> tuple[int, np.ndarray]:
    """(canonical key, relabelling ``perm[old point] = new label`` that turns the board into it)."""
    n = check_n(n)
    perm = np.empty(MAX_N, dtype=np.int64)
    code = canonical_code(n, masks_of(colours, n), 0, perm)
    return int(code), perm[:n].copy()


def canonical_key(state) -> int:
    """The canonical key of a ``SimState`` (equal for exactly the isomorphic boards)."""
    return int(k_canonical(state.array))
