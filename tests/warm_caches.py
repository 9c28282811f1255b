"""Compile every game's kernels into numba's on-disk cache before the test workers start.

Why: on a fresh clone nothing is compiled, and each pytest-xdist worker compiles what its tests
call; the kernels of a game that both workers need are then compiled twice at the same time.
Here each game's kernels compile once, two tasks at a time (``make test`` runs this first); a
worker then loads them from the cache. Every process takes the same cache folder, the one named
after the sources the kernels reach (tablegym/kernel_cache.py), so after an edit of a kernel this warms
a new, empty folder and no process loads machine code of the old sources. It plays, through the one route, a move of every searcher
of every game with its hand-made and shipped evaluators, a few random games of each env, a few
steps of each compiled vector env, and a starship.

The tasks run in two lanes, one process each, so that no two processes compile the same kernels
at once and the lanes end together (seconds of a clean compile, one core, in each comment): the
generic batch kernels of envs/vector.py (compiled when that module is imported) come before
Starship's vector env, which imports them, and every other game's vector env waits for both lanes
(its own rules and the generic kernels in the cache). Two lanes filled greedily in one queue let
Starship's 82 s vector env start last and ran 215 s; these lanes take about 160 s.
"""

from __future__ import annotations

import sys
from concurrent.futures import ProcessPoolExecutor

GAMES = ("friday", "trap", "threes", "trilobite", "sim", "starship")
LANES = (
    (
        ("rules", "starship"),  # 25 s
        ("vector", ""),  # 27 s: the generic batch kernels
        ("vector", "starship"),  # 82 s
        ("rules", "trilobite"),
    ),  # 17 s
    (
        ("rules", "friday"),  # 89 s
        ("rules", "threes"),  # 32 s
        ("rules", "trap"),  # 27 s
        ("rules", "sim"),
    ),
)  # 11 s
"""(part, game) tasks of each lane, run in order; ("vector", "") is the generic batch kernels."""
AFTER = (("vector", "trap"), ("vector", "trilobite"), ("vector", "sim"), ("vector", "friday"), ("vector", "threes"))
"""The other vector envs, once both lanes are done: a two-player game's entry points are compiled
for the game (envs/kernel_sets.py; 10-15 s each), a one-player game's are shared (1-2 s)."""
BUDGET = {
    "alphabeta": "depth=2",
    "expectiminimax": "depth=1",
    "expectimax": "depth=1",
    "greedy": "",
    "bestfirst": "nodes=40",
    "mc": "rollouts=2,horizon=1",
}
"""A small budget for each searcher of tablegym.search.searchers, so that every move plays fast (the
route matrix, tests/test_route_matrix.py, plays its cells with these too)."""


def warm_lane(tasks: tuple[tuple[str, str], ...]) -> list[str]:
    return [warm_task(task) for task in tasks]


def warm_task(task: tuple[str, str]) -> str:
    part, name = task
    if part == "rules":
        warm_rules(name)
    elif name:
        from tablegym.envs import plugin

        _warm_vector_envs(plugin(name))
    else:
        import tablegym.envs.vector  # noqa: F401  (compiles the generic batch kernels)
    return f"{part} {name}".strip()


def warm(name: str) -> str:
    """Everything of one game in this process (its rules and searches, then its vector envs)."""
    from tablegym.envs import plugin

    warm_rules(name)
    _warm_vector_envs(plugin(name))
    return name


def warm_rules(name: str) -> str:
    import numpy as np

    import tablegym.envs  # noqa: F401  (registers the env ids)
    from tablegym.envs import make_game, plugin

    record = plugin(name)
    if name == "starship":
        from tablegym.envs.starship import generate

        generate(seed=0)
        return name
    from tablegym.envs.conformance import check_game
    from tablegym.models.agents import game_evaluators, make_agent
    from tablegym.models.learned import default_checkpoint

    game = make_game(name)
    check_game(game, games=1, seed=0)
    evaluators = sorted(game_evaluators(game))[:1] + (["learned"] if default_checkpoint(name).is_file() else [])
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    while state.current_player() < 0 and not state.is_terminal():
        state = state.child(state.chance_outcomes()[0][0])
    for searcher in record.searchers:
        for ev in evaluators:
            spec = f"{searcher}:" + ",".join(k for k in (BUDGET[searcher], f"eval={ev}") if k)
            make_agent(game, spec)(state, rng)
    return name


SLICED = ("threes", "trilobite", "sim", "trap", "starship")
"""Games whose vector envs also step in two threads here: the entry points in slices (envs/vector.py's
``*_slices``) are compiled for each two-player game and Starship, and are the same for every other
one-player game, so Threes compiles those (Threes and Friday, run side by side, would compile them
twice at once)."""


def _warm_vector_envs(record) -> None:
    """A few random steps of each of the game's compiled vector envs (its batch kernels' bindings)."""
    import gymnasium
    import numpy as np

    for env_id in record.vector:
        envs = gymnasium.make_vec(env_id, num_envs=2, threads=2 if record.name in SLICED else 1)
        envs.reset(seed=0)
        for _ in range(3):
            envs.step(np.argmax(envs.unwrapped.action_masks(), axis=1))
        envs.close()


def main() -> int:
    tasks = [task for lane in LANES for task in lane] + list(AFTER)
    assert sorted(tasks) == sorted(set(tasks)) and {g for _, g in tasks} - {""} == set(GAMES)
    with ProcessPoolExecutor(2) as pool:
        for lane in pool.map(warm_lane, LANES):
            print(f"warm: {', '.join(lane)}", file=sys.stderr)
        for done in pool.map(warm_task, AFTER):
            print(f"warm: {done}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
