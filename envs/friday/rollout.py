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

from tablegym.envs.friday import cards as C
from tablegym.envs.friday import layout as L
from tablegym.envs.friday.decisions import k_apply, k_moves, k_owned, k_sample_split
from tablegym.envs.friday.layout import body, k_sync
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
    a = C.ABILITY[t]
    b = -float(C.VALUE[t])
    if a == C.STOP or a == C.HIGHEST0:
        b += 2.5
    elif a == C.MINUS_LIFE1:
        b += 1.0
    elif a == C.MINUS_LIFE2:
        b += 2.0
    elif a != C.NONE:
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
    for t in range(C.NUM_TYPES):
        n += owned[t]
        total += owned[t] * C.VALUE[t]
        if badness(t) >= 0 and C.VALUE[t] <= 0:
            junk += owned[t]
    ns, ts = _stack_value(s)
    mean = total / n if n > 0 else 0.0
    return mean, junk, (ts / ns if ns > 0 else mean)


@njit(cache=True)
def _stack_value(s):
    """(cards in the fighting stack, their total value): known top, shuffled middle, known bottom."""
    ns = 0
    ts = 0
    for t in range(C.NUM_TYPES):
        ns += s[L.MID + t]
        ts += s[L.MID + t] * C.VALUE[t]
    for r in range(s[L.TOP_N]):
        ns += 1
        ts += C.VALUE[s[L.TOP0 + r]]
    for r in range(s[L.BOTTOM_N]):
        ns += 1
        ts += C.VALUE[s[L.BOTTOM + r]]
    return ns, ts


@njit(cache=True)
def _table_has(s, sign):
    """A face-up table card with a value of that sign (-1 negative, +1 positive)."""
    for i in range(L.MAX_SLOTS):
        t = s[L.SLOT_CARD + i]
        if t >= 0 and (s[L.SLOT_FLAG + i] & L.F_DESTROYED) == 0 and C.VALUE[t] * sign > 0:
            return True
    return False


@njit(cache=True)
def _hazard_choice(s, owned):
    step = min(s[L.STEPI], 2)
    mean, junk, stack_mean = deck_stats(s, owned)
    per_card = max(mean, stack_mean)
    best = -1e9
    best_i = 0
    options = 2 if s[L.CHOICE_B] >= 0 else 1
    for i in range(options):
        h = s[L.CHOICE_A + i]
        value = C.GROUP_VALUES[C.GROUP[h], step]
        expected = C.GROUP_FREE[C.GROUP[h]] * per_card
        if expected + 0.5 >= value:  # likely a win: the better knowledge card, the cheaper fight
            score = 100.0 + 3 * C.RATING[h] - value
        else:
            cost = value - expected
            if s[L.LIFE] - cost > TRIM_LIFE and junk > 0:  # a deliberate loss that thins the deck
                score = 50.0 + 2 * min(C.GROUP_FREE[C.GROUP[h]], junk) - cost
            else:
                score = -cost
        if score > best:
            best = score
            best_i = i
    if options == 1:
        return L.SKIP if best < 0 and C.GROUP_VALUES[C.GROUP[s[L.CHOICE_A]], step] > 3 else L.FIGHT_0
    return L.FIGHT_0 if best_i == 0 else L.FIGHT_1


@njit(cache=True)
def _destroy_choice(s, moves, n):
    """The lowest slot of the greedy junk set (badness per destroy cost) the budget buys; DONE if none."""
    left = s[L.DESTROY_LEFT]
    lowest = L.MAX_SLOTS
    taken = np.zeros(L.MAX_SLOTS, dtype=np.bool_)
    while True:
        best = -1e9
        best_j = -1
        for k in range(n):
            j = moves[k] - L.DESTROY_BASE
            if j < 0 or j >= L.MAX_SLOTS or taken[j]:
                continue
            t = s[L.SLOT_CARD + j]
            if C.DESTROY_COST[t] <= left and badness(t) >= 0 and badness(t) / C.DESTROY_COST[t] > best:
                best = badness(t) / C.DESTROY_COST[t]
                best_j = j
        if best_j < 0:
            break
        taken[best_j] = True
        left -= C.DESTROY_COST[s[L.SLOT_CARD + best_j]]
        lowest = min(lowest, best_j)
    return L.DESTROY_BASE + lowest if lowest < L.MAX_SLOTS else L.DONE


