"""Compiled expectimax for Threes over the 64-bit board, with a chance model per search ply.

Each player move of the search (depth counted in swipes) uses one chance model for the card
that enters after it:

* ``HINT``: the hinted card is known (a bonus "+" hint: uniform over the bonus values allowed
  when it was drawn), uniform over the moved lines;
* ``COUNT``: card counting, Threesus style: each of 1/2/3 weighted by its remaining count
  (which then drops by one; 4/4/4 again once the deck is empty); bonus cards ignored;
* ``EXACT``: the true game: the next card is drawn BEFORE this swipe (1/2/3 by the deck
  counts, or a bonus "+" with probability 1/21 once the highest card is >= 48) and the player
  sees its hint when choosing the swipe, so this ply is an expectation over draws of the best
  swipe; the drawn card then enters as under ``HINT`` (a bonus: uniform over 6 .. highest/8 of
  the board it was drawn on). Threesus's ``COUNT`` instead takes the best swipe of an
  expectation, as if the card were unknown when choosing;
* ``NONE``: no card enters; the shifted board is searched directly;
* ``LEAF``: for an afterstate evaluator (the learned n-tuple network): the next card's hint is
  drawn as under ``EXACT`` (or known, at the root), the player swipes, and the afterstate is
  scored with that hint, the card not yet entered. Only as the last ply.

Threesus "6, 3" is ``[HINT, COUNT, COUNT, NONE, NONE, NONE]``; a full-chance expectimax of
depth d is ``[HINT] + [EXACT] * (d - 1)``; the learned network's is ``[HINT] + [EXACT] * (d - 2)
+ [LEAF]`` (``afterstate_chance(d)``, just ``[LEAF]`` for d = 1). Swipes are tried left, right, up, down and a later
one must be strictly better to win (ties keep the earlier). Leaves are scored by the evaluator
after the last swipe, or at any position with no legal swipe (minus ``terminal_penalty``).

The recursion is one self-recursive function (numba cannot cache mutually recursive ones);
per-ply scratch arrays hold each chance node's card distribution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, types

from tablegym.envs.threes.board import board_score, highest_rank, insert_cell, set_rank, swipe
from tablegym.envs.threes.heuristics import evaluate_board
from tablegym.envs.threes.ntuple import BOARD_PART, plan_hint_value, plan_indices, plan_value

HINT, COUNT, EXACT, NONE, LEAF = 0, 1, 2, 3, 4
MODEL_NAMES = {"hint": HINT, "count": COUNT, "exact": EXACT, "none": NONE, "leaf": LEAF}
LEARNED = -1  # evaluator id of the n-tuple network (the hand-made ones are 0, 1, ...)
THREESUS_6_3 = np.array([HINT, COUNT, COUNT, NONE, NONE, NONE], dtype=np.int64)
BONUS_PROB = 1.0 / 21.0
MAX_CARDS = 16  # 3 deck cards + up to 9 bonus values


def full_chance(depth: int) -> np.ndarray:
    """The chance models of a full-chance expectimax ``depth`` swipes deep."""
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth!r}")
    return np.array([HINT] + [EXACT] * (depth - 1), dtype=np.int64)


def afterstate_chance(depth: int) -> np.ndarray:
    """Full-chance models of an afterstate evaluator ``depth`` swipes deep (last ply ``LEAF``)."""
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth!r}")
    return np.array([HINT] * (depth > 1) + [EXACT] * (depth - 2) + [LEAF], dtype=np.int64)


# A hand-made evaluator's search gets None for the four network arrays: numba then compiles a
# version without them (arrays carried through every recursive call cost the hand-made
# searches 2x, measured) and prunes the learned branches from it.
NO_NETWORK = (None, None, None, None)


@njit(cache=True)
def learned_leaf_value(board, hint, weights, plan, offsets, stage_ranks):
    """The expected final score by the network: the afterstate's score plus the value of the
    score still to come."""
    return board_score(board) + plan_value(board, hint, weights, plan, offsets, stage_ranks)


@njit(cache=True)
def _deck_after(r, n1, n2, n3, decks, n):
    c1 = n1 - (r == 1)
    c2 = n2 - (r == 2)
    c3 = n3 - (r == 3)
    if c1 + c2 + c3 == 0:
        c1, c2, c3 = 4, 4, 4
    decks[n, 0] = c1
    decks[n, 1] = c2
    decks[n, 2] = c3


@njit(cache=True)
def card_distribution(model, pre, n1, n2, n3, hint, bonus_hi, ranks, probs, decks):
    """The card entering after a swipe from board ``pre`` under a HINT or COUNT model (EXACT
    plays as HINT once its draw is made): ranks, probabilities and the deck counts after it.
    Returns how many outcomes (0 for NONE and LEAF: no card enters)."""
    n = 0
    if model == HINT or model == EXACT:
        if hint < 4:
            ranks[0] = hint
            probs[0] = 1.0
            decks[0, 0] = n1
            decks[0, 1] = n2
            decks[0, 2] = n3
            return 1
        for r in range(4, bonus_hi + 1):
            ranks[n] = r
            probs[n] = 1.0 / (bonus_hi - 3)
            decks[n, 0] = n1
            decks[n, 1] = n2
            decks[n, 2] = n3
            n += 1
        return n
    if model == NONE or model == LEAF:
        return 0
    total = n1 + n2 + n3
    for r in range(1, 4):
        count = n1 if r == 1 else (n2 if r == 2 else n3)
        if count > 0:
            ranks[n] = r
            probs[n] = count / total
            _deck_after(r, n1, n2, n3, decks, n)
            n += 1
    return n


@njit(cache=True)
def hint_distribution(board, n1, n2, n3, ranks, probs, decks):
    """The draw of the next hint on ``board``: 1/2/3 by the deck counts, or 4 for a bonus "+"
    (1/21 once the highest card is >= 48). Returns how many outcomes."""
    pb = BONUS_PROB if highest_rank(board) >= 7 else 0.0
    total = n1 + n2 + n3
    n = 0
    for r in range(1, 4):
        count = n1 if r == 1 else (n2 if r == 2 else n3)
        if count > 0:
            ranks[n] = r
            probs[n] = (1.0 - pb) * count / total
            _deck_after(r, n1, n2, n3, decks, n)
            n += 1
    if pb > 0.0:
        ranks[n] = 4
        probs[n] = pb
        decks[n, 0] = n1
        decks[n, 1] = n2
        decks[n, 2] = n3
        n += 1
    return n


@njit(cache=True)
def _learned_leaf_draw(board, n1, n2, n3, penalty, weights, plan, offsets, stage_ranks, ranks, probs, decks, counters):
    """A LEAF ply whose hint is still to be drawn, for the learned network: the expectation over
    hints of the best afterstate. The part of the value that does not read the hint is the
    same for every hint, so it is computed once per swipe (about half the table reads), and so
    are the entries the hint part reads, but for the hint's digit."""
    k = hint_distribution(board, n1, n2, n3, ranks, probs, decks)
    base = np.empty(4, dtype=np.float64)
    hinted = np.empty((4, 2, plan.shape[0] * (plan.shape[1] - 1)), dtype=np.int64)
    count = 0
    legal = 0
    for d in range(4):
        after, moved = swipe(board, d)
        if moved == 0:
            continue
        base[legal] = board_score(after) + plan_value(after, 0, weights, plan, offsets, stage_ranks, BOARD_PART)
        count = plan_indices(after, weights, plan, offsets, stage_ranks, hinted[legal])
        legal += 1
    if legal == 0:
        counters[0] += 1
        return board_score(board) - penalty
    total = 0.0
    for i in range(k):
        best = -np.inf
        for j in range(legal):
            v = base[j] + plan_hint_value(ranks[i], weights, hinted[j], count)
            if v > best:
                best = v
        counters[0] += legal
        total += probs[i] * best
    return total


