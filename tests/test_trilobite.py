"""Trilobite rules core and the original AI's evaluators, checked on hand-worked positions."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablegym.envs.core import TERMINAL, IllegalActionError
from tablegym.envs.trilobite.core import TrilobiteGame, TrilobiteState
from tablegym.envs.trilobite.heuristics import ADVANCED, GAP_TOLERANT, SIMPLEST, WIN_LOSS, enemy_neighbours
from tablegym.search.alphabeta_search import alphabeta


def play(game, columns):
    s = game.new_initial_state()
    for c in columns:
        s = s.child(c)
    return s


def test_chip_falls_to_the_lowest_empty_cell():
    s = play(TrilobiteGame(), [3, 3, 4])
    b = s.board
    assert b[6, 3] == 1 and b[5, 3] == 2 and b[6, 4] == 1
    assert s.last_cell == 6 * 8 + 4


def test_legal_actions_follow_the_originals_cell_order():
    # Tiny board after X in column 0: free landing cells 3 (col 0), 7 (col 1), 8 (col 2).
    #   . . .
    #   . . .
    #   X . .
    s = play(TrilobiteGame.tiny(), [0])
    assert s.legal_actions() == [0, 1, 2]
    # After X0 O0 X2: landing cells 0 (col 0), 5 (col 2), 7 (col 1) -> columns 0, 2, 1.
    s = play(TrilobiteGame.tiny(), [0, 0, 2])
    assert s.legal_actions() == [0, 2, 1]


def test_full_column_is_illegal_and_named():
    s = play(TrilobiteGame.tiny(), [0, 0, 0])
    with pytest.raises(IllegalActionError, match=r"illegal action 0.*\[1, 2\]"):
        s.child(0)
    with pytest.raises(ValueError):
        s.child(7)
    with pytest.raises(ValueError):
        s.child("x")


@pytest.mark.parametrize(
    "moves, winner",
    [
        ([0, 0, 1, 1, 2, 2, 3], 0),  # horizontal on the bottom row
        ([0, 1, 0, 1, 0, 1, 0], 0),  # vertical in column 0
        ([0, 1, 1, 2, 2, 3, 2, 3, 3, 5, 3], 0),  # diagonal rising to the right
        ([7, 6, 6, 5, 5, 4, 5, 4, 4, 2, 4], 0),  # the same diagonal mirrored (rising to the left)
        ([6, 0, 6, 1, 5, 2, 5, 3], 1),  # player 1 on the bottom row
    ],
)
def test_four_in_a_row_wins_in_every_direction(moves, winner):
    s = play(TrilobiteGame(), moves)
    assert s.is_terminal() and s.winner() == winner
    assert s.returns()[winner] == 1 and s.returns()[1 - winner] == -1
    assert s.legal_actions() == []


def test_three_with_a_gap_is_not_a_win():
    s = play(TrilobiteGame(), [0, 7, 1, 7, 3, 7])
    assert not s.is_terminal()


def test_tiny_board_can_fill_up_to_a_draw():
    # X O X / O X X? no line: columns 0,1,2,0,2,1,1,... chosen so nobody completes three.
    #   O X O
    #   X O X
    #   X O X      (X = player 0)
    s = play(TrilobiteGame.tiny(), [0, 1, 2, 1, 0, 0, 2, 2, 1])
    assert s.is_terminal() and s.winner() is None
    assert list(s.returns()) == [0, 0]


def test_first_player_option_and_bad_options():
    s = TrilobiteGame(first_player=1).new_initial_state()
    assert s.current_player() == 1
    assert s.child(0).board[-1, 0] == 2
    for kwargs in ({"width": 0}, {"height": 17}, {"win_length": 9}, {"first_player": 2}):
        with pytest.raises(ValueError, match=next(iter(kwargs))):
            TrilobiteGame(**kwargs)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 7), max_size=40))
def test_push_pop_restores_the_position(columns):
    s = TrilobiteGame().new_initial_state()
    k = s.kernels
    arr = s.array
    history = []
    for c in columns:
        if k.outcome(arr) != -1:
            break
        legal = np.empty(8, dtype=np.int64)
        n = k.moves(arr, legal)
        if c not in legal[:n]:
            continue
        history.append((arr.copy(), k.key(arr)))
        k.push(arr, c)
    for before, key in reversed(history):
        k.pop(arr)
        assert k.key(arr) == key
        np.testing.assert_array_equal(arr, before)


def test_tiny_ratings_of_the_spec():
    # Full minimax on 3x3: from the empty board every move rates 0 for the AI (player 0) ...
    root = TrilobiteGame.tiny().new_initial_state()
    for compiled in (True, False):
        r = alphabeta(root, WIN_LOSS, depth=9, compiled=compiled)
        assert r.values == {0: 0.0, 1: 0.0, 2: 0.0} and r.action == 0
        # ... and after the AI plays cell 6 (column 0), the human's moves to cells 3, 7, 8
        # (columns 0, 1, 2) rate 1, 1, 0 from the AI's point of view.
        r = alphabeta(root.child(0), WIN_LOSS, depth=9, compiled=compiled)
        assert {a: -v for a, v in r.values.items()} == {0: 1.0, 1: 1.0, 2: 0.0}
        assert r.action == 2


def test_simplest_and_gap_tolerant_score_the_last_move():
    #   row 6:  X X . X O O . .     X = player 0 (the AI), O = player 1; last move X at column 3
    s = play(TrilobiteGame(), [0, 4, 1, 5, 3])
    assert SIMPLEST(s, 0) == 1.0  # contiguous: column 3 stands alone horizontally (2 is empty)
    assert GAP_TOLERANT(s, 0) == 3.0  # skipping cell 2: X X _ X counts three own chips
    assert SIMPLEST(s, 1) == -1.0 and GAP_TOLERANT(s, 1) == -3.0


def test_gap_tolerant_stops_at_an_opponent_chip():
    #   row 6:  X O X X . . . .    last move X at column 3: walking left meets X(2) then O(1)
    s = play(TrilobiteGame(), [0, 1, 2, 7, 3])
    assert GAP_TOLERANT(s, 0) == 2.0


def test_advanced_heuristic_by_hand():
    #   row 5:  . . . X . . . .   last move X at column 3 lands on O (cell 43); of its neighbours
    #   row 6:  X X . O O . . .   50 (.), 51 (O), 52 (O), 42, 44, 34-36 (.) two hold O chips
    s = play(TrilobiteGame(), [0, 4, 1, 3, 3])
    assert enemy_neighbours(s._s) == 2
    #   row 6:  X X X O O . . .   last move X at column 2 (cell 50): neighbours 49 X, 51 O, 41-43 empty
    s = play(TrilobiteGame(), [0, 4, 1, 3, 2])
    assert enemy_neighbours(s._s) == 1
    # gap-tolerant line of X through cell 50: 3 (cells 48, 49, 50; 51 is O)
    assert ADVANCED(s, 0) == 4 * 1 + 5 * 3
    # from the human's side the line term flips sign, the neighbour term does not (as in the original)
    assert ADVANCED(s, 1) == 4 * 1 - 5 * 3


def test_terminal_scores_of_each_evaluator():
    s = play(TrilobiteGame(), [0, 1, 0, 1, 0, 1, 0])  # player 0 wins
    assert s.current_player() == TERMINAL
    assert (WIN_LOSS(s, 0), WIN_LOSS(s, 1)) == (1.0, -1.0)
    assert (SIMPLEST(s, 0), GAP_TOLERANT(s, 1)) == (4.0, -4.0)
    assert (ADVANCED(s, 0), ADVANCED(s, 1)) == (45.0, -45.0)


def test_text_rendering_is_deterministic_with_a_legend():
    s = play(TrilobiteGame.tiny(), [0, 1])
    assert s.to_text() == ". . .\n. . .\nX O .\n0 1 2\nX (player 0) to move"
    assert s.string_to_action("column 2") == 2
    with pytest.raises(IllegalActionError, match="'foo'"):
        s.string_to_action("foo")


def _has_line(board: np.ndarray, player: int, length: int) -> bool:
    """Whether ``player`` has ``length`` chips in a row anywhere on ``board`` (rows from the top):
    every start cell and direction scanned, independent of the kernels' bits and walks."""
    h, w = board.shape
    for y in range(h):
        for x in range(w):
            for dy, dx in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(y + k * dy, x + k * dx) for k in range(length)]
                if all(0 <= cy < h and 0 <= cx < w and board[cy, cx] == player + 1 for cy, cx in cells):
                    return True
    return False


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(
        [(8, 7, 4), (7, 6, 4), (3, 3, 3), (5, 4, 3), (4, 12, 5), (2, 16, 2), (5, 5, 5), (9, 7, 4), (16, 5, 4), (4, 14, 6)]
    ),
    st.lists(st.integers(0, 15), max_size=120),
)
def test_a_game_ends_exactly_when_a_line_appears_and_pop_restores_it(shape, columns):
    """Random games on boards whose chips fit the kernel's bits (8 x 7: all 64 bits; 3 x 3; 2 x 16)
    and on boards that fall back to the walk from the new chip (9 x 7 and 16 x 5: too many cells;
    4 x 14 with 6 in a row: shifts past 63 bits): after every move the
    outcome names the mover exactly when a whole-board scan finds its line (and a full board
    with no line is a draw); popping every move gives back each array, bits included."""
    w, h, length = shape
    game = TrilobiteGame(w, h, length)
    s = game.new_initial_state()
    k, arr = s.kernels, s.array
    history = []
    legal = np.empty(w, dtype=np.int64)
    for c in columns:
        n = k.moves(arr, legal)
        if n == 0:
            break
        mover = k.to_move(arr)
        history.append(arr.copy())
        k.push(arr, legal[c % n])
        board = TrilobiteState(game, arr).board
        line = _has_line(board, mover, length)
        assert k.outcome(arr) == (mover if line else 2 if (board != 0).all() else -1)
    for before in reversed(history):
        k.pop(arr)
        np.testing.assert_array_equal(arr, before)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from([(8, 7, 4), (8, 8, 4), (3, 3, 3), (7, 6, 4), (2, 16, 2), (9, 7, 4), (16, 5, 4), (8, 9, 4)]),
    st.lists(st.integers(0, 15), max_size=120),
)
def test_moves_are_the_open_columns_by_landing_cell(shape, columns):
    """The legal columns after random moves, on boards up to 8 x 8 (read from one word's bits) and
    wider or taller ones (the insertion sort): every open column once, in increasing landing-cell
    index ((h - 1 - height) * w + column, the original's cell order)."""
    w, h, length = shape
    game = TrilobiteGame(w, h, length)
    s = game.new_initial_state()
    k, arr = s.kernels, s.array
    legal = np.empty(w, dtype=np.int64)
    for c in columns:
        n = k.moves(arr, legal)
        if n == 0:
            break
        board = TrilobiteState(game, arr).board
        heights = (board != 0).sum(axis=0)
        cells = {x: (h - 1 - heights[x]) * w + x for x in range(w) if heights[x] < h}
        assert legal[:n].tolist() == sorted(cells, key=cells.get)
        k.push(arr, legal[c % n])