@njit(cache=True)
def _sort_choice(s, moves, n):
    """Discard the worst card if it is junk; keep the rest highest value on top."""
    best_a = moves[0]
    best = -1e18
    for k in range(n):
        row = moves[k] - L.SORT_BASE
        dropped = L.SORT_OPTIONS[row, 1]
        v = 0.0
        if dropped >= 0:
            b = badness(s[L.SORT0 + dropped])
            v = 1e6 * b if b >= 0 else -1e8
        w = 1e4
        for q in range(3):
            o = L.SORT_OPTIONS[row, 2 + q]
            if o >= 0:
                v += w * C.VALUE[s[L.SORT0 + o]]
                w /= 100.0
        if v > best:
            best = v
            best_a = moves[k]
    return best_a


@njit(cache=True)
def _target_choice(s, moves, n):
    """Double the highest card, copy the best ability, destroy/exchange/put below the weakest."""
    kind = s[L.AB_KIND]
    best_a = moves[0]
    best = -1e9
    for k in range(n):
        j = moves[k] - L.TARGET_BASE
        if j < 0 or j >= L.MAX_SLOTS:
            continue
        t = s[L.SLOT_CARD + j]
        if kind == C.DOUBLE:
            v = float(C.VALUE[t])
        elif kind == C.COPY:
            v = float(C.RATING[t] - C.VALUE[t])
        else:
            v = -float(C.VALUE[t]) + 0.01 * badness(t)
        if v > best:
            best = v
            best_a = moves[k]
    return best_a


@njit(cache=True)
def _fight_choice(s, moves, n, owned):
    has_end = has_free = has_paid = has_concede = False
    for k in range(n):
        a = moves[k]
        if a == L.END_FIGHT:
            has_end = True
        elif a == L.DRAW_FREE:
            has_free = True
        elif a == L.DRAW_PAID:
            has_paid = True
        elif a == L.CONCEDE:
            has_concede = True
        elif L.USE_BASE <= a < L.TARGET_BASE and (
            C.ABILITY[s[L.SLOT_CARD + a - L.USE_BASE]] == C.LIFE1 or C.ABILITY[s[L.SLOT_CARD + a - L.USE_BASE]] == C.LIFE2
        ):
            return a  # free life first
    total = fight_total(s)
    target = fight_target(s)
    if total >= target:
        return L.END_FIGHT if has_end else moves[0]
    safe = not k_draw_loses(s)  # a draw now would end the game (the official empty-aging rule)
    if not safe and has_end:
        has_free = has_paid = False
    negative = _table_has(s, -1)
    positive = _table_has(s, 1)
    for k in range(n):
        a = moves[k]
        if L.USE_BASE <= a < L.TARGET_BASE:
            ability = C.ABILITY[s[L.SLOT_CARD + a - L.USE_BASE]]
            if (ability == C.CARD1 or ability == C.CARD2) and safe or ability == C.SORT:
                return a
            if negative and (
                ability == C.DESTROY or (ability == C.EXCHANGE1 or ability == C.EXCHANGE2) and safe or ability == C.BELOW
            ):
                return a
            if positive and ability == C.DOUBLE:
                return a
    if has_free:
        return L.DRAW_FREE
    if has_paid:
        if s[L.STEPI] == 3:  # pirates: a loss is the end, so pay while life lasts
            return L.DRAW_PAID
        paid = 0
        for i in range(L.MAX_SLOTS):
            if s[L.SLOT_CARD + i] >= 0 and (s[L.SLOT_FLAG + i] & L.F_LEFT) == 0:
                paid += 1
        deficit = target - total
        ns, ts = _stack_value(s)  # the owned cards only matter when the stack is empty
        stack_mean = ts / ns if ns > 0 else deck_stats(s, owned)[0]
        if deficit <= 2 and paid < 2 and s[L.LIFE] > PAY_LIFE and stack_mean >= deficit / 2:
            return L.DRAW_PAID
    if has_end:
        return L.END_FIGHT
    if has_concede:
        return L.CONCEDE
    return moves[0]


