"""An n-tuple network for Threes: the afterstate value as a sum of table entries.

An n-tuple is a fixed list of board cells; the ranks on those cells (0..15, four bits each)
form an index into that tuple's table. With symmetric sampling every tuple is also read in the
seven other orientations of the board (the rules are the same under rotations and
reflections), all eight sharing one table, so one game teaches every orientation at once.
A tuple may include the pseudo-cell ``HINT_CELL`` (16): the code of the card about to enter
(1, 2, 3, or 4 for a bonus), which the afterstate value needs because that card is known.

Multi-stage: the tables are repeated once per stage, and a board's stage is the number of
``stage_ranks`` its highest card has reached (one split at 768 by default), so the end game,
where the board is crowded with big cards, gets weights of its own.

The value estimates the score still to come after an afterstate (the board after a swipe,
before the new card enters): ``board_score + value`` is the expected final score. This module holds
the layout and the compiled kernels that index and read the tables (``NTupleTables``), which
the expectimax searches; the network that owns them, its files and its evaluators are
models/threes/ntuple_net.py, and training updates the same memory through these kernels
(training/threes/train.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
from numba import njit

from tablegym.envs.threes.board import highest_rank

HINT_CELL = 16
RADIX = 16  # a cell's rank (or the hint code) is one base-16 digit of the index
BOARD_PART, HINT_PART, WHOLE = 0, 1, 2  # which tuples a value sums (ntuple_value's ``part``)
LONGEST = 6  # cells of the longest tuple: a 16**6 table of 16.7 M entries
MAX_STAGES = 16  # one stage, then one more for each highest rank 1..15 a board can reach
MAX_TUPLES = 256
"""The most tuples a network has: a value reads 8 entries a tuple, so 256 tuples are 2,048 reads
a leaf, 40 times the shipped network's 48 and beyond any network trained for Threes or 2048."""
UNPACK_BYTES = 8
"""Bytes a sparse entry takes while a file is read, besides the tables: its value as float32 and
its index as the inflated stream (indices are converted a block at a time)."""
LZMA_MEMLIMIT = 1 << 27
"""Memory the lzma decoder may take (its dictionary): xz's largest preset needs 65 MiB, the
shipped file's 9 MiB."""
_BLOCK = 1 << 20  # entries converted and written at a time


# Cells are numbered 4 * row + column from the top-left. The default tuples: the outer and the
# second row each with one cell beyond, a 2x2 corner block and a 2x2 edge block each with one
# more cell, and the outer and second rows with the card about to enter.
DEFAULT_TUPLES = (
    (0, 1, 2, 3, 4),
    (4, 5, 6, 7, 8),
    (0, 1, 2, 4, 5),
    (4, 5, 6, 8, 9),
    (HINT_CELL, 0, 1, 2, 3),
    (HINT_CELL, 4, 5, 6, 7),
)


@dataclass(frozen=True)
class NTupleConfig:
    """The shape of an n-tuple network (saved with every checkpoint)."""

    tuples: tuple[tuple[int, ...], ...] = DEFAULT_TUPLES
    stage_ranks: tuple[int, ...] = (11,)  # a new stage from this highest rank on (11: 768)
    symmetric: bool = True

    def __post_init__(self) -> None:
        if not self.tuples:
            raise ValueError("an n-tuple network needs at least one tuple")
        if len(self.tuples) > MAX_TUPLES:
            raise ValueError(f"an n-tuple network has at most {MAX_TUPLES} tuples (MAX_TUPLES), got {len(self.tuples)}")
        for t in self.tuples:
            if not 1 <= len(t) <= LONGEST:
                raise ValueError(f"tuple {t} must have 1 to {LONGEST} cells (a 16**{LONGEST} table is the largest)")
            if len(set(t)) != len(t) or not all(0 <= c <= HINT_CELL for c in t):
                raise ValueError(f"tuple {t} must list distinct cells 0..15 (or {HINT_CELL}, the hint)")
        if list(self.stage_ranks) != sorted(set(self.stage_ranks)) or not all(1 <= r <= 15 for r in self.stage_ranks):
            raise ValueError(f"stage_ranks must be increasing ranks in 1..15, got {self.stage_ranks}")

    @property
    def num_stages(self) -> int:
        return len(self.stage_ranks) + 1

    def to_dict(self) -> dict:
        return {
            k: [list(t) for t in v] if k == "tuples" else (list(v) if isinstance(v, tuple) else v)
            for k, v in asdict(self).items()
        }

    @classmethod
    def from_dict(cls, d: dict) -> NTupleConfig:
        return cls(
            tuples=tuple(tuple(int(c) for c in t) for t in d["tuples"]),
            stage_ranks=tuple(int(r) for r in d["stage_ranks"]),
            symmetric=bool(d["symmetric"]),
        )


def parse_tuple(text: str) -> tuple[int, ...]:
    """One n-tuple as typed: cells 0..15 (or ``h``, the card about to enter) joined by commas."""
    try:
        return tuple(HINT_CELL if c.strip() == "h" else int(c) for c in text.split(","))
    except ValueError:
        raise ValueError(f"bad tuple {text!r}: give cells 0..15 (or h) joined by commas") from None


