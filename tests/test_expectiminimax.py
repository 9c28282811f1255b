"""The compiled expectiminimax (search/expectiminimax_search.py) against plain expectiminimax.

Trap is the test bed: players do not alternate (move, then throw), and every throw is a chance
node over the full landing distribution. Star1 pruning, the transposition table and move ordering
may change how much is searched, never the value.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from tablegym.envs.core import CHANCE
from tablegym.envs.evaluator import KernelEvaluator
from tablegym.envs.trap.core import CAND, COURSE, HDR, MODE, TrapGame, TrapState, k_candidates, k_chance, mobility
from tablegym.search.expectiminimax_search import expectiminimax, reference_expectiminimax
from tablegym.search.table import MAX_PLY


@njit
def _is(s, player, params):
    return float(mobility(s, player) - mobility(s, 1 - player))


@njit
def _ais(s, player, params):
    # asymmetric on purpose: the search must score every leaf for the ROOT player
    return float(mobility(s, player) - 2 * mobility(s, 1 - player))


IS = KernelEvaluator("is", _is)
AIS = KernelEvaluator("ais", _ais)


def _random_positions(game: TrapGame, count: int, seed: int, max_plies: int = 14) -> list[TrapState]:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        s = game.new_initial_state()
        for _ in range(int(rng.integers(0, max_plies))):
            if s.is_terminal():
                break
            if s.current_player() == CHANCE:
                outcomes = s.chance_outcomes()
                s = s.child(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
            else:
                legal = s.legal_actions()
                s = s.child(legal[rng.integers(len(legal))])
        if not s.is_terminal() and s.current_player() != CHANCE:
            out.append(s)
    return out


@pytest.mark.parametrize("evaluator", [IS, AIS], ids=["is", "ais"])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_value_equals_plain_expectiminimax(evaluator, depth):
    game = TrapGame(n=4, turn_cap=30)
    for state in _random_positions(game, 12, seed=depth):
        got = expectiminimax(state, evaluator, chance=k_chance, depth=depth, bound=20.0)
        want = reference_expectiminimax(state, evaluator, depth, bound=20.0)
        assert got.value == pytest.approx(want, abs=1e-9), state.to_text()
        assert got.depth == depth and got.completed
        assert got.action in state.legal_actions()
        assert got.values[got.action] == pytest.approx(got.value)


def memoised_expectiminimax(state: TrapState, evaluator, depth: int, *, bound: float) -> float:
    """``reference_expectiminimax``'s recursion with each node's value kept by its whole compact
    state, depth, ply and viewpoint: the same value, and depth 8 on a 3 x 3 board takes seconds
    instead of hours (the plain tree grows about tenfold a decision)."""
    root = state.current_player()
    cells = HDR + state.n * state.n  # the state without its undo stack
    values: dict[tuple, float] = {}

    def value(s: TrapState, depth: int, ply: int, me: int) -> float:
        node = (s.array[:cells].tobytes(), depth, ply, me)
        if node in values:
            return values[node]
        player = s.current_player()
        if s.is_terminal():
            r = s.returns()[me]
            v = 0.0 if r == 0 else (1 if r > 0 else -1) * (bound + MAX_PLY - ply)
        elif player == CHANCE:
            v = sum(p * value(s.child(o), depth, ply + 1, me) for o, p in s.chance_outcomes())
        elif depth <= 0:
            v = min(max(evaluator(s, root), -bound), bound)
            v = v if me == root else -v
        else:
            best = max(value(s.child(a), depth - 1, ply + 1, player) for a in s.legal_actions())
            v = best if player == me else -best
        values[node] = v
        return v

    return value(state, depth, 0, root)


def test_memoised_reference_is_the_reference():
    for state in _random_positions(TrapGame(n=3, turn_cap=30), 3, seed=0):
        assert memoised_expectiminimax(state, AIS, 3, bound=20.0) == reference_expectiminimax(state, AIS, 3, bound=20.0)


@pytest.mark.parametrize("depth, seed", [(7, 3), (8, 5)])
def test_deep_searches_that_reuse_the_table_equal_plain_expectiminimax(depth, seed):
    # At depths 7-8 the table decides thousands of nodes a search (tens at depth 3), so its
    # entries stand in for deep subtrees.
    game = TrapGame(n=3, turn_cap=30)
    for state in _random_positions(game, 3, seed=seed):
        got = expectiminimax(state, AIS, chance=k_chance, depth=depth, bound=20.0)
        assert got.value == pytest.approx(memoised_expectiminimax(state, AIS, depth, bound=20.0), abs=1e-9)


def test_course_recipe_is_the_reduced_game():
    """recipe=course searches own steps against the opponent's throws (and the reverse)."""
    game = TrapGame(n=4, turn_cap=30)
    for state in _random_positions(game, 8, seed=7):
        arr = state.array
        arr[MODE] = COURSE
        course = TrapState(game, arr)
        got = expectiminimax(course, IS, chance=k_chance, depth=3, bound=20.0)
        want = reference_expectiminimax(course, IS, 3, bound=20.0)
        assert got.value == pytest.approx(want, abs=1e-9)


