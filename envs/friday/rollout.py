"""A compiled trimming player for Friday, and flat Monte-Carlo planning with it as the rollout.

Why this exists: every searcher built on Fridai's score (rules/friday.md, "The original AI")
dies in yellow, because the score puts life first and its destroy filter never removes the
0-value starting cards. Friday is won by spending early life on deliberate losses that thin the
deck (rules/friday.md, "A turn", step 4), which needs a look all the way to the pirates. Whole
games played by a fast rule player give that look: Monte-Carlo planning (tablegym.search.montecarlo
over ``state_rollout``) scores every legal action by the mean return of ``K`` compiled rollouts
from it (about 4,000 whole games a second per core from the opening; rollouts from later
positions are shorter).

``k_policy`` (agent spec ``trim``) plays like ``rules`` with three changes: a hazard it cannot
expect to beat is still fought, to lose on purpose, while life is above ``TRIM_LIFE`` and junk is
left in the deck; after a loss it destroys junk by how bad it is per destroy cost, the 0-value
"weak" cards included (Fridai's filter keeps every card whose rating is not negative); it pays
for a card only when the deficit is small and life above ``PAY_LIFE``. Under the official
empty-aging rule it declines a draw that would end the game (``k_draw_loses``) when it can end
the fight instead. Everything it reads is public: counts of the cards owned and of the fighting stack, never their hidden order.

A rollout is valued by a Friday evaluator (``heuristics.EVALUATORS``, or a learned network):
by default ``outcome`` at the end of the game, the score plus 10 per step reached plus 100 for a
win. Why not the score alone: a rollout that dies in yellow holding more cards outscores one that
reaches red with fewer, so score-greedy planning learned to die early. ``horizon`` > 0 cuts every
rollout after that many turns (hazard or pirate choices) and asks the evaluator about the
unfinished game: the same search with Fridai's score or a network at its leaves.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.friday.cards import (
    ABILITY,
    BELOW,
    CARD1,
    CARD2,
    COPY,
    DESTROY,
    DESTROY_COST,
    DOUBLE,
    EXCHANGE1,
    EXCHANGE2,
    GROUP,
    GROUP_FREE,
    GROUP_VALUES,
    HIGHEST0,
    LIFE1,
    LIFE2,
    MINUS_LIFE1,
    MINUS_LIFE2,
    NONE,
    NUM_TYPES,
    PIRATE_HAZARD,
    RATING,
    SORT,
    STOP,
    VALUE,
)
from tablegym.envs.friday.decisions import k_apply, k_moves, k_owned, k_sample_split
from tablegym.envs.friday.layout import (
    AB_KIND,
    BOTTOM,
    BOTTOM_N,
    CHOICE_A,
    CHOICE_B,
    CONCEDE,
    DESTROY_BASE,
    DESTROY_LEFT,
    DONE,
    DRAW_FREE,
    DRAW_PAID,
    END_FIGHT,
    EXTRA_DRAW,
    F_DESTROYED,
    F_LEFT,
    FIGHT_0,
    FIGHT_1,
    LIFE,
    MAX_SLOTS,
    MID,
    ONGOING,
    P_DESTROY,
    P_EXCHANGE_MORE,
    P_EXTRA,
    P_HAZARD,
    P_PIRATE,
    P_SORT,
    P_TARGET,
    PD_NONE,
    PENDING,
    PHASE,
    PIRATE_0,
    PIRATE_1,
    PIRATE_A,
    PIRATE_B,
    RESULT,
    SKIP,
    SLOT_CARD,
    SLOT_FLAG,
    SORT0,
    SORT_BASE,
    SORT_OPTIONS,
    STEPI,
    TARGET_BASE,
    TOP0,
    TOP_N,
    USE_BASE,
    body,
    k_sync,
)
from tablegym.envs.friday.turns import fight_target, fight_total, k_draw_loses

TRIM_LIFE = 9.0
"""Lose on purpose only while the expected life left after the loss stays above this."""
PAY_LIFE = 6.0
"""Pay for a card in a hazard fight only above this much life."""
MAX_ROLLOUT_DECISIONS = 5000
"""A cycle guard (copy + below the pile can repeat a position): a rollout stops there, unfinished."""
MOVES_CAP = 256


@njit(cache=True)
def badness(t):
    """How much card type ``t`` is worth destroying: minus its value, more for a harmful aging
    effect, less for a useful ability. Junk is what scores >= 0 at value <= 0."""
    a = ABILITY[t]
    b = -float(VALUE[t])
    if a == STOP or a == HIGHEST0:
        b += 2.5
    elif a == MINUS_LIFE1:
        b += 1.0
    elif a == MINUS_LIFE2:
        b += 2.0
    elif a != NONE:
        b -= 2.0
    return b


@njit(cache=True)
def deck_stats(s, owned):
    """(mean value of the cards owned, junk cards owned, mean value of the fighting stack)."""
    owned[:] = 0
    k_owned(s, owned)
    n = 0
    total = 0
    junk = 0
    for t in range(NUM_TYPES):
        n += owned[t]
        total += owned[t] * VALUE[t]
        if badness(t) >= 0 and VALUE[t] <= 0:
            junk += owned[t]
    ns, ts = _stack_value(s)
    mean = total / n if n > 0 else 0.0
    return mean, junk, (ts / ns if ns > 0 else mean)


@njit(cache=True)
def _stack_value(s):
    """(cards in the fighting stack, their total value): known top, shuffled middle, known bottom."""
    ns = 0
    ts = 0
    for t in range(NUM_TYPES):
        ns += s[MID + t]
        ts += s[MID + t] * VALUE[t]
    for r in range(s[TOP_N]):
        ns += 1
        ts += VALUE[s[TOP0 + r]]
    for r in range(s[BOTTOM_N]):
        ns += 1
        ts += VALUE[s[BOTTOM + r]]
    return ns, ts


@njit(cache=True)
def _table_has(s, sign):
    """A face-up table card with a value of that sign (-1 negative, +1 positive)."""
    for i in range(MAX_SLOTS):
        t = s[SLOT_CARD + i]
        if t >= 0 and (s[SLOT_FLAG + i] & F_DESTROYED) == 0 and VALUE[t] * sign > 0:
            return True
    return False


@njit(cache=True)
def _hazard_choice(s, owned):
    step = min(s[STEPI], 2)
    mean, junk, stack_mean = deck_stats(s, owned)
    per_card = max(mean, stack_mean)
    best = -1e9
    best_i = 0
    options = 2 if s[CHOICE_B] >= 0 else 1
    for i in range(options):
        h = s[CHOICE_A + i]
        value = GROUP_VALUES[GROUP[h], step]
        expected = GROUP_FREE[GROUP[h]] * per_card
        if expected + 0.5 >= value:  # likely a win: the better knowledge card, the cheaper fight
            score = 100.0 + 3 * RATING[h] - value
        else:
            cost = value - expected
            if s[LIFE] - cost > TRIM_LIFE and junk > 0:  # a deliberate loss that thins the deck
                score = 50.0 + 2 * min(GROUP_FREE[GROUP[h]], junk) - cost
            else:
                score = -cost
        if score > best:
            best = score
            best_i = i
    if options == 1:
        return SKIP if best < 0 and GROUP_VALUES[GROUP[s[CHOICE_A]], step] > 3 else FIGHT_0
    return FIGHT_0 if best_i == 0 else FIGHT_1


@njit(cache=True)
def _destroy_choice(s, moves, n):
    """The lowest slot of the greedy junk set (badness per destroy cost) the budget buys; DONE if none."""
    left = s[DESTROY_LEFT]
    lowest = MAX_SLOTS
    taken = np.zeros(MAX_SLOTS, dtype=np.bool_)
    while True:
        best = -1e9
        best_j = -1
        for k in range(n):
            j = moves[k] - DESTROY_BASE
            if j < 0 or j >= MAX_SLOTS or taken[j]:
                continue
            t = s[SLOT_CARD + j]
            if DESTROY_COST[t] <= left and badness(t) >= 0 and badness(t) / DESTROY_COST[t] > best:
                best = badness(t) / DESTROY_COST[t]
                best_j = j
        if best_j < 0:
            break
        taken[best_j] = True
        left -= DESTROY_COST[s[SLOT_CARD + best_j]]
        lowest = min(lowest, best_j)
    return DESTROY_BASE + lowest if lowest < MAX_SLOTS else DONE


@njit(cache=True)
def _sort_choice(s, moves, n):
    """Discard the worst card if it is junk; keep the rest highest value on top."""
    best_a = moves[0]
    best = -1e18
    for k in range(n):
        row = moves[k] - SORT_BASE
        dropped = SORT_OPTIONS[row, 1]
        v = 0.0
        if dropped >= 0:
            b = badness(s[SORT0 + dropped])
            v = 1e6 * b if b >= 0 else -1e8
        w = 1e4
        for q in range(3):
            o = SORT_OPTIONS[row, 2 + q]
            if o >= 0:
                v += w * VALUE[s[SORT0 + o]]
                w /= 100.0
        if v > best:
            best = v
            best_a = moves[k]
    return best_a


@njit(cache=True)
def _target_choice(s, moves, n):
    """Double the highest card, copy the best ability, destroy/exchange/put below the weakest."""
    kind = s[AB_KIND]
    best_a = moves[0]
    best = -1e9
    for k in range(n):
        j = moves[k] - TARGET_BASE
        if j < 0 or j >= MAX_SLOTS:
            continue
        t = s[SLOT_CARD + j]
        if kind == DOUBLE:
            v = float(VALUE[t])
        elif kind == COPY:
            v = float(RATING[t] - VALUE[t])
        else:
            v = -float(VALUE[t]) + 0.01 * badness(t)
        if v > best:
            best = v
            best_a = moves[k]
    return best_a


@njit(cache=True)
def _fight_choice(s, moves, n, owned):
    has_end = has_free = has_paid = has_concede = False
    for k in range(n):
        a = moves[k]
        if a == END_FIGHT:
            has_end = True
        elif a == DRAW_FREE:
            has_free = True
        elif a == DRAW_PAID:
            has_paid = True
        elif a == CONCEDE:
            has_concede = True
        elif USE_BASE <= a < TARGET_BASE and (
            ABILITY[s[SLOT_CARD + a - USE_BASE]] == LIFE1 or ABILITY[s[SLOT_CARD + a - USE_BASE]] == LIFE2
        ):
            return a  # free life first
    total = fight_total(s)
    target = fight_target(s)
    if total >= target:
        return END_FIGHT if has_end else moves[0]
    safe = not k_draw_loses(s)  # a draw now would end the game (the official empty-aging rule)
    if not safe and has_end:
        has_free = has_paid = False
    negative = _table_has(s, -1)
    positive = _table_has(s, 1)
    for k in range(n):
        a = moves[k]
        if USE_BASE <= a < TARGET_BASE:
            ability = ABILITY[s[SLOT_CARD + a - USE_BASE]]
            if (ability == CARD1 or ability == CARD2) and safe or ability == SORT:
                return a
            if negative and (ability == DESTROY or (ability == EXCHANGE1 or ability == EXCHANGE2) and safe or ability == BELOW):
                return a
            if positive and ability == DOUBLE:
                return a
    if has_free:
        return DRAW_FREE
    if has_paid:
        if s[STEPI] == 3:  # pirates: a loss is the end, so pay while life lasts
            return DRAW_PAID
        paid = 0
        for i in range(MAX_SLOTS):
            if s[SLOT_CARD + i] >= 0 and (s[SLOT_FLAG + i] & F_LEFT) == 0:
                paid += 1
        deficit = target - total
        ns, ts = _stack_value(s)  # the owned cards only matter when the stack is empty
        stack_mean = ts / ns if ns > 0 else deck_stats(s, owned)[0]
        if deficit <= 2 and paid < 2 and s[LIFE] > PAY_LIFE and stack_mean >= deficit / 2:
            return DRAW_PAID
    if has_end:
        return END_FIGHT
    if has_concede:
        return CONCEDE
    return moves[0]


@njit(cache=True)
def k_policy(s, moves, owned):
    """The trimming player's action at a decision (``moves``, ``owned``: scratch buffers)."""
    n = k_moves(s, moves)
    if n == 1:
        return moves[0]
    phase = s[PHASE]
    if phase == P_HAZARD:
        return _hazard_choice(s, owned)
    if phase == P_PIRATE:  # the lower printed value first; "*" last
        a = PIRATE_HAZARD[s[PIRATE_A]] if PIRATE_HAZARD[s[PIRATE_A]] > 0 else 99
        b = PIRATE_HAZARD[s[PIRATE_B]] if PIRATE_HAZARD[s[PIRATE_B]] > 0 else 99
        return PIRATE_0 if a <= b else PIRATE_1
    if phase == P_DESTROY:
        return _destroy_choice(s, moves, n)
    if phase == P_SORT:
        return _sort_choice(s, moves, n)
    if phase == P_TARGET:
        return _target_choice(s, moves, n)
    behind = fight_total(s) < fight_target(s)
    if phase == P_EXTRA:  # +2 cards / below the pile: draw while behind; sort: see all 3
        for k in range(n):
            if moves[k] == EXTRA_DRAW and (s[AB_KIND] == SORT or behind and not k_draw_loses(s)):
                return EXTRA_DRAW
        return DONE
    if phase == P_EXCHANGE_MORE:
        best_a = -1
        best = 1
        for k in range(n):
            j = moves[k] - TARGET_BASE
            if 0 <= j < MAX_SLOTS and VALUE[s[SLOT_CARD + j]] < best:
                best = VALUE[s[SLOT_CARD + j]]
                best_a = moves[k]
        return best_a if behind and best_a >= 0 and best <= 0 and not k_draw_loses(s) else DONE
    return _fight_choice(s, moves, n, owned)


