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

The search is game-independent. ``best_first_search`` runs it on any ``KernelState`` of a game
with chance (the common contract: ``Kernels.chance`` resolved by sampling, an ``Evaluator``'s
kernel at the leaves), and ``reference_best_first`` is the same search over the object API, its
reference in the tests. Underneath, ``best_first`` takes the kernels as numba first-class
functions (state = the common compact ``int64`` array):

- ``moves(s, out) -> n``: the actions the search considers (a game may filter them);
- ``apply(s, a)``: play one of them in place;
- ``sample(s, rng_state)``: a game's own sampler of pending chance (splitmix64 state
  ``rng_state``), or with ``by_chance`` pending chance drawn through ``chance(s, outcomes,
  probs)`` and ``pick_outcome``;
- ``evaluate(s, me, params) -> float``: the leaf score for player ``me`` (an ``Evaluator``'s
  kernel: hand-made, or a network's weights in ``params``);
- ``outcome(s)``, ``to_move(s)``: the game's; a state is expanded while its outcome is ``ONGOING``;
- ``key(s) -> int64``: a hash of the state.

Only these function types reach the compiled search, none of them a closure, so the search is
compiled once into numba's on-disk cache and serves every game and evaluator in every process.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit, types

from tablegym.envs.core import (
    CHANCE,
    CHANCE_T,
    EVAL_T,
    INT_OF_STATE_T,
    MOVES_T,
    ONGOING,
    PUSH_T,
    STATE_T,
    Kernels,
    KernelState,
    State,
    no_chance,
    pick_outcome,
    splitmix_uniform,
)
from tablegym.envs.evaluator import Evaluator, check_game, check_root

MAX_MOVES = 512
_STRIDE = np.int64(((0x9E3779B97F4A7C15 * 4096 + 2**63) % 2**64) - 2**63)  # wrapped to int64
"""How far the splitmix64 counter in ``rng_state`` jumps between expansions (4,096 draws), so
consecutive expansions never share random numbers while siblings do."""


SAMPLE_T = types.FunctionType(types.none(STATE_T, types.int64[::1]))
_SIGNATURE = types.UniTuple(types.int64, 3)(
    STATE_T,
    types.int64,
    MOVES_T,
    PUSH_T,
    SAMPLE_T,
    CHANCE_T,
    types.boolean,
    EVAL_T,
    types.int64,
    INT_OF_STATE_T,
    INT_OF_STATE_T,
    INT_OF_STATE_T,
    types.int64,
    types.float64[::1],
    types.int64[::1],
    types.float64[::1],
)


@njit(types.none(STATE_T, types.int64[::1]), cache=True)
def _no_sample(s, rng_state):
    """``sample`` where chance is drawn through ``chance`` (never called)."""


@njit(cache=True)
def _sample(s, rng_state, sample, chance, by_chance, push, outcome, to_move, outcomes, probs):
    """Resolve the chance pending in ``s``: the game's sampler, or else each draw through
    ``chance`` with the next splitmix64 number, until a decision or the end."""
    if not by_chance:
        sample(s, rng_state)
        return
    while outcome(s) == ONGOING and to_move(s) == CHANCE:
        n = chance(s, outcomes, probs)
        push(s, pick_outcome(outcomes, probs, n, splitmix_uniform(rng_state)))


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
    b[: a.shape[0]] = a
    return b


@njit(cache=True)
def _grow(a):
    b = np.empty(2 * a.shape[0], dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(_SIGNATURE, cache=True, nogil=True)
def best_first(
    root,
    budget,
    moves,
    apply,
    sample,
    chance,
    by_chance,
    evaluate,
    me,
    outcome,
    to_move,
    key,
    max_outcomes,
    params,
    rng_state,
    values,
):
    """Search from decision state ``root`` polling at most ``budget`` states.

    Returns (index of the chosen root action in ``moves(root)``, states polled, states
    generated); ``values[i]`` receives the value of root action i.
    """
    buf = np.empty(MAX_MOVES, dtype=np.int64)
    outcomes = np.empty(max_outcomes, dtype=np.int64)  # chance's scratch
    probs = np.empty(max_outcomes)
    root_moves = np.empty(MAX_MOVES, dtype=np.int64)
    n_root = moves(root, root_moves)
    width = root.shape[0]
    cap = min(max(1024, 2 * budget + n_root), 1 << 16)  # untouched rows cost no memory; growing copies all
    pool = np.empty((cap, width), dtype=root.dtype)
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
        _sample(child, rng_state, sample, chance, by_chance, apply, outcome, to_move, outcomes, probs)
        generated += 1
        v = evaluate(child, me, params)
        values[i] = v
        _seen(table, key(child))
        n_keys += 1
        if outcome(child) == ONGOING:
            pool[used] = child
            origin[used] = i
            size = _heap_push(hscore, hseq, hrow, size, v, seq, used)
            used += 1
            seq += 1
    rng_state[0] = shared + _STRIDE
    polled = 0
    node = np.empty(width, dtype=root.dtype)  # scratch rows: states are copied in, not allocated
    child = np.empty(width, dtype=root.dtype)
    while size > 0 and polled < budget:
        row, size = _heap_pop(hscore, hseq, hrow, size)
        polled += 1
        node[:] = pool[row]
        i_root = origin[row]
        free_rows[n_free] = row
        n_free += 1
        n = moves(node, buf)
        shared = rng_state[0]
        for k in range(n):
            child[:] = node
            apply(child, buf[k])
            rng_state[0] = shared  # one determinization per expansion: siblings draw alike
            _sample(child, rng_state, sample, chance, by_chance, apply, outcome, to_move, outcomes, probs)
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
            v = evaluate(child, me, params)
            if v > values[i_root]:
                values[i_root] = v
            if outcome(child) != ONGOING:
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


# ---- the common contract: any KernelState with chance, any compiled Evaluator ------------------


@dataclass
class BestFirstResult:
    action: int
    value: float
    values: dict[int, float]
    """The value of every root action: the best score of a state generated under it."""
    polled: int
    generated: int
    seconds: float


def kernel_args(
    kernels: Kernels, evaluator_kernel: Any, me: int, max_outcomes: int
) -> tuple[Any, Any, Any, Any, bool, Any, int, Any, Any, Any, int]:
    """``best_first``'s arguments from ``moves`` to ``max_outcomes``: the game's ``kernels``, their
    chance drawn by their own ``sample`` where they have one, the evaluator's kernel asked for
    player ``me``; ``max_outcomes``: the most outcomes of one draw."""
    by_chance = kernels.sample is None
    return (
        kernels.moves,
        kernels.push,
        _no_sample if by_chance else kernels.sample,
        no_chance if kernels.chance is None else kernels.chance,
        by_chance,
        evaluator_kernel,
        me,
        kernels.outcome,
        kernels.to_move,
        kernels.key,
        max_outcomes,
    )


def _check_root(state: State, nodes: int) -> None:
    check_root(state, "best-first")
    if nodes < 1:
        raise ValueError(f"the node budget must be at least 1, got {nodes}")


def best_first_search(
    state: KernelState, evaluator: Evaluator, *, nodes: int, seed: int, kernels: Kernels | None = None, worlds: int = 1
) -> BestFirstResult:
    """Fridai's best-first search (module docstring) from decision state ``state`` of any game
    on the common contract, polling at most ``nodes`` states, chance sampled with the splitmix64
    stream started at ``seed``; ties keep the earlier action of the moves searched.

    ``kernels``: the kernels searched (default ``state.kernels``): a game's narrower ``moves``,
    with a ``push`` that also plays its search-only moves, searches among those (the result's
    ``action`` is then one of them). ``worlds`` > 1 splits the budget over that many searches,
    each from a root the kernels' ``determinize`` fixed in its own sampled world (one stream
    carried through), and plays the best mean value: one sampled world knows the next cards, so
    a draw looks good whenever that world's next card is; the mean over worlds pays only for
    what helps on average."""
    _check_root(state, nodes)
    check_game(evaluator, state)
    k = state.kernels if kernels is None else kernels
    if not isinstance(state, KernelState) or (k.chance is None and k.sample is None) or not evaluator.compiled:
        raise ValueError(
            f"no compiled best-first for {type(state).__name__} with evaluator {evaluator.name!r}: it "
            "needs kernels with a chance kernel and an evaluator with a kernel (reference_best_first "
            "runs over the object API)"
        )
    if not 1 <= worlds <= nodes:
        raise ValueError(f"worlds must lie in 1..nodes ({nodes}), got {worlds}")
    spec = state.game.spec
    out = np.empty(max(MAX_MOVES, spec.num_actions), dtype=np.int64)
    n = int(k.moves(state.array, out))
    if n > MAX_MOVES:
        raise ValueError(f"best-first takes at most {MAX_MOVES} actions a position, this one has {n}")
    moves = out[:n].tolist()
    me = int(k.to_move(state._s))
    args = kernel_args(k, evaluator.kernel, me, max(spec.max_chance_outcomes, 1))
    values = np.empty(MAX_MOVES)
    total = np.zeros(n)
    rng_state = np.array([seed], dtype=np.int64)
    polled = generated = 0
    start = time.perf_counter()
    for w in range(worlds):
        root = state.array
        if k.determinize is not None:
            k.determinize(root, rng_state)
        budget = nodes // worlds + (w < nodes % worlds)
        best, p, g = best_first(root, budget, *args, evaluator.params, rng_state, values)
        total += values[:n]
        polled += p
        generated += g
    if worlds > 1:
        best = int(np.argmax(total))  # the first of equal means, as the search breaks ties
    by_action = {a: float(total[i] / worlds) for i, a in enumerate(moves)}
    return BestFirstResult(
        moves[best], by_action[moves[best]], by_action, int(polled), int(generated), time.perf_counter() - start
    )


_MASK = (1 << 64) - 1
_STRIDE_INT = int(_STRIDE) & _MASK


def _splitmix(state: list[int]) -> float:
    """``splitmix_uniform`` in Python (``state[0]`` an unsigned 64-bit counter)."""
    state[0] = (state[0] + 0x9E3779B97F4A7C15) & _MASK
    z = state[0]
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    z ^= z >> 31
    return (z >> 11) * (1.0 / 9007199254740992.0)


def reference_best_first(state: State, evaluator: Evaluator, *, nodes: int, seed: int) -> BestFirstResult:
    """The same search over the object API (``state.child``, ``chance_outcomes``, ``key``):
    slow, plain, and the reference the compiled search is tested against (it draws the same
    numbers and breaks ties the same way). Works for any State whose chance nodes list outcomes."""
    _check_root(state, nodes)
    start = time.perf_counter()
    me = state.current_player()
    rng = [seed & _MASK]
    seen: set[int] = set()

    def sample(s: State) -> State:
        while not s.is_terminal() and s.current_player() == CHANCE:
            outcomes = s.chance_outcomes()
            u, acc, pick = _splitmix(rng), 0.0, outcomes[-1][0]
            for o, p in outcomes:
                acc += p
                if u < acc:
                    pick = o
                    break
            s = s.child(pick)
        return s

    def is_new(s: State) -> bool:
        k = s.key() or 1  # the compiled set keeps key 0 as 1
        if k in seen:
            return False
        seen.add(k)
        return True

    legal = state.legal_actions()
    values = [-np.inf] * len(legal)
    heap: list[tuple[float, int, State, int]] = []
    seq = 0
    shared = rng[0]
    for i, a in enumerate(legal):
        rng[0] = shared
        child = sample(state.child(a))
        values[i] = v = float(evaluator(child, me))
        is_new(child)
        if not child.is_terminal():
            heapq.heappush(heap, (-v, seq, child, i))
            seq += 1
    rng[0] = (shared + _STRIDE_INT) & _MASK
    polled, generated = 0, len(legal)
    while heap and polled < nodes:
        _, _, node, i_root = heapq.heappop(heap)
        polled += 1
        shared = rng[0]
        for a in node.legal_actions():
            rng[0] = shared
            child = sample(node.child(a))
            if not is_new(child):
                continue
            generated += 1
            v = float(evaluator(child, me))
            values[i_root] = max(values[i_root], v)
            if not child.is_terminal():
                heapq.heappush(heap, (-v, seq, child, i_root))
                seq += 1
        rng[0] = (shared + _STRIDE_INT) & _MASK
    best = max(range(len(legal)), key=lambda i: (values[i], -i))
    by_action = dict(zip(legal, values))
    return BestFirstResult(legal[best], values[best], by_action, polled, generated, time.perf_counter() - start)
