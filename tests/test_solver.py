"""The exact solver: Sim's known values, the Trilobite puzzle's ratings, a brute-force cross-check."""

from __future__ import annotations

import numpy as np
import pytest

from tablegym.envs.core import State
from tablegym.envs.sim.canonical import canonical_key, decode_key, k_canonical
from tablegym.envs.sim.core import SimGame
from tablegym.envs.trilobite.core import TrilobiteGame
from tablegym.experiments.sim.bench import bench_sim_solve
from tablegym.models.sim.agents import solve_sim
from tablegym.search.solver import (
    SolveLimitError,
    SolveProgress,
    Solver,
    SolveResult,
    capacity,
    default_max_bytes,
    estimate_tree_size,
    limits,
    solve,
    solved_values,
)


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
    assert out["value"] == 0 and out["positions_stored"] > 0 and out["median_seconds"] >= 0  # a coarse clock can read 0


# ------------------------------------------------------------------ bounds and progress


def test_entry_limit_stops_the_solve_and_says_how_much_was_stored():
    state = SimGame(5).new_initial_state()  # labelled keys: more positions than the limit
    solver = Solver(state.kernels, max_entries=50)
    with pytest.raises(SolveLimitError, match=r"max_entries=50: 50 positions stored, [\d,]+ nodes searched") as err:
        solver.solve(state)
    assert (err.value.positions_stored, err.value.by_memory) == (50, False) and err.value.nodes >= 50
    assert solver.positions_stored == 50


def test_memory_limit_stops_the_table_growing():
    state = TrilobiteGame(width=4, height=4, win_length=4).new_initial_state()  # 182,828 positions
    solver = Solver(state.kernels, max_bytes=100_000, table_bits=10)
    with pytest.raises(SolveLimitError, match="max_bytes=100,000") as err:
        solver.solve(state)
    assert err.value.by_memory and err.value.positions_stored == capacity(100_000, table_bits=10)
    # 4,096 slots (36,864 bytes) hold 3,072 positions; growing to 8,192 would hold 12,288 slots
    # (110,592 bytes) at once
    assert solver.table_keys.nbytes + solver.table_vals.nbytes == 36_864 and err.value.positions_stored == 3_072


def test_a_bound_that_is_not_reached_changes_nothing():
    state = SimGame(6).new_initial_state()
    free = solve(state, key_fn=k_canonical)
    bounded = solve(state, key_fn=k_canonical, max_entries=free.positions_stored, max_bytes=1 << 20)
    assert (bounded.value, bounded.best_action, bounded.positions_stored, bounded.nodes) == (
        free.value,
        free.best_action,
        free.positions_stored,
        free.nodes,
    )


def test_limits_reach_a_games_own_solver():
    with limits(max_entries=10):
        with pytest.raises(SolveLimitError, match="max_entries=10: 10 positions stored"):
            solve_sim(6)
    assert solve_sim(6).value == -1  # the block's defaults are gone after it


def test_progress_reports_by_the_injected_clock_and_leaves_the_result_alone():
    """A fake clock one second per reading: every pause (each 100 nodes) is a report."""
    state = TrilobiteGame(width=4, height=4, win_length=3).new_initial_state()
    quiet = solve(state)
    reports: list[SolveProgress] = []
    ticks = iter(range(10_000))
    res = Solver(
        state.kernels, progress=reports.append, clock=lambda: float(next(ticks)), check_nodes=100, progress_seconds=1.0
    ).solve(state)
    assert (res.value, res.best_action, res.positions_stored) == (quiet.value, quiet.best_action, quiet.positions_stored)
    assert res.nodes >= quiet.nodes  # a pause re-enters the path from the root
    assert len(reports) >= quiet.nodes // 100 - 1
    assert [r.seconds for r in reports] == [float(i) for i in range(1, len(reports) + 1)]
    assert all(a.nodes < b.nodes and a.positions_stored <= b.positions_stored for a, b in zip(reports, reports[1:]))
    assert reports[0].nodes_per_second == reports[0].nodes


def test_progress_waits_for_its_interval():
    state = TrilobiteGame(width=4, height=4, win_length=3).new_initial_state()
    reports: list[SolveProgress] = []
    ticks = iter(range(10_000))
    Solver(state.kernels, progress=reports.append, clock=lambda: float(next(ticks)), check_nodes=100, progress_seconds=3.0).solve(
        state
    )
    assert [r.seconds for r in reports] == [3.0 * i for i in range(1, len(reports) + 1)] and reports


def test_tree_estimate_tells_a_puzzle_from_a_hopeless_board():
    tiny = TrilobiteGame.tiny().new_initial_state()
    assert solve(tiny).positions_stored <= estimate_tree_size(tiny) < 10_000
    assert estimate_tree_size(TrilobiteGame().new_initial_state()) > 1e25  # 8x7
    assert estimate_tree_size(tiny, seed=3) == estimate_tree_size(tiny, seed=3)


def test_default_bound_is_half_the_free_memory():
    assert 0 < default_max_bytes() and capacity(default_max_bytes()) > 1_000_000
