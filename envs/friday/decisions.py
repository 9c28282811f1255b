"""Friday's rules kernels of a decision: which actions are legal (``k_moves``), applying one
(``k_apply``), sampling the chance outcomes for searches (``k_sample``, ``k_determinize``), and
what the player owns, the score and the position key."""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.core import pick_outcome, splitmix_uniform
from tablegym.envs.friday import cards as C
from tablegym.envs.friday import layout as L
from tablegym.envs.friday.turns import (
    _apply_outcome,
    _can_draw,
    _clear_fight,
    _draw,
    _face_up,
    _free_slot,
    _lose,
    _next_turn,
    _pay,
    _stack_size,
    _start_pirate,
    _total,
    fight_target,
    fight_total,
    k_chance,
)

# ---- legality ----------------------------------------------------------------------------------------


@njit(cache=True)
def _usable_simple(s, src, a):
    """Ability ``a`` (not a copy) used from slot ``src`` would have something to act on."""
    if a == C.LIFE1 or a == C.LIFE2 or a == C.STEP:
        return True
    if a == C.CARD1 or a == C.CARD2:
        return _can_draw(s) and _free_slot(s) >= 0
    if a == C.SORT:
        return _stack_size(s) > 0
    for j in range(L.MAX_SLOTS):
        if j != src and _face_up(s, j):
            if a != C.DOUBLE or (s[L.SLOT_FLAG + j] & L.F_DOUBLED) == 0:
                return True
    return False


@njit(cache=True)
def _valid_target(s, src, a, j):
    """Slot j can be the target of ability ``a`` used from slot ``src`` (never the card itself)."""
    if j == src or not _face_up(s, j):
        return False
    if a == C.DOUBLE:
        return (s[L.SLOT_FLAG + j] & L.F_DOUBLED) == 0
    if a == C.COPY:  # the copied ability must not be an aging one or a copy, and must have an effect
        b = C.ABILITY[s[L.SLOT_CARD + j]]
        if b == C.NONE or b == C.COPY or C.KIND[s[L.SLOT_CARD + j]] == C.AGING:
            return False
        return _usable_simple(s, src, b)
    return True


@njit(cache=True)
def _usable(s, src, a):
    """Ability ``a`` used from slot ``src`` would have an effect."""
    if a == C.COPY:
        for j in range(L.MAX_SLOTS):
            if _valid_target(s, src, C.COPY, j):
                return True
        return False
    return _usable_simple(s, src, a)


@njit(cache=True)
def _abilities_open(s):
    return s[L.OPT_TIMING] == 0 or s[L.FREE_ENDED] == 1 or s[L.FREE_DRAWN] >= s[L.FREE_ALLOWED]


@njit(cache=True)
def _paid_cost(s):
    if s[L.PFIGHT] >= 0 and s[L.PIRATE_A + s[L.PFIGHT]] == C.PAID_TWO:
        return 2
    return 1