@njit(cache=True)
def k_policy(s, moves, owned):
    """The trimming player's action at a decision (``moves``, ``owned``: scratch buffers)."""
    n = k_moves(s, moves)
    if n == 1:
        return moves[0]
    phase = s[L.PHASE]
    if phase == L.P_HAZARD:
        return _hazard_choice(s, owned)
    if phase == L.P_PIRATE:  # the lower printed value first; "*" last
        a = C.PIRATE_HAZARD[s[L.PIRATE_A]] if C.PIRATE_HAZARD[s[L.PIRATE_A]] > 0 else 99
        b = C.PIRATE_HAZARD[s[L.PIRATE_B]] if C.PIRATE_HAZARD[s[L.PIRATE_B]] > 0 else 99
        return L.PIRATE_0 if a <= b else L.PIRATE_1
    if phase == L.P_DESTROY:
        return _destroy_choice(s, moves, n)
    if phase == L.P_SORT:
        return _sort_choice(s, moves, n)
    if phase == L.P_TARGET:
        return _target_choice(s, moves, n)
    behind = fight_total(s) < fight_target(s)
    if phase == L.P_EXTRA:  # +2 cards / below the pile: draw while behind; sort: see all 3
        for k in range(n):
            if moves[k] == L.EXTRA_DRAW and (s[L.AB_KIND] == C.SORT or behind and not k_draw_loses(s)):
                return L.EXTRA_DRAW
        return L.DONE
    if phase == L.P_EXCHANGE_MORE:
        best_a = -1
        best = 1
        for k in range(n):
            j = moves[k] - L.TARGET_BASE
            if 0 <= j < L.MAX_SLOTS and C.VALUE[s[L.SLOT_CARD + j]] < best:
                best = C.VALUE[s[L.SLOT_CARD + j]]
                best_a = moves[k]
        return best_a if behind and best_a >= 0 and best <= 0 and not k_draw_loses(s) else L.DONE
    return _fight_choice(s, moves, n, owned)


@njit(cache=True)
def k_rollout(s, rng_state, moves, owned, horizon):
    """Play ``s`` (changed in place) with ``k_policy`` to the end, or until ``horizon`` > 0 turns
    have been played and the next one begins."""
    decisions = 0
    turns = 0
    while s[L.RESULT] == L.ONGOING and decisions < MAX_ROLLOUT_DECISIONS:
        if s[L.PENDING] != L.PD_NONE:
            k_sample_split(s, rng_state)
            continue
        if s[L.PHASE] == L.P_HAZARD or s[L.PHASE] == L.P_PIRATE:
            if horizon > 0 and turns == horizon:
                return
            turns += 1
        k_apply(s, k_policy(s, moves, owned))
        decisions += 1


@njit(cache=True)
def state_rollout(s, rng_state, horizon):
    """``k_rollout`` on the common state (Friday's ``Rollout.kernel`` for tablegym.search.montecarlo)."""
    b = body(s)
    k_rollout(b, rng_state, np.empty(MOVES_CAP, dtype=np.int64), np.zeros(C.NUM_TYPES, dtype=np.int64), horizon)
    k_sync(s)


@njit(cache=True)
def k_policy_action(s):
    """``k_policy`` with its own scratch buffers (one call from Python)."""
    return k_policy(s, np.empty(MOVES_CAP, dtype=np.int64), np.zeros(C.NUM_TYPES, dtype=np.int64))
