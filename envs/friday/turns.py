"""Friday's rules kernels between decisions: small helpers over the slots, a new game and the
moves from turn to turn, drawing fighting cards (TOP, the shuffled middle, BOTTOM, a reshuffle)
and the chance nodes (a drawn card or hazard, a revealed pirate)."""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.core import LAST
from tablegym.envs.friday.cards import (
    ABILITY,
    AGING,
    ALL_HAZARDS,
    CARD2,
    COUNT,
    DIFFICULT,
    EXCHANGE2,
    FIRST_AGING,
    GROUP,
    GROUP_FREE,
    GROUP_VALUES,
    HALF_COUNT,
    HIGHEST0,
    KIND,
    MINUS_LIFE1,
    MINUS_LIFE2,
    NONE,
    NUM_AGING_TYPES,
    NUM_HAZARD_TYPES,
    NUM_PIRATES,
    NUM_TYPES,
    PER_AGING,
    PIRATE_FREE,
    PIRATE_HAZARD,
    PLUS_ONE,
    STEP,
    STOP,
    VALUE,
    VERY_STUPID,
)
from tablegym.envs.friday.layout import (
    AB_KIND,
    AB_LEFT,
    AB_SIDE,
    AB_SRC,
    AGING_IN,
    AGING_STACK,
    BEATEN,
    BOTTOM,
    BOTTOM_N,
    CHOICE_A,
    CHOICE_B,
    D_EXTRA,
    D_FREE,
    D_REPLACE,
    D_SORT,
    DESTROY_LAST,
    DESTROY_LEFT,
    DISC,
    DRAW_DEST,
    EMPTY_LOSE,
    F_COPIED_STEP,
    F_DESTROYED,
    F_DOUBLED,
    F_LEFT,
    FIGHT,
    FREE_ALLOWED,
    FREE_DRAWN,
    FREE_ENDED,
    HAZ_NEED,
    HDISC,
    HSTACK,
    LEVEL,
    LIFE,
    LOST,
    MAX_SLOTS,
    MAXLIFE,
    MID,
    OPT_BELOW,
    OPT_CHARGE,
    OPT_EMPTY,
    OPT_SORT,
    OPT_TIMING,
    P_EXCHANGE_MORE,
    P_EXTRA,
    P_FIGHT,
    P_HAZARD,
    P_OVER,
    P_PIRATE,
    P_SETUP,
    P_SORT,
    PD_AGING,
    PD_DRAW,
    PD_HAZARD,
    PD_NONE,
    PD_PIRATE,
    PD_SETUP_AGING,
    PENDING,
    PFIGHT,
    PHASE,
    PIRATE_A,
    PIRATE_B,
    PIRATE_OUTCOME,
    PIRATE_POOL,
    RESULT,
    SLOT_CARD,
    SLOT_FLAG,
    SORT0,
    SORT_N,
    SORT_ONE_AT_A_TIME,
    STEPI,
    TOP0,
    TOP1,
    TOP2,
    TOP_N,
    WORDS,
    body,
    k_sync,
)

# ---- small helpers ------------------------------------------------------------------------------


@njit(cache=True)
def _total(s, base, n):
    t = 0
    for i in range(n):
        t += s[base + i]
    return t


@njit(cache=True)
def _stack_size(s):
    return s[TOP_N] + _total(s, MID, NUM_TYPES) + s[BOTTOM_N]


@njit(cache=True)
def _can_draw(s):
    """A fighting card can be drawn: from the stack, or after a reshuffle of the discard pile."""
    if _stack_size(s) + _total(s, DISC, NUM_TYPES) > 0:
        return True
    return _total(s, AGING_STACK, NUM_AGING_TYPES) > 0


@njit(cache=True)
def k_draw_loses(s):
    """Drawing a fighting card now loses the game: the stack is empty and the reshuffle would
    need an aging card, but none is left (``empty_aging="lose"``). Players use it to avoid a
    draw they can decline."""
    return s[OPT_EMPTY] == EMPTY_LOSE and _stack_size(s) == 0 and _total(s, AGING_STACK, NUM_AGING_TYPES) == 0


@njit(cache=True)
def _free_slot(s):
    for i in range(MAX_SLOTS):
        if s[SLOT_CARD + i] < 0:
            return i
    return -1


@njit(cache=True)
def _face_up(s, i):
    return s[SLOT_CARD + i] >= 0 and (s[SLOT_FLAG + i] & F_DESTROYED) == 0


@njit(cache=True)
def _lose(s):
    s[RESULT] = LOST
    s[PHASE] = P_OVER
    s[PENDING] = PD_NONE


