"""One learned evaluator, many searches: threads that search at once with the same evaluator get
the results each gets alone, and a pickled evaluator carries its weights, never what its
searches wrote (the scratch and value cache of tablegym.models.netkernel)."""

from __future__ import annotations

import pickle
import threading

import numpy as np
import pytest

from tablegym.envs.trap.core import TrapGame
from tablegym.envs.trilobite.core import TrilobiteGame
from tablegym.models.learned import load_evaluator
from tablegym.models.trap.learned import evaluator_of
from tablegym.search import alphabeta, expectiminimax
from tests.test_alphabeta import random_position
from tests.test_expectiminimax import _random_positions

CASES = {
    "trilobite": (TrilobiteGame, alphabeta, 5, lambda: [random_position(seed, 4 + 2 * seed) for seed in range(4)]),
    "trap": (TrapGame, expectiminimax, 3, lambda: _random_positions(TrapGame(), 3, seed=4)),
}


def searched(search, positions, evaluator, depth):
    """(move, value, nodes) of each search, in order."""
    return [(r.action, r.value, r.nodes) for r in (search(s, evaluator, depth=depth) for s in positions)]


@pytest.mark.parametrize("game_name", sorted(CASES))
def test_two_threads_sharing_an_evaluator_get_the_results_of_one_alone(game_name):
    make, search, depth, positions = CASES[game_name]
    positions = positions()
    alone = searched(search, positions, load_evaluator(make()), depth)
    shared = load_evaluator(make())
    weights = shared.weights.copy()
    start = threading.Barrier(2)
    results: dict[int, list] = {}

    def run(i: int) -> None:
        start.wait()
        order = positions if i == 0 else positions[::-1]  # different leaves in each thread at the same time
        got = [searched(search, order, shared, depth) for _ in range(3)]
        results[i] = [row if i == 0 else row[::-1] for row in got]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[0] == results[1] == [alone] * 3
    assert np.array_equal(shared.weights, weights)  # no search wrote into the weights


@pytest.mark.parametrize("game_name", sorted(CASES))
def test_a_pickled_evaluator_carries_no_scratch(game_name):
    make, search, depth, positions = CASES[game_name]
    positions = positions()
    ev = load_evaluator(make())
    fresh = pickle.dumps(ev)
    before = searched(search, positions, ev, depth)  # fills this thread's value cache and kept first layers
    used = pickle.dumps(ev)
    assert len(used) == len(fresh) and used == fresh
    copy = pickle.loads(used)
    for s in positions:
        for player in (0, 1):
            assert copy.evaluate(s, player) == ev.evaluate(s, player)
    assert searched(search, positions, copy, depth) == before


def test_a_worker_evaluator_pickles_its_weights_alone():
    """Trap's evaluator for worker processes (``evaluator_of``): what is sent is the weights."""
    ev = evaluator_of(load_evaluator(TrapGame()).params)
    fresh = pickle.dumps(ev)
    searched(expectiminimax, [TrapGame().new_initial_state()], ev, 2)
    assert pickle.dumps(ev) == fresh
