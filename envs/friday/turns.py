"""Friday's rules kernels between decisions: small helpers over the slots, a new game and the
moves from turn to turn, drawing fighting cards (TOP, the shuffled middle, BOTTOM, a reshuffle)
and the chance nodes (a drawn card or hazard, a revealed pirate)."""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.core import LAST
from tablegym.envs.friday import cards as C
from tablegym.envs.friday import layout as L
from tablegym.envs.friday.layout import body, k_sync

# ---- small helpers ------------------------------------------------------------------------------


@njit(cache=True)
def _total(s, base, n):
    t = 0
    for i in range(n):
        t += s[base + i]
    return t


@njit(cache=True)
def _stack_size(s):
    return s[L.TOP_N] + _total(s, L.MID, C.NUM_TYPES) + s[L.BOTTOM_N]


@njit(cache=True)
def _can_draw(s):
    """A fighting card can be drawn: from the stack, or after a reshuffle of the discard pile."""
    if _stack_size(s) + _total(s, L.DISC, C.NUM_TYPES) > 0:
        return True
    return _total(s, L.AGING_STACK, C.NUM_AGING_TYPES) > 0


@njit(cache=True)
def k_draw_loses(s):
    """Drawing a fighting card now loses the game: the stack is empty and the reshuffle would
    need an aging card, but none is left (``empty_aging="lose"``). Players use it to avoid a
    draw they can decline."""
    return s[L.OPT_EMPTY] == L.EMPTY_LOSE and _stack_size(s) == 0 and _total(s, L.AGING_STACK, C.NUM_AGING_TYPES) == 0


@njit(cache=True)
def _free_slot(s):
    for i in range(L.MAX_SLOTS):
        if s[L.SLOT_CARD + i] < 0:
            return i
    return -1


@njit(cache=True)
def _face_up(s, i):
    return s[L.SLOT_CARD + i] >= 0 and (s[L.SLOT_FLAG + i] & L.F_DESTROYED) == 0


@njit(cache=True)
def _lose(s):
    s[L.RESULT] = L.LOST
    s[L.PHASE] = L.P_OVER
    s[L.PENDING] = L.PD_NONE


@njit(cache=True)
def _pay(s, amount):
    """Pay life; Robinson dies (the game is lost) when he cannot."""
    if amount > s[L.LIFE]:
        s[L.LIFE] = 0
        _lose(s)
        return False
    s[L.LIFE] -= amount
    return True


@njit(cache=True)
def _step_reduction(s):
    r = 0
    for i in range(L.MAX_SLOTS):
        if _face_up(s, i) and (C.ABILITY[s[L.SLOT_CARD + i]] == C.STEP or (s[L.SLOT_FLAG + i] & L.F_COPIED_STEP)):
            r += 1
    return r


@njit(cache=True)
def fight_target(s):
    """The hazard value H of the current fight (0 outside fights)."""
    if s[L.FIGHT] >= 0:
        step = max(s[L.STEPI] - _step_reduction(s), 0)
        return C.GROUP_VALUES[C.GROUP[s[L.FIGHT]], step]
    if s[L.PFIGHT] >= 0:
        p = s[L.PIRATE_A + s[L.PFIGHT]]
        if p == C.PER_AGING:
            return 2 * s[L.AGING_IN]
        if p == C.ALL_HAZARDS:
            h = 0
            for t in range(C.NUM_HAZARD_TYPES):
                h += (s[L.HSTACK + t] + s[L.HDISC + t]) * C.GROUP_VALUES[C.GROUP[t], 2]
            return h
        return C.PIRATE_HAZARD[p]
    return 0


