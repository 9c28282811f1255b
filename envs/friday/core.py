"""Friday (rules/friday.md): the step machine as compiled kernels over one compact int8 array,
packed into the common int64 state.

Hidden order is chance. A shuffled stack is kept as counts per card type, and every draw from
it is a chance node whose outcomes are the card types, weighted by their counts. So "shuffle"
costs nothing, and search determinizes by sampling draws as it goes (``k_sample``). Cards whose
place the player knows are kept in order: up to three put back on top by "sort 3 cards" (TOP)
and the cards put "below the pile" (BOTTOM). A draw takes TOP first, then the shuffled middle,
then BOTTOM; only when all three are empty does the aging card join the discard pile and the
discard pile become the new middle.

Chance outcome ids: a fighting card's type (0-37) when a fighting or aging card is drawn, a
hazard's type (0-23) when a hazard is drawn, 38 + pirate (0-9) when a pirate is revealed.

Action ids (one flat space; ``action_to_string`` names them)::

    0 FIGHT_0      fight the first drawn hazard (or the only one)
    1 FIGHT_1      fight the second drawn hazard (the first goes to the hazard discard pile)
    2 SKIP         discard the only hazard left in the stack (ends the step)
    3 DRAW_FREE    draw a free card onto the left
    4 DRAW_PAID    pay 1 life (2 against the 7/16 pirate) for a card on the right
    5 END_FIGHT    compare and resolve (behind: a deliberate loss; pirates: only when ahead)
    6 DONE         stop a multi-part ability early (+2 cards, 2x exchange, sort 3 cards), decline
                   the replacement after "below the pile"; finish destroying
    7 STOP_FREE    end the free draws (only with abilities="after_free")
    8 EXTRA_DRAW   one more card: the second of "+2 cards", the next of "sort 3 cards"
                   (sort_draws="one_at_a_time"), the free replacement after "below the pile"
                   (below_replacement="optional")
    9 CONCEDE      give up (pirate fights only; the game is lost)
    10, 11         PIRATE_0, PIRATE_1: the pirate to fight first
    12 + i         USE the ability of table slot i                    (i < MAX_SLOTS)
    52 + i         TARGET slot i with the ability being used
    92 + i         DESTROY slot i after a lost fight (slots in increasing order)
    132 + k        SORT: arrangement k of the cards drawn by "sort 3 cards" (``SORT_OPTIONS``)

Readings of the spec where it is silent: copying "step -1" makes the copy count as one more
step -1 card while face up; "sort 3 cards" takes up to 3 cards without a reshuffle and is not
offered on an empty stack (one at a time by default: ``FridayGame``'s options); "highest card =
0" zeroes the highest positive values (after doubling); against the 9/22 pirate the zeroing comes before the half is chosen; a "stop" that
ended the free draws keeps them ended if it is destroyed later; any card drawn onto the left
(a replacement too) ends them if it is a "stop"; the loss destroy choice is made one slot at a
time in increasing slot order, then DONE. A game can repeat positions (two "below the pile"
cards on the left with an empty stack), so searches keep a cycle guard and the env truncates.

The state every search and env holds is the common one (envs/core.py): an int64 array whose
header (to move: 0 or ``CHANCE``; ply = decisions made; outcome: ``ONGOING``, then 0 once the
game is over, as in Threes; the key slot, unused: ``state_key`` hashes on demand; the last
decision) is followed by Friday's ``SIZE`` int8 slots, packed eight to a word (``body(s)`` is
their int8 view). Packed, a state is 368 bytes, not the 2.6 KB of one int64 per slot: the
best-first search copies states into its pool and runs faster when they stay small. The rules
kernels (``k_apply``, ``k_moves``, ``k_chance``...) work on the slots; the kernels of the common
contract (``KERNELS``: ``state_push``, ``state_moves``, ...) wrap them over the whole state and
keep the header with ``k_sync``.

Friday's slots (int8; ``SIZE`` of them)::

    [0] life  [1] max life  [2] level  [3] step 0-2 green/yellow/red, 3 pirates  [4] phase
    [5] pending chance draw  [6] result 0 ongoing / 1 won / 2 lost  [7-9] options (abilities,
    aging_life, empty_aging; the other two after SLOT_FLAG)
    [10] hazard fought (-1)  [11] pirate fought (0/1, -1)  [12] free cards allowed  [13] drawn
    [14] free draws ended  [15-16] drawn hazards  [17-18] the two pirates  [19] pirates beaten
    (bits)  [20] aging cards entered  [21] ability in use  [22] its source slot  [23] its parts
    left  [24] replacement side  [25] draw destination  [26] sort cards  [27-29] them
    [30] destroy budget left  [31] last slot destroyed  [32] hazards to draw  [33] TOP count
    [34-36] TOP  [37] BOTTOM count  then the arrays MID, DISC (38 each), HSTACK, HDISC (24
    each), AGING (9), PIRATE_POOL (10), BOTTOM (64), SLOT_CARD, SLOT_FLAG (40 each), then the
    options below_replacement and sort_draws (1 each).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.core import (CHANCE, HEADER, TERMINAL, LAST, OUTCOME, PLY, TO_MOVE, Game, GameSpec,
                                IllegalActionError, KernelState, Kernels, k_outcome, k_to_move, pick_outcome,
                                splitmix_uniform)
from tablegym.envs.core import ONGOING as PLAYING
from tablegym.envs.friday.cards import (ABILITY, ABILITY_WEIGHT, AGING, ALL_HAZARDS, BELOW, CARD1, CARD2, CARDS,
                                        COPY, COUNT, DESTROY, DESTROY_COST, DIFFICULT, DOUBLE, EXCHANGE1,
                                        EXCHANGE2, FIRST_AGING, GROUP, GROUP_FREE, GROUP_VALUES, HALF_COUNT,
                                        HIGHEST0, KIND, LIFE1, LIFE2, MINUS_LIFE1, MINUS_LIFE2, NONE,
                                        NUM_AGING_TYPES, NUM_HAZARD_TYPES, NUM_PIRATES, NUM_TYPES, PAID_TWO,
                                        PER_AGING, PIRATE_FREE, PIRATE_HAZARD, PIRATES, PLUS_ONE, SORT, STEP,
                                        STEP_NAMES, STOP, VALUE, VERY_STUPID, card_name)

MAX_SLOTS = 40
"""Table capacity. More cards than this in one fight would need ~40 draws; draws stop there."""
BOTTOM_CAP = 64

# ---- state layout ------------------------------------------------------------------------------
(LIFE, MAXLIFE, LEVEL, STEPI, PHASE, PENDING, RESULT, OPT_TIMING, OPT_CHARGE, OPT_EMPTY, FIGHT, PFIGHT,
 FREE_ALLOWED, FREE_DRAWN, FREE_ENDED, CHOICE_A, CHOICE_B, PIRATE_A, PIRATE_B, BEATEN, AGING_IN, AB_KIND,
 AB_SRC, AB_LEFT, AB_SIDE, DRAW_DEST, SORT_N, SORT0, SORT1, SORT2, DESTROY_LEFT, DESTROY_LAST, HAZ_NEED,
 TOP_N, TOP0, TOP1, TOP2, BOTTOM_N) = range(38)
MID = 38
DISC = MID + NUM_TYPES
HSTACK = DISC + NUM_TYPES
HDISC = HSTACK + NUM_HAZARD_TYPES
AGING_STACK = HDISC + NUM_HAZARD_TYPES
PIRATE_POOL = AGING_STACK + NUM_AGING_TYPES
BOTTOM = PIRATE_POOL + NUM_PIRATES
SLOT_CARD = BOTTOM + BOTTOM_CAP
SLOT_FLAG = SLOT_CARD + MAX_SLOTS
OPT_BELOW = SLOT_FLAG + MAX_SLOTS  # two later options, after the arrays
OPT_SORT = OPT_BELOW + 1
SIZE = (OPT_SORT + 1 + 7) // 8 * 8  # padded to whole words: the key hashes 64-bit words
WORDS = HEADER + SIZE // 8
"""The length of the common int64 state: the header, then the slots eight to a word."""

# Slot flags.
F_LEFT, F_DESTROYED, F_DOUBLED, F_USED, F_COPIED_STEP = 1, 2, 4, 8, 16

# Phases (the decision asked for); P_OVER once the game has ended.
P_HAZARD, P_FIGHT, P_TARGET, P_EXTRA, P_EXCHANGE_MORE, P_SORT, P_DESTROY, P_PIRATE, P_OVER, P_SETUP = range(10)
PHASE_NAMES = ("choose a hazard", "fight", "choose a target", "+2 cards: draw the second?",
               "2x exchange: exchange again?", "sort the drawn cards", "destroy cards after the loss",
               "choose the pirate to fight first", "game over", "setup")

EXTRA_PHASE_NAMES = {SORT: "sort 3 cards: draw another?", BELOW: "below the pile: draw a free replacement?"}
"""P_EXTRA's name when the ability drawing is not "+2 cards"."""

