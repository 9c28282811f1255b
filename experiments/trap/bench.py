"""Trap search speed: nodes per second and the depth reached in a time budget, on one core.

Two positions: the opening, and a mid-game position reached by Medium playing both seats for
``mid_turns`` turns from a fixed seed. Each hand-made evaluator searches each position with the
joint expectiminimax for each budget; the pure-Python reference expectiminimax over the object
API (same tree, no pruning) is timed in the same process as the baseline of the speed ratio.

    tablegym bench trap
    python -m tablegym.experiments.trap.bench
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numba import njit, types

from tablegym.envs.core import CHANCE, EVAL_T
from tablegym.envs.rates import per_second
from tablegym.envs.trap.core import TrapGame, TrapState
from tablegym.models.agents import make_evaluator
from tablegym.models.netkernel import clear_value_cache, without_value_cache
from tablegym.models.trap.agents import MOVE_SHARE, SearchAgent
from tablegym.search.expectiminimax_search import reference_expectiminimax


def bench_positions(mid_turns: int = 8, seed: int = 0) -> dict[str, TrapState]:
    """The opening and a mid-game position (Medium vs Medium, ``mid_turns`` turns, seeded).

    Medium breaks ties at random here, as it did when results/bench/trap.txt was measured,
    so the mid-game position stays the one of that table.
    """
    from tablegym.envs.trap.opponents import MediumOpponent

    rng = np.random.default_rng(seed)
    game = TrapGame()
    opening = game.new_initial_state()
    s, player = opening, MediumOpponent(ties="random")
    while s.turns < mid_turns and not s.is_terminal():
        if s.current_player() == CHANCE:
            outcomes = s.chance_outcomes()
            s = s.child(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
        else:
            s = s.child(player(s, rng))
    if s.is_terminal():
        raise RuntimeError("the mid-game position ended the game; pick another seed")
    return {"opening": opening, "mid-game": s}


def _python_baseline(state: TrapState, evaluator, depth: int) -> tuple[int, float]:
    """Nodes and seconds of the reference search (object API, Python) at ``depth``."""
    count = [0]
    t0 = time.perf_counter()
    reference_expectiminimax(state, evaluator, depth, nodes=count)
    return count[0], time.perf_counter() - t0


@njit(types.float64(EVAL_T, types.float64[::1], types.int64[:, ::1], types.int64), cache=True)
def _evaluate_all(eval_fn, params, states, repeats):
    total = 0.0
    for _ in range(repeats):
        for i in range(states.shape[0]):
            total += eval_fn(states[i], 0, params)
    return total


def leaf_evaluations(evaluators: tuple[str, ...], positions: int = 2000, seconds: float = 1.0, seed: int = 0) -> dict[str, Any]:
    """Leaf evaluations per second of each evaluator over the same random mid-game positions,
    called from compiled code as the search calls them, with the ratio to the first evaluator."""
    from tablegym.envs.trap.opponents import RandomOpponent

    rng = np.random.default_rng(seed)
    game = TrapGame()
    player = RandomOpponent()
    states = []
    while len(states) < positions:
        s = game.new_initial_state()
        while not s.is_terminal() and len(states) < positions:
            if s.current_player() == CHANCE:
                outcomes = s.chance_outcomes()
                s = s.child(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
            else:
                states.append(s.array)
                s = s.child(player(s, rng))
    batch = np.stack(states)
    rows: dict[str, Any] = {}
    first = None
    for name in evaluators:
        ev = make_evaluator(TrapGame(), name)
        ev.params = without_value_cache(ev.params)  # the evaluation itself, not cache hits
        _evaluate_all(ev.kernel, ev.params, batch[:10], 1)  # compile/load outside the timing
        repeats, elapsed = 1, 0.0
        while elapsed < seconds / 4:
            t0 = time.perf_counter()
            _evaluate_all(ev.kernel, ev.params, batch, repeats)
            elapsed = time.perf_counter() - t0
            repeats *= 2
        rate = (repeats // 2) * len(batch) / elapsed
        first = first or rate
        rows[f"leaf evaluations {name}"] = {
            "evaluations/s": rate,
            "ns each": 1e9 / rate,
            f"ratio to {evaluators[0]}": rate / first,
        }
    return rows


def default_evaluators() -> tuple[str, ...]:
    """IS, the composite and, when the shipped checkpoint exists, the learned network."""
    from tablegym.models.learned import default_checkpoint

    return ("is", "composite") + (("learned",) if default_checkpoint("trap").exists() else ())


def bench_trap(
    budgets: tuple[float, ...] = (1.0, 5.0),
    evaluators: tuple[str, ...] | str | None = None,
    cands: int = 10,
    baseline_depth: int = 2,
) -> dict[str, Any]:
    """Rows of nodes/s and completed depth per (position, evaluator, seconds per decision), then
    leaf evaluations per second of each evaluator."""
    if isinstance(budgets, (int, float)):
        budgets = (float(budgets),)
    if evaluators is None:
        evaluators = default_evaluators()
    if isinstance(evaluators, str):
        evaluators = tuple(evaluators.split("+"))
    positions = bench_positions()
    rows: dict[str, Any] = {}
    warm = SearchAgent(make_evaluator(TrapGame(), evaluators[0]), depth=2, candidates=cands)
    warm(positions["opening"], np.random.default_rng(0))  # load the compiled search outside the timing
    for pos_name, state in positions.items():
        for ev_name in evaluators:
            evaluator = make_evaluator(TrapGame(), ev_name)
            evaluator(state, 0)  # load the kernel outside the baseline's timing
            python_rate = per_second(*_python_baseline(state, evaluator, baseline_depth))
            for budget in budgets:
                clear_value_cache(evaluator.params)  # each search starts cold (the baseline filled it)
                # time=budget/share so that the move search itself gets exactly ``budget`` seconds
                agent = SearchAgent(evaluator, time_limit=budget / MOVE_SHARE, candidates=cands)
                result = agent.search(state)
                rows[f"{pos_name} {ev_name} {budget:g}s"] = {
                    "depth": result.depth,
                    "nodes": result.nodes,
                    "seconds": round(result.seconds, 3),
                    "nodes/s": result.nodes_per_second,
                    "python nodes/s": python_rate,
                    "ratio": result.nodes_per_second / python_rate,
                }
    rows.update(leaf_evaluations(evaluators))
    return rows


if __name__ == "__main__":
    from tablegym.experiments.cli import format_table

    print(format_table(bench_trap()))
