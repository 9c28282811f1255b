"""Exact solver for two-player win/draw/loss games over the ``Kernels`` contract (envs/core.py).

Negamax with values +1 (win), 0 (draw), -1 (loss) for the player to move, run as one numba
kernel over the game's compact state. Each node first tries every move once and looks only at
the outcome: a move that wins at once ends the node, moves that lose or draw at once are
settled without computing a key or entering the child (in Sim: a move closing an own triangle
never reaches the, costly, canonical key). The remaining moves are searched in the game's
order and the node stops at the first winning move. No alpha-beta bounds are used beyond
that, so every value stored is EXACT and a table can be reused across solves.

The memo is an open-addressing hash table of numpy arrays keyed by ``key_fn(s)``, by default
the game's own ``Kernels.key``; pass a canonical key (Sim: ``k_canonical``) so that isomorphic
positions share one entry. The table grows (rehashing what it holds) when 3/4 full.

The table is bounded: it never holds more than ``max_entries`` positions nor grows past
``max_bytes`` (by default half the memory, see ``default_max_bytes``); a solve that reaches the
bound stops with ``SolveLimitError``, which says how many positions were stored. Both are
counts checked where an entry is stored, so the bound costs nothing per node. A ``progress``
callback hears about a long solve every ``progress_seconds`` (the kernel returns to Python
every ``check_nodes`` nodes and is re-entered: what it stored stays, so little is redone).
``estimate_tree_size`` guesses, before any solve, how many positions a solve might store.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from numba import njit, types

from tablegym.envs.core import DRAW, ONGOING, RULES_T, STATE_T, KernelState

EMPTY = np.iinfo(np.int64).min
"""Marks a free table slot (a key of exactly this value cannot be stored)."""
NODES, STORED, STOP, BEST, STOP_AT, PAUSE_AT = range(6)
"""Slots of the ``counters`` array: nodes entered, entries stored, stop flag, root's best move,
the number of entries that sets the stop flag (table 3/4 full, or the entry limit) and the
node count that sets it (a pause to report progress)."""
ABORTED = -2
"""``solve_kernel``'s return when it stopped early (table full, entry limit or pause; nothing
stored is lost: grow or report, and rerun)."""
BYTES_PER_SLOT = 9
"""An int64 key and an int8 value per table slot."""
_NEVER = np.iinfo(np.int64).max
_MULT = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def _slot(key, mask):
    h = np.uint64(key) * _MULT
    return np.int64(h >> np.uint64(20)) & mask


@njit(cache=True)
def table_get(table_keys, table_vals, key):
    """The stored value of ``key``, or ``ABORTED`` when it is not in the table."""
    mask = table_keys.shape[0] - 1
    i = _slot(key, mask)
    while True:
        k = table_keys[i]
        if k == key:
            return np.int64(table_vals[i])
        if k == EMPTY:
            return np.int64(ABORTED)
        i = (i + 1) & mask


@njit(cache=True)
def table_put(table_keys, table_vals, key, value, counters):
    mask = table_keys.shape[0] - 1
    i = _slot(key, mask)
    while True:
        k = table_keys[i]
        if k == EMPTY:
            table_keys[i] = key
            table_vals[i] = value
            counters[STORED] += 1
            if counters[STORED] >= counters[STOP_AT]:
                counters[STOP] = 1
            return
        if k == key:
            table_vals[i] = value
            return
        i = (i + 1) & mask


@njit(cache=True)
def rehash(old_keys, old_vals, new_keys, new_vals, counters):
    """Copy every entry of the old table into the (larger, empty) new one (``counters[STOP_AT]``
    set for the new table, above what the old one holds)."""
    counters[STORED] = 0
    counters[STOP] = 0
    for i in range(old_keys.shape[0]):
        if old_keys[i] != EMPTY:
            table_put(new_keys, new_vals, old_keys[i], old_vals[i], counters)


@njit(cache=True)
def _terminal_value(o, p):
    """Value of a finished game with outcome ``o`` for player ``p``."""
    if o == DRAW:
        return 0
    return 1 if o == p else -1


# One explicit signature over first-class function types (envs/core.py explains why): compiled
# once, cached on disk, and shared by every game and key function.
_I = types.int64
_SOLVE_SIG = _I(STATE_T, *RULES_T.types, types.int64[::1], types.int8[::1], types.int64[::1], _I, _I, types.boolean)
"""The kernels one by one (``RULES_T``'s types): a call from Python converts them faster than a
tuple of them, and a small solve is one call."""


@njit(_SOLVE_SIG, cache=True)
def solve_kernel(
    s, moves, push, pop, to_move, outcome, key_fn, table_keys, table_vals, counters, max_depth, num_actions, root_lookup
):
    """Exact value of ``s`` (not over) for the player to move; ``counters[BEST]`` gets the best move.

    Mutates ``s`` during the search and restores it, unless it stops early (returns ``ABORTED``):
    when ``counters[STOP_AT]`` entries are stored or ``counters[PAUSE_AT]`` nodes entered.
    With ``root_lookup`` false the root is searched even when the table knows it, so that its
    best move is found.
    """
    mv = np.empty((max_depth + 1, num_actions), dtype=np.int64)
    nmv = np.zeros(max_depth + 1, dtype=np.int64)
    idx = np.zeros(max_depth + 1, dtype=np.int64)
    best = np.zeros(max_depth + 1, dtype=np.int64)
    bestmv = np.zeros(max_depth + 1, dtype=np.int64)
    keys = np.zeros(max_depth + 1, dtype=np.int64)
    player = np.zeros(max_depth + 1, dtype=np.int64)
    d = 0
    ret = 0
    entering = True
    while True:
        if entering:
            counters[NODES] += 1
            if counters[NODES] >= counters[PAUSE_AT]:
                counters[STOP] = 1
            k = key_fn(s)
            keys[d] = k
            v = table_get(table_keys, table_vals, k) if (d > 0 or root_lookup) else ABORTED
            entering = False
            if v != ABORTED:
                ret = v
                bestmv[d] = -1
            else:
                p = to_move(s)
                player[d] = p
                n = moves(s, mv[d])
                b = -2
                bm = -1
                m = 0
                for i in range(n):  # settle the moves that end the game at once
                    a = mv[d, i]
                    push(s, a)
                    o = outcome(s)
                    pop(s)
                    if o == ONGOING:
                        mv[d, m] = a
                        m += 1
                    else:
                        val = _terminal_value(o, p)
                        if val > b:
                            b = val
                            bm = a
                            if b == 1:
                                break
                best[d] = b
                bestmv[d] = bm
                nmv[d] = m
                if b == 1 or m == 0:
                    table_put(table_keys, table_vals, k, b, counters)
                    ret = b
                else:
                    idx[d] = 0
                    push(s, mv[d, 0])
                    d += 1
                    entering = True
            continue
        # a value ``ret`` for the node at depth d, from its mover's point of view
        if d == 0 or counters[STOP]:
            break
        child_player = to_move(s)
        pop(s)
        d -= 1
        val = ret if child_player == player[d] else -ret
        if val > best[d]:
            best[d] = val
            bestmv[d] = mv[d, idx[d]]
        idx[d] += 1
        if best[d] == 1 or idx[d] == nmv[d]:
            table_put(table_keys, table_vals, keys[d], best[d], counters)
            ret = best[d]
        else:
            push(s, mv[d, idx[d]])
            d += 1
            entering = True
    if counters[STOP] and d > 0:
        return ABORTED
    counters[BEST] = bestmv[0]
    return ret


@dataclass(frozen=True)
class SolveResult:
    """An exact game value and how much work it took."""

    value: int
    """+1 win, 0 draw, -1 loss for the player to move at the solved position."""
    best_action: int
    """A move reaching ``value`` (the first winning one found); -1 if the game is over."""
    positions_stored: int
    """Entries in the memo table after the solve."""
    nodes: int
    """Positions entered (each costs one ``key_fn`` call)."""
    seconds: float


@dataclass(frozen=True)
class SolveProgress:
    """Where a running solve stands: what a ``progress`` callback receives."""

    positions_stored: int
    """Entries in the memo table now."""
    nodes: int
    """Positions entered so far in this solve."""
    seconds: float
    """Time since the solve began, by the solver's clock."""

    @property
    def nodes_per_second(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0


class SolveLimitError(RuntimeError):
    """A solve stopped because its table reached its bound (``max_entries`` or ``max_bytes``).

    What was stored stays exact: a ``Solver`` with a larger bound would go on from scratch, but
    this one can still answer what it finished.
    """

    def __init__(self, positions_stored: int, nodes: int, max_entries: int | None, max_bytes: int, by_memory: bool) -> None:
        self.positions_stored = positions_stored
        self.nodes = nodes
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.by_memory = by_memory
        """True when ``max_bytes`` set the bound, false when ``max_entries`` did."""
        bound = (
            f"max_bytes={max_bytes:,} (a table of {positions_stored:,} positions)"
            if by_memory
            else f"max_entries={max_entries:,}"
        )
        super().__init__(
            f"the solve stopped at its table limit, {bound}: {positions_stored:,} positions stored, "
            f"{nodes:,} nodes searched; give a larger limit to finish it"
        )


def _meminfo_kib(field: str) -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


@functools.cache
def default_max_bytes() -> int:
    """Half the memory free when first asked (Linux ``MemAvailable``), else half the physical
    memory, else 4 GiB: the table bound of a solve that names none."""
    kib = _meminfo_kib("MemAvailable")
    if kib:
        return kib * 1024 // 2
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (AttributeError, ValueError, OSError):
        return 4 << 30


def capacity(max_bytes: int, *, table_bits: int = 16) -> int:
    """How many positions a table kept within ``max_bytes`` can hold (growing doubles the table
    and briefly holds the old one too, so a table of S slots needs 1.5 * 9 * S bytes to reach)."""
    size = _initial_size(max_bytes, table_bits)
    while 3 * BYTES_PER_SLOT * size <= max_bytes:  # growing to 2 * size: size + 2 * size slots at once
        size *= 2
    return (3 * size) // 4


def _initial_size(max_bytes: int, table_bits: int) -> int:
    size = 1 << table_bits
    while size > 4 and BYTES_PER_SLOT * size > max_bytes:
        size //= 2
    return size


_OPTIONS = ("max_entries", "max_bytes", "progress", "progress_seconds", "clock", "check_nodes")
_DEFAULTS: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar("solver_defaults", default=MappingProxyType({}))


@contextlib.contextmanager
def limits(**options: Any) -> Iterator[None]:
    """Defaults for every ``Solver`` made inside the block, for the options of ``Solver`` named
    in ``_OPTIONS`` (a bound, a progress callback): how ``tablegym solve`` reaches the solver a
    game's own solve function makes. Arguments given to ``Solver`` itself win."""
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise TypeError(f"limits() got unknown options {unknown}; known: {', '.join(_OPTIONS)}")
    token = _DEFAULTS.set({**_DEFAULTS.get(), **{k: v for k, v in options.items() if v is not None}})
    try:
        yield
    finally:
        _DEFAULTS.reset(token)


class Solver:
    """An exact solver with a memo table that persists across calls (values stored are exact).

    ``max_entries`` bounds the positions stored and ``max_bytes`` the table's memory (default
    ``default_max_bytes()``); a solve that reaches either raises ``SolveLimitError``.
    ``progress(SolveProgress)`` is called about every ``progress_seconds`` of ``clock`` (the
    kernel hands back every ``check_nodes`` nodes to look at the clock). Options left as None
    take the defaults of an enclosing ``limits`` block, then the built-in ones.
    """

    def __init__(
        self,
        kernels: Any,
        *,
        key_fn: Any = None,
        table_bits: int = 16,
        max_entries: int | None = None,
        max_bytes: int | None = None,
        progress: Callable[[SolveProgress], None] | None = None,
        progress_seconds: float | None = None,
        clock: Callable[[], float] | None = None,
        check_nodes: int | None = None,
    ) -> None:
        ctx = _DEFAULTS.get()
        self.kernels = kernels
        self.key_fn = kernels.key if key_fn is None else key_fn
        self.max_entries: int | None = max_entries if max_entries is not None else ctx.get("max_entries")
        self.max_bytes: int = max_bytes if max_bytes is not None else ctx.get("max_bytes") or default_max_bytes()
        self.progress = progress if progress is not None else ctx.get("progress")
        self.progress_seconds: float = progress_seconds if progress_seconds is not None else ctx.get("progress_seconds", 1.0)
        self.clock: Callable[[], float] = clock if clock is not None else ctx.get("clock", time.monotonic)
        self.check_nodes: int = check_nodes if check_nodes is not None else ctx.get("check_nodes", 1 << 18)
        if self.max_entries is not None and self.max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {self.max_entries!r}")
        if self.max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1, got {self.max_bytes!r}")
        by_memory = capacity(self.max_bytes, table_bits=table_bits)
        self.max_positions = by_memory if self.max_entries is None else min(by_memory, self.max_entries)
        """The most positions the table may hold, whichever bound is tighter."""
        self._by_memory = self.max_entries is None or by_memory < self.max_entries
        size = _initial_size(self.max_bytes, table_bits)
        self.table_keys = np.full(size, EMPTY, dtype=np.int64)
        self.table_vals = np.zeros(size, dtype=np.int8)
        self.counters = np.zeros(6, dtype=np.int64)
        self.counters[STOP_AT] = self._stop_at(size)

    @property
    def positions_stored(self) -> int:
        return int(self.counters[STORED])

    def items(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, values) of every stored position."""
        used = self.table_keys != EMPTY
        return self.table_keys[used].copy(), self.table_vals[used].astype(np.int64)

    def _stop_at(self, size: int) -> int:
        """Entries at which the kernel stops: the table 3/4 full, or the bound."""
        return min(-(-3 * size // 4), self.max_positions)

    def _grow(self) -> None:
        size = 2 * self.table_keys.shape[0]
        keys = np.full(size, EMPTY, dtype=np.int64)
        vals = np.zeros(size, dtype=np.int8)
        self.counters[STOP_AT] = self._stop_at(size)
        rehash(self.table_keys, self.table_vals, keys, vals, self.counters)
        self.table_keys, self.table_vals = keys, vals

    def _run(self, state: KernelState, root_lookup: bool) -> tuple[int, int, int]:
        moves, push, pop, to_move, outcome, _ = self.kernels.rules()
        spec = state.game.spec
        c = self.counters
        nodes = 0
        start = last = self.clock() if self.progress is not None else 0.0
        while True:
            c[NODES] = 0
            c[STOP] = 0
            c[PAUSE_AT] = self.check_nodes if self.progress is not None else _NEVER
            v = solve_kernel(
                state.array,
                moves,
                push,
                pop,
                to_move,
                outcome,
                self.key_fn,
                self.table_keys,
                self.table_vals,
                c,
                spec.max_game_length,
                spec.num_actions,
                root_lookup,
            )
            nodes += int(c[NODES])
            if v != ABORTED:
                return int(v), int(c[BEST]), nodes
            stored = int(c[STORED])
            if stored >= self.max_positions:
                raise SolveLimitError(stored, nodes, self.max_entries, self.max_bytes, self._by_memory)
            if stored >= -(-3 * self.table_keys.shape[0] // 4):
                self._grow()
            if self.progress is not None:
                now = self.clock()
                if now - last >= self.progress_seconds:
                    last = now
                    self.progress(SolveProgress(stored, nodes, now - start))

    def solve(self, state: KernelState) -> SolveResult:
        """The exact value of ``state`` for its player to move, and a move that reaches it."""
        t0 = time.perf_counter()
        if state.is_terminal():
            o = int(state.kernels.outcome(state._s))
            v = 0 if o == DRAW else (1 if o == int(state.kernels.to_move(state._s)) else -1)
            return SolveResult(v, -1, self.positions_stored, 0, time.perf_counter() - t0)
        v, a, nodes = self._run(state, root_lookup=False)
        return SolveResult(v, a, self.positions_stored, nodes, time.perf_counter() - t0)

    def value(self, state: KernelState, player: int | None = None) -> int:
        """The exact value of ``state`` for ``player`` (default: the player to move)."""
        mover = int(state.kernels.to_move(state._s))
        if state.is_terminal():
            o = int(state.kernels.outcome(state._s))
            v = 0 if o == DRAW else (1 if o == mover else -1)
        else:
            v = self._run(state, root_lookup=True)[0]
        return v if player is None or player == mover else -v

    def action_values(self, state: KernelState, player: int | None = None) -> dict[int, int]:
        """The exact value of each legal action, for ``player`` (default: the player to move)."""
        p = int(state.kernels.to_move(state._s)) if player is None else player
        return {a: self.value(state._unchecked_child(a), p) for a in state.legal_actions()}


def solve(
    state: KernelState,
    *,
    key_fn: Any = None,
    table_bits: int = 16,
    max_entries: int | None = None,
    max_bytes: int | None = None,
    progress: Callable[[SolveProgress], None] | None = None,
) -> SolveResult:
    """Solve ``state`` exactly with a fresh table (``key_fn`` defaults to ``kernels.key``; the
    bounds and ``progress`` as in ``Solver``)."""
    return Solver(
        state.kernels, key_fn=key_fn, table_bits=table_bits, max_entries=max_entries, max_bytes=max_bytes, progress=progress
    ).solve(state)


def solved_values(state: KernelState, *, key_fn: Any = None, player: int | None = None) -> dict[int, int]:
    """Exact value of every legal action of ``state`` for ``player`` (default: the player to move)."""
    return Solver(state.kernels, key_fn=key_fn).action_values(state, player)


def estimate_tree_size(state: KernelState, *, samples: int = 64, seed: int = 0) -> float:
    """Knuth's estimate of the unfinished positions in the game tree below ``state``, counted
    with repeats: on average an upper bound on what a solve can store (a solve stores each
    position it finishes once). Averages ``samples`` random games from ``state``, each
    counting the product of the branching factors along its way; cheap, a few hundred
    compiled calls per game.
    """
    k = state.kernels
    spec = state.game.spec
    rng = np.random.default_rng(seed)
    moves = np.empty(max(spec.num_actions, spec.max_chance_outcomes, 1), dtype=np.int64)
    total = 0.0
    for _ in range(samples):
        s = state.array
        width = 1.0
        while k.outcome(s) == ONGOING:
            total += width
            n = int(k.moves(s, moves))
            if n == 0:
                break
            width *= n
            k.push(s, int(moves[rng.integers(n)]))
    return total / samples