@njit(cache=True)
def k_moves(s, out):
    """Legal actions at a decision, in id order; the chance outcomes at a chance node."""
    if s[L.RESULT] != L.ONGOING:
        return 0
    if s[L.PENDING] != L.PD_NONE:
        probs = np.empty(L.NUM_OUTCOMES, dtype=np.float64)
        return k_chance(s, out, probs)
    n = 0
    phase = s[L.PHASE]
    if phase == L.P_HAZARD:
        out[0] = L.FIGHT_0
        if s[L.CHOICE_B] >= 0:
            out[1] = L.FIGHT_1
        else:
            out[1] = L.SKIP
        return 2
    if phase == L.P_PIRATE:
        out[0] = L.PIRATE_0
        out[1] = L.PIRATE_1
        return 2
    if phase == L.P_FIGHT:
        space = _free_slot(s) >= 0
        can = _can_draw(s) and space
        free_left = s[L.FREE_DRAWN] < s[L.FREE_ALLOWED] and s[L.FREE_ENDED] == 0
        started = s[L.FREE_DRAWN] >= min(1, s[L.FREE_ALLOWED]) or not can
        if free_left and can:
            out[n] = L.DRAW_FREE
            n += 1
        if started and can and s[L.LIFE] >= _paid_cost(s):
            out[n] = L.DRAW_PAID
            n += 1
        if started and (s[L.PFIGHT] < 0 or fight_total(s) >= fight_target(s)):
            out[n] = L.END_FIGHT
            n += 1
        if s[L.OPT_TIMING] == 1 and free_left and s[L.FREE_DRAWN] >= 1:
            out[n] = L.STOP_FREE
            n += 1
        if s[L.PFIGHT] >= 0:
            out[n] = L.CONCEDE
            n += 1
        if _abilities_open(s):
            for i in range(L.MAX_SLOTS):
                if _face_up(s, i) and (s[L.SLOT_FLAG + i] & L.F_USED) == 0:
                    a = C.ABILITY[s[L.SLOT_CARD + i]]
                    if a != C.NONE and a != C.STEP and C.KIND[s[L.SLOT_CARD + i]] != C.AGING and _usable(s, i, a):
                        out[n] = L.USE_BASE + i
                        n += 1
        return n
    if phase == L.P_TARGET or phase == L.P_EXCHANGE_MORE:
        if phase == L.P_EXCHANGE_MORE:
            out[n] = L.DONE
            n += 1
        for j in range(L.MAX_SLOTS):
            if _valid_target(s, s[L.AB_SRC], s[L.AB_KIND], j):
                out[n] = L.TARGET_BASE + j
                n += 1
        return n
    if phase == L.P_EXTRA:
        out[n] = L.DONE
        n += 1
        if s[L.AB_KIND] == C.SORT or (_can_draw(s) and _free_slot(s) >= 0):  # sort: AB_LEFT <= stack size
            out[n] = L.EXTRA_DRAW
            n += 1
        return n
    if phase == L.P_SORT:
        for k in range(L.SORT_OPTIONS.shape[0]):
            if L.SORT_OPTIONS[k, 0] == s[L.SORT_N]:
                out[n] = L.SORT_BASE + k
                n += 1
        return n
    if phase == L.P_DESTROY:
        out[n] = L.DONE
        n += 1
        for j in range(s[L.DESTROY_LAST] + 1, L.MAX_SLOTS):
            if _face_up(s, j) and C.DESTROY_COST[s[L.SLOT_CARD + j]] <= s[L.DESTROY_LEFT]:
                out[n] = L.DESTROY_BASE + j
                n += 1
        return n
    return 0


# ---- applying a decision ---------------------------------------------------------------------------


@njit(cache=True)
def _start_ability(s, src, a):
    """Use ability ``a`` from slot ``src`` (its own, or the one a copy points at)."""
    if a == C.LIFE1 or a == C.LIFE2:
        s[L.LIFE] = min(s[L.MAXLIFE], s[L.LIFE] + (1 if a == C.LIFE1 else 2))
        s[L.PHASE] = L.P_FIGHT
        s[L.AB_KIND] = C.NONE
        s[L.AB_SRC] = -1
    elif a == C.CARD1 or a == C.CARD2:
        s[L.AB_KIND] = a
        s[L.AB_SRC] = src
        s[L.AB_LEFT] = 1 if a == C.CARD2 else 0
        _draw(s, np.int8(L.D_EXTRA))
    elif a == C.SORT:
        s[L.AB_KIND] = C.SORT
        s[L.AB_SRC] = src
        s[L.AB_LEFT] = min(3, _stack_size(s))
        s[L.SORT_N] = 0
        _draw(s, np.int8(L.D_SORT))
    elif a == C.STEP:  # a copied "step -1": the copy counts as one more while face up
        s[L.SLOT_FLAG + src] |= L.F_COPIED_STEP
        s[L.PHASE] = L.P_FIGHT
        s[L.AB_KIND] = C.NONE
        s[L.AB_SRC] = -1
    else:
        s[L.AB_KIND] = a
        s[L.AB_SRC] = src
        s[L.AB_LEFT] = 1 if a == C.EXCHANGE2 else 0
        s[L.PHASE] = L.P_TARGET


@njit(cache=True)
def _target(s, j):
    a = s[L.AB_KIND]
    src = s[L.AB_SRC]
    if a == C.COPY:
        _start_ability(s, src, C.ABILITY[s[L.SLOT_CARD + j]])
        return
    if a == C.DESTROY:
        s[L.SLOT_FLAG + j] |= L.F_DESTROYED
    elif a == C.DOUBLE:
        s[L.SLOT_FLAG + j] |= L.F_DOUBLED
    elif a == C.EXCHANGE1 or a == C.EXCHANGE2:
        if s[L.PHASE] == L.P_EXCHANGE_MORE:
            s[L.AB_LEFT] = 0
        s[L.AB_SIDE] = s[L.SLOT_FLAG + j] & L.F_LEFT
        s[L.DISC + s[L.SLOT_CARD + j]] += 1
        s[L.SLOT_CARD + j] = -1
        s[L.SLOT_FLAG + j] = 0
        _draw(s, np.int8(L.D_REPLACE))
        return
    elif a == C.BELOW:
        left = s[L.SLOT_FLAG + j] & L.F_LEFT
        s[L.BOTTOM + s[L.BOTTOM_N]] = s[L.SLOT_CARD + j]
        s[L.BOTTOM_N] += 1
        s[L.SLOT_CARD + j] = -1
        s[L.SLOT_FLAG + j] = 0
        if left:
            s[L.AB_SIDE] = 1
            if s[L.OPT_BELOW] == L.BELOW_OPTIONAL:
                s[L.PHASE] = L.P_EXTRA  # the replacement "can" be drawn
                return
            _draw(s, np.int8(L.D_REPLACE))
            return
    s[L.PHASE] = L.P_FIGHT
    s[L.AB_KIND] = C.NONE
    s[L.AB_SRC] = -1


