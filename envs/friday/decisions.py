"""Friday's rules kernels of a decision: which actions are legal (``k_moves``), applying one
(``k_apply``), sampling the chance outcomes for searches (``k_sample``, ``k_determinize``), and
what the player owns, the score and the position key."""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.core import pick_outcome, splitmix_uniform
from tablegym.envs.friday.cards import (
    ABILITY,
    AGING,
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
    KIND,
    LIFE1,
    LIFE2,
    MINUS_LIFE1,
    MINUS_LIFE2,
    NONE,
    NUM_AGING_TYPES,
    NUM_HAZARD_TYPES,
    NUM_PIRATES,
    NUM_TYPES,
    PAID_TWO,
    SORT,
    STEP,
    VALUE,
)
from tablegym.envs.friday.layout import (
    AB_KIND,
    AB_LEFT,
    AB_SIDE,
    AB_SRC,
    BEATEN,
    BELOW_OPTIONAL,
    BOTTOM,
    BOTTOM_N,
    CHOICE_A,
    CHOICE_B,
    CONCEDE,
    D_EXTRA,
    D_FREE,
    D_PAID,
    D_REPLACE,
    D_SORT,
    DESTROY_BASE,
    DESTROY_LAST,
    DESTROY_LEFT,
    DISC,
    DONE,
    DRAW_FREE,
    DRAW_PAID,
    END_FIGHT,
    EXTRA_DRAW,
    F_COPIED_STEP,
    F_DESTROYED,
    F_DOUBLED,
    F_LEFT,
    F_USED,
    FIGHT,
    FIGHT_0,
    FIGHT_1,
    FREE_ALLOWED,
    FREE_DRAWN,
    FREE_ENDED,
    HDISC,
    HSTACK,
    LIFE,
    MAX_SLOTS,
    MAXLIFE,
    MID,
    NUM_OUTCOMES,
    ONGOING,
    OPT_BELOW,
    OPT_CHARGE,
    OPT_TIMING,
    P_DESTROY,
    P_EXCHANGE_MORE,
    P_EXTRA,
    P_FIGHT,
    P_HAZARD,
    P_OVER,
    P_PIRATE,
    P_SORT,
    P_TARGET,
    PD_DRAW,
    PD_HAZARD,
    PD_NONE,
    PD_PIRATE,
    PENDING,
    PFIGHT,
    PHASE,
    PIRATE_0,
    PIRATE_1,
    PIRATE_A,
    PIRATE_OUTCOME,
    PIRATE_POOL,
    RESULT,
    SIZE,
    SKIP,
    SLOT_CARD,
    SLOT_FLAG,
    SORT0,
    SORT_BASE,
    SORT_N,
    SORT_OPTIONS,
    STOP_FREE,
    TARGET_BASE,
    TOP0,
    TOP_N,
    USE_BASE,
    WON,
)
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
    if a == LIFE1 or a == LIFE2 or a == STEP:
        return True
    if a == CARD1 or a == CARD2:
        return _can_draw(s) and _free_slot(s) >= 0
    if a == SORT:
        return _stack_size(s) > 0
    for j in range(MAX_SLOTS):
        if j != src and _face_up(s, j):
            if a != DOUBLE or (s[SLOT_FLAG + j] & F_DOUBLED) == 0:
                return True
    return False


@njit(cache=True)
def _valid_target(s, src, a, j):
    """Slot j can be the target of ability ``a`` used from slot ``src`` (never the card itself)."""
    if j == src or not _face_up(s, j):
        return False
    if a == DOUBLE:
        return (s[SLOT_FLAG + j] & F_DOUBLED) == 0
    if a == COPY:  # the copied ability must not be an aging one or a copy, and must have an effect
        b = ABILITY[s[SLOT_CARD + j]]
        if b == NONE or b == COPY or KIND[s[SLOT_CARD + j]] == AGING:
            return False
        return _usable_simple(s, src, b)
    return True


@njit(cache=True)
def _usable(s, src, a):
    """Ability ``a`` used from slot ``src`` would have an effect."""
    if a == COPY:
        for j in range(MAX_SLOTS):
            if _valid_target(s, src, COPY, j):
                return True
        return False
    return _usable_simple(s, src, a)