# Pending chance draws.
PD_NONE, PD_DRAW, PD_AGING, PD_HAZARD, PD_PIRATE, PD_SETUP_AGING = range(6)
# Where a drawn fighting card goes.
D_FREE, D_PAID, D_EXTRA, D_REPLACE, D_SORT = range(5)
ONGOING, WON, LOST = 0, 1, 2
# Option codes (the index in OPTION_VALUES) the kernels test.
EMPTY_LOSE = 0
BELOW_OPTIONAL = 0
SORT_ONE_AT_A_TIME = 0

# Actions.
FIGHT_0, FIGHT_1, SKIP, DRAW_FREE, DRAW_PAID, END_FIGHT, DONE, STOP_FREE, EXTRA_DRAW, CONCEDE, PIRATE_0, PIRATE_1 = range(12)
USE_BASE = 12
TARGET_BASE = USE_BASE + MAX_SLOTS
DESTROY_BASE = TARGET_BASE + MAX_SLOTS
SORT_BASE = DESTROY_BASE + MAX_SLOTS


def _sort_options() -> np.ndarray:
    """Every arrangement of n = 1..3 sorted cards: (n, discarded index or -1, kept order top first)."""
    from itertools import permutations

    rows = []
    for n in (1, 2, 3):
        for d in [-1, *range(n)]:
            kept = [i for i in range(n) if i != d]
            for order in permutations(kept):
                rows.append([n, d, *order, *[-1] * (3 - len(order))])
    return np.array(rows, dtype=np.int64)