@njit(cache=True)
def k_rollout(s, rng_state, moves, owned, horizon):
    """Play ``s`` (changed in place) with ``k_policy`` to the end, or until ``horizon`` > 0 turns
    have been played and the next one begins."""
    decisions = 0
    turns = 0
    while s[RESULT] == ONGOING and decisions < MAX_ROLLOUT_DECISIONS:
        if s[PENDING] != PD_NONE:
            k_sample_split(s, rng_state)
            continue
        if s[PHASE] == P_HAZARD or s[PHASE] == P_PIRATE:
            if horizon > 0 and turns == horizon:
                return
            turns += 1
        k_apply(s, k_policy(s, moves, owned))
        decisions += 1


@njit(cache=True)
def state_rollout(s, rng_state, horizon):
    """``k_rollout`` on the common state (Friday's ``Rollout.kernel`` for tablegym.search.montecarlo)."""
    b = body(s)
    k_rollout(b, rng_state, np.empty(MOVES_CAP, dtype=np.int64), np.zeros(NUM_TYPES, dtype=np.int64), horizon)
    k_sync(s)


@njit(cache=True)
def k_policy_action(s):
    """``k_policy`` with its own scratch buffers (one call from Python)."""
    return k_policy(s, np.empty(MOVES_CAP, dtype=np.int64), np.zeros(NUM_TYPES, dtype=np.int64))