@njit(cache=True)
def _abilities_open(s):
    return s[OPT_TIMING] == 0 or s[FREE_ENDED] == 1 or s[FREE_DRAWN] >= s[FREE_ALLOWED]


@njit(cache=True)
def _paid_cost(s):
    if s[PFIGHT] >= 0 and s[PIRATE_A + s[PFIGHT]] == PAID_TWO:
        return 2
    return 1


@njit(cache=True)
def k_moves(s, out):
    """Legal actions at a decision, in id order; the chance outcomes at a chance node."""
    if s[RESULT] != ONGOING:
        return 0
    if s[PENDING] != PD_NONE:
        probs = np.empty(NUM_OUTCOMES, dtype=np.float64)
        return k_chance(s, out, probs)
    n = 0
    phase = s[PHASE]
    if phase == P_HAZARD:
        out[0] = FIGHT_0
        if s[CHOICE_B] >= 0:
            out[1] = FIGHT_1
        else:
            out[1] = SKIP
        return 2
    if phase == P_PIRATE:
        out[0] = PIRATE_0
        out[1] = PIRATE_1
        return 2
    if phase == P_FIGHT:
        space = _free_slot(s) >= 0
        can = _can_draw(s) and space
        free_left = s[FREE_DRAWN] < s[FREE_ALLOWED] and s[FREE_ENDED] == 0
        started = s[FREE_DRAWN] >= min(1, s[FREE_ALLOWED]) or not can
        if free_left and can:
            out[n] = DRAW_FREE
            n += 1
        if started and can and s[LIFE] >= _paid_cost(s):
            out[n] = DRAW_PAID
            n += 1
        if started and (s[PFIGHT] < 0 or fight_total(s) >= fight_target(s)):
            out[n] = END_FIGHT
            n += 1
        if s[OPT_TIMING] == 1 and free_left and s[FREE_DRAWN] >= 1:
            out[n] = STOP_FREE
            n += 1
        if s[PFIGHT] >= 0:
            out[n] = CONCEDE
            n += 1
        if _abilities_open(s):
            for i in range(MAX_SLOTS):
                if _face_up(s, i) and (s[SLOT_FLAG + i] & F_USED) == 0:
                    a = ABILITY[s[SLOT_CARD + i]]
                    if a != NONE and a != STEP and KIND[s[SLOT_CARD + i]] != AGING and _usable(s, i, a):
                        out[n] = USE_BASE + i
                        n += 1
        return n
    if phase == P_TARGET or phase == P_EXCHANGE_MORE:
        if phase == P_EXCHANGE_MORE:
            out[n] = DONE
            n += 1
        for j in range(MAX_SLOTS):
            if _valid_target(s, s[AB_SRC], s[AB_KIND], j):
                out[n] = TARGET_BASE + j
                n += 1
        return n
    if phase == P_EXTRA:
        out[n] = DONE
        n += 1
        if s[AB_KIND] == SORT or (_can_draw(s) and _free_slot(s) >= 0):  # sort: AB_LEFT <= stack size
            out[n] = EXTRA_DRAW
            n += 1
        return n
    if phase == P_SORT:
        for k in range(SORT_OPTIONS.shape[0]):
            if SORT_OPTIONS[k, 0] == s[SORT_N]:
                out[n] = SORT_BASE + k
                n += 1
        return n
    if phase == P_DESTROY:
        out[n] = DONE
        n += 1
        for j in range(s[DESTROY_LAST] + 1, MAX_SLOTS):
            if _face_up(s, j) and DESTROY_COST[s[SLOT_CARD + j]] <= s[DESTROY_LEFT]:
                out[n] = DESTROY_BASE + j
                n += 1
        return n
    return 0


# ---- applying a decision ---------------------------------------------------------------------------


