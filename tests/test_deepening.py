"""The iterative-deepening loop shared by alpha-beta and expectiminimax (search/deepening.py),
driven by a scripted search on a fake clock: no wall time is read."""

from __future__ import annotations

import pytest

from tablegym.search.deepening import MAX_RETRIES, MIN_NODES, UNLIMITED, deepen


class FakeSearch:
    """Depth ``d`` needs ``need[d]`` nodes at ``speed`` nodes per second of the fake clock; an
    iteration given fewer stops when its budget is spent."""

    def __init__(self, need: dict[int, int], speed: float = 1000.0) -> None:
        self.need = need
        self.speed = speed
        self.now = 0.0
        self.calls: list[tuple[int, int]] = []

    def clock(self) -> float:
        return self.now

    def __call__(self, depth: int, budget: int) -> tuple[bool, int, str]:
        self.calls.append((depth, budget))
        nodes = min(self.need[depth], budget)
        self.now += nodes / self.speed
        return nodes == self.need[depth], nodes, f"move of depth {depth}"


def test_a_depth_budget_runs_every_depth():
    search = FakeSearch({1: 10, 2: 100, 3: 1000})
    run = deepen(search, depth=3, rate=1.0, clock=search.clock)
    assert search.calls == [(1, UNLIMITED), (2, UNLIMITED), (3, UNLIMITED)]
    assert (run.found, run.depth, run.nodes) == ("move of depth 3", 3, 1110)
    assert [(d, n) for d, n, _ in run.depths] == [(1, 10), (2, 110), (3, 1110)]
    assert run.seconds == pytest.approx(1.11)


def test_a_node_budget_keeps_the_last_completed_depth():
    search = FakeSearch({1: 10, 2: 100, 3: 1000})
    run = deepen(search, depth=3, node_limit=500, rate=1.0, clock=search.clock)
    assert search.calls == [(1, 500), (2, 490), (3, 390)]  # no retry: the nodes are spent
    assert (run.found, run.depth, run.nodes) == ("move of depth 2", 2, 500)


def test_a_time_budget_becomes_nodes_at_the_measured_speed():
    search = FakeSearch({1: 128, 2: 1024, 3: 4096, 4: 65536}, speed=1024.0)
    run = deepen(search, depth=9, time_limit=16.0, rate=8.0, clock=search.clock)
    # depth 1 gets the floor (16 s at the guessed 8 nodes/s is 128), then the speed is measured:
    # 1024 nodes/s times the 15.875, 14.875 and 10.875 s left
    assert search.calls == [(1, MIN_NODES), (2, 16256), (3, 15232), (4, 11136)]
    assert (run.found, run.depth, run.nodes) == ("move of depth 3", 3, 128 + 1024 + 4096 + 11136)
    assert [(d, n) for d, n, _ in run.depths] == [(1, 128), (2, 1152), (3, 5248)]
    assert run.seconds == 16.0  # no retry: half the time is gone


def test_an_iteration_cut_short_by_a_low_guess_is_tried_again():
    search = FakeSearch({1: 2000, 2: 100_000})
    run = deepen(search, depth=9, time_limit=10.0, rate=100.0, clock=search.clock)
    # 1000 nodes in 1 s: measured 1000 nodes/s, retried at twice that with 9 s left
    assert search.calls == [(1, 1000), (1, 18_000), (2, 7000)]
    assert (run.found, run.depth, run.nodes) == ("move of depth 1", 1, 1000 + 2000 + 7000)


def test_retries_stop_after_the_limit():
    calls = []

    def always_short(depth: int, budget: int) -> tuple[bool, int, None]:
        calls.append(budget)
        return False, 10, None  # out of nodes at once, no time spent

    run = deepen(always_short, depth=3, time_limit=10.0, rate=100.0, clock=lambda: 0.0)
    assert len(calls) == 1 + MAX_RETRIES and calls == sorted(calls)  # each try at a higher speed
    assert run.found is None and run.depth == 0 and run.nodes == 10 * (1 + MAX_RETRIES)


def test_no_retry_when_the_node_limit_was_the_budget():
    search = FakeSearch({1: 10, 2: 5000})
    run = deepen(search, depth=3, time_limit=10.0, node_limit=1000, rate=1e6, clock=search.clock)
    assert search.calls == [(1, 1000), (2, 990)]
    assert (run.found, run.depth) == ("move of depth 1", 1)


def test_no_iteration_starts_after_the_time_is_up():
    search = FakeSearch({1: 10})
    clock = iter([0.0, 20.0, 20.0]).__next__  # start, then the time is already spent
    run = deepen(search, depth=3, time_limit=10.0, rate=1.0, clock=clock)
    assert search.calls == [] and run.found is None and run.depth == 0 and run.nodes == 0
