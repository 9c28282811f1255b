"""Friday's compact state: where each slot of the int8 array lies, the phases, the pending chance
draws, the action ids and the option codes the kernels test, and the common int64 state that
packs the slots eight to a word (``body``, ``k_sync``). envs/friday/core.py describes the whole."""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.core import CHANCE, HEADER, OUTCOME, TO_MOVE
from tablegym.envs.core import ONGOING as PLAYING
from tablegym.envs.friday.cards import BELOW, NUM_AGING_TYPES, NUM_HAZARD_TYPES, NUM_PIRATES, NUM_TYPES, SORT

MAX_SLOTS = 40
"""Table capacity. More cards than this in one fight would need ~40 draws; draws stop there."""
BOTTOM_CAP = 64

# ---- state layout ------------------------------------------------------------------------------
(
    LIFE,
    MAXLIFE,
    LEVEL,
    STEPI,
    PHASE,
    PENDING,
    RESULT,
    OPT_TIMING,
    OPT_CHARGE,
    OPT_EMPTY,
    FIGHT,
    PFIGHT,
    FREE_ALLOWED,
    FREE_DRAWN,
    FREE_ENDED,
    CHOICE_A,
    CHOICE_B,
    PIRATE_A,
    PIRATE_B,
    BEATEN,
    AGING_IN,
    AB_KIND,
    AB_SRC,
    AB_LEFT,
    AB_SIDE,
    DRAW_DEST,
    SORT_N,
    SORT0,
    SORT1,
    SORT2,
    DESTROY_LEFT,
    DESTROY_LAST,
    HAZ_NEED,
    TOP_N,
    TOP0,
    TOP1,
    TOP2,
    BOTTOM_N,
) = range(38)
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
PHASE_NAMES = (
    "choose a hazard",
    "fight",
    "choose a target",
    "+2 cards: draw the second?",
    "2x exchange: exchange again?",
    "sort the drawn cards",
    "destroy cards after the loss",
    "choose the pirate to fight first",
    "game over",
    "setup",
)

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