@njit(cache=True)
def _start_ability(s, src, a):
    """Use ability ``a`` from slot ``src`` (its own, or the one a copy points at)."""
    if a == LIFE1 or a == LIFE2:
        s[LIFE] = min(s[MAXLIFE], s[LIFE] + (1 if a == LIFE1 else 2))
        s[PHASE] = P_FIGHT
        s[AB_KIND] = NONE
        s[AB_SRC] = -1
    elif a == CARD1 or a == CARD2:
        s[AB_KIND] = a
        s[AB_SRC] = src
        s[AB_LEFT] = 1 if a == CARD2 else 0
        _draw(s, np.int8(D_EXTRA))
    elif a == SORT:
        s[AB_KIND] = SORT
        s[AB_SRC] = src
        s[AB_LEFT] = min(3, _stack_size(s))
        s[SORT_N] = 0
        _draw(s, np.int8(D_SORT))
    elif a == STEP:  # a copied "step -1": the copy counts as one more while face up
        s[SLOT_FLAG + src] |= F_COPIED_STEP
        s[PHASE] = P_FIGHT
        s[AB_KIND] = NONE
        s[AB_SRC] = -1
    else:
        s[AB_KIND] = a
        s[AB_SRC] = src
        s[AB_LEFT] = 1 if a == EXCHANGE2 else 0
        s[PHASE] = P_TARGET


@njit(cache=True)
def _target(s, j):
    a = s[AB_KIND]
    src = s[AB_SRC]
    if a == COPY:
        _start_ability(s, src, ABILITY[s[SLOT_CARD + j]])
        return
    if a == DESTROY:
        s[SLOT_FLAG + j] |= F_DESTROYED
    elif a == DOUBLE:
        s[SLOT_FLAG + j] |= F_DOUBLED
    elif a == EXCHANGE1 or a == EXCHANGE2:
        if s[PHASE] == P_EXCHANGE_MORE:
            s[AB_LEFT] = 0
        s[AB_SIDE] = s[SLOT_FLAG + j] & F_LEFT
        s[DISC + s[SLOT_CARD + j]] += 1
        s[SLOT_CARD + j] = -1
        s[SLOT_FLAG + j] = 0
        _draw(s, np.int8(D_REPLACE))
        return
    elif a == BELOW:
        left = s[SLOT_FLAG + j] & F_LEFT
        s[BOTTOM + s[BOTTOM_N]] = s[SLOT_CARD + j]
        s[BOTTOM_N] += 1
        s[SLOT_CARD + j] = -1
        s[SLOT_FLAG + j] = 0
        if left:
            s[AB_SIDE] = 1
            if s[OPT_BELOW] == BELOW_OPTIONAL:
                s[PHASE] = P_EXTRA  # the replacement "can" be drawn
                return
            _draw(s, np.int8(D_REPLACE))
            return
    s[PHASE] = P_FIGHT
    s[AB_KIND] = NONE
    s[AB_SRC] = -1


@njit(cache=True)
def _clear_table(s):
    """Fight cards go to the discard pile; cards turned face down by destroy leave the game."""
    for i in range(MAX_SLOTS):
        t = s[SLOT_CARD + i]
        if t >= 0:
            if (s[SLOT_FLAG + i] & F_DESTROYED) == 0:
                s[DISC + t] += 1
            s[SLOT_CARD + i] = -1
            s[SLOT_FLAG + i] = 0


@njit(cache=True)
def _charge_aging(s):
    if s[OPT_CHARGE] != 0:
        return True
    cost = 0
    for i in range(MAX_SLOTS):
        if _face_up(s, i):
            a = ABILITY[s[SLOT_CARD + i]]
            if a == MINUS_LIFE1:
                cost += 1
            elif a == MINUS_LIFE2:
                cost += 2
    return _pay(s, cost)


@njit(cache=True)
def _end_fight(s):
    total = fight_total(s)
    target = fight_target(s)
    if s[PFIGHT] >= 0:
        if not _charge_aging(s):
            return
        s[BEATEN] |= 1 << s[PFIGHT]
        _clear_table(s)
        if s[BEATEN] == 3:
            s[RESULT] = WON
            s[PHASE] = P_OVER
            _clear_fight(s)
        else:
            _next_turn(s)
        return
    if total >= target:
        if not _charge_aging(s):
            return
        s[DISC + s[FIGHT]] += 1  # the beaten hazard joins the deck as its knowledge card
        _clear_table(s)
        _next_turn(s)
        return
    d = target - total
    if not _pay(s, d) or not _charge_aging(s):
        return
    s[HDISC + s[FIGHT]] += 1
    s[FIGHT] = -1
    s[DESTROY_LEFT] = min(d, 127)
    s[DESTROY_LAST] = -1
    s[PHASE] = P_DESTROY
    _maybe_finish_destroy(s)


