"""Thousands of random Friday games per level through the compiled kernels, invariants checked.

The Python-level soak in test_friday_core.py checks more per step but plays far fewer games;
this one checks card conservation, life bounds and termination over 2,000 games a level.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from tablegym.envs.friday.cards import COUNT, FIRST_AGING, NUM_HAZARD_TYPES, NUM_TYPES, VERY_STUPID
from tablegym.envs.friday.core import FridayGame
from tablegym.envs.friday.decisions import k_apply, k_moves, k_owned, k_sample_split
from tablegym.envs.friday.layout import (
    AGING_STACK,
    CHOICE_A,
    CHOICE_B,
    FIGHT,
    HDISC,
    HSTACK,
    LIFE,
    MAXLIFE,
    NUM_ACTIONS,
    NUM_OUTCOMES,
    RESULT,
)


@njit
def _present(s, out):
    """Counts per card type of every card still in the game (all zones but "removed")."""
    k_owned(s, out)
    for a in range(NUM_TYPES - FIRST_AGING):
        out[FIRST_AGING + a] += s[AGING_STACK + a]
    for t in range(NUM_HAZARD_TYPES):
        out[t] += s[HSTACK + t] + s[HDISC + t]
    for k in (CHOICE_A, CHOICE_B, FIGHT):
        if s[k] >= 0:
            out[s[k]] += 1


@njit
def _soak(start, games, total, seed, max_decisions):
    """Play ``games`` random games; returns (games won, longest game, first violation code or 0)."""
    np.random.seed(seed)  # numba's own generator, for the action choice
    rng_state = np.array([seed], dtype=np.int64)
    moves = np.empty(max(NUM_ACTIONS, NUM_OUTCOMES), dtype=np.int64)
    present = np.zeros(NUM_TYPES, dtype=np.int64)
    removed = np.zeros(NUM_TYPES, dtype=np.int64)
    won = 0
    longest = 0
    for _ in range(games):
        s = start.copy()
        k_sample_split(s, rng_state)
        removed[:] = 0
        n = 0
        while s[RESULT] == 0:
            m = k_moves(s, moves)
            if m == 0:
                return won, longest, 1  # a decision without a legal action
            pick = int(np.random.random() * m)
            k_apply(s, moves[pick])
            k_sample_split(s, rng_state)
            n += 1
            if n > max_decisions:
                return won, longest, 2  # no end in sight
            if s[LIFE] < 0 or s[LIFE] > s[MAXLIFE]:
                return won, longest, 3
            present[:] = 0
            _present(s, present)
            for t in range(NUM_TYPES):
                gone = total[t] - present[t]
                if gone < 0:
                    return won, longest, 4  # a card in two places
                if gone < removed[t]:
                    return won, longest, 5  # a removed card came back
                removed[t] = gone
        won += s[RESULT] == 1
        longest = max(longest, n)
    return won, longest, 0


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_two_thousand_random_games_keep_every_card_and_end(level):
    total = COUNT.copy()
    if level < 3:
        total[VERY_STUPID] = 0
    won, longest, violation = _soak(FridayGame(level=level).new_initial_state().body.copy(), 2000, total, level, 5000)
    assert violation == 0, f"invariant {violation} broken"
    assert 0 < longest < 5000


def test_the_soak_notices_a_card_in_two_places():
    total = COUNT.copy()
    total[VERY_STUPID] = 0
    total[25] -= 1  # claim one "weak" card fewer than the deck has
    _, _, violation = _soak(FridayGame(level=1).new_initial_state().body.copy(), 5, total, 0, 5000)
    assert violation == 4
