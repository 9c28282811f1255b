"""Trap's reference opponents: legal in both phases, the spec's choices on hand-worked boards."""

import numpy as np
import pytest

from tablegym.envs.core import CHANCE
from tablegym.envs.trap.core import HDR, N_, NUM_DIRS, POS0, TrapGame, free_neighbours, is_free, mobility, step
from tablegym.envs.trap.opponents import (OPPONENTS, EasyOpponent, HardOpponent, MediumOpponent, RandomOpponent,
                                          hard_decision)


def random_states(count, seed=0, n=7):
    """Decision states met in random games (both phases, both players)."""
    rng = np.random.default_rng(seed)
    game = TrapGame(n=n)
    out = []
    while len(out) < count:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.current_player() == CHANCE:
                outcomes = state.chance_outcomes()
                state = state.child(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
            else:
                out.append(state)
                legal = state.legal_actions()
                state = state.child(legal[rng.integers(len(legal))])
    return out[:count]


STATES = random_states(600)


def empty_neighbours(state, cell):
    s = state._s
    return {t for d in range(NUM_DIRS) if (t := int(step(s[N_], cell, d))) >= 0 and is_free(s, t)}


def opponent_cell(state):
    return int(state._s[POS0 + 1 - state.mover])


@pytest.mark.parametrize("name", sorted(OPPONENTS))
def test_every_opponent_plays_legal_actions_in_both_phases(name):
    agent = OPPONENTS[name]()
    rng = np.random.default_rng(1)
    phases = set()
    for state in STATES[::3] if name == "hard" else STATES:
        action = agent(state, rng)
        assert action in state.legal_actions(), (name, state.to_text(), action)
        assert (action < NUM_DIRS) == (state.phase == "move")
        phases.add(state.phase)
    assert phases == {"move", "throw"}


def test_random_and_easy_throw_where_the_spec_says():
    rng = np.random.default_rng(2)
    for state in STATES:
        if state.phase != "throw":
            continue
        target = RandomOpponent()(state, rng) - NUM_DIRS
        assert is_free(state._s, target)  # an empty cell, never a trap
        target = EasyOpponent()(state, rng) - NUM_DIRS
        assert target in empty_neighbours(state, opponent_cell(state))


def test_opponents_refuse_chance_and_terminal_nodes():
    in_the_air = TrapGame().new_initial_state().child(4).child(8 + 24)
    for cls in OPPONENTS.values():
        with pytest.raises(ValueError, match="chance"):
            cls()(in_the_air, np.random.default_rng(0))


# -- Medium ----------------------------------------------------------------------------------------

def test_medium_steps_to_the_cell_with_the_most_exits():
    # 1 at a1: E to b1 keeps 3 exits (a1 a2 c2), S to a2 keeps 4 (a1 b1 a3 b3); b2 is a trap.
    text = """
    1 . # . .
    . # . . .
    . . . . .
    . . . . .
    . . . . 2
    """
    state = TrapGame(n=5).from_board(text)
    for seed in range(5):
        assert MediumOpponent()(state, np.random.default_rng(seed)) == 4  # S


def test_medium_breaks_ties_first_in_direction_order_or_at_random():
    # From c3 every step keeps 8 exits (the cell left behind counts as empty), except SW to b4,
    # next to 2 at a5, which keeps 7: the other seven steps tie.
    text = """
    . . . . .
    . . . . .
    . . 1 . .
    . . . . .
    2 . . . .
    """
    state = TrapGame(n=5).from_board(text)
    assert {MediumOpponent(ties="first")(state, np.random.default_rng(seed)) for seed in range(20)} == {0}  # N
    picks = {MediumOpponent(ties="random")(state, np.random.default_rng(seed)) for seed in range(60)}
    assert picks == {0, 1, 2, 3, 4, 6, 7}
    with pytest.raises(ValueError, match="ties"):
        MediumOpponent(ties="last")


def test_medium_throws_where_the_opponents_score_drops_most():
    # 2 at c4 has two exits, c3 and d3. A trap on c3 also takes an exit of 1 (at b3):
    # IS for 2 after c3 = 1 - 5 = -4; after d3 = 1 - 6 = -5, so Medium throws at d3.
    text = """
    . . . . .
    . . . . .
    . 1 . . .
    . # 2 # .
    . # # # .
    """
    state = TrapGame(n=5).from_board(text, phase="throw")
    for seed in range(5):
        assert MediumOpponent()(state, np.random.default_rng(seed)) == NUM_DIRS + 2 * 5 + 3


# -- Hard ------------------------------------------------------------------------------------------

def test_hard_takes_a_winning_step():
    # 1 steps NW to b2, the last exit of 2 at a1.
    text = """
    2 # . . . . .
    # . . . . . .
    . . 1 . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    """
    state = TrapGame().from_board(text)
    action = HardOpponent()(state, np.random.default_rng(0))
    assert action == 7
    assert state.child(action).winner() == 0


def test_hard_takes_a_sure_winning_throw():
    # 2 at a1 has one exit, a2, one step (distance 1, a sure hit) from 1 at a3.
    text = """
    2 # . . . . .
    . # . . . . .
    1 . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    """
    state = TrapGame().from_board(text, phase="throw")
    action = HardOpponent()(state, np.random.default_rng(0))
    assert action == NUM_DIRS + 7
    assert state.child(action).chance_outcomes() == [(7, 1.0)]


def test_hard_avoids_a_step_into_a_sure_loss():
    # 1 at a3 may step N to a2 or SE to b4. At a2 its only exit is a3 (the cell it left),
    # one step from 2 at a4: a sure trap that encloses it. Hard steps SE.
    text = """
    # # . . .
    . # . . .
    1 # . . .
    2 . . . .
    . . . . .
    """
    state = TrapGame(n=5).from_board(text)
    assert state.legal_actions() == [0, 3]
    assert HardOpponent()(state, np.random.default_rng(0)) == 3


def reference_hard(state, depth=3):
    """Hard's choice by plain recursion without pruning, written from the spec."""
    s = state._s.copy()
    n = int(s[N_])
    me = state.mover
    opp = 1 - me

    def steps(player):
        here = int(s[POS0 + player])
        return [(d, t) for d in range(NUM_DIRS) if (t := int(step(n, here, d))) >= 0 and is_free(s, t)]

    def exits(player):
        return [t for _, t in steps(player)]

    def p_hit(thrower, cell):
        a = abs(int(s[POS0 + thrower]) // n - cell // n) + abs(int(s[POS0 + thrower]) % n - cell % n)
        return 1 - 0.05 * (a - 1)

    def move_leaf():
        here = int(s[POS0 + me])
        osl = sum(free_neighbours(s, t) for d in range(NUM_DIRS) if (t := int(step(n, here, d))) >= 0)
        return mobility(s, me) + 0.5 * osl

    def throw_leaf():
        return 2.0 * mobility(s, me) - mobility(s, opp)

    def stepped(player, cell, then):
        old = int(s[POS0 + player])
        s[POS0 + player] = cell
        try:
            return then()
        finally:
            s[POS0 + player] = old

    def trapped(cell, then):
        s[HDR + cell] = 1
        try:
            return then()
        finally:
            s[HDR + cell] = 0

    def my_step(d):  # max over my steps
        vals = [stepped(me, t, lambda: 1000.0 if mobility(s, opp) == 0 else
                        move_leaf() if d == 1 else their_throw(d - 1)) for _, t in steps(me)]
        return max(vals) if vals else -1000.0

    def their_throw(d):  # min over the opponent's throws at my exits, p x V(hit)
        vals = [p_hit(opp, c) * trapped(c, lambda: -1000.0 if mobility(s, me) == 0 else
                                        move_leaf() if d == 1 else my_step(d - 1)) for c in exits(me)]
        return min(vals) if vals else -1000.0

    def my_throw(d):  # max over my throws at the opponent's exits
        vals = [p_hit(me, c) * trapped(c, lambda: 1000.0 if mobility(s, opp) == 0 else
                                       throw_leaf() if d == 1 else their_step(d - 1)) for c in exits(opp)]
        return max(vals) if vals else 1000.0

    def their_step(d):  # min over the opponent's steps
        vals = [stepped(opp, t, lambda: -1000.0 if mobility(s, me) == 0 else
                        throw_leaf() if d == 1 else my_throw(d - 1)) for _, t in steps(opp)]
        return min(vals) if vals else 1000.0

    if state.phase == "move":
        scored = [(stepped(me, t, lambda: 1000.0 if mobility(s, opp) == 0 else
                           move_leaf() if depth == 1 else their_throw(depth - 1)), d) for d, t in steps(me)]
    else:
        scored = [(p_hit(me, c) * trapped(c, lambda: 1000.0 if mobility(s, opp) == 0 else
                                          throw_leaf() if depth == 1 else their_step(depth - 1)), NUM_DIRS + c)
                  for c in exits(opp)]
    best = max(v for v, _ in scored)
    return [a for v, a in scored if v >= best - 1e-9][0], best


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_hard_matches_a_plain_recursion_of_the_spec(depth):
    for state in STATES[::7]:
        if state.phase == "throw" and not empty_neighbours(state, opponent_cell(state)):
            continue
        expected, _ = reference_hard(state, depth)
        assert hard_decision(state.array, depth, True) == expected, state.to_text()
        assert hard_decision(state.array, depth, False) == expected


def test_hard_is_deterministic_and_leaves_the_state_alone():
    agent = HardOpponent()
    for state in STATES[::11]:
        before = state.array
        a = agent(state, np.random.default_rng(0))
        assert agent(state, np.random.default_rng(99)) == a
        assert np.array_equal(state.array, before)


def play_game(agents, seed):
    rng = np.random.default_rng(seed)
    state = TrapGame().new_initial_state()
    actions = []
    while not state.is_terminal():
        if state.current_player() == CHANCE:
            outcomes = state.chance_outcomes()
            a = outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0]
        else:
            a = agents[state.current_player()](state, rng)
        actions.append(a)
        state = state.child(a)
    return actions, state.winner()


@pytest.mark.parametrize("pair", [("random", "easy"), ("medium", "medium"), ("hard", "medium")])
def test_seeded_games_repeat_exactly(pair):
    agents = [OPPONENTS[name](ties="random") if name == "medium" else OPPONENTS[name]() for name in pair]
    first = play_game(agents, 123)
    assert play_game(agents, 123) == first
    assert play_game(agents, 124) != first


def test_hard_reloads_from_the_numba_cache():
    # Regression: a recursive kernel typed by inference (or called with a literal flag) was
    # compiled fine but crashed when a second process loaded it from numba's on-disk cache.
    import subprocess
    import sys

    code = ("import numpy as np; from tablegym.envs.trap.core import TrapGame; "
            "from tablegym.envs.trap.opponents import HardOpponent; "
            "s = TrapGame().new_initial_state(); print(HardOpponent()(s, np.random.default_rng(0)))")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[-1].stderr[-2000:]
    assert runs[0].stdout == runs[1].stdout
