"""``tablegym bench vec-opponent``: what a compiled search as the other seat costs inside a batch
(envs/vector.py), against the same searches called one by one from Python.

One process, one env id and opponent spec (default Trilobite, ``alphabeta:eval=advanced,depth=2``),
at each batch size:

- "search steps/s": board steps per second of random legal agent actions on
  ``gymnasium.make_vec(id, num_envs=N, opponent=spec)`` (every step also plays the opponent's
  searched reply), and "random steps/s" the same with the random opponent;
- "sync steps/s": ``SyncVectorEnv`` of the single env with the same ``opponent`` spec (its
  opponent is the one route's agent, whose ``alphabeta()`` runs from Python), at
  ``min(N, sync_max)`` boards;
- "us/search batch": the searched reply's share of a board step inside the batch,
  ``1/search - 1/random`` steps/s (one search a step where the players alternate; in Trap the
  opponent's whole turn, a move and a throw: two searches);
- "us/search python": the one route's agent (``make_agent(game, spec)``) called from Python on
  positions the batch's opponent searched (what the single env runs), and "us/search kernel"
  the searcher's compiled ``root_search`` called from Python on them with tables made once (the
  leanest Python loop over the same searches; alpha-beta only);
- ratios: "ratio vs sync" (search / sync steps/s) and "ratio vs kernel" (us/search kernel /
  us/search batch: above 1, the batch's search costs less than a Python call each).

Each figure is the median of ``repeats`` slices of ``seconds``, the envs alternating.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import gymnasium
import numpy as np

from tablegym.envs.core import CHANCE, sample_outcome
from tablegym.experiments.vector_bench import random_steps


def _positions(env_id: str, opponent: str, count: int, seed: int) -> list:
    """``count`` positions the opponent is to move in, reached by random agent moves."""
    env = gymnasium.make_vec(env_id, num_envs=16, opponent=opponent)
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    found: list = []
    while len(found) < count:
        masks = env.unwrapped.action_masks()
        actions = np.argmax(rng.random(masks.shape) * masks, axis=1)
        for i in np.flatnonzero(info["action_mask"].any(axis=1)):
            child = env.unwrapped.game_state(i).child(int(actions[i]))
            while child.current_player() == CHANCE:
                child = child.child(sample_outcome(child, rng))
            if child.current_player() == 1 - info["seat"][i]:  # a decision of the other seat
                found.append(child)
        _, _, _, _, info = env.step(actions)
    env.close()
    return found[:count]


def _per_search(call: Any, positions: list, seconds: float) -> float:
    """Microseconds a call of ``call(state)``, cycling over ``positions`` for ``seconds``."""
    calls = 0
    start = time.perf_counter()
    while True:
        call(positions[calls % len(positions)])
        calls += 1
        now = time.perf_counter()
        if now - start >= seconds:
            return (now - start) / calls * 1e6


def _kernel_search(agent: Any, game: Any) -> Any:
    """``state -> move`` by the compiled alpha-beta ``root_search`` with tables made once and its
    kernels typed once (``CompiledKernel``; the batch takes the same kernels' addresses)."""
    from tablegym.envs.core import EVAL_T, INT_OF_STATE_T, MOVES_T, POP_T, PUSH_T
    from tablegym.envs.vector_step import CompiledKernel
    from tablegym.search.alphabeta_search import AlphaBetaTables, root_search

    ev, depth, n = agent.evaluator, agent.depth, game.spec.num_actions
    k = game.new_initial_state().kernels
    kernels = (
        CompiledKernel(k.moves, MOVES_T),
        CompiledKernel(k.push, PUSH_T),
        CompiledKernel(k.pop, POP_T),
        CompiledKernel(k.to_move, INT_OF_STATE_T),
        CompiledKernel(k.outcome, INT_OF_STATE_T),
        CompiledKernel(k.key, INT_OF_STATE_T),
        CompiledKernel(ev.kernel, EVAL_T),
    )
    t = AlphaBetaTables(n, tt_bits=16)
    counters, values = np.zeros(3, dtype=np.int64), np.zeros(n)

    def search(state: Any) -> int:
        counters[:] = 0
        move, _, _ = root_search(
            state.array,
            depth,
            *kernels,
            ev.params,
            *t.tt,
            t.killers,
            t.history,
            t.bufs,
            t.scores,
            t.pv,
            t.pv_len,
            counters,
            2**62,
            values,
        )
        return move

    return search


def bench_vec_opponent(
    env_id: str = "tablegym/Trilobite-v0",
    opponent: str = "alphabeta:eval=advanced,depth=2",
    batches: str = "64,1024",
    seconds: float = 0.5,
    repeats: int = 3,
    sync_max: int = 64,
    positions: int = 256,
) -> dict[str, dict[str, Any]]:
    """Rows "<id> x <batch>" (see the module docstring); ``batches`` comma-separated."""
    sizes = [int(b) for b in str(batches).split(",")]
    if not sizes or min(sizes) < 1 or seconds <= 0 or repeats < 1 or sync_max < 1 or positions < 1:
        raise ValueError(
            f"batches must be integers >= 1, seconds > 0, repeats, sync_max and positions >= 1; got "
            f"{batches!r}, {seconds!r}, {repeats!r}, {sync_max!r}, {positions!r}"
        )
    if not env_id.startswith("tablegym/"):
        env_id = f"tablegym/{env_id}"
    rng = np.random.default_rng(0)
    probe = gymnasium.make_vec(env_id, num_envs=1, opponent=opponent)
    agent = probe.unwrapped.opponent_agent.agent
    kernel = _kernel_search(agent, probe.unwrapped.game) if type(agent).__name__ == "AlphaBetaAgent" else None
    roots = _positions(env_id, opponent, positions, seed=1)
    python_rng = np.random.default_rng(0)
    rows: dict[str, dict[str, Any]] = {}
    for n in sizes:
        searched = gymnasium.make_vec(env_id, num_envs=n, opponent=opponent)
        random = gymnasium.make_vec(env_id, num_envs=n)
        sync = gymnasium.make_vec(env_id, num_envs=min(n, sync_max), vectorization_mode="sync", opponent=opponent)
        for env in (searched, random, sync):
            random_steps(env, 0.05, rng)  # compile and warm up outside the timing
        figures: dict[str, list[float]] = {k: [] for k in ("search", "random", "sync", "python", "kernel")}
        for _ in range(repeats):
            figures["search"].append(random_steps(searched, seconds, rng))
            figures["random"].append(random_steps(random, seconds, rng))
            figures["sync"].append(random_steps(sync, seconds, rng))
            figures["python"].append(_per_search(lambda s: agent(s, python_rng), roots, seconds))
            if kernel is not None:
                figures["kernel"].append(_per_search(kernel, roots, seconds))
        for env in (searched, random, sync):
            env.close()
        med = {k: statistics.median(v) if v else float("nan") for k, v in figures.items()}
        in_batch = (1.0 / med["search"] - 1.0 / med["random"]) * 1e6
        rows[f"{env_id.removeprefix('tablegym/')} x {n}"] = {
            "search steps/s": med["search"],
            "random steps/s": med["random"],
            "sync steps/s": med["sync"],
            "sync boards": min(n, sync_max),
            "ratio vs sync": med["search"] / med["sync"],
            "us/search batch": in_batch,
            "us/search python": med["python"],
            "us/search kernel": med["kernel"],
            "ratio vs kernel": med["kernel"] / in_batch,
        }
    return rows