SORT_OPTIONS = _sort_options()
NUM_ACTIONS = SORT_BASE + len(SORT_OPTIONS)
PIRATE_OUTCOME = NUM_TYPES
NUM_OUTCOMES = NUM_TYPES + NUM_PIRATES
OPTION_VALUES = {
    "abilities": ("any_time", "after_free"),
    "aging_life": ("at_resolution", "when_drawn"),
    "empty_aging": ("lose", "reshuffle"),
    "below_replacement": ("optional", "forced"),
    "sort_draws": ("one_at_a_time", "all_at_once"),
}
"""Every uncertain rule of the spec, default first."""


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
        for k in range(counted):  # aging cards first (least negative first), then the highest others
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
def k_chance(s, ids, probs):
    """The outcomes of the pending draw and their probabilities; 0 at a decision."""
    kind = s[PENDING]
    n = 0
    if kind == PD_DRAW:
        total = _total(s, MID, NUM_TYPES)
        for t in range(NUM_TYPES):
            if s[MID + t] > 0:
                ids[n] = t
                probs[n] = s[MID + t] / total
                n += 1
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
        total = _total(s, HSTACK, NUM_HAZARD_TYPES)
        for t in range(NUM_HAZARD_TYPES):
            if s[HSTACK + t] > 0:
                ids[n] = t
                probs[n] = s[HSTACK + t] / total
                n += 1
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


@njit(cache=True)
def k_status(s):
    """0 while the game goes on, 1 won, 2 lost."""
    return np.int64(s[RESULT])


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


# ---- the common state: the header, then the slots packed eight to a word -----------------------------

@njit(cache=True)
def body(s):
    """Friday's slots of the common state ``s``: its words after the header, seen as int8."""
    return s[HEADER:].view(np.int8)


@njit(cache=True)
def k_sync(s):
    """Bring the header up to date with the slots: the player to move (0, or ``CHANCE`` at a
    pending draw) and the outcome (``ONGOING`` while the game goes on, then 0: over, as in
    Threes; ``FridayState.returns`` says how it ended). The key slot stays 0: ``state_key``
    hashes the slots when a search asks (kept at every push, the hash made a random-play
    decision 40% dearer, and only searches read it)."""
    _sync(s, body(s))


@njit(cache=True)
def _sync(s, b):
    """``k_sync`` given the slots ``b`` of ``s`` (a view made once per kernel)."""
    over = b[RESULT] != ONGOING
    s[TO_MOVE] = CHANCE if b[PENDING] != PD_NONE and not over else 0
    s[OUTCOME] = 0 if over else PLAYING


@njit(cache=True)
def state_key(s):
    """The key of the common state (``Kernels.key``): ``k_key`` of its slots."""
    return k_key(body(s))