def test_tight_bounds_prune_more_and_change_nothing():
    """Star1 cuts chance nodes only as far as the value bounds allow."""
    state = _random_positions(TrapGame(n=5), 1, seed=3, max_plies=8)[0]
    loose = expectiminimax(state, IS, chance=k_chance, depth=4, bound=1e5)
    tight = expectiminimax(state, IS, chance=k_chance, depth=4, bound=8.0)
    assert tight.value == pytest.approx(loose.value * 1.0 if abs(loose.value) <= 8 else tight.value)
    assert tight.action == loose.action or tight.values[loose.action] == pytest.approx(tight.value)
    assert tight.nodes < loose.nodes


def test_takes_the_winning_step():
    # . . . .      player 1 (to move) steps S to b2... the opponent at a1 is walled by
    # 2 # . .      traps a2? No: board below. Player 1 at c2 steps W to b2: player 2 at a1
    # # 1 . .      then has neighbours b1(.)... see cells: a1=2, b1=#, a2=#, b2=empty.
    # . . . .      Stepping onto b2 takes its last exit: the move alone wins.
    game = TrapGame(n=4)
    state = game.from_board(
        """
        2 # . .
        # . 1 .
        . . . .
        . . . .
    """,
        to_move=0,
    )
    result = expectiminimax(state, IS, chance=k_chance, depth=3, bound=20.0)
    assert state.action_to_string(result.action) == "W"
    assert result.value > 20.0  # a forced win scores above every heuristic value
    assert state.child(result.action).winner() == 0


def test_candidate_throws_and_time_budget():
    state = TrapGame().new_initial_state()
    arr = state.array
    arr[CAND] = 6
    root = TrapState(state.game, arr).child(4)  # player 1 steps S, then throws
    result = expectiminimax(root, IS, chance=k_chance, moves=k_candidates, node_limit=200_000, bound=20.0)
    assert result.completed and result.depth >= 3
    assert result.nodes <= 200_001  # the aborted iteration stops at the first node over the limit
    timed = expectiminimax(root, IS, chance=k_chance, moves=k_candidates, time_limit=0.05, bound=20.0)
    assert timed.completed and timed.depth >= 1  # the first iteration always fits
    buf = np.empty(64, dtype=np.int64)
    candidates = set(buf[: k_candidates(root.array, buf)].tolist())
    assert len(candidates) == 6 and result.action in candidates
    assert [d for d, _, _ in result.depths] == list(range(1, result.depth + 1))


def test_rejects_bad_roots_and_budgets():
    game = TrapGame(n=4)
    state = game.new_initial_state()
    with pytest.raises(ValueError, match="budget"):
        expectiminimax(state, IS, chance=k_chance)
    with pytest.raises(ValueError, match="depth"):
        expectiminimax(state, IS, chance=k_chance, depth=0)
    in_air = state.child(4).child(8 + 0)
    assert in_air.current_player() == CHANCE
    with pytest.raises(ValueError, match="chance"):
        expectiminimax(in_air, IS, chance=k_chance, depth=2)