@njit(cache=True)
def fight_total(s):
    """The fighting total of the face-up table cards (double, "highest card = 0", pirate specials)."""
    vals = np.empty(L.MAX_SLOTS, dtype=np.int64)
    aging = np.empty(L.MAX_SLOTS, dtype=np.int64)
    n = 0
    zero = 0
    for i in range(L.MAX_SLOTS):
        if _face_up(s, i):
            t = s[L.SLOT_CARD + i]
            v = C.VALUE[t]
            if s[L.SLOT_FLAG + i] & L.F_DOUBLED:
                v *= 2
            vals[n] = v
            aging[n] = C.KIND[t] == C.AGING
            n += 1
            if C.ABILITY[t] == C.HIGHEST0:
                zero += 1
    for _ in range(zero):  # each "highest card = 0" zeroes one of the highest cards
        best = -1
        for j in range(n):
            if best < 0 or vals[j] > vals[best]:
                best = j
        if best >= 0 and vals[best] > 0:
            vals[best] = 0
    pirate = s[L.PIRATE_A + s[L.PFIGHT]] if s[L.PFIGHT] >= 0 else -1
    total = 0
    if pirate == C.HALF_COUNT:
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
    if pirate == C.PLUS_ONE:
        total += n
    return total


# ---- setting up and moving between turns --------------------------------------------------------


@njit(cache=True)
def k_new(level, opt_timing, opt_charge, opt_empty, opt_below, opt_sort, max_life_level4):
    """The (common, int64) state before the setup draws (pirate reveals, and the level 2+ aging card)."""
    s = np.zeros(L.WORDS, dtype=np.int64)
    s[LAST] = -1
    b = body(s)
    b[L.LIFE] = 18 if level == 4 else 20
    b[L.MAXLIFE] = max_life_level4 if level == 4 else 22
    b[L.LEVEL] = level
    b[L.OPT_TIMING] = opt_timing
    b[L.OPT_CHARGE] = opt_charge
    b[L.OPT_EMPTY] = opt_empty
    b[L.OPT_BELOW] = opt_below
    b[L.OPT_SORT] = opt_sort
    for k in (L.FIGHT, L.PFIGHT, L.CHOICE_A, L.CHOICE_B, L.PIRATE_A, L.PIRATE_B, L.AB_SRC, L.DESTROY_LAST):
        b[k] = -1
    for t in range(C.NUM_TYPES):
        if C.KIND[t] == C.AGING:
            if t != C.VERY_STUPID or level >= 3:
                b[L.AGING_STACK + t - C.FIRST_AGING] = C.COUNT[t]
        elif C.KIND[t] == 1:
            b[L.MID + t] = C.COUNT[t]
        else:
            b[L.HSTACK + t] = C.COUNT[t]
    for p in range(C.NUM_PIRATES):
        b[L.PIRATE_POOL + p] = 1
    for i in range(L.MAX_SLOTS):
        b[L.SLOT_CARD + i] = -1
    b[L.PHASE] = L.P_SETUP
    b[L.PENDING] = L.PD_PIRATE
    k_sync(s)
    return s


@njit(cache=True)
def _clear_fight(s):
    s[L.FIGHT] = -1
    s[L.PFIGHT] = -1
    s[L.FREE_ALLOWED] = 0
    s[L.FREE_DRAWN] = 0
    s[L.FREE_ENDED] = 0
    s[L.AB_KIND] = C.NONE
    s[L.AB_SRC] = -1
    s[L.AB_LEFT] = 0
    s[L.DESTROY_LEFT] = 0
    s[L.DESTROY_LAST] = -1


@njit(cache=True)
def _start_pirate(s, which):
    _clear_fight(s)
    s[L.PFIGHT] = which
    p = s[L.PIRATE_A + which]
    if p == C.ALL_HAZARDS:
        f = 0
        for t in range(C.NUM_HAZARD_TYPES):
            f += (s[L.HSTACK + t] + s[L.HDISC + t]) * C.GROUP_FREE[C.GROUP[t]]
        s[L.FREE_ALLOWED] = min(f, 127)
    else:
        s[L.FREE_ALLOWED] = C.PIRATE_FREE[p]
    s[L.PHASE] = L.P_FIGHT