@njit(cache=True)
def _clear_table(s):
    """Fight cards go to the discard pile; cards turned face down by destroy leave the game."""
    for i in range(L.MAX_SLOTS):
        t = s[L.SLOT_CARD + i]
        if t >= 0:
            if (s[L.SLOT_FLAG + i] & L.F_DESTROYED) == 0:
                s[L.DISC + t] += 1
            s[L.SLOT_CARD + i] = -1
            s[L.SLOT_FLAG + i] = 0


@njit(cache=True)
def _charge_aging(s):
    if s[L.OPT_CHARGE] != 0:
        return True
    cost = 0
    for i in range(L.MAX_SLOTS):
        if _face_up(s, i):
            a = C.ABILITY[s[L.SLOT_CARD + i]]
            if a == C.MINUS_LIFE1:
                cost += 1
            elif a == C.MINUS_LIFE2:
                cost += 2
    return _pay(s, cost)


@njit(cache=True)
def _end_fight(s):
    total = fight_total(s)
    target = fight_target(s)
    if s[L.PFIGHT] >= 0:
        if not _charge_aging(s):
            return
        s[L.BEATEN] |= 1 << s[L.PFIGHT]
        _clear_table(s)
        if s[L.BEATEN] == 3:
            s[L.RESULT] = L.WON
            s[L.PHASE] = L.P_OVER
            _clear_fight(s)
        else:
            _next_turn(s)
        return
    if total >= target:
        if not _charge_aging(s):
            return
        s[L.DISC + s[L.FIGHT]] += 1  # the beaten hazard joins the deck as its knowledge card
        _clear_table(s)
        _next_turn(s)
        return
    d = target - total
    if not _pay(s, d) or not _charge_aging(s):
        return
    s[L.HDISC + s[L.FIGHT]] += 1
    s[L.FIGHT] = -1
    s[L.DESTROY_LEFT] = min(d, 127)
    s[L.DESTROY_LAST] = -1
    s[L.PHASE] = L.P_DESTROY
    _maybe_finish_destroy(s)


@njit(cache=True)
def _maybe_finish_destroy(s):
    for j in range(s[L.DESTROY_LAST] + 1, L.MAX_SLOTS):
        if _face_up(s, j) and C.DESTROY_COST[s[L.SLOT_CARD + j]] <= s[L.DESTROY_LEFT]:
            return
    _clear_table(s)
    _next_turn(s)


