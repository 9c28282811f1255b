"""Fridai's hand-made evaluation and action filtering (rules/friday.md, "The original AI").

``fridai_eval`` scores a state as life x 10,000,000 + 1000 x the mean card rating of the deck
(rating = fighting value + ability weight); a win scores highest, a loss lowest. The search
considers the actions ``search_moves`` gives: all legal ones, except that after a lost fight only
one destroy subset (the most negative rating sum within the budget, played as the search-only
action ``DESTROY_MACRO``), "double" only targets the highest positive card, and two cards that
are alike (same type and flags) give one USE/TARGET action.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.core import LAST, PLY
from tablegym.envs.friday import cards as C
from tablegym.envs.friday import layout as L
from tablegym.envs.friday.core import KERNELS, state_push
from tablegym.envs.friday.decisions import k_apply, k_moves, k_score
from tablegym.envs.friday.layout import body, k_sync

WIN_SCORE = 1e12
LOSS_SCORE = -1e12
DESTROY_MACRO = L.NUM_ACTIONS
"""Search-only action: Fridai's single destroy subset after a lost fight, then DONE."""


@njit(cache=True)
def fridai_eval(s, player, params):
    """Fridai's score of the common state ``s`` (an ``Evaluator`` kernel; one player)."""
    return fridai_score(body(s))


@njit(cache=True)
def fridai_score(s):
    """life x 10^7 + 1000 x mean rating of the cards owned; +-1e12 for a won/lost game."""
    if s[L.RESULT] == L.WON:
        return WIN_SCORE
    if s[L.RESULT] == L.LOST:
        return LOSS_SCORE
    n, rating = owned_rating(s)
    return s[L.LIFE] * 1e7 + (1000.0 * rating / n if n > 0 else 0.0)


OUTCOME_STEP = 10.0
OUTCOME_WIN = 100.0


@njit(cache=True)
def outcome_eval(s, player, params):
    """``outcome_score`` of the common state ``s`` (an ``Evaluator`` kernel; one player)."""
    return outcome_score(body(s))


@njit(cache=True)
def outcome_score(s):
    """The score, plus 10 per step reached (green 0 .. pirates 3) and 100 for a win.

    Monte-Carlo planning's rollout value (envs/friday/rollout.py). The step term pays for
    survival: by the score alone a game that dies in yellow holding more cards beats one that
    reaches red with fewer. It reads an unfinished game the same way (the score so far)."""
    return k_score(s) + OUTCOME_STEP * min(s[L.STEPI], 3) + (OUTCOME_WIN if s[L.RESULT] == L.WON else 0.0)


@njit(cache=True)
def owned_rating(s):
    """(number of fighting cards owned, sum of their ratings), read off the zones without copying."""
    n = 0
    rating = 0
    for t in range(C.NUM_TYPES):
        c = s[L.MID + t] + s[L.DISC + t]
        n += c
        rating += c * C.RATING[t]
    for r in range(s[L.TOP_N]):
        n += 1
        rating += C.RATING[s[L.TOP0 + r]]
    for r in range(s[L.SORT_N]):
        n += 1
        rating += C.RATING[s[L.SORT0 + r]]
    for r in range(s[L.BOTTOM_N]):
        n += 1
        rating += C.RATING[s[L.BOTTOM + r]]
    for i in range(L.MAX_SLOTS):
        t = s[L.SLOT_CARD + i]
        if t >= 0:
            n += 1
            rating += C.RATING[t]
    return n, rating


@njit(cache=True)
def destroy_choice(s, out):
    """Fridai's destroy subset after a lost fight: the table slots whose rating sum is most
    negative within the budget (aging cards cost 2, others 1). Writes slots, returns how many."""
    budget = s[L.DESTROY_LEFT]
    aging = np.empty(L.MAX_SLOTS, dtype=np.int64)
    other = np.empty(L.MAX_SLOTS, dtype=np.int64)
    na = 0
    no = 0
    for j in range(L.MAX_SLOTS):
        t = s[L.SLOT_CARD + j]
        if t >= 0 and (s[L.SLOT_FLAG + j] & L.F_DESTROYED) == 0 and C.RATING[t] < 0:
            if C.KIND[t] == C.AGING:
                aging[na] = j
                na += 1
            else:
                other[no] = j
                no += 1
    # most negative first within each cost class; then the best split of the budget
    _sort_by_rating(s, aging, na)
    _sort_by_rating(s, other, no)
    best_sum = 0
    best_a = 0
    best_o = 0
    for ka in range(na + 1):
        if 2 * ka > budget:
            break
        ko = min(no, budget - 2 * ka)
        total = 0
        for r in range(ka):
            total += C.RATING[s[L.SLOT_CARD + aging[r]]]
        for r in range(ko):
            total += C.RATING[s[L.SLOT_CARD + other[r]]]
        if total < best_sum:
            best_sum = total
            best_a = ka
            best_o = ko
    n = 0
    for r in range(best_a):
        out[n] = aging[r]
        n += 1
    for r in range(best_o):
        out[n] = other[r]
        n += 1
    out[:n].sort()
    return n


