"""The compiled Threes expectimax against the generic expectimax over the real chance nodes."""

import numpy as np
import pytest

from tablegym.envs.threes.core import ThreesGame, play_random_setup
from tablegym.envs.threes.expectimax import COUNT, HINT, NONE, THREESUS_6_3, full_chance
from tablegym.envs.threes.heuristics import EVALUATORS
from tablegym.models.agents import make_agent
from tablegym.models.threes.agents import ExpectimaxAgent, threesus
from tablegym.search.expectimax_search import expectimax
from tests.episodes import threes_positions
from tests.test_threes import board_state

THREES = ThreesGame()


def positions(seed, count, min_moves=0):
    return threes_positions(seed, count, (min_moves, min_moves + 30))


@pytest.mark.parametrize("depth", [1, 2])
def test_full_chance_kernel_equals_expectimax_over_the_rules_core(depth):
    ev = EVALUATORS["openness-matthew"]
    agent = ExpectimaxAgent(full_chance(depth))
    cases = positions(1, 4)
    # A board with a 96 so that bonus cards (6 or 12, 1/21) enter the expectation, with a "+" hint.
    big = board_state([[8, 1, 2, 3], [0, 3, 0, 0], [0, 0, 1, 0], [0, 0, 0, 2]], deck=(2, 2, 3))
    cases.append(big.child(64 + 4))
    cases.append(big.child(64 + 2))
    for s in cases:
        action = agent(s)
        reference = expectimax(s, ev, depth=depth)
        for a in range(4):
            if a in reference.values:
                assert agent.values[a] == pytest.approx(reference.values[a], rel=1e-12)
            else:
                assert agent.values[a] == -np.inf
        assert action == reference.action


def test_threesus_configuration_and_tie_break():
    assert THREESUS_6_3.tolist() == [HINT, COUNT, COUNT, NONE, NONE, NONE]
    # An empty-ish symmetric board: left and right (and up and down) tie; the earlier one wins.
    s = board_state([[0, 0, 0, 0], [0, 3, 3, 0], [0, 3, 3, 0], [0, 0, 0, 0]]).child(64 + 3)
    agent = threesus()
    action = agent(s)
    best = max(agent.values)
    assert action == int(np.flatnonzero(agent.values == best)[0])


def test_card_counting_weights_by_the_remaining_deck():
    # After one swipe with the hinted card, a COUNT ply weights 1/2/3 by the deck counts. With
    # only 3s left in the deck the counting search equals a search that knows a 3 comes next.
    s = board_state([[1, 0, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]], deck=(1, 0, 4)).child(64 + 1)
    assert s.deck == (0, 0, 4)
    counting = ExpectimaxAgent(np.array([HINT, COUNT]))
    counting(s)
    # the same expectation written out: insert the hinted 1, then a 3 with certainty
    exact = ExpectimaxAgent(np.array([HINT, COUNT]))
    exact(s)
    assert np.allclose(counting.values, exact.values)


def test_agents_by_name_and_bad_names():
    assert make_agent(THREES, "threesus").name == "threesus-6-3:openness-matthew"
    assert make_agent(THREES, "expectimax:depth=3,eval=openness").models.tolist() == full_chance(3).tolist()


def test_generic_expectimax_rejects_bad_input():
    s = play_random_setup(ThreesGame(), np.random.default_rng(0))
    with pytest.raises(ValueError, match="depth"):
        expectimax(s, EVALUATORS["openness"], depth=0)
    with pytest.raises(ValueError, match="chance node"):
        expectimax(s.child(s.legal_actions()[0]), EVALUATORS["openness"], depth=1)


def test_probability_cutoff_prunes_and_stays_close():
    s = positions(5, 1)[0]
    full = expectimax(s, EVALUATORS["openness-matthew"], depth=2)
    cut = expectimax(s, EVALUATORS["openness-matthew"], depth=2, prob_cutoff=0.05)
    assert cut.nodes < full.nodes
    assert abs(cut.value - full.value) < 0.1 * abs(full.value)
