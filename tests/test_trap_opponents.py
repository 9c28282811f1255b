"""Trap's reference opponents: legal in both phases, the spec's choices on hand-worked boards."""

import numpy as np
import pytest

from tablegym.envs.core import CHANCE
from tablegym.envs.trap.core import HDR, N_, NUM_DIRS, POS0, TrapGame, free_neighbours, is_free, mobility, step
from tablegym.envs.trap.opponents import (
    COURSE_ORDER,
    OPPONENTS,
    EasyOpponent,
    HardOpponent,
    MediumOpponent,
    RandomOpponent,
    SoundHardOpponent,
    hard_decision,
    medium_decision,
    sound_hard_decision,
)
from tests.trap_course_hard import reference_course_hard


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
    for state in STATES[::3] if name.startswith("hard") else STATES:
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


def test_medium_breaks_ties_in_the_course_neighbour_order_by_default():
    # The trap on c1 takes an exit from c2, b2 and d2 (7 each after the step); b4 is next to
    # 2 (7). E d3, SE d4, S c4 and W b3 keep 8. The course lists c3's neighbours as
    # c2 b3 b4 b2 d3 d4 c4 d2: the first of the best is b3 (W); core's direction order
    # reaches E first.
    text = """
    . . # . .
    . . . . .
    . . 1 . .
    . . . . .
    2 . . . .
    """
    state = TrapGame(n=5).from_board(text)
    assert [MediumOpponent()(state, np.random.default_rng(seed)) for seed in range(5)] == [6] * 5  # W
    assert MediumOpponent(ties="first")(state, np.random.default_rng(0)) == 2  # E


@pytest.mark.parametrize("n", [4, 7])
def test_compiled_medium_makes_the_class_s_choice_and_leaves_the_state_alone(n):
    """The batch's Medium (``medium_decision``) against the class on every decision of random
    games, both phases and seats, on two board sides."""
    medium = MediumOpponent()
    rng = np.random.default_rng(0)
    for state in STATES if n == 7 else random_states(300, seed=1, n=n):
        s = state._s.copy()
        assert medium_decision(s) == medium(state, rng)
        assert np.array_equal(s, state._s)


def test_medium_with_course_ties_gives_the_first_player_the_spec_s_edge():
    # rules/trap.md: Medium vs Medium, 64.5% for the first player. Course-order ties give
    # 63.9% over 4000 games; first-in-direction-order ties 59.0%, random ties 49.7%.
    from tablegym.experiments.stats import wilson_interval

    agents = [MediumOpponent(), MediumOpponent()]
    games = 1200
    wins = sum(play_game(agents, seed)[1] == 0 for seed in range(games))
    low, high = wilson_interval(wins, games)
    assert low <= 0.645 <= high, (wins, low, high)


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


@pytest.mark.parametrize("hard", [HardOpponent, SoundHardOpponent])
def test_hard_takes_a_winning_step(hard):
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
    action = hard()(state, np.random.default_rng(0))
    assert action == 7
    assert state.child(action).winner() == 0


@pytest.mark.parametrize("hard", [HardOpponent, SoundHardOpponent])
def test_hard_takes_a_sure_winning_throw(hard):
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
    action = hard()(state, np.random.default_rng(0))
    assert action == NUM_DIRS + 7
    assert state.child(action).chance_outcomes() == [(7, 1.0)]


@pytest.mark.parametrize("hard", [HardOpponent, SoundHardOpponent])
def test_hard_avoids_a_step_into_a_sure_loss(hard):
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
    assert hard()(state, np.random.default_rng(0)) == 3


def reference_hard(state, depth=3):
    """Hard-sound's choice by plain recursion without pruning, written from the spec."""
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
        vals = [
            stepped(me, t, lambda: 1000.0 if mobility(s, opp) == 0 else move_leaf() if d == 1 else their_throw(d - 1))
            for _, t in steps(me)
        ]
        return max(vals) if vals else -1000.0

    def their_throw(d):  # min over the opponent's throws at my exits, p x V(hit)
        vals = [
            p_hit(opp, c) * trapped(c, lambda: -1000.0 if mobility(s, me) == 0 else move_leaf() if d == 1 else my_step(d - 1))
            for c in exits(me)
        ]
        return min(vals) if vals else -1000.0

    def my_throw(d):  # max over my throws at the opponent's exits
        vals = [
            p_hit(me, c) * trapped(c, lambda: 1000.0 if mobility(s, opp) == 0 else throw_leaf() if d == 1 else their_step(d - 1))
            for c in exits(opp)
        ]
        return max(vals) if vals else 1000.0

    def their_step(d):  # min over the opponent's steps
        vals = [
            stepped(opp, t, lambda: -1000.0 if mobility(s, me) == 0 else throw_leaf() if d == 1 else my_throw(d - 1))
            for _, t in steps(opp)
        ]
        return min(vals) if vals else 1000.0

    if state.phase == "move":
        scored = [
            (
                stepped(
                    me, t, lambda: 1000.0 if mobility(s, opp) == 0 else move_leaf() if depth == 1 else their_throw(depth - 1)
                ),
                d,
            )
            for d, t in steps(me)
        ]
    else:
        scored = [
            (
                p_hit(me, c)
                * trapped(c, lambda: 1000.0 if mobility(s, opp) == 0 else throw_leaf() if depth == 1 else their_step(depth - 1)),
                NUM_DIRS + c,
            )
            for c in exits(opp)
        ]
    best = max(v for v, _ in scored)
    return [a for v, a in scored if v >= best - 1e-9][0], best


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_hard_sound_matches_a_plain_recursion_of_the_spec(depth):
    for state in STATES[::7]:
        if state.phase == "throw" and not empty_neighbours(state, opponent_cell(state)):
            continue
        expected, _ = reference_hard(state, depth)
        assert sound_hard_decision(state.array, depth, True) == expected, state.to_text()
        assert sound_hard_decision(state.array, depth, False) == expected