def symmetries() -> list[np.ndarray]:
    """The eight cell permutations of the 4x4 board (rotations and reflections); entry ``c`` of
    a permutation is where cell ``c`` goes."""
    out = []
    for flip in (False, True):
        for turns in range(4):
            perm = np.empty(16, dtype=np.int64)
            for c in range(16):
                x, y = c % 4, c // 4
                if flip:
                    x = 3 - x
                for _ in range(turns):
                    x, y = 3 - y, x
                perm[c] = 4 * y + x
            out.append(perm)
    return out


@dataclass
class NTupleTables:
    """What the compiled code needs: the flat weights and the index layout.

    ``cells[t, k, j]`` is the j-th cell of tuple t in orientation k (-1 past the tuple's end);
    tuple t's table starts at ``offsets[t]`` within a stage of ``stage_size`` entries. ``plan``
    is ``cells`` as the searches read it (``index_plan``).
    """

    weights: np.ndarray  # float32, num_stages * stage_size (shares memory with the module)
    cells: np.ndarray  # int64 (tuples, orientations, max length)
    offsets: np.ndarray  # int64 (tuples,)
    stage_ranks: np.ndarray  # int64
    num_features: int = field(init=False)
    plan: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.num_features = int(self.cells.shape[0] * self.cells.shape[1])
        self.plan = index_plan(self.cells)

    def value(self, board: int, hint: int) -> float:
        return float(ntuple_value(np.int64(board), hint, self.weights, self.cells, self.offsets, self.stage_ranks))


def layout(config: NTupleConfig) -> tuple[np.ndarray, np.ndarray, int]:
    """(cells, offsets, stage_size) of ``config`` (see NTupleTables)."""
    perms = symmetries() if config.symmetric else symmetries()[:1]
    longest = max(len(t) for t in config.tuples)
    cells = np.full((len(config.tuples), len(perms), longest), -1, dtype=np.int64)
    offsets = np.zeros(len(config.tuples), dtype=np.int64)
    size = 0
    for i, t in enumerate(config.tuples):
        for k, perm in enumerate(perms):
            cells[i, k, : len(t)] = [c if c == HINT_CELL else perm[c] for c in t]
        offsets[i] = size
        size += RADIX ** len(t)
    return cells, offsets, size


def table_bytes(config: NTupleConfig) -> int:
    """Bytes of ``config``'s tables (float32, every stage), known before any is built."""
    return 4 * config.num_stages * sum(RADIX ** len(t) for t in config.tuples)


@njit(cache=True)
def ntuple_stage(board, stage_ranks):
    h = highest_rank(board)
    s = 0
    for r in stage_ranks:
        if h >= r:
            s += 1
    return s


