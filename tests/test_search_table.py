"""The transposition table and ordering tables shared by alpha-beta and expectiminimax
(search/table.py), on hand-made entries."""

from __future__ import annotations

import numpy as np

from tablegym.search.table import EXACT, LOWER, UPPER, Tables, order_moves, probe, store, store_move, stored_move

INF = float("inf")


def small_tables() -> Tables:
    """Eight slots: keys 13 and 21 share slot 5 (13 & 7 == 21 & 7 == 5)."""
    return Tables(num_actions=4, tt_bits=3)


def test_a_new_table_is_empty():
    t = small_tables()
    assert len(t.key) == 8 and len(t.history) == 4 and t.bufs.shape == (128, 4)
    slot, move, cut, _ = probe(*t.tt, 13, 3, -INF, INF)
    assert (slot, move, cut) == (5, -1, False)
    assert stored_move(t.key, t.move, 13) == (5, -1)


def test_an_exact_entry_decides_its_own_depth_only():
    t = small_tables()
    store(*t.tt, 5, 13, 3, 2.0, 1, 0.0, 5.0)  # 0 < 2 < 5: exact
    assert t.flag[5] == EXACT and t.depth[5] == 3
    assert probe(*t.tt, 13, 3, -INF, INF) == (5, 1, True, 2.0)
    assert probe(*t.tt, 13, 3, 2.5, 3.0) == (5, 1, True, 2.0)
    slot, move, cut, _ = probe(*t.tt, 13, 2, -INF, INF)  # another depth: the move only
    assert (slot, move, cut) == (5, 1, False)


def test_bounds_decide_only_outside_the_window():
    t = small_tables()
    store(*t.tt, 5, 13, 2, 6.0, 3, 0.0, 5.0)  # failed high: at least 6
    assert t.flag[5] == LOWER
    assert probe(*t.tt, 13, 2, 0.0, 6.0)[2]  # 6 >= beta
    assert not probe(*t.tt, 13, 2, 0.0, 7.0)[2]
    store(*t.tt, 5, 13, 2, -1.0, 0, 0.0, 5.0)  # failed low: at most -1
    assert t.flag[5] == UPPER
    assert probe(*t.tt, 13, 2, -1.0, 5.0)[2]  # -1 <= alpha
    assert not probe(*t.tt, 13, 2, -2.0, 5.0)[2]


def test_always_replace_the_newest_takes_the_slot():
    t = small_tables()
    store(*t.tt, 5, 13, 9, 2.0, 1, -INF, INF)
    store(*t.tt, 5, 21, 1, -4.0, 2, -INF, INF)  # shallower, same slot: still replaces
    assert probe(*t.tt, 13, 9, -INF, INF)[1:3] == (-1, False)
    assert probe(*t.tt, 21, 1, -INF, INF) == (5, 2, True, -4.0)


def test_a_stored_move_orders_but_never_decides():
    t = small_tables()
    store(*t.tt, 5, 13, 3, 2.0, 1, -INF, INF)
    store_move(t.key, t.depth, t.move, 5, 13, 2)
    assert stored_move(t.key, t.move, 13) == (5, 2)
    for depth in (1, 3):  # searches probe only with depth left
        assert probe(*t.tt, 13, depth, -INF, INF)[1:3] == (2, False)


def test_moves_are_ordered_table_move_killers_then_history():
    history = np.array([0.0, 5.0, 1.0, 5.0, 9.0, 0.0])
    buf = np.arange(6, dtype=np.int64)
    order_moves(buf, 6, 2, 5, 0, history, np.zeros(6))
    assert buf.tolist() == [2, 5, 0, 4, 1, 3]  # history ties (1, 3) keep generation order
    buf = np.arange(6, dtype=np.int64)
    order_moves(buf, 3, -1, -1, -1, history, np.zeros(6))  # only the first n
    assert buf.tolist() == [1, 2, 0, 3, 4, 5]


def test_aging_halves_history_and_keeps_the_entries():
    t = small_tables()
    t.history[:] = [8.0, 2.0, 0.0, 1.0]
    store(*t.tt, 5, 13, 3, 2.0, 1, -INF, INF)
    t.age()
    assert t.history.tolist() == [4.0, 1.0, 0.0, 0.5]
    assert probe(*t.tt, 13, 3, -INF, INF) == (5, 1, True, 2.0)
