"""Friday's observation: the position as one flat float vector of ``OBS_SIZE`` (the env's
observation and the input of its networks)."""

from __future__ import annotations

from numba import njit

from tablegym.envs.friday.cards import (
    ABILITY,
    ABILITY_WEIGHT,
    AGING,
    KIND,
    NONE,
    NUM_AGING_TYPES,
    NUM_HAZARD_TYPES,
    NUM_PIRATES,
    NUM_TYPES,
    VALUE,
)
from tablegym.envs.friday.decisions import _paid_cost, k_owned
from tablegym.envs.friday.layout import (
    AB_KIND,
    AGING_IN,
    AGING_STACK,
    BEATEN,
    BOTTOM,
    BOTTOM_N,
    CHOICE_A,
    CHOICE_B,
    DISC,
    F_DESTROYED,
    F_DOUBLED,
    F_LEFT,
    F_USED,
    FIGHT,
    FREE_ALLOWED,
    FREE_DRAWN,
    FREE_ENDED,
    HDISC,
    HSTACK,
    LIFE,
    MAX_SLOTS,
    MID,
    PFIGHT,
    PHASE,
    PIRATE_A,
    SLOT_CARD,
    SLOT_FLAG,
    SORT0,
    SORT_N,
    STEPI,
    TOP0,
    TOP_N,
    body,
)
from tablegym.envs.friday.turns import fight_target, fight_total

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
OBS_SIZE = (
    1
    + 4
    + 10
    + 7
    + 2 * NUM_PIRATES
    + 2
    + 2
    + NUM_HAZARD_TYPES * 3
    + 17
    + 5 * NUM_TYPES
    + 2 * NUM_HAZARD_TYPES
    + NUM_AGING_TYPES
    + 8 * MAX_SLOTS
    + 3 * NUM_TYPES
)


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
    owned = out[o : o + NUM_TYPES]  # the counts written in place (small integers: exact in float32)
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