@njit(cache=True)
def _pay(s, amount):
    """Pay life; Robinson dies (the game is lost) when he cannot."""
    if amount > s[LIFE]:
        s[LIFE] = 0
        _lose(s)
        return False
    s[LIFE] -= amount
    return True


@njit(cache=True)
def _step_reduction(s):
    r = 0
    for i in range(MAX_SLOTS):
        if _face_up(s, i) and (ABILITY[s[SLOT_CARD + i]] == STEP or (s[SLOT_FLAG + i] & F_COPIED_STEP)):
            r += 1
    return r


@njit(cache=True)
def fight_target(s):
    """The hazard value H of the current fight (0 outside fights)."""
    if s[FIGHT] >= 0:
        step = max(s[STEPI] - _step_reduction(s), 0)
        return GROUP_VALUES[GROUP[s[FIGHT]], step]
    if s[PFIGHT] >= 0:
        p = s[PIRATE_A + s[PFIGHT]]
        if p == PER_AGING:
            return 2 * s[AGING_IN]
        if p == ALL_HAZARDS:
            h = 0
            for t in range(NUM_HAZARD_TYPES):
                h += (s[HSTACK + t] + s[HDISC + t]) * GROUP_VALUES[GROUP[t], 2]
            return h
        return PIRATE_HAZARD[p]
    return 0


@njit(cache=True)
def fight_total(s):
    """The fighting total of the face-up table cards (double, "highest card = 0", pirate specials)."""
    vals = np.empty(MAX_SLOTS, dtype=np.int64)
    aging = np.empty(MAX_SLOTS, dtype=np.int64)
    n = 0
    zero = 0
    for i in range(MAX_SLOTS):
        if _face_up(s, i):
            t = s[SLOT_CARD + i]
            v = VALUE[t]
            if s[SLOT_FLAG + i] & F_DOUBLED:
                v *= 2
            vals[n] = v
            aging[n] = KIND[t] == AGING
            n += 1
            if ABILITY[t] == HIGHEST0:
                zero += 1
    for _ in range(zero):  # each "highest card = 0" zeroes one of the highest cards
        best = -1
        for j in range(n):
            if best < 0 or vals[j] > vals[best]:
                best = j
        if best >= 0 and vals[best] > 0:
            vals[best] = 0
    pirate = s[PIRATE_A + s[PFIGHT]] if s[PFIGHT] >= 0 else -1
    total = 0
    if pirate == HALF_COUNT:
        counted = (n + 1) // 2
        used = np.zeros(n, dtype=np.bool_)
        for _ in range(counted):  # aging cards first (least negative first), then the highest others
            best = -1
            for j in range(n):
                if used[j]:
                    continue
                if best < 0 or (aging[j] > aging[best]) or (aging[j] == aging[best] and vals[j] > vals[best]):
                    best = j
            used[best] = True
            total += vals[best]
    else:
        for j in range(n):
            total += vals[j]
    if pirate == PLUS_ONE:
        total += n
    return total


# ---- setting up and moving between turns --------------------------------------------------------


@njit(cache=True)
def k_new(level, opt_timing, opt_charge, opt_empty, opt_below, opt_sort, max_life_level4):
    """The (common, int64) state before the setup draws (pirate reveals, and the level 2+ aging card)."""
    s = np.zeros(WORDS, dtype=np.int64)
    s[LAST] = -1
    b = body(s)
    b[LIFE] = 18 if level == 4 else 20
    b[MAXLIFE] = max_life_level4 if level == 4 else 22
    b[LEVEL] = level
    b[OPT_TIMING] = opt_timing
    b[OPT_CHARGE] = opt_charge
    b[OPT_EMPTY] = opt_empty
    b[OPT_BELOW] = opt_below
    b[OPT_SORT] = opt_sort
    for k in (FIGHT, PFIGHT, CHOICE_A, CHOICE_B, PIRATE_A, PIRATE_B, AB_SRC, DESTROY_LAST):
        b[k] = -1
    for t in range(NUM_TYPES):
        if KIND[t] == AGING:
            if t != VERY_STUPID or level >= 3:
                b[AGING_STACK + t - FIRST_AGING] = COUNT[t]
        elif KIND[t] == 1:
            b[MID + t] = COUNT[t]
        else:
            b[HSTACK + t] = COUNT[t]
    for p in range(NUM_PIRATES):
        b[PIRATE_POOL + p] = 1
    for i in range(MAX_SLOTS):
        b[SLOT_CARD + i] = -1
    b[PHASE] = P_SETUP
    b[PENDING] = PD_PIRATE
    k_sync(s)
    return s