@njit(cache=True)
def state_moves(s, out):
    """``k_moves`` of the common state (``Kernels.moves``): decisions, or a draw's outcomes."""
    return k_moves(body(s), out)


@njit(cache=True)
def state_push(s, a):
    """Play a decision or a chance outcome on the common state (``Kernels.push``; unchecked:
    ``FridayState.child`` checks): a decision counts as a ply and is the last one."""
    b = body(s)
    if b[PENDING] == PD_NONE:
        s[PLY] += 1
        s[LAST] = a
    k_apply(b, a)
    _sync(s, b)


@njit(cache=True)
def state_pop(s):
    raise NotImplementedError("Friday states are copied, not undone")


@njit(cache=True)
def state_chance(s, ids, probs):
    """``k_chance`` of the common state (``Kernels.chance``)."""
    return k_chance(body(s), ids, probs)


@njit(cache=True)
def state_sample(s, rng_state):
    """``k_sample_split`` on the common state (``Kernels.sample``: the searches' sampler); the
    header is kept only where a draw was pending (most decisions draw nothing)."""
    if s[TO_MOVE] == CHANCE:
        b = body(s)
        k_sample_split(b, rng_state)
        _sync(s, b)


@njit(cache=True)
def state_determinize(s, rng_state):
    """``k_determinize`` on the common state (``Kernels.determinize``: a search root's world)."""
    k_determinize(body(s), rng_state)
    k_sync(s)


KERNELS = Kernels(state_moves, state_push, state_pop, k_to_move, k_outcome, state_key, None, state_chance,
                  undo=False, sample=state_sample, determinize=state_determinize)
"""Friday on the common contract (no binary features: its networks read the observation); its
searches sample draws with ``k_sample_split`` and fix the shuffled stack with ``k_determinize``."""


# ---- the object API ---------------------------------------------------------------------------------


class FridayGame(Game):
    """Friday at ``level`` 1-4, with the spec's uncertain rules as named options (default first).

    - ``abilities``: "any_time" (during the whole fight) or "after_free" (once the free draws
      end, as in the Fridai engine).
    - ``aging_life``: "-1/-2 life" aging cards charge "at_resolution" of the fight or "when_drawn".
    - ``empty_aging``: a reshuffle with no aging card left "lose"s the game (Friedemann Friese's
      official rules change, BoardGameGeek thread 1808313 "Friday: official rules change", which
      the Fridai engine implements), or does "reshuffle" without aging (the first edition's
      silence, read literally).
    - ``below_replacement``: after "below the pile" takes a card from the left, the free
      replacement is "optional" (the rule text: Robinson "can" draw one) or "forced".
    - ``sort_draws``: "sort 3 cards" draws its cards "one_at_a_time", and the player may stop
      after any of them (the text's "up to 3 cards"), or "all_at_once" (min(3, stack)).
    - ``max_life_level4``: 22, or 20 at level 4.

    Readings no option covers, and the source each follows:

    - "very stupid" (-3) is in the aging stack at levels 3 and 4 only (rules/friday.md, "Setup
      by level": level 3 shuffles it in with the normal aging cards).
    - Level 4 starts at 18 life with the maximum at 22, as at the other levels (rules/friday.md,
      "Components": maximum 22); a maximum of 20 at level 4 is the option above, which the spec
      names as its alternative.
    - "-1/-2 life" aging cards in a pirate fight charge as in a hazard fight, at the fight's
      resolution (rules/friday.md, "A turn" 5, and "Pirates": pirates are fought "like
      hazards"): a pirate fight that reaches the value still pays them, and a Robinson who cannot
      pay dies then. ``aging_life="when_drawn"`` charges them when drawn instead.
    - "highest card = 0" zeroes the highest face-up value after doubling, one card for each such
      aging card, and only a positive value (rules/friday.md, "Abilities": "the highest face-up
      card value after doubling counts 0; each such card zeroes one card").

    >>> import numpy as np
    >>> from tablegym.envs.friday.core import FridayGame, sample_chance
    >>> state = sample_chance(FridayGame(level=1).new_initial_state(), np.random.default_rng(0))
    >>> state.life, state.step_name, len(state.legal_actions())
    (20, 'green', 2)
    """

    def __init__(self, level: int = 1, abilities: str = "any_time", aging_life: str = "at_resolution",
                 empty_aging: str = "lose", below_replacement: str = "optional", sort_draws: str = "one_at_a_time",
                 max_life_level4: int = 22) -> None:
        if level not in (1, 2, 3, 4):
            raise ValueError(f"Friday level must be 1, 2, 3 or 4, got {level!r}")
        chosen = {"abilities": abilities, "aging_life": aging_life, "empty_aging": empty_aging,
                  "below_replacement": below_replacement, "sort_draws": sort_draws}
        for name, value in chosen.items():
            if value not in OPTION_VALUES[name]:
                raise ValueError(f"Friday option {name!r} must be one of {OPTION_VALUES[name]}, got {value!r}")
        if max_life_level4 not in (20, 22):
            raise ValueError(f"Friday option 'max_life_level4' must be 20 or 22, got {max_life_level4!r}")
        self.level = level
        self.codes = tuple(OPTION_VALUES[name].index(value) for name, value in chosen.items())
        self.max_life_level4 = max_life_level4
        self.spec = GameSpec(
            name="friday",
            num_players=1,
            num_actions=NUM_ACTIONS,
            max_game_length=10_000,  # soft: two "below the pile" cards can cycle; the env truncates
            min_utility=-1.0,
            max_utility=1.0,
            observation_shape=(OBS_SIZE,),
            options={"level": level, **chosen, "max_life_level4": max_life_level4},
            chance=True,
            max_chance_outcomes=NUM_OUTCOMES,
        )

    def new_initial_state(self) -> "FridayState":
        return FridayState(self, k_new(self.level, *self.codes, self.max_life_level4))