@pytest.mark.parametrize("hard", [HardOpponent, SoundHardOpponent])
def test_hard_is_deterministic_and_leaves_the_state_alone(hard):
    agent = hard()
    for state in STATES[::11]:
        before = state.array
        a = agent(state, np.random.default_rng(0))
        assert agent(state, np.random.default_rng(99)) == a
        assert np.array_equal(state.array, before)


# -- Hard: the course's HardAI, quirks included (rules/trap.md) ----------------------------------


def test_course_order_lists_each_in_board_neighbour_once():
    for n in range(3, 9):
        for cell in range(n * n):
            listed = [c for c in COURSE_ORDER[n, cell] if c >= 0]
            expected = {t for d in range(NUM_DIRS) if (t := int(step(n, cell, d))) >= 0}
            assert sorted(listed) == sorted(expected), (n, cell)
    # ...and not in core's direction order: from c3 on 5x5 the course lists W (b3) second.
    assert [int(c) for c in COURSE_ORDER[5, 12][:2]] == [7, 11]


@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("prune", [True, False])
def test_hard_matches_a_plain_minimax_of_the_course_description(depth, prune):
    # tests/trap_course_hard.py is a separate max/min recursion written from rules/trap.md.
    for state in STATES[::5]:
        expected, _ = reference_course_hard(state, depth, prune=prune)
        assert hard_decision(state.array, depth, prune) == expected, state.to_text()


def test_quirk_osl_counts_the_cell_the_player_leaves_as_free():
    # 1 at e4 steps N to e3 or W to d4; depth 1, leaf m(me) + 0.5 OSL.
    #   N, e3: m = 4 (d2 e2 d4 e4). Exits around its 5 neighbours, e3 itself occupied:
    #          d2 4, e2 2, d3 5, d4 1, e4 1 = 13. Sound: 4 + 6.5 = 10.5; the course
    #          frees e3 on its copy, +1 for each of the 5: 18, so 4 + 9 = 13.
    #   W, d4: m = 2 (e3 e4). Around its 8 neighbours: c3 3, d3 5, e3 3, c4 1, e4 1, c5 0,
    #          d5 1, e5 1 = 15. Sound: 2 + 7.5 = 9.5; the course: 15 + 8 = 23, 2 + 11.5 = 13.5.
    # The course steps W (13.5 > 13), the sound reading N (10.5 > 9.5).
    text = """
    2 . . . #
    # # . . .
    . . # # .
    . # # . 1
    . # # # #
    """
    state = TrapGame(n=5).from_board(text)
    assert state.legal_actions() == [0, 6]
    assert HardOpponent(1)(state, np.random.default_rng(0)) == 6  # W
    assert reference_course_hard(state, 1) == (6, 13.5)
    assert reference_course_hard(state, 1, osl_left_cell_free=False) == (0, 10.5)
    assert SoundHardOpponent(1)(state, np.random.default_rng(0)) == 0  # N


