"""pytest-benchmark cases for the hot paths (timed only with ``--benchmark-enable``).

By default (``--benchmark-disable`` in pyproject) each runs once as a plain test, checking the
benchmarked call still returns the right thing; ``make bench`` and ``tablegym bench`` report
medians and ratios.
"""

from tablegym.envs.trilobite.core import TrilobiteGame
from tablegym.envs.trilobite.heuristics import ADVANCED
from tablegym.models.sim.agents import solve_sim
from tablegym.search.alphabeta_search import alphabeta


def test_bench_alphabeta_trilobite_depth7(benchmark):
    start = TrilobiteGame().new_initial_state()
    alphabeta(start, ADVANCED, depth=2)  # load the compiled kernels outside the timing
    result = benchmark(alphabeta, start, ADVANCED, depth=7)
    assert result.depth == 7 and result.action in start.legal_actions()


def test_bench_solve_k6(benchmark):
    solve_sim(6)
    result = benchmark(solve_sim, 6)
    assert result.value == -1


def test_bench_trilobite_random_playout(benchmark):
    import numpy as np

    game = TrilobiteGame()

    def playout():
        rng = np.random.default_rng(0)
        s = game.new_initial_state()
        while not s.is_terminal():
            s = s.child(int(rng.choice(s.legal_actions())))
        return s

    assert benchmark(playout).is_terminal()
