"""Trap's hand-made evaluators, checked on hand-worked boards and against plain references."""

from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablegym.envs.core import CHANCE
from tablegym.envs.trap.core import HDR, N_, POS0, TrapGame, free_neighbours, mobility
from tablegym.envs.trap.heuristics import COMPOSITE_WEIGHTS, EVALUATORS, WIN, free_board, popcount, voronoi, vulnerability

SYMMETRIC = ["is", "ocls", "flood", "cut", "composite"]

# 7x7, player 1 ('1', player 0) at c3, player 2 at e5.
#   m(1) = 5: d2 d3 b4 c4 d4 (b2 c2 b3 are traps)
#   m(2) = 6: d4 e4 f4 d5 d6 f6 (f5 e6 are traps)
#   OCLS(1): m at d2 6, d3 6, b4 6, c4 6, d4 6 = 30
#   OCLS(2): m at d4 6, e4 6, f4 6, d5 6, d6 6, f6 5 = 35
OPEN_7X7 = """
. . . . . . .
. # # . . . .
. # 1 . . . .
. . . . . . .
. . . . 2 # .
. . . . # . .
. . . . . . .
"""

# 5x5, player 1 at a3, player 2 at e5; 16 empty cells.
#   m(1) = 3 (a2 b2 a4), m(2) = 3 (d4 e4 d5)
#   OCLS(1): a2 -> a1 b1 b2 = 3; b2 -> a1 b1 a2 c3 = 4; a4 -> a5 = 1: 8
#   OCLS(2): d4 -> c3 c4 e4 c5 d5 = 5; e4 -> d4 d5 = 2; d5 -> c4 d4 e4 c5 = 4: 11
#   Voronoi (king-step distances 1 / 2): a2 1/4, b2 1/3, a4 1/-, a1 2/4, b1 2/4, a5 2/- are 1's;
#     c4 3/2, d4 3/1, c5 4/2, d5 4/1, e4 4/1 are 2's; c3 2/2, d2 3/3, d1 e1 e2 4/4 are ties: 6 - 5
#   Cut: trapping b2 takes c3 and everything beyond it (10 cells) from 1's region; trapping
#     c3 takes d1 e1 d2 e2 b2 a2 a1 b1 (8 cells) from 2's region (a4 a5 only 1 reaches)
CORRIDOR_5X5 = """
. . # . .
. . # . .
1 # . # #
. # . . .
. # . . 2
"""


def board_values(text, n, to_move=0, phase="move"):
    s = TrapGame(n=n).from_board(text, to_move=to_move, phase=phase)
    return {name: (ev(s, 0), ev(s, 1)) for name, ev in EVALUATORS.items()}


def test_mobility_scores_on_an_open_board():
    v = board_values(OPEN_7X7, 7)
    assert v["is"] == (5 - 6, 6 - 5)
    assert v["ais"] == (5 - 2 * 6, 6 - 2 * 5)
    assert v["ais-course"] == (2 * 5 - 6, 2 * 6 - 5)
    assert v["ocls"] == (30 - 35, 35 - 30)


def test_every_term_on_a_corridor_board():
    v = board_values(CORRIDOR_5X5, 5)
    assert v["is"] == (0, 0)
    assert v["ocls"] == (8 - 11, 11 - 8)
    assert v["flood"] == (6 - 5, 5 - 6)
    assert v["cut"] == (8 - 10, 10 - 8)
    # composite = m, ocls, flood, cut, centre (both players on the outer ring: 0) and distance
    # (4 king steps, counted for player 0, the player to move)
    w = COMPOSITE_WEIGHTS
    expected = w[0] * 0 + w[1] * -3 + w[2] * 1 + w[3] * -2 + w[4] * 0 + w[5] * 4
    assert v["composite"][0] == pytest.approx(expected)
    assert v["composite"][1] == pytest.approx(-expected)


def test_walled_apart_flood_is_the_difference_of_region_sizes():
    # 1 lives on a1 b1 a2 b2 minus its own cell: 3 cells; 2 on the other 15 empty cells.
    text = """
    1 . # . .
    . . # . .
    # # # . .
    . . . . .
    . . . . 2
    """
    v = board_values(text, 5)
    assert v["flood"] == (3 - 15, 15 - 3)
    assert v["cut"] == (0, 0)  # two-wide corridors everywhere: no single cell cuts anything


def test_centre_term_prefers_the_middle():
    # Same mobility (8 each), same distance; player 1 in the centre, player 2 one ring out.
    text = """
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . 1 . . .
    . . . . . . .
    . . . . . 2 .
    . . . . . . .
    """
    s = TrapGame().from_board(text)
    weights = np.zeros(6)
    weights[4] = 1.0
    kernel = EVALUATORS["composite"].kernel
    assert kernel(s._s, 0, weights) == 4.0  # twice the ring distance: 2*2 - 0
    assert kernel(s._s, 1, weights) == -4.0


def test_distance_term_counts_for_the_player_to_move():
    s = TrapGame().from_board(OPEN_7X7, to_move=1)
    weights = np.zeros(6)
    weights[5] = -1.0  # the mover likes to be close
    kernel = EVALUATORS["composite"].kernel
    assert kernel(s._s, 1, weights) == -2.0 and kernel(s._s, 0, weights) == 2.0