def test_quirk_throw_targets_include_trapped_neighbours():
    # 1 at c4 throws around 2 at a5, whose neighbours are b4, b5 (empty) and a4 (trapped);
    # depth 1, leaf p x (2 m(me) - m(opp)), now m(me) = 5, m(opp) = 2.
    #   b4: distance 1, p 1. b4 is also an exit of 1: 2 x 4 - 1 = 7.
    #   b5: distance 2, p 0.95, also an exit of 1: 0.95 x 7 = 6.65.
    #   a4: distance 2, p 0.95, already trapped, nothing changes: 0.95 x (10 - 2) = 7.6.
    # The course throws at the trap on a4; from the empty cells only, b4.
    text = """
    # # # # .
    # . . . #
    . # . . .
    # . 1 # .
    2 . # . #
    """
    state = TrapGame(n=5).from_board(text, phase="throw")
    assert HardOpponent(1)(state, np.random.default_rng(0)) == NUM_DIRS + 15  # a4
    assert reference_course_hard(state, 1) == (NUM_DIRS + 15, pytest.approx(7.6))
    assert reference_course_hard(state, 1, trapped_targets=False) == (NUM_DIRS + 16, 7.0)
    assert SoundHardOpponent(1)(state, np.random.default_rng(0)) == NUM_DIRS + 16  # b4


def test_quirk_throw_tree_has_no_win_bonus():
    # 2 at e1 has one exit, d1, next to 1 at d2: a sure hit there encloses it. But the
    # course's throw tree scores even that node 2 m(me) - m(opp): d1 is also an exit of 1,
    # so 2 x 3 - 0 = 6, while a throw at the trap on e2 (distance 1) changes nothing:
    # 2 x 4 - 1 = 7. The course throws at e2 and lets the win go; with +-1000 it takes d1.
    text = """
    # # # . 2
    . . . 1 #
    . . # . .
    # . # # #
    # . . # .
    """
    state = TrapGame(n=5).from_board(text, phase="throw")
    assert HardOpponent(1)(state, np.random.default_rng(0)) == NUM_DIRS + 9  # e2
    assert reference_course_hard(state, 1) == (NUM_DIRS + 9, 7.0)
    assert reference_course_hard(state, 1, throw_tree_bonus=True) == (NUM_DIRS + 3, 1000.0)
    assert SoundHardOpponent(1)(state, np.random.default_rng(0)) == NUM_DIRS + 3  # d1, a win
    assert state.child(NUM_DIRS + 3).chance_outcomes() == [(3, 1.0)]


def test_quirk_the_window_passes_unchanged_below_a_chance_node():
    # 1 at c5 steps N (c4) or W (b5); 2 at e2 throws at 1's exits from e2 and never moves.
    # Depth 3: step, throw (p x V), step, leaf m + 0.5 OSL (OSL as the course counts it).
    # N first (both targets have 2 exits; the course lists c4 before b5).
    #   throw c5 (p 0.8): best step c3, leaf 1 + 0.5 x 23 = 12.5 -> 10.0; beta = 10.
    #   throw c3 (p 0.9): step c5 first, leaf 2 + 0.5 x 16 = 10 >= beta 10: cut -> 9.0.
    #   throw b5 (p 0.75): steps c5 then c3 (both 0 exits, course order). c5's leaf is
    #     1 + 0.5 x 17 = 9.5 >= beta 9.0, the window handed down unchanged: cut, -> 7.125.
    #     c3 was worth 1 + 0.5 x 24 = 13 (0.75 x 13 = 9.75 > 9.0): N is truly worth 9.0,
    #     but the course sees 7.125.
    # W, searched with alpha 7.125, comes to 0.85 x 8.5 = 7.225 (throw c4, step c5), so the
    # course steps W. With no pruning, or the window scaled by 1/p, N (9.0 against 8.075).
    text = """
    # # # # .
    . # # # 2
    . # . # #
    . # . # #
    # . 1 # .
    """
    state = TrapGame(n=5).from_board(text)
    assert HardOpponent()(state, np.random.default_rng(0)) == 6  # W
    assert reference_course_hard(state) == (6, pytest.approx(7.225))
    assert reference_course_hard(state, prune=False) == (0, pytest.approx(9.0))
    assert reference_course_hard(state, scaled_window=True) == (0, pytest.approx(9.0))
    assert HardOpponent(prune=False)(state, np.random.default_rng(0)) == 0  # N
    assert SoundHardOpponent()(state, np.random.default_rng(0)) == 0


def test_hard_and_hard_sound_are_registered_and_named():
    assert OPPONENTS["hard"] is HardOpponent and OPPONENTS["hard-sound"] is SoundHardOpponent
    assert HardOpponent().name == "hard" and SoundHardOpponent(2).name == "hard-sound:depth=2"
    with pytest.raises(ValueError, match="depth must be at least 1"):
        SoundHardOpponent(0)


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


@pytest.mark.parametrize("pair", [("random", "easy"), ("medium", "medium"), ("hard", "medium"), ("hard-sound", "hard")])
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

    code = (
        "import numpy as np; from tablegym.envs.trap.core import TrapGame; "
        "from tablegym.envs.trap.opponents import HardOpponent; "
        "s = TrapGame().new_initial_state(); print(HardOpponent()(s, np.random.default_rng(0)))"
    )
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[-1].stderr[-2000:]
    assert runs[0].stdout == runs[1].stdout