_I, _F = types.int64, types.float64
_NET = (types.float32[::1], types.int64[:, :, ::1], types.int64[::1], types.int64[::1])
_SIGNATURES = [
    _F(
        _I,
        _I,
        types.int64[::1],
        _I,
        _I,
        _I,
        _I,
        _I,
        _I,
        _F,
        *net,
        types.int64[:, ::1],
        types.float64[:, ::1],
        types.int64[:, :, ::1],
        types.float64[::1],
        types.int64[::1],
    )
    for net in (_NET, (types.none,) * 4)
]


# Explicit signatures: numba's cache reloads a self-recursive function reliably only then.
@njit(_SIGNATURES, cache=True)
def _expectimax(
    board,
    ply,
    models,
    n1,
    n2,
    n3,
    hint,
    bonus_hi,
    evaluator,
    penalty,
    weights,
    plan,
    offsets,
    stage_ranks,
    ranks,
    probs,
    decks,
    values,
    counters,
):
    """Best expected value over the swipes of ``board``, ``ply`` swipes into the search.

    At ply 0 the value of each swipe goes to ``values`` (-inf when illegal) and the best swipe
    is returned in ``counters[1]``.
    """
    depth = models.shape[0]
    if ply == depth:
        counters[0] += 1
        if weights is None:
            return evaluate_board(board, evaluator)
        return learned_leaf_value(board, hint, weights, plan, offsets, stage_ranks)
    if weights is not None:
        if models[ply] == LEAF and hint == 0:
            return _learned_leaf_draw(
                board,
                n1,
                n2,
                n3,
                penalty,
                weights,
                plan,
                offsets,
                stage_ranks,
                ranks[depth + ply],
                probs[depth + ply],
                decks[depth + ply],
                counters,
            )
    if (models[ply] == EXACT or models[ply] == LEAF) and hint == 0:
        # The true game: the next card is drawn (and hinted) before the player swipes.
        # Scratch rows depth + ply hold the draw, rows ply the insertion below.
        k = hint_distribution(board, n1, n2, n3, ranks[depth + ply], probs[depth + ply], decks[depth + ply])
        total = 0.0
        for i in range(k):
            r = ranks[depth + ply, i]
            hi = highest_rank(board) - 3 if r == 4 else bonus_hi
            total += probs[depth + ply, i] * _expectimax(
                board,
                ply,
                models,
                decks[depth + ply, i, 0],
                decks[depth + ply, i, 1],
                decks[depth + ply, i, 2],
                r,
                hi,
                evaluator,
                penalty,
                weights,
                plan,
                offsets,
                stage_ranks,
                ranks,
                probs,
                decks,
                values,
                counters,
            )
        return total
    best = -np.inf
    unknown = np.int64(0)  # the hint is known at the root only (a typed zero: a literal 0 would
    # give the recursive call a second, uncacheable signature)
    for d in range(4):
        nb, moved = swipe(board, d)
        if moved == 0:
            if ply == 0:
                values[d] = -np.inf
            continue
        k = card_distribution(models[ply], board, n1, n2, n3, hint, bonus_hi, ranks[ply], probs[ply], decks[ply])
        if k == 0:  # NONE: no card enters; LEAF: it is about to, the afterstate keeps its hint
            nxt = hint if models[ply] == LEAF else unknown
            v = _expectimax(
                nb,
                ply + 1,
                models,
                n1,
                n2,
                n3,
                nxt,
                bonus_hi,
                evaluator,
                penalty,
                weights,
                plan,
                offsets,
                stage_ranks,
                ranks,
                probs,
                decks,
                values,
                counters,
            )
        else:
            v = 0.0
            lines = 0
            for line in range(4):
                if (moved >> line) & 1 == 0:
                    continue
                lines += 1
                cell = insert_cell(d, line)
                for i in range(k):
                    child = set_rank(nb, cell, ranks[ply, i])
                    v += probs[ply, i] * _expectimax(
                        child,
                        ply + 1,
                        models,
                        decks[ply, i, 0],
                        decks[ply, i, 1],
                        decks[ply, i, 2],
                        unknown,
                        bonus_hi,
                        evaluator,
                        penalty,
                        weights,
                        plan,
                        offsets,
                        stage_ranks,
                        ranks,
                        probs,
                        decks,
                        values,
                        counters,
                    )
            v /= lines
        if ply == 0:
            values[d] = v
        if v > best:
            best = v
            if ply == 0:
                counters[1] = d
    if best == -np.inf:
        counters[0] += 1
        if weights is None:
            return evaluate_board(board, evaluator) - penalty
        return board_score(board) - penalty  # learned: the game is over, nothing more to come
    return best


