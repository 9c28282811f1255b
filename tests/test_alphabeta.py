"""Alpha-beta: the compiled kernel, the Python reference and plain minimax agree exactly."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablegym.envs.trilobite.core import TrilobiteGame
from tablegym.envs.trilobite.heuristics import EVALUATORS, WIN_LOSS
from tablegym.search.alphabeta_search import AlphaBetaTables, alphabeta, root_search
from tablegym.search.table import EXACT, LOWER, UPPER


def minimax(state, evaluator, depth, root, ply=0):
    """Textbook depth-limited minimax, scored for ``root`` (the original AI's formulation)."""
    if depth == 0 or state.is_terminal():
        return evaluator(state, root)
    values = [minimax(state.child(a), evaluator, depth - 1, root, ply + 1) for a in state.legal_actions()]
    return max(values) if ply % 2 == 0 else min(values)


def first_maximal(state, evaluator, depth):
    root = state.current_player()
    values = [minimax(state.child(a), evaluator, depth - 1, root, 1) for a in state.legal_actions()]
    best = max(values)
    return state.legal_actions()[values.index(best)], best


def random_position(seed, plies, game=None):
    game = game or TrilobiteGame()
    rng = np.random.default_rng(seed)
    s = game.new_initial_state()
    for _ in range(plies):
        nxt = s.child(int(rng.choice(s.legal_actions())))
        if nxt.is_terminal():
            break
        s = nxt
    return s


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 30), st.sampled_from(sorted(EVALUATORS)))
def test_kernel_python_and_minimax_agree(seed, plies, name):
    s = random_position(seed, plies)
    ev = EVALUATORS[name]
    fast = alphabeta(s, ev, depth=3)
    slow = alphabeta(s, ev, depth=3, compiled=False)
    move, value = first_maximal(s, ev, 3)
    assert (fast.action, fast.value) == (slow.action, slow.value) == (move, value)


@pytest.mark.parametrize("depth", [4, 5])
def test_deeper_searches_still_match_minimax(depth):
    s = random_position(3, 10, TrilobiteGame(5, 4, 3))
    for ev in EVALUATORS.values():
        r = alphabeta(s, ev, depth=depth)
        assert (r.action, r.value) == first_maximal(s, ev, depth)
        assert r.depth == depth and r.nodes > 0


def full_window_values(state, evaluator, depth):
    """{(key, depth left): negamax value} of every node of the searches from ``state`` to depths
    1..``depth``, by plain minimax (no window, no pruning), memoised by the position's key: the
    value a search with a full window gives each node. A key fixes the ply, so its sign too."""
    root = state.current_player()
    values = {}

    def value(s, d, ply):
        if d == 0 or s.is_terminal():
            v = evaluator(s, root)
            return v if ply % 2 == 0 else -v
        node = (s.key(), d)
        if node not in values:
            values[node] = max(-value(s.child(a), d - 1, ply + 1) for a in s.legal_actions())
        return values[node]

    for d in range(1, depth + 1):
        value(state, d, 0)
    return values


def deepened_tables(state, evaluator, depth):
    """The compiled search's tables after iterations 1..``depth``, and the nodes the table decided
    in the last one."""
    k, num_actions = state.kernels, state.game.spec.num_actions
    tables = AlphaBetaTables(num_actions, tt_bits=16)
    for d in range(1, depth + 1):
        counters = np.zeros(3, dtype=np.int64)
        root_search(
            state.array,
            d,
            k.moves,
            k.push,
            k.pop,
            k.to_move,
            k.outcome,
            k.key,
            evaluator.kernel,
            evaluator.params,
            *tables.tt,
            tables.killers,
            tables.history,
            tables.bufs,
            tables.scores,
            tables.pv,
            tables.pv_len,
            counters,
            2**62,
            np.zeros(num_actions),
        )
    return tables, int(counters[2])


SMALL = TrilobiteGame(4, 4, 3)
"""4 x 4, three in a row: small enough for exact values at depth 8, where two move orders often
reach one position with the same depth left, so the transposition table decides nodes."""


