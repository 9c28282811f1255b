"""Friday's observation: the position as one flat float vector of ``OBS_SIZE`` (the env's
observation and the input of its networks)."""

from __future__ import annotations

from numba import njit

from tablegym.envs.friday import cards as C
from tablegym.envs.friday import layout as L
from tablegym.envs.friday.decisions import _paid_cost, k_owned
from tablegym.envs.friday.layout import body
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
    + 2 * C.NUM_PIRATES
    + 2
    + 2
    + C.NUM_HAZARD_TYPES * 3
    + 17
    + 5 * C.NUM_TYPES
    + 2 * C.NUM_HAZARD_TYPES
    + C.NUM_AGING_TYPES
    + 8 * L.MAX_SLOTS
    + 3 * C.NUM_TYPES
)


@njit(cache=True)
def k_observe(s, out):
    """Write the observation vector of the layout above into ``out`` (float32)."""
    out[:] = 0.0
    o = 0
    out[o] = s[L.LIFE] / 22.0
    o += 1
    out[o + s[L.STEPI]] = 1.0
    o += 4
    out[o + s[L.PHASE]] = 1.0
    o += 10
    fighting = s[L.FIGHT] >= 0 or s[L.PFIGHT] >= 0
    out[o] = fight_total(s) / 20.0 if fighting else 0.0
    out[o + 1] = fight_target(s) / 20.0
    out[o + 2] = s[L.FREE_ALLOWED] / 5.0
    out[o + 3] = s[L.FREE_DRAWN] / 5.0
    out[o + 4] = s[L.FREE_ENDED]
    out[o + 5] = _paid_cost(s) if fighting else 0.0
    out[o + 6] = s[L.AGING_IN] / 11.0
    o += 7
    for k in range(2):
        if s[L.PIRATE_A + k] >= 0:
            out[o + C.NUM_PIRATES * k + s[L.PIRATE_A + k]] = 1.0
    o += 2 * C.NUM_PIRATES
    out[o] = s[L.BEATEN] & 1
    out[o + 1] = (s[L.BEATEN] >> 1) & 1
    o += 2
    if s[L.PFIGHT] >= 0:
        out[o + s[L.PFIGHT]] = 1.0
    o += 2
    for k, base in ((L.FIGHT, 0), (L.CHOICE_A, 1), (L.CHOICE_B, 2)):
        if s[k] >= 0:
            out[o + C.NUM_HAZARD_TYPES * base + s[k]] = 1.0
    o += 3 * C.NUM_HAZARD_TYPES
    out[o + s[L.AB_KIND]] = 1.0 if s[L.AB_KIND] != C.NONE else 0.0
    o += 17
    for t in range(C.NUM_TYPES):
        out[o + t] = s[L.MID + t] / 4.0
    o += C.NUM_TYPES
    for r in range(s[L.TOP_N]):
        out[o + s[L.TOP0 + r]] += 0.25
    o += C.NUM_TYPES
    for r in range(s[L.BOTTOM_N]):
        out[o + s[L.BOTTOM + r]] += 0.25
    o += C.NUM_TYPES
    for t in range(C.NUM_TYPES):
        out[o + t] = s[L.DISC + t] / 4.0
    o += C.NUM_TYPES
    owned = out[o : o + C.NUM_TYPES]  # the counts written in place (small integers: exact in float32)
    k_owned(s, owned)
    for t in range(C.NUM_TYPES):
        owned[t] = owned[t] / 4.0
    o += C.NUM_TYPES
    for t in range(C.NUM_HAZARD_TYPES):
        out[o + t] = s[L.HSTACK + t] / 2.0
        out[o + C.NUM_HAZARD_TYPES + t] = s[L.HDISC + t] / 2.0
    o += 2 * C.NUM_HAZARD_TYPES
    for a in range(C.NUM_AGING_TYPES):
        out[o + a] = s[L.AGING_STACK + a]
    o += C.NUM_AGING_TYPES
    for i in range(L.MAX_SLOTS):
        t = s[L.SLOT_CARD + i]
        if t >= 0:
            f = s[L.SLOT_FLAG + i]
            out[o] = 1.0
            out[o + 1] = f & L.F_LEFT
            out[o + 2] = C.VALUE[t] / 4.0
            out[o + 3] = (f & L.F_DESTROYED) > 0
            out[o + 4] = (f & L.F_DOUBLED) > 0
            out[o + 5] = (f & L.F_USED) > 0
            out[o + 6] = C.ABILITY_WEIGHT[C.ABILITY[t]] / 3.0
            out[o + 7] = C.KIND[t] == C.AGING
        o += 8
    for r in range(s[L.SORT_N]):
        out[o + C.NUM_TYPES * r + s[L.SORT0 + r]] = 1.0
    o += 3 * C.NUM_TYPES


@njit(cache=True)
def flat_observation(s, player, out):
    """``State.observation(player)`` of the compact state ``s`` flattened into the float32 vector
    ``out``: what exported networks (models/export.py) and the vector env (envs/vector.py) read."""
    k_observe(body(s), out)