@njit(cache=True)
def _stage_start(board, weights, stage_ranks):
    """Where the tables of ``board``'s stage start in ``weights`` (one equal block a stage)."""
    return ntuple_stage(board, stage_ranks) * (weights.shape[0] // (stage_ranks.shape[0] + 1))


@njit(cache=True)
def _index(board, hint, cells, t, k):
    idx = 0
    for j in range(cells.shape[2]):
        c = cells[t, k, j]
        if c < 0:
            break
        v = hint if c == HINT_CELL else (board >> (4 * c)) & 0xF
        idx = idx * RADIX + v
    return idx


def index_plan(cells: np.ndarray) -> np.ndarray:
    """``cells`` laid out for ``plan_value``, the searches' lookup.

    Why: reading a tuple's index cell by cell (``_index``: a branch for the hint, a multiply-add
    chain, a stop test) costs more than the table reads themselves; with each cell's shift and
    its digit's place worked out once here, an index is a sum of independent shifted nibbles
    (about 1.5x faster values, the same entries in the same order). Row ``k`` of tuple ``t``
    (``k`` < the orientations ``K``) lists its board cells in orientation ``k`` as
    ``4 * cell | 4 * place << 8`` (``place``: the digit's position from the right of the
    index); row ``K`` holds the number of board cells and the hint's place value (0 when the
    tuple does not read the hint)."""
    tuples, orientations, longest = cells.shape
    plan = np.zeros((tuples, orientations + 1, max(longest, 2)), dtype=np.int64)
    for t in range(tuples):
        length = int((cells[t, 0] >= 0).sum())
        for k in range(orientations):
            n = 0
            for j in range(length):
                place = length - 1 - j
                if cells[t, k, j] == HINT_CELL:
                    plan[t, orientations, 1] = RADIX**place
                else:
                    plan[t, k, n] = 4 * cells[t, k, j] | (4 * place) << 8
                    n += 1
        plan[t, orientations, 0] = length - int(plan[t, orientations, 1] > 0)
    return plan


@njit(cache=True)
def _plan_digits(board, plan, t, k, n):
    """The board cells' part of tuple ``t``'s index in orientation ``k`` (its ``n`` board cells)."""
    idx = 0
    for j in range(n):
        c = plan[t, k, j]
        idx += ((board >> (c & 255)) & 15) << (c >> 8)
    return idx


@njit(cache=True)
def plan_value(board, hint, weights, plan, offsets, stage_ranks, part=WHOLE):
    """``ntuple_value`` over ``index_plan(cells)``: the same entries summed in the same order."""
    orientations = plan.shape[1] - 1
    base = _stage_start(board, weights, stage_ranks)
    total = 0.0
    for t in range(plan.shape[0]):
        hint_place = plan[t, orientations, 1]
        if part != WHOLE and (hint_place != 0) != (part == HINT_PART):
            continue
        n = plan[t, orientations, 0]
        start = base + offsets[t] + hint * hint_place
        for k in range(orientations):
            total += weights[start + _plan_digits(board, plan, t, k, n)]
    return total


@njit(cache=True)
def plan_indices(board, weights, plan, offsets, stage_ranks, out):
    """The entries ``plan_value(board, hint, ..., HINT_PART)`` sums, less the hint's digit:
    ``out[0, i]`` an entry, ``out[1, i]`` the hint's place value in it; returns how many. A
    search that scores one afterstate under several hints works out the indices once
    (``plan_hint_value``)."""
    orientations = plan.shape[1] - 1
    base = _stage_start(board, weights, stage_ranks)
    count = 0
    for t in range(plan.shape[0]):
        hint_place = plan[t, orientations, 1]
        if hint_place == 0:
            continue
        n = plan[t, orientations, 0]
        for k in range(orientations):
            out[0, count] = base + offsets[t] + _plan_digits(board, plan, t, k, n)
            out[1, count] = hint_place
            count += 1
    return count


@njit(cache=True)
def plan_hint_value(hint, weights, indices, count):
    """``plan_value(board, hint, ..., HINT_PART)`` from ``plan_indices(board, ...)``: the same
    entries summed in the same order."""
    total = 0.0
    for i in range(count):
        total += weights[indices[0, i] + hint * indices[1, i]]
    return total


@njit(cache=True)
def _reads_hint(cells, t):
    for j in range(cells.shape[2]):
        if cells[t, 0, j] == HINT_CELL:
            return True
    return False


@njit(cache=True)
def ntuple_rows(boards, hints, cells, offsets, stage_ranks, stage_size, rows):
    """``rows[i]``: the table entries whose sum is the value of (``boards[i]``, ``hints[i]``)."""
    for i in range(boards.shape[0]):
        base = ntuple_stage(boards[i], stage_ranks) * stage_size
        f = 0
        for t in range(cells.shape[0]):
            for k in range(cells.shape[1]):
                rows[i, f] = base + offsets[t] + _index(boards[i], hints[i], cells, t, k)
                f += 1


@njit(cache=True)
def ntuple_values(boards, hints, weights, cells, offsets, stage_ranks, out):
    """``out[i]``: the value of (``boards[i]``, ``hints[i]``) (``ntuple_value`` over a batch)."""
    for i in range(boards.shape[0]):
        out[i] = ntuple_value(boards[i], hints[i], weights, cells, offsets, stage_ranks)


@njit(cache=True)
def ntuple_value(board, hint, weights, cells, offsets, stage_ranks, part=WHOLE):
    """The network's value of afterstate ``board`` with card ``hint`` about to enter.

    ``part``: the sum over the tuples that do not read the hint (BOARD_PART), over those that
    do (HINT_PART), or all (WHOLE). A search that tries several hints on one afterstate
    computes the board part once.
    """
    base = _stage_start(board, weights, stage_ranks)
    total = 0.0
    for t in range(cells.shape[0]):
        if part != WHOLE and _reads_hint(cells, t) != (part == HINT_PART):
            continue
        for k in range(cells.shape[1]):
            total += weights[base + offsets[t] + _index(board, hint, cells, t, k)]
    return total


@njit(cache=True)
def ntuple_update(board, hint, weights, cells, offsets, stage_ranks, step):
    """Add ``step`` to every entry the value of (``board``, ``hint``) sums."""
    base = _stage_start(board, weights, stage_ranks)
    for t in range(cells.shape[0]):
        for k in range(cells.shape[1]):
            weights[base + offsets[t] + _index(board, hint, cells, t, k)] += step


@njit(cache=True)
def ntuple_update_tc(board, hint, weights, coherence, cells, offsets, stage_ranks, step, delta):
    """Temporal coherence learning (Beal and Smith 1999; Jaskowski 2018 for 2048): every entry
    moves by ``step * delta`` scaled by its own rate |sum of its errors| / sum of |its errors|.

    Why: a constant step that suits the rarely visited end-game entries is far too large for
    the opening entries every game visits, whose errors flip sign from game to game; an entry's
    rate falls exactly as its errors stop agreeing. ``coherence[0]`` holds the signed sums,
    ``coherence[1]`` the absolute sums (a fresh entry's rate is 1).
    """
    base = _stage_start(board, weights, stage_ranks)
    for t in range(cells.shape[0]):
        for k in range(cells.shape[1]):
            i = base + offsets[t] + _index(board, hint, cells, t, k)
            a = coherence[1, i]
            rate = abs(coherence[0, i]) / a if a > 0.0 else 1.0
            weights[i] += step * rate * delta
            coherence[0, i] += delta
            coherence[1, i] += abs(delta)
