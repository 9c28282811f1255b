"""The exact solver: Sim's known values, the Trilobite puzzle's ratings, a brute-force cross-check."""

from __future__ import annotations

import numpy as np
import pytest

from tablegym.envs.core import State
from tablegym.envs.sim.canonical import canonical_key, decode_key, k_canonical
from tablegym.envs.sim.core import SimGame
from tablegym.envs.sim.heuristics import bench_sim_solve, solve_sim
from tablegym.envs.trilobite.core import TrilobiteGame
from tablegym.search.solver import Solver, SolveResult, solve, solved_values


def brute_force(state: State, memo: dict) -> int:
    """Plain negamax over the State API: +1/0/-1 for the player to move (who must have a move)."""
    k = state.key()
    if k not in memo:
        me = state.current_player()
        best = -1
        for a in state.legal_actions():
            child = state.child(a)
            best = max(best, int(child.returns()[me]) if child.is_terminal() else -brute_force(child, memo))
        memo[k] = best
    return memo[k]


def action_values(state: State, memo: dict) -> dict[int, int]:
    """Brute-force value of each legal action for the player to move."""
    me = state.current_player()
    out = {}
    for a in state.legal_actions():
        child = state.child(a)
        out[a] = int(child.returns()[me]) if child.is_terminal() else -brute_force(child, memo)
    return out


def test_k6_is_a_second_player_win():
    res = solve_sim(6)
    assert isinstance(res, SolveResult)
    assert res.value == -1 and res.best_action in range(15)
    assert 0 < res.positions_stored <= res.nodes


@pytest.mark.parametrize("n", [3, 4, 5])
def test_small_boards_are_draws(n):
    assert solve_sim(n).value == 0


def test_labelled_and_canonical_keys_agree():
    """Without canonical keys the solver stores Cassis's 112,096 boards; the value is the same."""
    state = SimGame(6).new_initial_state()
    plain = solve(state)
    canon = solve(state, key_fn=k_canonical)
    assert plain.value == canon.value == -1
    assert plain.positions_stored == 112_096
    assert canon.positions_stored < 1_568  # below the Cassis normal form's count


@pytest.mark.parametrize("n", [5, 6])
def test_stored_positions_are_pairwise_non_isomorphic(n):
    """Every stored key is the canonical key of the board it decodes to: one entry per class."""
    solver = Solver(SimGame(n).new_initial_state().kernels, key_fn=k_canonical)
    solver.solve(SimGame(n).new_initial_state())
    keys, values = solver.items()
    assert len(keys) == solver.positions_stored == len(set(keys.tolist()))
    game = SimGame(n)
    for key in keys.tolist():
        assert canonical_key(game.from_colours(decode_key(key, n))) == key
    assert set(values.tolist()) <= {-1, 0, 1}


@pytest.mark.parametrize("n", [3, 4, 5])
def test_solver_agrees_with_brute_force_on_sim(n):
    rng = np.random.default_rng(n)
    memo: dict = {}
    state = SimGame(n).new_initial_state()
    positions = [state]
    for _ in range(20):  # also a few random positions along the way
        s = state
        for _ in range(rng.integers(0, s.game.num_edges)):
            if s.is_terminal():
                break
            s = s.child(int(rng.choice(s.legal_actions())))
        positions.append(s)
    solver = Solver(state.kernels, key_fn=k_canonical)
    for s in positions:
        if s.is_terminal():  # the player to move there is the winner (the loser just moved) or a draw
            assert solver.solve(s).value == (0 if s.winner() is None else 1)
            continue
        assert solver.solve(s).value == brute_force(s, memo)
        assert solved_values(s, key_fn=k_canonical) == action_values(s, memo)


def test_solver_agrees_with_brute_force_on_trilobite():
    state = TrilobiteGame.tiny().new_initial_state()
    memo: dict = {}
    assert solve(state).value == brute_force(state, memo) == 0
    for a in state.legal_actions():
        child = state.child(a)
        assert solved_values(child) == action_values(child, memo)


def test_trilobite_tiny_ratings():
    """The 3x3 three-in-a-row puzzle is a draw; the spec's ratings, first player's point of view."""
    state = TrilobiteGame.tiny().new_initial_state()
    res = solve(state)
    assert res.value == 0
    assert solved_values(state) == {0: 0, 1: 0, 2: 0}
    after = state.child(0)  # the chip lands in cell 6 (bottom left)
    assert after.last_cell == 6 and after.legal_actions() == [0, 1, 2]  # landing cells 3, 7, 8
    assert solved_values(after, player=0) == {0: 1, 1: 1, 2: 0}
    assert solved_values(after) == {0: -1, 1: -1, 2: 0}  # the second player's own view


def test_terminal_positions_and_table_growth():
    s = SimGame(3).new_initial_state().child(0).child(1).child(2)
    assert s.is_terminal()
    res = solve(s)
    assert (res.value, res.best_action, res.positions_stored, res.nodes) == (0, -1, 0, 0)
    small = Solver(SimGame(5).new_initial_state().kernels, table_bits=4)  # 16 slots, grows
    res = small.solve(SimGame(5).new_initial_state())
    assert res.value == 0 and res.positions_stored == solve(SimGame(5).new_initial_state()).positions_stored
    assert small.table_keys.shape[0] >= 4 * res.positions_stored // 3


def test_bench_reports_the_solve():
    out = bench_sim_solve(5, repeats=2)
    assert out["value"] == 0 and out["positions_stored"] > 0 and out["median_seconds"] > 0
