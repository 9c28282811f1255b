"""Compile every game's kernels into numba's on-disk cache before the test workers start.

Why: on a fresh clone nothing is compiled, and each pytest-xdist worker compiles what its tests
call; the kernels of a game that both workers need are then compiled twice at the same time.
Here each game's kernels compile once, two games at a time (``make test`` runs this first); a
worker then loads them from the cache. It plays, through the one route, a move of every searcher
of every game with its hand-made and shipped evaluators, a few random games of each env, a few
steps of each compiled vector env, and a starship.
"""

from __future__ import annotations

import sys
from concurrent.futures import ProcessPoolExecutor

GAMES = ("friday", "trap", "threes", "trilobite", "sim", "starship")


def warm(name: str) -> str:
    import numpy as np

    import tablegym.envs  # noqa: F401  (registers the env ids)
    from tablegym.envs import make_game, plugin

    record = plugin(name)
    _warm_vector_envs(record)
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
    budgets = {"alphabeta": "depth=2", "expectiminimax": "depth=1", "expectimax": "depth=1", "greedy": "",
               "bestfirst": "nodes=40", "mc": "rollouts=2,horizon=1"}
    state = game.new_initial_state()
    while state.current_player() < 0 and not state.is_terminal():
        state = state.child(state.chance_outcomes()[0][0])
    for searcher in record.searchers:
        for ev in evaluators:
            spec = f"{searcher}:" + ",".join(k for k in (budgets[searcher], f"eval={ev}") if k)
            make_agent(game, spec)(state, rng)
    return name


def _warm_vector_envs(record) -> None:
    """A few random steps of each of the game's compiled vector envs (its batch kernels' bindings)."""
    import gymnasium
    import numpy as np

    for env_id in record.vector:
        envs = gymnasium.make_vec(env_id, num_envs=2)
        envs.reset(seed=0)
        for _ in range(3):
            envs.step(np.argmax(envs.unwrapped.action_masks(), axis=1))
        envs.close()


def main() -> int:
    import tablegym.envs.vector  # noqa: F401  (the generic batch kernels, compiled once here, not in each game's process)

    with ProcessPoolExecutor(2) as pool:
        for name in pool.map(warm, GAMES):
            print(f"warm: {name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
