"""Threes! rules core against the spec: swipes, cards, deck, bonus cards, hints, score."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablegym.envs.core import CHANCE, TERMINAL, IllegalActionError
from tablegym.envs.threes.board import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    board_from_ranks,
    board_score,
    rank_value,
    ranks_of,
    swipe,
    swipe_line,
    value_rank,
)
from tablegym.envs.threes.core import (
    BOARD,
    BONUS_HINT,
    HINT_BASE,
    INSERT_BASE,
    N1,
    N2,
    N3,
    ThreesGame,
    ThreesState,
    play_random_setup,
    sample_chance,
)


def line_value(line):
    return sum(rank_value(r) for r in line)


def test_every_line_of_ranks_0_to_14_swipes_by_the_rules():
    """All 15**4 lines, checked against properties independent of the implementation."""
    c = np.zeros(4, dtype=np.int64)
    for line in itertools.product(range(15), repeat=4):
        c[:] = line
        moved = swipe_line(c)
        after = c.tolist()
        cards_before = sum(r > 0 for r in line)
        cards_after = sum(r > 0 for r in after)
        assert line_value(after) == line_value(line), line  # card values are conserved
        assert cards_before - cards_after in (0, 1), line  # at most one merge per line
        if moved:
            assert after[3] == 0, line  # a moved line ends with its far cell empty
        else:
            assert after == list(line), line
        # A line moves iff some card has an empty or mergeable cell in front of it (toward the wall).
        can_move = any(
            line[i] and (line[i - 1] == 0 or line[i - 1] + line[i] == 3 or (line[i - 1] == line[i] >= 3)) for i in range(1, 4)
        )
        assert moved == can_move, line


def test_swipe_examples_by_hand():
    # 1 2 . 3  swiped left: 1+2 merge at the wall, 3 follows one step -> 3 . 3 .
    c = np.array([1, 2, 0, 3])
    assert swipe_line(c) and c.tolist() == [3, 0, 3, 0]
    # 1 1 2 2 : 1+1 cannot merge; 1+2 at cells 1,2 merges, the 2 behind follows -> 1 3 2 .
    c = np.array([1, 1, 2, 2])
    assert swipe_line(c) and c.tolist() == [1, 3, 2, 0]
    # 3 6 12 24 is blocked at the wall and cannot merge: no move
    c = np.array([3, 4, 5, 6])
    assert not swipe_line(c)
    # 6 6 6 6 -> 12 6 6 . (one merge only, the rest moves one cell)
    c = np.array([4, 4, 4, 4])
    assert swipe_line(c) and c.tolist() == [5, 4, 4, 0]


def test_swipe_directions_on_a_board():
    #  1 . . .        left: unchanged row 0 (blocked); right: 1 slides one cell
    #  . . . 2        up: the 2 in column 3 rises one cell
    #  . . . .
    #  . . . .
    b = board_from_ranks([[1, 0, 0, 0], [0, 0, 0, 2], [0, 0, 0, 0], [0, 0, 0, 0]])
    nb, moved = swipe(b, LEFT)
    assert moved == 0b0010 and ranks_of(nb)[1].tolist() == [0, 0, 2, 0]
    nb, moved = swipe(b, RIGHT)
    assert moved == 0b0001 and ranks_of(nb)[0].tolist() == [0, 1, 0, 0]
    nb, moved = swipe(b, UP)
    assert moved == 0b1000 and ranks_of(nb)[:, 3].tolist() == [2, 0, 0, 0]
    nb, moved = swipe(b, DOWN)
    assert moved == 0b1001 and ranks_of(nb)[:, 0].tolist() == [0, 1, 0, 0]


def test_board_swipes_are_the_line_swipes_of_every_row_and_column():
    """``swipe`` (16-bit row tables, columns spread back into the board) against ``swipe_line``
    applied to each line of random boards, ranks up to 15 in every cell (the top bit of the
    64-bit board included), in the four directions."""
    rng = np.random.default_rng(7)
    c = np.zeros(4, dtype=np.int64)
    for k in range(1500):
        ranks = rng.integers(0, 16 if k % 2 else 4, size=(4, 4))
        for d, (lines, wall_first) in enumerate(((ranks, True), (ranks, False), (ranks.T, True), (ranks.T, False))):
            want, moved_want = np.empty_like(lines), 0
            for i, line in enumerate(lines):
                c[:] = line if wall_first else line[::-1]
                if swipe_line(c):
                    moved_want |= 1 << i
                want[i] = c if wall_first else c[::-1]
            nb, moved = swipe(board_from_ranks(ranks.tolist()), d)
            got = ranks_of(nb) if d < 2 else ranks_of(nb).T
            assert moved == moved_want and got.tolist() == want.tolist(), (ranks.tolist(), d)


def test_rank_encoding_and_score_table_of_the_spec():
    assert [rank_value(r) for r in range(16)] == [0, 1, 2] + [3 * 2**k for k in range(13)]
    table = {
        3: 3,
        6: 9,
        12: 27,
        24: 81,
        48: 243,
        96: 729,
        192: 2187,
        384: 6561,
        768: 19683,
        1536: 59049,
        3072: 177147,
        6144: 531441,
    }
    for value, score in table.items():
        board = board_from_ranks([value_rank(value)] + [0] * 15)
        assert board_score(board) == score
    assert board_score(board_from_ranks([1, 2] + [0] * 14)) == 0
    with pytest.raises(ValueError, match="9"):
        value_rank(9)


def test_initial_deal_and_first_hint():
    s = ThreesGame().new_initial_state()
    assert s.current_player() == CHANCE
    s = play_random_setup(ThreesGame(), np.random.default_rng(3))
    assert s.current_player() == 0 and (s.ranks > 0).sum() == 9
    assert sorted(np.bincount(s.ranks.reshape(16), minlength=4)[1:4].tolist()) != []  # dealt 1/2/3 cards
    assert sum(s.deck) == 2  # 12 - 9 dealt - the hinted card
    assert s.hint in ("1", "2", "3")
    dealt = np.bincount(s.ranks.reshape(16), minlength=4)[1:4] + np.array(s.deck)
    dealt[int(s.hint) - 1] += 1
    assert dealt.tolist() == [4, 4, 4]  # the first deck: dealt + hinted + left = four of each


def test_every_12_deck_draws_hold_four_of_each():
    g = ThreesGame()
    rng = np.random.default_rng(0)
    s = play_random_setup(g, rng)
    draws = []
    dealt = np.bincount(s.ranks.reshape(16), minlength=4)[1:4].tolist()
    draws += [r for r in (1, 2, 3) for _ in range(dealt[r - 1])] + [int(s.hint)]
    while len(draws) < 12 * 30 and not s.is_terminal():
        s = s.child(s.legal_actions()[0])
        s = s.child(s.chance_outcomes()[0][0])  # insert on the first moved line
        outcome = s.chance_outcomes()
        ids, probs = zip(*outcome)
        pick = ids[rng.choice(len(ids), p=np.array(probs) / sum(probs))]
        assert pick != HINT_BASE + BONUS_HINT  # no bonus below 48 on these small boards
        draws.append(pick - HINT_BASE)
        s = s.child(pick)
    full = len(draws) // 12 * 12
    assert full >= 24
    for k in range(0, full, 12):
        assert sorted(draws[k : k + 12]) == [1] * 4 + [2] * 4 + [3] * 4


def board_state(ranks, deck=(4, 4, 4), hint_mode="+"):
    """A player-node state with the given board, to be followed by a swipe."""
    g = ThreesGame(hint_mode)
    s = g.new_initial_state().array
    s[BOARD] = board_from_ranks(ranks)
    s[N1], s[N2], s[N3] = deck
    from tablegym.envs.threes import core

    s[core.PHASE] = core.DRAW_HINT
    return ThreesState(g, s)


def test_bonus_cards_appear_with_probability_1_in_21_from_48():
    #  48 in the corner (highest rank 7): bonus values allowed: 6 only.
    low = board_state([[6] + [0] * 15])  # highest 24: no bonus possible
    assert all(a != HINT_BASE + BONUS_HINT for a, _ in low.chance_outcomes())
    high = board_state([[7] + [1, 2] + [0] * 13], deck=(2, 1, 1))
    outcomes = dict(high.chance_outcomes())
    assert outcomes[HINT_BASE + BONUS_HINT] == pytest.approx(1 / 21)
    assert outcomes[HINT_BASE + 1] == pytest.approx(20 / 21 * 2 / 4)
    assert sum(outcomes.values()) == pytest.approx(1.0)
    # Sampled: the bonus rate over many draws is within 4 standard deviations of 1/21.
    rng = np.random.default_rng(7)
    n = 20_000
    hits = sum(sample_hint(high, rng) == HINT_BASE + BONUS_HINT for _ in range(n))
    sd = np.sqrt(n * (1 / 21) * (20 / 21))
    assert abs(hits - n / 21) < 4 * sd


def sample_hint(state, rng):
    ids, probs = zip(*state.chance_outcomes())
    return ids[rng.choice(len(ids), p=np.array(probs))]


def test_a_bonus_card_is_one_of_6_to_highest_over_8_and_takes_no_deck_card():
    #  highest card 192 (rank 9): bonus values 6, 12, 24 (ranks 4, 5, 6)
    s = board_state([[9, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]], deck=(3, 3, 3))
    s = s.child(HINT_BASE + BONUS_HINT)
    assert s.hint == "+" and s.deck == (3, 3, 3)
    s = s.child(RIGHT)  # row 0 moves: the 1 slides right; the card enters at the left end of row 0
    outcomes = s.chance_outcomes()
    assert sorted(a - INSERT_BASE for a, _ in outcomes) == [4, 5, 6]  # line 0, ranks 4..6
    assert all(p == pytest.approx(1 / 3) for _, p in outcomes)
    s = s.child(INSERT_BASE + 5)
    assert s.values[0, 0] == 12


def test_candidates_hint_shows_a_window_containing_the_value():
    s = board_state([[11, 1, 0, 0]] + [[0] * 4] * 3, deck=(3, 3, 3), hint_mode="candidates")
    bonus = [a for a, _ in s.chance_outcomes() if a >= HINT_BASE + BONUS_HINT]
    assert len(bonus) == 5  # highest 768: bonus 6 .. 96, five values
    s = s.child(bonus[2])  # the value 24
    assert s.hint == "12/24/48"
    assert s.observation()[19] == 1 and s.observation()[23:25].tolist() == [5, 7]  # the window, as ranks
    s = s.child(RIGHT)
    values = sorted(rank_value((a - INSERT_BASE) % 16) for a, _ in s.chance_outcomes())
    assert 24 in values and set(values) <= {12, 24, 48}


def test_the_new_card_enters_at_the_far_end_of_a_moved_line():
    #  . . . .
    #  . 3 . .     up: columns 1 and 2 move; the card enters the bottom row of one of them
    #  . . 3 .
    #  . . . .
    s = board_state([[0, 0, 0, 0], [0, 3, 0, 0], [0, 0, 3, 0], [0, 0, 0, 0]], deck=(3, 4, 4))
    s = s.child(HINT_BASE + 1)  # next card: 1
    s = s.child(UP)  # columns 1 and 2 move up
    lines = sorted((a - INSERT_BASE) // 16 for a, _ in s.chance_outcomes())
    assert lines == [1, 2]
    after = s.child(INSERT_BASE + 16 * 2 + 1)
    assert after.values[3, 2] == 1  # up: the card enters the bottom row


def test_illegal_swipes_and_outcomes_are_named():
    s = play_random_setup(ThreesGame(), np.random.default_rng(0))
    with pytest.raises(IllegalActionError, match="illegal action 7"):
        s.child(7)
    blocked = board_state([[3, 0, 0, 0]] + [[0] * 4] * 3).child(HINT_BASE + 1)
    with pytest.raises(ValueError, match="no card can move"):
        blocked.child(LEFT)
    with pytest.raises(ValueError):
        ThreesGame(hint="?")


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31))
def test_random_games_keep_the_invariants(seed):
    rng = np.random.default_rng(seed)
    s = ThreesGame().new_initial_state()
    last_score = 0
    while not s.is_terminal():
        if s.current_player() == CHANCE:
            outcomes = s.chance_outcomes()
            assert sum(p for _, p in outcomes) == pytest.approx(1.0)
            assert all(p > 0 for _, p in outcomes)
            s = sample_chance(s, rng)
        else:
            mask = s.legal_action_mask()
            assert mask.sum() == len(s.legal_actions()) >= 1
            s = s.child(int(rng.choice(s.legal_actions())))
            assert s.score >= last_score  # the board score never decreases
            last_score = s.score
        assert all(0 <= n <= 4 for n in s.deck) and sum(s.deck) > 0
    assert s.current_player() == TERMINAL and s.legal_actions() == []
    assert s.returns()[0] == s.score


def test_seeded_games_repeat_exactly():
    def game(seed):
        rng = np.random.default_rng(seed)
        s = play_random_setup(ThreesGame(), rng)
        boards = []
        while not s.is_terminal():
            s = sample_chance(s.child(int(rng.choice(s.legal_actions()))), rng)
            boards.append(s.board)
        return boards

    assert game(11) == game(11)
    assert game(11) != game(12)


def test_text_and_parsing():
    s = board_state([[1, 2, 3, 4]] + [[0] * 4] * 3).child(HINT_BASE + 2)
    text = s.to_text()
    assert text.splitlines()[0].split() == ["1", "2", "3", "6"]
    assert "next: 2" in text and "score: 12" in text
    assert s.string_to_action("r") == RIGHT and s.string_to_action("Down") == DOWN
    assert s.string_to_action("\x1b[B") == DOWN  # the terminal's down-arrow key
    with pytest.raises(IllegalActionError, match="'sideways'"):
        s.string_to_action("sideways")