@njit(cache=True)
def _maybe_finish_destroy(s):
    for j in range(s[DESTROY_LAST] + 1, MAX_SLOTS):
        if _face_up(s, j) and DESTROY_COST[s[SLOT_CARD + j]] <= s[DESTROY_LEFT]:
            return
    _clear_table(s)
    _next_turn(s)


@njit(cache=True)
def k_apply(s, a):
    """Apply a decision or a chance outcome in place (no validation: ``FridayState.child`` checks)."""
    if s[PENDING] != PD_NONE:
        _apply_outcome(s, a)
        return
    phase = s[PHASE]
    if phase == P_HAZARD:
        if a == SKIP:
            s[HDISC + s[CHOICE_A]] += 1
            _next_turn(s)
            return
        fought = s[CHOICE_A] if a == FIGHT_0 else s[CHOICE_B]
        if s[CHOICE_B] >= 0:
            s[HDISC + (s[CHOICE_B] if a == FIGHT_0 else s[CHOICE_A])] += 1
        s[CHOICE_A] = -1
        s[CHOICE_B] = -1
        _clear_fight(s)
        s[FIGHT] = fought
        s[FREE_ALLOWED] = GROUP_FREE[GROUP[fought]]
        s[PHASE] = P_FIGHT
    elif phase == P_PIRATE:
        _start_pirate(s, a - PIRATE_0)
    elif a == DRAW_FREE:
        _draw(s, np.int8(D_FREE))
    elif a == DRAW_PAID:
        s[FREE_ENDED] = 1
        s[LIFE] -= _paid_cost(s)
        _draw(s, np.int8(D_PAID))
    elif a == END_FIGHT:
        _end_fight(s)
    elif a == STOP_FREE:
        s[FREE_ENDED] = 1
    elif a == CONCEDE:
        _lose(s)
    elif a == EXTRA_DRAW:
        if s[AB_KIND] == SORT:
            _draw(s, np.int8(D_SORT))
        elif s[AB_KIND] == BELOW:
            _draw(s, np.int8(D_REPLACE))
        else:
            s[AB_LEFT] = 0
            _draw(s, np.int8(D_EXTRA))
    elif a == DONE:
        if phase == P_DESTROY:
            _clear_table(s)
            _next_turn(s)
        elif s[AB_KIND] == SORT:  # stop drawing: arrange the cards drawn so far
            s[AB_LEFT] = 0
            s[PHASE] = P_SORT
        else:
            s[PHASE] = P_FIGHT
            s[AB_KIND] = NONE
            s[AB_SRC] = -1
            s[AB_LEFT] = 0
    elif a < TARGET_BASE:
        i = a - USE_BASE
        s[SLOT_FLAG + i] |= F_USED
        _start_ability(s, i, ABILITY[s[SLOT_CARD + i]])
    elif a < DESTROY_BASE:
        _target(s, a - TARGET_BASE)
    elif a < SORT_BASE:
        j = a - DESTROY_BASE
        s[DESTROY_LEFT] -= DESTROY_COST[s[SLOT_CARD + j]]
        s[DESTROY_LAST] = j
        s[SLOT_CARD + j] = -1
        s[SLOT_FLAG + j] = 0
        _maybe_finish_destroy(s)
    else:
        k = a - SORT_BASE
        d = SORT_OPTIONS[k, 1]
        if d >= 0:
            s[DISC + s[SORT0 + d]] += 1
        kept = np.empty(3, dtype=np.int64)
        m = 0
        for r in range(3):
            idx = SORT_OPTIONS[k, 2 + r]
            if idx >= 0:
                kept[m] = s[SORT0 + idx]
                m += 1
        rest = s[TOP_N]  # cards still on top when the sort stopped early (TOP is drawn first,
        for r in range(rest - 1, -1, -1):  # so kept + rest <= 3): they stay under the kept ones
            s[TOP0 + m + r] = s[TOP0 + r]
        for r in range(m):
            s[TOP0 + r] = kept[r]
        s[TOP_N] = m + rest
        s[SORT_N] = 0
        s[PHASE] = P_FIGHT
        s[AB_KIND] = NONE
        s[AB_SRC] = -1


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
    ids = np.empty(NUM_OUTCOMES, dtype=np.int64)
    probs = np.empty(NUM_OUTCOMES, dtype=np.float64)
    while s[PENDING] != PD_NONE and s[RESULT] == ONGOING:
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
    while s[PENDING] != PD_NONE and s[RESULT] == ONGOING:
        kind = s[PENDING]
        u = splitmix_uniform(rng_state)
        if kind == PD_DRAW:
            o = _pick(s, MID, NUM_TYPES, u)
        elif kind == PD_HAZARD:
            o = _pick(s, HSTACK, NUM_HAZARD_TYPES, u)
        elif kind == PD_PIRATE:
            o = PIRATE_OUTCOME + _pick(s, PIRATE_POOL, NUM_PIRATES, u)
        else:
            ids = np.empty(NUM_AGING_TYPES, dtype=np.int64)
            probs = np.empty(NUM_AGING_TYPES, dtype=np.float64)
            o = pick_outcome(ids, probs, k_chance(s, ids, probs), u)
        _apply_outcome(s, o)