@njit(cache=True)
def _next_turn(s):
    """Move on to the next decision: draw hazards, change step, or go to the pirates."""
    _clear_fight(s)
    s[L.CHOICE_A] = -1
    s[L.CHOICE_B] = -1
    while True:
        n = _total(s, L.HSTACK, C.NUM_HAZARD_TYPES)
        if n > 0:
            s[L.HAZ_NEED] = 2 if n >= 2 else 1
            s[L.PENDING] = L.PD_HAZARD
            s[L.PHASE] = L.P_HAZARD
            return
        if s[L.STEPI] < 2 and _total(s, L.HDISC, C.NUM_HAZARD_TYPES) > 0:
            s[L.STEPI] += 1
            for t in range(C.NUM_HAZARD_TYPES):
                s[L.HSTACK + t] = s[L.HDISC + t]
                s[L.HDISC + t] = 0
            continue
        break
    s[L.STEPI] = 3
    left = 0
    for k in range(2):
        if not (s[L.BEATEN] >> k) & 1:
            left += 1
    if left == 2:
        s[L.PHASE] = L.P_PIRATE
    else:
        _start_pirate(s, 0 if not s[L.BEATEN] & 1 else 1)


# ---- drawing fighting cards --------------------------------------------------------------------


@njit(cache=True)
def _place(s, card, dest):
    """Put a drawn card where it was drawn for and continue; True when "sort" wants another card."""
    if dest == L.D_SORT:
        s[L.SORT0 + s[L.SORT_N]] = card
        s[L.SORT_N] += 1
        s[L.AB_LEFT] -= 1
        if s[L.AB_LEFT] > 0:
            if s[L.OPT_SORT] == L.SORT_ONE_AT_A_TIME:
                s[L.PHASE] = L.P_EXTRA  # draw another, or stop and arrange these
                return False
            return True
        s[L.PHASE] = L.P_SORT
        return False
    slot = _free_slot(s)
    left = dest == L.D_FREE or (dest == L.D_REPLACE and s[L.AB_SIDE] == 1)
    s[L.SLOT_CARD + slot] = card
    s[L.SLOT_FLAG + slot] = L.F_LEFT if left else 0
    if dest == L.D_FREE:
        s[L.FREE_DRAWN] += 1
    if left and C.ABILITY[card] == C.STOP:
        s[L.FREE_ENDED] = 1
    if s[L.OPT_CHARGE] == 1 and (C.ABILITY[card] == C.MINUS_LIFE1 or C.ABILITY[card] == C.MINUS_LIFE2):
        if not _pay(s, 1 if C.ABILITY[card] == C.MINUS_LIFE1 else 2):
            return False
    s[L.PHASE] = L.P_FIGHT
    if dest == L.D_EXTRA and s[L.AB_KIND] == C.CARD2 and s[L.AB_LEFT] > 0:
        s[L.PHASE] = L.P_EXTRA
    elif dest == L.D_REPLACE and s[L.AB_KIND] == C.EXCHANGE2 and s[L.AB_LEFT] > 0:
        s[L.PHASE] = L.P_EXCHANGE_MORE
    else:
        s[L.AB_KIND] = C.NONE
        s[L.AB_SRC] = -1
        s[L.AB_LEFT] = 0
    return False


@njit(cache=True)
def _take_known(s):
    """The next card if its identity is known (TOP, or BOTTOM under an empty middle); else -1
    after setting up the chance draw (or the reshuffle's aging draw) that will supply it."""
    if s[L.TOP_N] > 0:
        card = s[L.TOP0]
        s[L.TOP0] = s[L.TOP1]
        s[L.TOP1] = s[L.TOP2]
        s[L.TOP_N] -= 1
        return card
    if _total(s, L.MID, C.NUM_TYPES) > 0:
        s[L.PENDING] = L.PD_DRAW
        return -1
    if s[L.BOTTOM_N] > 0:
        card = s[L.BOTTOM]
        for i in range(s[L.BOTTOM_N] - 1):
            s[L.BOTTOM + i] = s[L.BOTTOM + i + 1]
        s[L.BOTTOM_N] -= 1
        return card
    if _total(s, L.AGING_STACK, C.NUM_AGING_TYPES) > 0:
        s[L.PENDING] = L.PD_AGING  # the stack is empty: an aging card joins the discard pile first
    elif s[L.OPT_EMPTY] == L.EMPTY_LOSE:
        _lose(s)
    else:
        _reshuffle(s)
        s[L.PENDING] = L.PD_DRAW
    return -1