class FridayState(KernelState):
    """A Friday position: a decision, or a pending draw (``current_player() == CHANCE``)."""

    kernels = KERNELS

    @property
    def body(self) -> np.ndarray:
        """Friday's slots (the int8 view of this state's words after the header; read them only)."""
        return self._s[HEADER:].view(np.int8)

    def current_player(self) -> int:  # read off the header, without a call into the kernels
        return TERMINAL if self._s[OUTCOME] != PLAYING else int(self._s[TO_MOVE])

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.current_player() != CHANCE:
            raise ValueError("chance_outcomes() called at a decision, not at a pending draw")
        return super().chance_outcomes()

    def _why_illegal(self, action: int) -> str:
        if self.is_terminal():
            return "(the game is over)"
        if self.current_player() == CHANCE:
            return "(a card is being drawn: pass one of the chance outcomes)"
        name = action_name(action) if 0 <= action < NUM_ACTIONS else "no such action"
        return f"({name} is not legal while: {self.phase_name})"

    def returns(self) -> np.ndarray:
        r = int(self.body[RESULT])
        return np.array([1.0 if r == WON else -1.0 if r == LOST else 0.0])

    def winner(self) -> int | None:
        return 0 if self.won else None

    # ---- what a player sees ------------------------------------------------------------------

    @property
    def life(self) -> int:
        return int(self.body[LIFE])

    @property
    def step(self) -> int:
        """0 green, 1 yellow, 2 red, 3 pirates."""
        return int(self.body[STEPI])

    @property
    def step_name(self) -> str:
        return STEP_NAMES[self.step]

    @property
    def phase(self) -> int:
        return int(self.body[PHASE])

    @property
    def phase_name(self) -> str:
        if self.phase == P_EXTRA:  # one phase, "draw one more card or stop", for three abilities
            return EXTRA_PHASE_NAMES.get(int(self.body[AB_KIND]), PHASE_NAMES[P_EXTRA])
        return PHASE_NAMES[self.phase]

    @property
    def won(self) -> bool:
        return int(self.body[RESULT]) == WON

    @property
    def score(self) -> int:
        return int(k_score(self.body))

    @property
    def pirates(self) -> tuple[int, int]:
        """The two revealed pirates (ids into ``cards.PIRATES``; -1 before the reveal)."""
        return int(self.body[PIRATE_A]), int(self.body[PIRATE_B])

    @property
    def pirates_beaten(self) -> int:
        """How many of the two pirates are beaten."""
        return sum(self.beaten)

    @property
    def beaten(self) -> tuple[bool, bool]:
        """Whether each of the two revealed pirates is beaten."""
        return bool(self.body[BEATEN] & 1), bool((self.body[BEATEN] >> 1) & 1)

    @property
    def pirate_fought(self) -> int:
        """Which of the two pirates (0/1) is being fought; -1 outside a pirate fight."""
        return int(self.body[PFIGHT])

    @property
    def destroy_budget(self) -> int:
        """Destroy cost left after a lost fight (0 outside that choice)."""
        return int(self.body[DESTROY_LEFT]) if self.phase == P_DESTROY else 0

    @property
    def aging_entered(self) -> int:
        return int(self.body[AGING_IN])

    def zone(self, name: str) -> np.ndarray:
        """Counts per card type in a zone: "stack", "discard", "table", "aging", "hazards",
        "hazard_discard", "owned", or "removed" (cards out of the game)."""
        s = self.body.astype(np.int64)
        if name == "stack":
            out = s[MID:MID + NUM_TYPES].astype(np.int64)
            for c in list(s[TOP0:TOP0 + s[TOP_N]]) + list(s[SORT0:SORT0 + s[SORT_N]]) + list(s[BOTTOM:BOTTOM + s[BOTTOM_N]]):
                out[c] += 1
            return out
        if name == "discard":
            return s[DISC:DISC + NUM_TYPES].astype(np.int64)
        if name == "table":
            out = np.zeros(NUM_TYPES, dtype=np.int64)
            for c in s[SLOT_CARD:SLOT_CARD + MAX_SLOTS]:
                if c >= 0:
                    out[c] += 1
            return out
        if name == "aging":
            out = np.zeros(NUM_TYPES, dtype=np.int64)
            out[FIRST_AGING:] = s[AGING_STACK:AGING_STACK + NUM_AGING_TYPES]
            return out
        if name == "hazards":
            out = np.zeros(NUM_TYPES, dtype=np.int64)
            out[:NUM_HAZARD_TYPES] = s[HSTACK:HSTACK + NUM_HAZARD_TYPES]
            for k in (CHOICE_A, CHOICE_B):
                if s[k] >= 0:
                    out[s[k]] += 1
            return out
        if name == "hazard_discard":
            out = np.zeros(NUM_TYPES, dtype=np.int64)
            out[:NUM_HAZARD_TYPES] = s[HDISC:HDISC + NUM_HAZARD_TYPES]
            return out
        if name == "owned":
            out = np.zeros(NUM_TYPES, dtype=np.int64)
            k_owned(self.body, out)
            return out
        if name == "removed":
            present = sum(self.zone(z) for z in ("owned", "aging", "hazards", "hazard_discard"))
            if s[FIGHT] >= 0:
                present[s[FIGHT]] += 1
            total = COUNT.copy()
            if self.game.level < 3:
                total[VERY_STUPID] = 0
            return total - present
        raise ValueError(f"unknown zone {name!r}")

    @property
    def table(self) -> list[tuple[int, int, str]]:
        """(slot, card type, flags text) of the cards on the table, left side first."""
        body = self.body
        cards, flag_bits = body[SLOT_CARD:SLOT_CARD + MAX_SLOTS].tolist(), body[SLOT_FLAG:SLOT_FLAG + MAX_SLOTS].tolist()
        rows = []
        for i, c in enumerate(cards):
            if c >= 0:
                f = flag_bits[i]
                flags = "".join(ch for bit, ch in ((F_LEFT, "L"), (F_DESTROYED, "x"), (F_DOUBLED, "2"),
                                                   (F_USED, "u"), (F_COPIED_STEP, "s")) if f & bit)
                rows.append((i, c, flags))
        rows.sort(key=lambda r: ("L" not in r[2], r[0]))
        return rows

    @property
    def hazard(self) -> int:
        """The hazard being fought (-1 when none)."""
        return int(self.body[FIGHT])

    @property
    def hazard_choice(self) -> tuple[int, int]:
        return int(self.body[CHOICE_A]), int(self.body[CHOICE_B])

    def fight(self) -> tuple[int, int]:
        """(fighting total, hazard value) of the current fight."""
        return int(fight_total(self.body)), int(fight_target(self.body))

    def observation(self, player: int = 0) -> np.ndarray:
        out = np.zeros(OBS_SIZE, dtype=np.float32)
        k_observe(self.body, out)
        return out

    def action_to_string(self, action: int) -> str:
        return self._namer()(action)

    def _namer(self):
        """The name of an action (or a draw's outcome) here, the state read once."""
        body = self.body
        if self.current_player() == CHANCE:
            pending = int(body[PENDING])
            return lambda a: outcome_name(a, pending)
        return lambda a: action_name(a, body)

    def string_to_action(self, text: str) -> int:
        """Parse an action id or its name as ``action_to_string`` prints it (case-insensitive)."""
        legal = self.legal_actions()
        want = text.strip().lower()
        if want.isdigit() and int(want) in legal and str(int(want)) == want:  # no name is a number
            return int(want)
        name = self._namer()
        for a in legal:
            if want == name(a).lower():
                return a
        raise IllegalActionError(text, legal, f"(not a legal action while: {self.phase_name})")

    def to_text(self) -> str:
        from tablegym.envs.friday.render import state_text

        return state_text(self)

    def __eq__(self, other: object) -> bool:
        """The same position: the same slots, whatever the header's history (ply, last decision)
        says; a fight can come back to a position (module docstring)."""
        return type(other) is type(self) and np.array_equal(self.body, other.body)  # type: ignore[attr-defined]

    __hash__ = KernelState.__hash__


