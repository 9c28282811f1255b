"""Threesus's evaluators: hand-worked boards, and the table-driven kernels against a plain,
cell-by-cell reading of the spec."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tablegym.envs.threes.board import board_from_ranks
from tablegym.envs.threes.heuristics import EVALUATORS, openness, openness_matthew


def ranks(rows):
    """Card values drawn as rows -> ranks."""
    from tablegym.envs.threes.board import value_rank

    return [[value_rank(v) for v in row] for row in rows]


def test_openness_matthew_by_hand():
    #  .  .  .  .     14 empty cells: 14 x 3 = 42; the 1 and the 2 can merge: +2 each -> 46
    #  .  .  .  .
    #  .  .  .  .
    #  1  2  .  .
    a = board_from_ranks(ranks([[0] * 4, [0] * 4, [0] * 4, [1, 2, 0, 0]]))
    assert openness_matthew(a) == 46
    assert openness(a) == 14 * 2 + 1 + 1
    # 48 24  .  .    13 empty: 39. 48 (highest) in a corner: +3 +3. 24: next to its double +2,
    # 12  .  .  .    next to the highest +1, on the top edge +1. 12: its first neighbour of
    #  .  .  .  .    rank 24 (left, right, up, down) - none - so no chain bonus. Total 49.
    #  .  .  .  .
    b = board_from_ranks(ranks([[48, 24, 0, 0], [12, 0, 0, 0], [0] * 4, [0] * 4]))
    assert openness_matthew(b) == 39 + 6 + 4
    assert openness(b) == 26 + 1
    #  3  6  3  .    13 empty: 39. The first 3: trapped between the wall and the 6 (-5) but
    #  .  .  .  .    next to its double (+2); the second 3 next to its double (+2). The
    #  .  .  .  .    highest card is 6 (rank 4): no placement terms. Total 38.
    #  .  .  .  .
    c = board_from_ranks(ranks([[3, 6, 3, 0], [0] * 4, [0] * 4, [0] * 4]))
    assert openness_matthew(c) == 38
    assert openness(c) == 26 + 0 + 1


def test_chain_bonus_follows_the_first_matching_neighbour():
    # 96 48 24 .   24 is next to 48 (rank h-1), which is next to 96: +1 for the chain.
    #  .  .  .  .
    #  .  .  .  .
    #  .  .  .  .
    board = board_from_ranks(ranks([[96, 48, 24, 0], [0] * 4, [0] * 4, [0] * 4]))
    no_chain = board_from_ranks(ranks([[96, 0, 24, 48], [0] * 4, [0] * 4, [0] * 4]))
    assert reference(board, matthew=True) == openness_matthew(board)
    assert reference(no_chain, matthew=True) == openness_matthew(no_chain)


# ------------------------------------------------------------------ a plain reading of the spec


def at(g, x, y):
    return g[y][x] if 0 <= x < 4 and 0 <= y < 4 else 0


def mergeable(a, b):
    return a > 0 and b > 0 and (a + b == 3 or (a == b and a >= 3))


def neighbours(x, y):
    return [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)]  # left, right, up, down


def reference(board, matthew):
    g = [[(board >> (4 * (4 * y + x))) & 0xF for x in range(4)] for y in range(4)]
    empty_w, merge_w, trap_w, double_w = (3, 2, 5, 2) if matthew else (2, 1, 1, 1)
    h = max(max(row) for row in g)
    total = 0
    for y in range(4):
        for x in range(4):
            own = g[y][x]
            if own == 0:
                total += empty_w
                continue
            total += merge_w * sum(mergeable(own, at(g, nx, ny)) for nx, ny in neighbours(x, y))
            left, right, up, down = (at(g, nx, ny) for nx, ny in neighbours(x, y))
            if (x == 0 or (left >= 3 and own < left)) and (x == 3 or (right >= 3 and own < right)):
                total -= trap_w
            if (y == 0 or (up >= 3 and own < up)) and (y == 3 or (down >= 3 and own < down)):
                total -= trap_w
            if own >= 3 and any(at(g, nx, ny) == own + 1 for nx, ny in neighbours(x, y)):
                total += double_w
            if not matthew or h <= 4:
                continue
            edges = (x in (0, 3)) + (y in (0, 3))
            if own == h:
                total += 3 * edges
            elif own == h - 1 and any(at(g, nx, ny) == h for nx, ny in neighbours(x, y)):
                total += 1 + edges
            elif own == h - 2:
                first = next(((nx, ny) for nx, ny in neighbours(x, y) if at(g, nx, ny) == h - 1), None)
                if first and any(at(g, nx, ny) == h for nx, ny in neighbours(*first)):
                    total += 1
    return total


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 14), min_size=16, max_size=16))
def test_tables_match_the_plain_reading_on_random_boards(cells):
    board = board_from_ranks(cells)
    assert openness_matthew(board) == reference(board, matthew=True)
    assert openness(board) == reference(board, matthew=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]), min_size=16, max_size=16))
def test_tables_match_on_game_like_boards(cells):
    board = board_from_ranks(cells)
    assert openness_matthew(board) == reference(board, matthew=True)


def test_evaluator_objects_and_terminal_penalty():
    from tablegym.envs.threes.heuristics import BoardEvaluator
    from tests.test_threes import board_state

    s = board_state([[1, 2, 0, 0]] + [[0] * 4] * 3)
    assert EVALUATORS["openness-matthew"](s, 0) == openness_matthew(s.board)
    full = board_state([[3, 4, 3, 4], [4, 3, 4, 3], [3, 4, 3, 4], [4, 3, 4, 3]]).child(64 + 1)
    assert full.is_terminal()
    assert BoardEvaluator("openness-matthew", terminal_penalty=100)(full, 0) == openness_matthew(full.board) - 100
    assert np.isfinite(EVALUATORS["openness"](full, 0))