@njit(cache=True)
def k_determinize(s, rng_state):
    """Fix the order of the shuffled middle of the fighting stack (a determinization).

    The middle's cards are drawn in a random order (``splitmix_uniform``) and put, in that
    order, in front of BOTTOM: every later draw from this stack is then known, until the next
    reshuffle. A search that starts from this state searches one sampled world of that stack.
    """
    n = _total(s, MID, NUM_TYPES)
    if n == 0:
        return
    order = np.empty(n, dtype=np.int64)
    for k in range(n):
        t = _pick(s, MID, NUM_TYPES, splitmix_uniform(rng_state))
        s[MID + t] -= 1
        order[k] = t
    for i in range(s[BOTTOM_N] - 1, -1, -1):
        s[BOTTOM + n + i] = s[BOTTOM + i]
    for k in range(n):
        s[BOTTOM + k] = order[k]
    s[BOTTOM_N] += n


# ---- what the player owns, and the score --------------------------------------------------------


@njit(cache=True)
def k_owned(s, out):
    """Counts per card type of the fighting cards Robinson owns (stack, discard pile, table)."""
    for t in range(NUM_TYPES):
        out[t] = s[MID + t] + s[DISC + t]
    for r in range(s[TOP_N]):
        out[s[TOP0 + r]] += 1
    for r in range(s[SORT_N]):
        out[s[SORT0 + r]] += 1
    for r in range(s[BOTTOM_N]):
        out[s[BOTTOM + r]] += 1
    for i in range(MAX_SLOTS):
        if s[SLOT_CARD + i] >= 0:
            out[s[SLOT_CARD + i]] += 1


@njit(cache=True)
def k_score(s):
    """The game's score (rules/friday.md, "Score"), also for lost and unfinished games."""
    owned = np.zeros(NUM_TYPES, dtype=np.int64)
    k_owned(s, owned)
    for i in range(MAX_SLOTS):  # face-down cards leave with the fight; a death ends it at once
        if s[RESULT] != ONGOING and s[SLOT_CARD + i] >= 0 and (s[SLOT_FLAG + i] & F_DESTROYED):
            owned[s[SLOT_CARD + i]] -= 1
    score = 0
    for t in range(NUM_TYPES):
        if KIND[t] == AGING:
            score -= 5 * owned[t]
        else:
            score += VALUE[t] * owned[t]
    return score + k_progress(s)


@njit(cache=True)
def k_progress(s):
    """The score's terms for getting on (rules/friday.md, "Score"): +15 per pirate beaten, -3 per
    undefeated hazard, +5 per life point at a win; the score without the cards owned."""
    progress = 15 * ((s[BEATEN] & 1) + ((s[BEATEN] >> 1) & 1))
    if s[RESULT] == WON:
        progress += 5 * s[LIFE]
    undefeated = _total(s, HSTACK, NUM_HAZARD_TYPES) + _total(s, HDISC, NUM_HAZARD_TYPES)
    for k in (CHOICE_A, CHOICE_B, FIGHT):
        if s[k] >= 0:
            undefeated += 1
    return progress - 3 * undefeated


_KEY_WORDS = np.random.default_rng(20261125).integers(0, 2**63, SIZE // 8, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
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