@njit(cache=True)
def _draw(s, dest):
    """Draw fighting cards for ``dest``: known ones at once, a shuffled one as a chance node.

    Callers pass ``dest`` typed (``np.int8(D_...)``): numba compiles a function again for each
    literal argument it is called with, and this one (with ``_place`` below it) once is enough."""
    s[L.DRAW_DEST] = dest
    while True:
        card = _take_known(s)
        if card < 0 or not _place(s, card, dest):
            return


@njit(cache=True)
def _reshuffle(s):
    for t in range(C.NUM_TYPES):
        s[L.MID + t] += s[L.DISC + t]
        s[L.DISC + t] = 0


@njit(cache=True)
def _aging_types_open(s):
    """Aging types that can come next: the normal ones while any is left, then the difficult."""
    normal = 0
    for a in range(C.NUM_AGING_TYPES):
        if not C.DIFFICULT[C.FIRST_AGING + a]:
            normal += s[L.AGING_STACK + a]
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
    kind = s[L.PENDING]
    n = 0
    if kind == L.PD_DRAW:
        n = _by_count(s, L.MID, C.NUM_TYPES, ids, probs)
    elif kind == L.PD_AGING or kind == L.PD_SETUP_AGING:
        want = 0 if _aging_types_open(s) else 1  # normal aging cards lie above the difficult ones
        total = 0
        for a in range(C.NUM_AGING_TYPES):
            if C.DIFFICULT[C.FIRST_AGING + a] == want:
                total += s[L.AGING_STACK + a]
        for a in range(C.NUM_AGING_TYPES):
            if C.DIFFICULT[C.FIRST_AGING + a] == want and s[L.AGING_STACK + a] > 0:
                ids[n] = C.FIRST_AGING + a
                probs[n] = s[L.AGING_STACK + a] / total
                n += 1
    elif kind == L.PD_HAZARD:
        n = _by_count(s, L.HSTACK, C.NUM_HAZARD_TYPES, ids, probs)
    elif kind == L.PD_PIRATE:
        total = _total(s, L.PIRATE_POOL, C.NUM_PIRATES)
        for p in range(C.NUM_PIRATES):
            if s[L.PIRATE_POOL + p] > 0:
                ids[n] = L.PIRATE_OUTCOME + p
                probs[n] = 1.0 / total
                n += 1
    return n


@njit(cache=True)
def _apply_outcome(s, o):
    kind = s[L.PENDING]
    s[L.PENDING] = L.PD_NONE
    if kind == L.PD_DRAW:
        s[L.MID + o] -= 1
        if _place(s, o, s[L.DRAW_DEST]):
            _draw(s, s[L.DRAW_DEST])
    elif kind == L.PD_AGING:
        s[L.AGING_STACK + o - C.FIRST_AGING] -= 1
        s[L.AGING_IN] += 1
        s[L.DISC + o] += 1
        _reshuffle(s)
        s[L.PENDING] = L.PD_DRAW
    elif kind == L.PD_SETUP_AGING:
        s[L.AGING_STACK + o - C.FIRST_AGING] -= 1
        s[L.AGING_IN] += 1
        s[L.MID + o] += 1
        _next_turn(s)
    elif kind == L.PD_HAZARD:
        s[L.HSTACK + o] -= 1
        if s[L.CHOICE_A] < 0:
            s[L.CHOICE_A] = o
        else:
            s[L.CHOICE_B] = o
        s[L.HAZ_NEED] -= 1
        if s[L.HAZ_NEED] > 0:
            s[L.PENDING] = L.PD_HAZARD
    else:  # PD_PIRATE
        p = o - L.PIRATE_OUTCOME
        s[L.PIRATE_POOL + p] = 0
        if s[L.PIRATE_A] < 0:
            s[L.PIRATE_A] = p
            s[L.PENDING] = L.PD_PIRATE
        else:
            s[L.PIRATE_B] = p
            if s[L.LEVEL] >= 2:
                s[L.PENDING] = L.PD_SETUP_AGING
            else:
                _next_turn(s)