@njit(cache=True)
def k_apply(s, a):
    """Apply a decision or a chance outcome in place (no validation: ``FridayState.child`` checks)."""
    if s[L.PENDING] != L.PD_NONE:
        _apply_outcome(s, a)
        return
    phase = s[L.PHASE]
    if phase == L.P_HAZARD:
        if a == L.SKIP:
            s[L.HDISC + s[L.CHOICE_A]] += 1
            _next_turn(s)
            return
        fought = s[L.CHOICE_A] if a == L.FIGHT_0 else s[L.CHOICE_B]
        if s[L.CHOICE_B] >= 0:
            s[L.HDISC + (s[L.CHOICE_B] if a == L.FIGHT_0 else s[L.CHOICE_A])] += 1
        s[L.CHOICE_A] = -1
        s[L.CHOICE_B] = -1
        _clear_fight(s)
        s[L.FIGHT] = fought
        s[L.FREE_ALLOWED] = C.GROUP_FREE[C.GROUP[fought]]
        s[L.PHASE] = L.P_FIGHT
    elif phase == L.P_PIRATE:
        _start_pirate(s, a - L.PIRATE_0)
    elif a == L.DRAW_FREE:
        _draw(s, np.int8(L.D_FREE))
    elif a == L.DRAW_PAID:
        s[L.FREE_ENDED] = 1
        s[L.LIFE] -= _paid_cost(s)
        _draw(s, np.int8(L.D_PAID))
    elif a == L.END_FIGHT:
        _end_fight(s)
    elif a == L.STOP_FREE:
        s[L.FREE_ENDED] = 1
    elif a == L.CONCEDE:
        _lose(s)
    elif a == L.EXTRA_DRAW:
        if s[L.AB_KIND] == C.SORT:
            _draw(s, np.int8(L.D_SORT))
        elif s[L.AB_KIND] == C.BELOW:
            _draw(s, np.int8(L.D_REPLACE))
        else:
            s[L.AB_LEFT] = 0
            _draw(s, np.int8(L.D_EXTRA))
    elif a == L.DONE:
        if phase == L.P_DESTROY:
            _clear_table(s)
            _next_turn(s)
        elif s[L.AB_KIND] == C.SORT:  # stop drawing: arrange the cards drawn so far
            s[L.AB_LEFT] = 0
            s[L.PHASE] = L.P_SORT
        else:
            s[L.PHASE] = L.P_FIGHT
            s[L.AB_KIND] = C.NONE
            s[L.AB_SRC] = -1
            s[L.AB_LEFT] = 0
    elif a < L.TARGET_BASE:
        i = a - L.USE_BASE
        s[L.SLOT_FLAG + i] |= L.F_USED
        _start_ability(s, i, C.ABILITY[s[L.SLOT_CARD + i]])
    elif a < L.DESTROY_BASE:
        _target(s, a - L.TARGET_BASE)
    elif a < L.SORT_BASE:
        j = a - L.DESTROY_BASE
        s[L.DESTROY_LEFT] -= C.DESTROY_COST[s[L.SLOT_CARD + j]]
        s[L.DESTROY_LAST] = j
        s[L.SLOT_CARD + j] = -1
        s[L.SLOT_FLAG + j] = 0
        _maybe_finish_destroy(s)
    else:
        k = a - L.SORT_BASE
        d = L.SORT_OPTIONS[k, 1]
        if d >= 0:
            s[L.DISC + s[L.SORT0 + d]] += 1
        kept = np.empty(3, dtype=np.int64)
        m = 0
        for r in range(3):
            idx = L.SORT_OPTIONS[k, 2 + r]
            if idx >= 0:
                kept[m] = s[L.SORT0 + idx]
                m += 1
        rest = s[L.TOP_N]  # cards still on top when the sort stopped early (TOP is drawn first,
        for r in range(rest - 1, -1, -1):  # so kept + rest <= 3): they stay under the kept ones
            s[L.TOP0 + m + r] = s[L.TOP0 + r]
        for r in range(m):
            s[L.TOP0 + r] = kept[r]
        s[L.TOP_N] = m + rest
        s[L.SORT_N] = 0
        s[L.PHASE] = L.P_FIGHT
        s[L.AB_KIND] = C.NONE
        s[L.AB_SRC] = -1


@njit(cache=True)
def _sample_one(s, u, ids, probs):
    """Apply the pending draw's outcome picked by the uniform number ``u``."""
    n = k_chance(s, ids, probs)
    acc = 0.0
    pick = ids[n - 1]
    for i in range(n):
        acc += probs[i]
        if u < acc:
            pick = ids[i]
            break
    _apply_outcome(s, pick)


@njit(cache=True)
def k_sample(s, rng):
    """Resolve pending chance draws by sampling them with ``rng`` (a numpy Generator)."""
    ids = np.empty(L.NUM_OUTCOMES, dtype=np.int64)
    probs = np.empty(L.NUM_OUTCOMES, dtype=np.float64)
    while s[L.PENDING] != L.PD_NONE and s[L.RESULT] == L.ONGOING:
        _sample_one(s, rng.random(), ids, probs)


@njit(cache=True)
def _pick(s, base, n, u):
    """Index i < n drawn with probability s[base + i] / total, for the uniform number ``u``."""
    x = u * _total(s, base, n)
    last = 0
    for i in range(n):
        c = s[base + i]
        if c > 0:
            last = i
            if x < c:
                return i
            x -= c
    return last


@njit(cache=True)
def k_sample_split(s, rng_state):
    """``k_sample`` driven by ``splitmix_uniform``, without allocating (the search's determinization)."""
    while s[L.PENDING] != L.PD_NONE and s[L.RESULT] == L.ONGOING:
        kind = s[L.PENDING]
        u = splitmix_uniform(rng_state)
        if kind == L.PD_DRAW:
            o = _pick(s, L.MID, C.NUM_TYPES, u)
        elif kind == L.PD_HAZARD:
            o = _pick(s, L.HSTACK, C.NUM_HAZARD_TYPES, u)
        elif kind == L.PD_PIRATE:
            o = L.PIRATE_OUTCOME + _pick(s, L.PIRATE_POOL, C.NUM_PIRATES, u)
        else:
            ids = np.empty(C.NUM_AGING_TYPES, dtype=np.int64)
            probs = np.empty(C.NUM_AGING_TYPES, dtype=np.float64)
            o = pick_outcome(ids, probs, k_chance(s, ids, probs), u)
        _apply_outcome(s, o)