@njit(cache=True)
def _clear_fight(s):
    s[FIGHT] = -1
    s[PFIGHT] = -1
    s[FREE_ALLOWED] = 0
    s[FREE_DRAWN] = 0
    s[FREE_ENDED] = 0
    s[AB_KIND] = NONE
    s[AB_SRC] = -1
    s[AB_LEFT] = 0
    s[DESTROY_LEFT] = 0
    s[DESTROY_LAST] = -1


@njit(cache=True)
def _start_pirate(s, which):
    _clear_fight(s)
    s[PFIGHT] = which
    p = s[PIRATE_A + which]
    if p == ALL_HAZARDS:
        f = 0
        for t in range(NUM_HAZARD_TYPES):
            f += (s[HSTACK + t] + s[HDISC + t]) * GROUP_FREE[GROUP[t]]
        s[FREE_ALLOWED] = min(f, 127)
    else:
        s[FREE_ALLOWED] = PIRATE_FREE[p]
    s[PHASE] = P_FIGHT


@njit(cache=True)
def _next_turn(s):
    """Move on to the next decision: draw hazards, change step, or go to the pirates."""
    _clear_fight(s)
    s[CHOICE_A] = -1
    s[CHOICE_B] = -1
    while True:
        n = _total(s, HSTACK, NUM_HAZARD_TYPES)
        if n > 0:
            s[HAZ_NEED] = 2 if n >= 2 else 1
            s[PENDING] = PD_HAZARD
            s[PHASE] = P_HAZARD
            return
        if s[STEPI] < 2 and _total(s, HDISC, NUM_HAZARD_TYPES) > 0:
            s[STEPI] += 1
            for t in range(NUM_HAZARD_TYPES):
                s[HSTACK + t] = s[HDISC + t]
                s[HDISC + t] = 0
            continue
        break
    s[STEPI] = 3
    left = 0
    for k in range(2):
        if not (s[BEATEN] >> k) & 1:
            left += 1
    if left == 2:
        s[PHASE] = P_PIRATE
    else:
        _start_pirate(s, 0 if not s[BEATEN] & 1 else 1)


# ---- drawing fighting cards --------------------------------------------------------------------


@njit(cache=True)
def _place(s, card, dest):
    """Put a drawn card where it was drawn for and continue; True when "sort" wants another card."""
    if dest == D_SORT:
        s[SORT0 + s[SORT_N]] = card
        s[SORT_N] += 1
        s[AB_LEFT] -= 1
        if s[AB_LEFT] > 0:
            if s[OPT_SORT] == SORT_ONE_AT_A_TIME:
                s[PHASE] = P_EXTRA  # draw another, or stop and arrange these
                return False
            return True
        s[PHASE] = P_SORT
        return False
    slot = _free_slot(s)
    left = dest == D_FREE or (dest == D_REPLACE and s[AB_SIDE] == 1)
    s[SLOT_CARD + slot] = card
    s[SLOT_FLAG + slot] = F_LEFT if left else 0
    if dest == D_FREE:
        s[FREE_DRAWN] += 1
    if left and ABILITY[card] == STOP:
        s[FREE_ENDED] = 1
    if s[OPT_CHARGE] == 1 and (ABILITY[card] == MINUS_LIFE1 or ABILITY[card] == MINUS_LIFE2):
        if not _pay(s, 1 if ABILITY[card] == MINUS_LIFE1 else 2):
            return False
    s[PHASE] = P_FIGHT
    if dest == D_EXTRA and s[AB_KIND] == CARD2 and s[AB_LEFT] > 0:
        s[PHASE] = P_EXTRA
    elif dest == D_REPLACE and s[AB_KIND] == EXCHANGE2 and s[AB_LEFT] > 0:
        s[PHASE] = P_EXCHANGE_MORE
    else:
        s[AB_KIND] = NONE
        s[AB_SRC] = -1
        s[AB_LEFT] = 0
    return False


@njit(cache=True)
def _take_known(s):
    """The next card if its identity is known (TOP, or BOTTOM under an empty middle); else -1
    after setting up the chance draw (or the reshuffle's aging draw) that will supply it."""
    if s[TOP_N] > 0:
        card = s[TOP0]
        s[TOP0] = s[TOP1]
        s[TOP1] = s[TOP2]
        s[TOP_N] -= 1
        return card
    if _total(s, MID, NUM_TYPES) > 0:
        s[PENDING] = PD_DRAW
        return -1
    if s[BOTTOM_N] > 0:
        card = s[BOTTOM]
        for i in range(s[BOTTOM_N] - 1):
            s[BOTTOM + i] = s[BOTTOM + i + 1]
        s[BOTTOM_N] -= 1
        return card
    if _total(s, AGING_STACK, NUM_AGING_TYPES) > 0:
        s[PENDING] = PD_AGING  # the stack is empty: an aging card joins the discard pile first
    elif s[OPT_EMPTY] == EMPTY_LOSE:
        _lose(s)
    else:
        _reshuffle(s)
        s[PENDING] = PD_DRAW
    return -1