def sample_chance(state: FridayState, rng: np.random.Generator) -> FridayState:
    """Resolve pending draws with ``rng`` until a decision or the end of the game."""
    if state.current_player() != CHANCE:
        return state
    s = state.array
    k_sample(s[HEADER:].view(np.int8), rng)
    k_sync(s)
    return FridayState(state.game, s)


def deal(game: FridayGame, seed: int, index: int) -> tuple[FridayState, np.random.Generator]:
    """The opening state of game ``index`` of a run seeded ``seed`` and the generator that plays
    its chance: the one seeding rule of every Friday run (the record's ``deal``), so two agents
    given the same game see the same cards. Keyed by level too: a run over levels 1-4 plays
    other deals at each level."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(game.level, index)))
    return sample_chance(game.new_initial_state(), rng), rng


def outcome(state: FridayState) -> dict:
    """What a finished game's record keeps beyond its return (the record's ``outcome``)."""
    return {"won": bool(state.won), "score": state.score, "life": state.life, "step": state.step,
            "pirates_beaten": state.pirates_beaten}


def action_name(a: int, s: np.ndarray | None = None) -> str:
    """A readable name of action ``a`` (with the card it names when the state ``s`` is given)."""
    names = ("fight first hazard", "fight second hazard", "skip hazard", "draw free", "draw paid", "end fight",
             "done", "stop free draws", "draw second card", "concede", "fight first pirate", "fight second pirate")
    if a == EXTRA_DRAW and s is not None and s[PHASE] == P_EXTRA and s[AB_KIND] in (SORT, BELOW):
        return "draw another card" if s[AB_KIND] == SORT else "draw replacement"
    if a < USE_BASE:
        return names[a]

    def slot(i: int) -> str:
        if s is None or s[SLOT_CARD + i] < 0:
            return f"slot {i}"
        return f"slot {i} {card_name(int(s[SLOT_CARD + i]))}"

    if a < TARGET_BASE:
        return f"use {slot(a - USE_BASE)}"
    if a < DESTROY_BASE:
        return f"target {slot(a - TARGET_BASE)}"
    if a < SORT_BASE:
        return f"destroy {slot(a - DESTROY_BASE)}"
    n, d, *order = SORT_OPTIONS[a - SORT_BASE]
    kept = "".join(str(i) for i in order if i >= 0) or "-"
    return f"sort {kept}" + (f" discard {d}" if d >= 0 else "")


def outcome_name(o: int, pending: int) -> str:
    if o >= PIRATE_OUTCOME:
        p = PIRATES[o - PIRATE_OUTCOME]
        free = "*" if p.free < 0 else p.free
        hazard = "*" if p.hazard < 0 else p.hazard
        return f"pirate {free}/{hazard}" + (f" ({p.special})" if p.special else "")
    if pending == PD_HAZARD:
        c = CARDS[o]
        free, values = GROUP_FREE[c.group], GROUP_VALUES[c.group]
        return f"hazard {free}; {values[0]}/{values[1]}/{values[2]} -> {card_name(o)}"
    return card_name(o)


# ---- observation ----------------------------------------------------------------------------------
# A flat float vector, in this order (sizes in brackets):
#   life / 22, step one-hot [4], phase one-hot [10], fight total / 20, hazard value / 20,
#   free cards allowed / 5, free drawn / 5, free ended, paid cost, aging entered / 11 [1 each],
#   the two pirates one-hot [2 x 10], pirates beaten [2], fought pirate one-hot [2],
#   hazard fought [24], drawn hazards [2 x 24], ability in use one-hot [17],
#   counts / 4 per card type in: unknown stack part, known top, bottom, discard, owned [5 x 38],
#   hazard stack, hazard discard [2 x 24], aging stack [9],
#   table slots [MAX_SLOTS x 8]: present, left, value / 4, destroyed, doubled, used,
#   ability rating / 3, is aging,
#   sort cards [3 x 38].
OBS_SIZE = (1 + 4 + 10 + 7 + 2 * NUM_PIRATES + 2 + 2 + NUM_HAZARD_TYPES * 3 + 17 + 5 * NUM_TYPES
            + 2 * NUM_HAZARD_TYPES + NUM_AGING_TYPES + 8 * MAX_SLOTS + 3 * NUM_TYPES)


@njit(cache=True)
def k_observe(s, out):
    """Write the observation vector of the layout above into ``out`` (float32)."""
    out[:] = 0.0
    o = 0
    out[o] = s[LIFE] / 22.0
    o += 1
    out[o + s[STEPI]] = 1.0
    o += 4
    out[o + s[PHASE]] = 1.0
    o += 10
    fighting = s[FIGHT] >= 0 or s[PFIGHT] >= 0
    out[o] = fight_total(s) / 20.0 if fighting else 0.0
    out[o + 1] = fight_target(s) / 20.0
    out[o + 2] = s[FREE_ALLOWED] / 5.0
    out[o + 3] = s[FREE_DRAWN] / 5.0
    out[o + 4] = s[FREE_ENDED]
    out[o + 5] = _paid_cost(s) if fighting else 0.0
    out[o + 6] = s[AGING_IN] / 11.0
    o += 7
    for k in range(2):
        if s[PIRATE_A + k] >= 0:
            out[o + NUM_PIRATES * k + s[PIRATE_A + k]] = 1.0
    o += 2 * NUM_PIRATES
    out[o] = s[BEATEN] & 1
    out[o + 1] = (s[BEATEN] >> 1) & 1
    o += 2
    if s[PFIGHT] >= 0:
        out[o + s[PFIGHT]] = 1.0
    o += 2
    for k, base in ((FIGHT, 0), (CHOICE_A, 1), (CHOICE_B, 2)):
        if s[k] >= 0:
            out[o + NUM_HAZARD_TYPES * base + s[k]] = 1.0
    o += 3 * NUM_HAZARD_TYPES
    out[o + s[AB_KIND]] = 1.0 if s[AB_KIND] != NONE else 0.0
    o += 17
    for t in range(NUM_TYPES):
        out[o + t] = s[MID + t] / 4.0
    o += NUM_TYPES
    for r in range(s[TOP_N]):
        out[o + s[TOP0 + r]] += 0.25
    o += NUM_TYPES
    for r in range(s[BOTTOM_N]):
        out[o + s[BOTTOM + r]] += 0.25
    o += NUM_TYPES
    for t in range(NUM_TYPES):
        out[o + t] = s[DISC + t] / 4.0
    o += NUM_TYPES
    owned = out[o:o + NUM_TYPES]  # the counts written in place (small integers: exact in float32)
    k_owned(s, owned)
    for t in range(NUM_TYPES):
        owned[t] = owned[t] / 4.0
    o += NUM_TYPES
    for t in range(NUM_HAZARD_TYPES):
        out[o + t] = s[HSTACK + t] / 2.0
        out[o + NUM_HAZARD_TYPES + t] = s[HDISC + t] / 2.0
    o += 2 * NUM_HAZARD_TYPES
    for a in range(NUM_AGING_TYPES):
        out[o + a] = s[AGING_STACK + a]
    o += NUM_AGING_TYPES
    for i in range(MAX_SLOTS):
        t = s[SLOT_CARD + i]
        if t >= 0:
            f = s[SLOT_FLAG + i]
            out[o] = 1.0
            out[o + 1] = f & F_LEFT
            out[o + 2] = VALUE[t] / 4.0
            out[o + 3] = (f & F_DESTROYED) > 0
            out[o + 4] = (f & F_DOUBLED) > 0
            out[o + 5] = (f & F_USED) > 0
            out[o + 6] = ABILITY_WEIGHT[ABILITY[t]] / 3.0
            out[o + 7] = KIND[t] == AGING
        o += 8
    for r in range(s[SORT_N]):
        out[o + NUM_TYPES * r + s[SORT0 + r]] = 1.0
    o += 3 * NUM_TYPES


@njit(cache=True)
def flat_observation(s, player, out):
    """``State.observation(player)`` of the compact state ``s`` flattened into the float32 vector
    ``out``: what exported networks (models/export.py) and the vector env (envs/vector.py) read."""
    k_observe(body(s), out)