@njit(cache=True)
def k_determinize(s, rng_state):
    """Fix the order of the shuffled middle of the fighting stack (a determinization).

    The middle's cards are drawn in a random order (``splitmix_uniform``) and put, in that
    order, in front of BOTTOM: every later draw from this stack is then known, until the next
    reshuffle. A search that starts from this state searches one sampled world of that stack.
    """
    n = _total(s, L.MID, C.NUM_TYPES)
    if n == 0:
        return
    order = np.empty(n, dtype=np.int64)
    for k in range(n):
        t = _pick(s, L.MID, C.NUM_TYPES, splitmix_uniform(rng_state))
        s[L.MID + t] -= 1
        order[k] = t
    for i in range(s[L.BOTTOM_N] - 1, -1, -1):
        s[L.BOTTOM + n + i] = s[L.BOTTOM + i]
    for k in range(n):
        s[L.BOTTOM + k] = order[k]
    s[L.BOTTOM_N] += n


# ---- what the player owns, and the score --------------------------------------------------------


@njit(cache=True)
def k_owned(s, out):
    """Counts per card type of the fighting cards Robinson owns (stack, discard pile, table)."""
    for t in range(C.NUM_TYPES):
        out[t] = s[L.MID + t] + s[L.DISC + t]
    for r in range(s[L.TOP_N]):
        out[s[L.TOP0 + r]] += 1
    for r in range(s[L.SORT_N]):
        out[s[L.SORT0 + r]] += 1
    for r in range(s[L.BOTTOM_N]):
        out[s[L.BOTTOM + r]] += 1
    for i in range(L.MAX_SLOTS):
        if s[L.SLOT_CARD + i] >= 0:
            out[s[L.SLOT_CARD + i]] += 1


@njit(cache=True)
def k_score(s):
    """The game's score (rules/friday.md, "Score"), also for lost and unfinished games."""
    owned = np.zeros(C.NUM_TYPES, dtype=np.int64)
    k_owned(s, owned)
    for i in range(L.MAX_SLOTS):  # face-down cards leave with the fight; a death ends it at once
        if s[L.RESULT] != L.ONGOING and s[L.SLOT_CARD + i] >= 0 and (s[L.SLOT_FLAG + i] & L.F_DESTROYED):
            owned[s[L.SLOT_CARD + i]] -= 1
    score = 0
    for t in range(C.NUM_TYPES):
        if C.KIND[t] == C.AGING:
            score -= 5 * owned[t]
        else:
            score += C.VALUE[t] * owned[t]
    return score + k_progress(s)


@njit(cache=True)
def k_progress(s):
    """The score's terms for getting on (rules/friday.md, "Score"): +15 per pirate beaten, -3 per
    undefeated hazard, +5 per life point at a win; the score without the cards owned."""
    progress = 15 * ((s[L.BEATEN] & 1) + ((s[L.BEATEN] >> 1) & 1))
    if s[L.RESULT] == L.WON:
        progress += 5 * s[L.LIFE]
    undefeated = _total(s, L.HSTACK, C.NUM_HAZARD_TYPES) + _total(s, L.HDISC, C.NUM_HAZARD_TYPES)
    for k in (L.CHOICE_A, L.CHOICE_B, L.FIGHT):
        if s[k] >= 0:
            undefeated += 1
    return progress - 3 * undefeated


_KEY_WORDS = np.random.default_rng(20261125).integers(0, 2**63, L.SIZE // 8, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
"""An odd multiplier per 64-bit word of the slots (fixed: keys are the same in every process)."""


@njit(cache=True)
def k_key(s):
    """A 64-bit hash of Friday's slots: the sum of each 64-bit word times its own odd multiplier
    (two positions that differ in one word never collide), then splitmix64's finaliser. Why not
    FNV over the words: the header keeps the key after every push, and a sum of independent
    products takes a quarter of the time of FNV's chain of dependent multiplies."""
    words = s.view(np.uint64)
    h = np.uint64(0)
    for i in range(words.shape[0]):
        h += words[i] * _KEY_WORDS[i]
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return np.int64(h)