@njit(cache=True)
def _draw(s, dest):
    """Draw fighting cards for ``dest``: known ones at once, a shuffled one as a chance node.

    Callers pass ``dest`` typed (``np.int8(D_...)``): numba compiles a function again for each
    literal argument it is called with, and this one (with ``_place`` below it) once is enough."""
    s[DRAW_DEST] = dest
    while True:
        card = _take_known(s)
        if card < 0 or not _place(s, card, dest):
            return


@njit(cache=True)
def _reshuffle(s):
    for t in range(NUM_TYPES):
        s[MID + t] += s[DISC + t]
        s[DISC + t] = 0


@njit(cache=True)
def _aging_types_open(s):
    """Aging types that can come next: the normal ones while any is left, then the difficult."""
    normal = 0
    for a in range(NUM_AGING_TYPES):
        if not DIFFICULT[FIRST_AGING + a]:
            normal += s[AGING_STACK + a]
    return normal > 0


# ---- chance nodes ----------------------------------------------------------------------------------


@njit(cache=True)
def _by_count(s, base, kinds, ids, probs):
    """The draw from a stack kept as counts ``s[base:base + kinds]``: outcome ``t`` for every
    kind ``t`` present, with its share of the cards; returns how many."""
    total = _total(s, base, kinds)
    n = 0
    for t in range(kinds):
        if s[base + t] > 0:
            ids[n] = t
            probs[n] = s[base + t] / total
            n += 1
    return n


@njit(cache=True)
def k_chance(s, ids, probs):
    """The outcomes of the pending draw and their probabilities; 0 at a decision."""
    kind = s[PENDING]
    n = 0
    if kind == PD_DRAW:
        n = _by_count(s, MID, NUM_TYPES, ids, probs)
    elif kind == PD_AGING or kind == PD_SETUP_AGING:
        want = 0 if _aging_types_open(s) else 1  # normal aging cards lie above the difficult ones
        total = 0
        for a in range(NUM_AGING_TYPES):
            if DIFFICULT[FIRST_AGING + a] == want:
                total += s[AGING_STACK + a]
        for a in range(NUM_AGING_TYPES):
            if DIFFICULT[FIRST_AGING + a] == want and s[AGING_STACK + a] > 0:
                ids[n] = FIRST_AGING + a
                probs[n] = s[AGING_STACK + a] / total
                n += 1
    elif kind == PD_HAZARD:
        n = _by_count(s, HSTACK, NUM_HAZARD_TYPES, ids, probs)
    elif kind == PD_PIRATE:
        total = _total(s, PIRATE_POOL, NUM_PIRATES)
        for p in range(NUM_PIRATES):
            if s[PIRATE_POOL + p] > 0:
                ids[n] = PIRATE_OUTCOME + p
                probs[n] = 1.0 / total
                n += 1
    return n


@njit(cache=True)
def _apply_outcome(s, o):
    kind = s[PENDING]
    s[PENDING] = PD_NONE
    if kind == PD_DRAW:
        s[MID + o] -= 1
        if _place(s, o, s[DRAW_DEST]):
            _draw(s, s[DRAW_DEST])
    elif kind == PD_AGING:
        s[AGING_STACK + o - FIRST_AGING] -= 1
        s[AGING_IN] += 1
        s[DISC + o] += 1
        _reshuffle(s)
        s[PENDING] = PD_DRAW
    elif kind == PD_SETUP_AGING:
        s[AGING_STACK + o - FIRST_AGING] -= 1
        s[AGING_IN] += 1
        s[MID + o] += 1
        _next_turn(s)
    elif kind == PD_HAZARD:
        s[HSTACK + o] -= 1
        if s[CHOICE_A] < 0:
            s[CHOICE_A] = o
        else:
            s[CHOICE_B] = o
        s[HAZ_NEED] -= 1
        if s[HAZ_NEED] > 0:
            s[PENDING] = PD_HAZARD
    else:  # PD_PIRATE
        p = o - PIRATE_OUTCOME
        s[PIRATE_POOL + p] = 0
        if s[PIRATE_A] < 0:
            s[PIRATE_A] = p
            s[PENDING] = PD_PIRATE
        else:
            s[PIRATE_B] = p
            if s[LEVEL] >= 2:
                s[PENDING] = PD_SETUP_AGING
            else:
                _next_turn(s)