@pytest.mark.parametrize("seed", range(4))
def test_deep_searches_that_reuse_the_table_match_the_reference(seed):
    # Depths 7-8 are where table entries stand in for other subtrees on this board: a fail-high
    # stored as an exact value changes seed 3's root value at depth 8 and none at depths up to 6.
    s = random_position(seed, 3, SMALL)
    ev = EVALUATORS["advanced"]
    truth = full_window_values(s, ev, 8)
    for depth in (7, 8):
        fast = alphabeta(s, ev, depth=depth)
        slow = alphabeta(s, ev, depth=depth, compiled=False)
        assert (fast.action, fast.value) == (slow.action, slow.value)
        assert fast.value == truth[(s.key(), depth)]


@pytest.mark.parametrize("seed", [0, 2, 3])  # seed 1's position: no transposition at depth 8
def test_every_table_entry_holds_what_a_full_window_search_gives(seed):
    # An exact entry answers any window later, so it must be the node's value; a bound must bound it.
    s = random_position(seed, 3, SMALL)
    ev = EVALUATORS["advanced"]
    tables, decided = deepened_tables(s, ev, 8)
    truth = full_window_values(s, ev, 8)
    assert decided > 0  # the last iteration took values from the table
    entries = np.flatnonzero(tables.depth > 0)
    flags = {EXACT: [], LOWER: [], UPPER: []}
    for slot in entries:
        true = truth[(int(tables.key[slot]), int(tables.depth[slot]))]
        flags[int(tables.flag[slot])].append((float(tables.val[slot]), true))
    assert [(stored, true) for stored, true in flags[EXACT] if stored != true] == []
    assert [(stored, true) for stored, true in flags[LOWER] if not true >= stored] == []
    assert [(stored, true) for stored, true in flags[UPPER] if not true <= stored] == []
    assert all(len(f) > 0 for f in flags.values())  # each kind of entry was checked


def test_principal_variation_is_legal_and_starts_with_the_move():
    s = random_position(5, 6)
    r = alphabeta(s, EVALUATORS["advanced"], depth=6)
    assert r.pv[0] == r.action
    t = s
    for a in r.pv:
        assert a in t.legal_actions()
        t = t.child(a)


def test_takes_a_win_in_one_and_blocks_a_loss_in_one():
    #   row 6: X X X . O O . .   X to move wins at column 3
    g = TrilobiteGame()
    s = g.new_initial_state()
    for c in (0, 4, 1, 5, 2, 7):
        s = s.child(c)
    assert alphabeta(s, WIN_LOSS, depth=1).action == 3
    #   O threatens 4,5,6 + 7: after X plays elsewhere O must be blocked at column 6
    s = g.new_initial_state()
    for c in (0, 4, 0, 5, 1, 7):
        s = s.child(c)
    r = alphabeta(s, WIN_LOSS, depth=2)
    assert r.action == 6 and r.value == 0.0


def test_node_and_time_budgets_return_a_completed_iteration():
    s = random_position(1, 4)
    r = alphabeta(s, EVALUATORS["advanced"], depth=20, node_limit=3000)
    assert r.completed and 1 <= r.depth < 20 and r.action in s.legal_actions()
    r = alphabeta(s, EVALUATORS["advanced"], time_limit=0.05)
    assert r.completed and r.depth >= 1 and r.action in s.legal_actions()


def test_bad_budgets_and_finished_games_are_rejected():
    s = TrilobiteGame.tiny().new_initial_state()
    with pytest.raises(ValueError, match="depth"):
        alphabeta(s, WIN_LOSS, depth=0)
    with pytest.raises(ValueError, match="budget"):
        alphabeta(s, WIN_LOSS)
    done = s
    for c in (0, 1, 0, 1, 0):
        done = done.child(c)
    with pytest.raises(ValueError, match="finished"):
        alphabeta(done, WIN_LOSS, depth=3)