def test_terminal_positions_score_win_loss_and_draw():
    # 1 steps NW to b2 and closes 2's last exit.
    text = """
    2 # . . . . .
    # . . . . . .
    . . 1 . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    """
    won = TrapGame().from_board(text).child(7)
    assert won.winner() == 0
    drawn = TrapGame(turn_cap=1).new_initial_state().child(4).child(8 + 24).child(24)
    assert drawn.is_terminal() and drawn.winner() is None
    for ev in EVALUATORS.values():
        assert (ev(won, 0), ev(won, 1)) == (WIN, -WIN)
        assert (ev(drawn, 0), ev(drawn, 1)) == (0.0, 0.0)


def test_chance_node_is_scored_as_the_board_stands():
    s = TrapGame().new_initial_state().child(4).child(8 + 24)  # a trap in the air at d4
    assert s.current_player() == CHANCE
    before = TrapGame().new_initial_state().child(4)  # the same board, throw phase
    for ev in EVALUATORS.values():
        assert ev(s, 0) == ev(before, 0) and ev(s, 1) == ev(before, 1)


def test_popcount_counts_all_64_bits():
    assert popcount(np.uint64(0)) == 0
    assert popcount(np.uint64(2**64 - 1)) == 64
    assert popcount(np.uint64(0b1011 << 60)) == 3


# -- random positions: plain references, symmetry, bounds ------------------------------------------


def random_position(seed, plies, n=7):
    rng = np.random.default_rng(seed)
    state = TrapGame(n=n).new_initial_state()
    for _ in range(plies):
        if state.is_terminal():
            break
        if state.current_player() == CHANCE:
            outcomes = state.chance_outcomes()
            i = rng.choice(len(outcomes), p=[p for _, p in outcomes])
            state = state.child(outcomes[i][0])
        else:
            legal = state.legal_actions()
            state = state.child(legal[rng.integers(len(legal))])
    return state


def neighbours(n, c):
    r, k = divmod(c, n)
    return [(r + dr) * n + k + dk for dr in (-1, 0, 1) for dk in (-1, 0, 1) if (dr or dk) and 0 <= r + dr < n and 0 <= k + dk < n]


def distances(s, source, blocked=-1):
    """King-step distances from ``source`` through empty cells other than ``blocked``."""
    n = int(s[N_])
    empty = {c for c in range(n * n) if s[HDR + c] == 0 and c not in (s[POS0], s[POS0 + 1]) and c != blocked}
    dist = {source: 0}
    queue = deque([source])
    while queue:
        c = queue.popleft()
        for t in neighbours(n, c):
            if t in empty and t not in dist:
                dist[t] = dist[c] + 1
                queue.append(t)
    return dist


def reference_voronoi(s, player):
    a, b = distances(s, s[POS0 + player]), distances(s, s[POS0 + 1 - player])
    mine = sum(1 for c, d in a.items() if d > 0 and d < b.get(c, np.inf))
    theirs = sum(1 for c, d in b.items() if d > 0 and d < a.get(c, np.inf))
    return mine, theirs


def reference_vulnerability(s, player):
    home = s[POS0 + player]
    whole = distances(s, home)
    return max([len(whole) - 1 - len(distances(s, home, blocked=v)) for v in whole if v != home], default=0)


positions = st.builds(random_position, st.integers(0, 2**32), st.integers(0, 120), st.sampled_from([5, 7, 8]))


@settings(max_examples=150, deadline=None)
@given(positions)
def test_region_terms_match_plain_breadth_first_search(state):
    s = state._s
    for player in (0, 1):
        free = np.uint64(free_board(s))
        assert voronoi(s, player, free) == reference_voronoi(s, player)
        assert vulnerability(s, player, free) == reference_vulnerability(s, player)


@settings(max_examples=150, deadline=None)
@given(positions)
def test_mobility_scores_match_the_cores_counts(state):
    if state.is_terminal():
        return
    s = state._s
    for me in (0, 1):
        m_me, m_opp = mobility(s, me), mobility(s, 1 - me)
        assert EVALUATORS["is"](state, me) == m_me - m_opp
        assert EVALUATORS["ais"](state, me) == m_me - 2 * m_opp
        assert EVALUATORS["ais-course"](state, me) == 2 * m_me - m_opp

        def one_cell(p):
            return sum(
                free_neighbours(s, c)
                for c in neighbours(state.n, s[POS0 + p])
                if s[HDR + c] == 0 and c not in (s[POS0], s[POS0 + 1])
            )

        assert EVALUATORS["ocls"](state, me) == one_cell(me) - one_cell(1 - me)


def swapped(state):
    """The same board with the two players' pieces and the turn exchanged."""
    n = state.n
    cells = np.where(state.traps.reshape(-1), "#", ".").astype(object)
    cells[state._s[POS0]] = "2"
    cells[state._s[POS0 + 1]] = "1"
    text = "\n".join(" ".join(cells[r * n : (r + 1) * n]) for r in range(n))
    return TrapGame(n=n).from_board(text, to_move=1 - state.mover, phase=state.phase)


@settings(max_examples=150, deadline=None)
@given(positions)
def test_symmetric_evaluators_negate_when_the_players_swap(state):
    if state.is_terminal() or state.phase == "landing":
        return
    mirror = swapped(state)
    for name in SYMMETRIC:
        ev = EVALUATORS[name]
        assert ev(state, 0) == pytest.approx(-ev(state, 1))
        assert ev(mirror, 0) == pytest.approx(ev(state, 1))
        assert ev(mirror, 1) == pytest.approx(ev(state, 0))


@settings(max_examples=200, deadline=None)
@given(positions)
def test_values_are_finite_and_bounded(state):
    for ev in EVALUATORS.values():
        for player in (0, 1):
            v = ev(state, player)
            assert np.isfinite(v)
            if state.is_terminal():
                assert v in (WIN, -WIN, 0.0)
            else:
                assert abs(v) < WIN