@njit(cache=True)
def search_root(
    board, n1, n2, n3, hint, bonus_hi, models, evaluator, penalty, weights, plan, offsets, stage_ranks, values, counters
):
    """Expected value of each swipe into ``values``; returns the best swipe (-1 if none).
    ``weights .. stage_ranks``: the n-tuple network for ``evaluator == LEARNED`` (``NTupleEvaluator.network``,
    its cells as an ``index_plan``; else NO_NETWORK)."""
    depth = models.shape[0]
    # scratch: rows 0..depth-1 the card entering after each ply's swipe, rows depth.. the draws
    ranks = np.zeros((2 * depth, MAX_CARDS), dtype=np.int64)
    probs = np.zeros((2 * depth, MAX_CARDS), dtype=np.float64)
    decks = np.zeros((2 * depth, MAX_CARDS, 3), dtype=np.int64)
    counters[1] = -1
    _expectimax(
        board,
        np.int64(0),
        models,
        n1,
        n2,
        n3,
        hint,
        bonus_hi,
        evaluator,
        penalty,
        weights,
        plan,
        offsets,
        stage_ranks,
        ranks,
        probs,
        decks,
        values,
        counters,
    )
    return counters[1]


@dataclass
class ExpectimaxResult:
    action: int
    values: np.ndarray  # expected value per swipe (left, right, up, down), -inf if illegal
    leaves: int
    seconds: float