@njit(cache=True)
def _sort_by_rating(s, slots, n):
    for i in range(1, n):  # insertion sort: a handful of cards
        j = i
        while j > 0 and C.RATING[s[L.SLOT_CARD + slots[j]]] < C.RATING[s[L.SLOT_CARD + slots[j - 1]]]:
            slots[j], slots[j - 1] = slots[j - 1], slots[j]
            j -= 1


@njit(cache=True)
def search_moves(s, out):
    """The actions Fridai's search considers (see the module docstring)."""
    if s[L.PENDING] == L.PD_NONE and s[L.PHASE] == L.P_DESTROY:
        out[0] = DESTROY_MACRO
        return 1
    n_legal = k_moves(s, out)
    if s[L.PENDING] != L.PD_NONE:
        return n_legal
    double_target = -1
    if s[L.PHASE] == L.P_TARGET and s[L.AB_KIND] == C.DOUBLE:
        best = 0
        for k in range(n_legal):
            j = out[k] - L.TARGET_BASE
            v = C.VALUE[s[L.SLOT_CARD + j]]
            if v > best:
                best = v
                double_target = out[k]
    n = 0  # filter in place: out[n] is written only after out[k >= n] was read
    for k in range(n_legal):
        a = out[k]
        if double_target >= 0 and a != double_target:
            continue
        if L.USE_BASE <= a < L.SORT_BASE and a < L.DESTROY_BASE:
            base = L.USE_BASE if a < L.TARGET_BASE else L.TARGET_BASE
            j = a - base
            duplicate = False
            for m in range(n):
                b = out[m]
                if base <= b < base + L.MAX_SLOTS:
                    i = b - base
                    if s[L.SLOT_CARD + i] == s[L.SLOT_CARD + j] and s[L.SLOT_FLAG + i] == s[L.SLOT_FLAG + j]:
                        duplicate = True
                        break
            if duplicate:
                continue
        out[n] = a
        n += 1
    return n


@njit(cache=True)
def search_apply(s, a):
    """``k_apply``, plus the search-only ``DESTROY_MACRO``."""
    if a != DESTROY_MACRO:
        k_apply(s, a)
        return
    slots = np.empty(L.MAX_SLOTS, dtype=np.int64)
    n = destroy_choice(s, slots)
    for r in range(n):
        k_apply(s, L.DESTROY_BASE + slots[r])
        if s[L.PHASE] != L.P_DESTROY or s[L.PENDING] != L.PD_NONE:
            return
    if s[L.PHASE] == L.P_DESTROY:
        k_apply(s, np.int64(L.DONE))  # an int64, not the literal: one compiled k_apply, not two


@njit(cache=True)
def search_state_moves(s, out):
    """``search_moves`` of the common state."""
    return search_moves(body(s), out)


@njit(cache=True)
def search_state_push(s, a):
    """``search_apply`` on the common state: ``state_push``, or the macro as one decision."""
    if a != DESTROY_MACRO:
        state_push(s, a)
        return
    search_apply(body(s), a)
    s[PLY] += 1
    s[LAST] = a
    k_sync(s)


SEARCH_KERNELS = KERNELS._replace(moves=search_state_moves, push=search_state_push)
"""Fridai's search on the common contract: its moves (``search_moves``), and a push that also
plays the search-only ``DESTROY_MACRO``."""


EVALUATORS = {"fridai": fridai_eval, "outcome": outcome_eval}
"""The hand-made evaluators by name (``--eval fridai``)."""
