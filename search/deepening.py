"""Iterative deepening within a depth, node and time budget: the loop alpha-beta and
expectiminimax share.

Compiled code cannot read the clock, so a time budget becomes a node budget per iteration,
from the speed measured so far (the caller's guess before the first iteration). The move of
the deepest COMPLETED iteration is the answer; an iteration that runs out of nodes is thrown
away. When a time-budgeted iteration runs out early, because the speed was guessed too low
(the first calls into compiled code are slow), it is tried again at twice the speed while half
the time is left, at most ``MAX_RETRIES`` times; the searcher's tables keep what it searched.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

UNLIMITED = 2**62
MIN_NODES = 1000
"""The smallest node budget an iteration gets, however little time is left."""
MEASURE_SECONDS = 0.005
"""An iteration shorter than this does not measure the speed (the clock's resolution and
call overhead dominate)."""
MAX_RETRIES = 4

Iterate = Callable[[int, int], tuple[bool, int, Any]]
"""``iterate(depth, node_budget) -> (completed, nodes searched, what the searcher found)``."""


@dataclass
class Deepened:
    """What iterative deepening found: the deepest completed iteration's finding and the effort."""

    found: Any
    """The last completed iteration's finding; None if none completed."""
    depth: int
    """Its depth (0: none completed)."""
    nodes: int
    """Nodes of every iteration, the aborted ones included."""
    seconds: float
    depths: list[tuple[int, int, float]] = field(default_factory=list)
    """(depth, nodes so far, seconds so far) at the end of every completed iteration."""


def deepen(
    iterate: Iterate,
    *,
    depth: int,
    time_limit: float | None = None,
    node_limit: int | None = None,
    rate: float,
    clock: Callable[[], float] = time.perf_counter,
) -> Deepened:
    """Run ``iterate`` at depths 1, 2, ... ``depth`` until a budget runs out.

    ``node_limit`` caps the nodes of all iterations together; ``time_limit`` (seconds, read on
    ``clock``) gives each iteration the nodes the remaining time allows at the measured speed,
    starting from ``rate`` (nodes per second).
    """
    start = clock()
    total = 0
    found, reached, depths = None, 0, []
    retries = 0
    d = 1
    while d <= depth:
        budget = node_limit - total if node_limit is not None else UNLIMITED
        timed = False
        if time_limit is not None:
            remaining = time_limit - (clock() - start)
            if remaining <= 0:
                break
            by_time = max(int(remaining * rate), MIN_NODES)
            timed = by_time < budget
            budget = min(budget, by_time)
        t0 = clock()
        completed, nodes, finding = iterate(d, budget)
        elapsed = clock() - t0
        total += nodes
        if elapsed > MEASURE_SECONDS:
            rate = nodes / elapsed
        if not completed:
            if not timed or time_limit is None or retries >= MAX_RETRIES or clock() - start > 0.5 * time_limit:
                break
            rate = max(2.0 * rate, nodes / max(elapsed, 1e-6))
            retries += 1
            continue
        found, reached = finding, d
        depths.append((d, total, clock() - start))
        d += 1
    return Deepened(found, reached, total, clock() - start, depths)
