"""OpenSpiel's own Python algorithms on tablegym games (through tablegym.interop.openspiel)
against tablegym's compiled searches on the same positions, one process, one thread.

    python -m tablegym.experiments.openspiel_speed > results/openspiel/speed.md

OpenSpiel alpha-beta (open_spiel.python.algorithms.minimax.alpha_beta_search: plain alpha-beta
over cloned states, no table, no move ordering) and expectiminimax (minimax.expectiminimax: full
width) to a fixed depth, the tablegym evaluator as their value function, against tablegym's
alphabeta/expectiminimax (iterative deepening to the same depth, transposition table, compiled)
with the same evaluator. "leaves" counts OpenSpiel's value-function calls; tablegym's "nodes"
are its own count (every node of every iteration; a search's fixed cost, such as allocating its
table, is in its time, which is why a deeper search shows its rate better: the second table).
OpenSpiel MCTS: simulations a second with one random rollout a leaf, for 2 seconds.
Needs the ``openspiel`` extra (``pip install -c constraints.txt -e ".[openspiel]"``).
"""

from __future__ import annotations

import argparse
import functools
import time

import numpy as np

from tablegym.envs import make_game
from tablegym.models.agents import make_evaluator
from tablegym.search.alphabeta_search import alphabeta
from tablegym.search.expectiminimax_search import expectiminimax

POSITIONS = [  # game, options, evaluator, moves from the start, depths for both, a deeper one for tablegym
    ("trilobite", {}, "advanced", [3, 4, 3], (4, 6), 12),
    ("sim", {}, "safe-moves", [0, 5, 9], (4, 6), 12),
    ("trap", {}, "composite", [], (2, 3), 6),
]


def _position(name, options, moves):
    game = make_game(name, **options)
    state = game.new_initial_state()
    for a in moves:
        state = state.child(a)
    return game, state


def _openspiel_search(game, state, evaluator, depth, chance):
    from open_spiel.python.algorithms import minimax

    from tablegym.interop.openspiel import openspiel_game

    os_game = openspiel_game(game)
    root = os_game.new_initial_state(state)
    player = state.current_player()
    leaves = 0

    def value(s):
        nonlocal leaves
        leaves += 1
        t = s.tablegym_state
        if t.current_player() == -1:  # expectiminimax may stop at a chance node: its mean
            return sum(p * evaluator(t.child(o), player) for o, p in t.chance_outcomes())
        return evaluator(t, player)

    t0 = time.perf_counter()
    if chance:
        v, a = minimax.expectiminimax(root, depth, value, player)
    else:
        v, a = minimax.alpha_beta_search(os_game, root, value, depth, player)
    return time.perf_counter() - t0, leaves, a


def _mcts_rate(game, state, seconds=2.0):
    from open_spiel.python.algorithms import mcts

    from tablegym.interop.openspiel import openspiel_game

    os_game = openspiel_game(game)
    rng = np.random.RandomState(0)
    bot = mcts.MCTSBot(os_game, 2.0, 20, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)
    root_state = os_game.new_initial_state(state)
    sims, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        sims += bot.mcts_search(root_state).explore_count
    return sims / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    import pyspiel

    print(f"pyspiel {pyspiel.__file__.split('/')[-1]}; OpenSpiel Python algorithms vs tablegym compiled searches\n")
    print(
        "| game | position | evaluator | depth | OpenSpiel s | OpenSpiel leaves | OpenSpiel leaves/s "
        "| tablegym s | tablegym nodes | tablegym nodes/s | speed-up (time) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rates, deep = [], []
    for name, options, ev_name, moves, depths, deeper in POSITIONS:
        game, state = _position(name, options, moves)
        evaluator = make_evaluator(game, ev_name)
        chance = game.spec.chance
        search = functools.partial(expectiminimax if chance else alphabeta, state, evaluator)
        search(depth=1)  # load the compiled code
        for depth in depths:
            os_s, leaves, _ = _openspiel_search(game, state, evaluator, depth, chance)
            r = search(depth=depth)
            print(
                f"| {name} | {moves or 'start'} | {ev_name} | {depth} | {os_s:.2f} | {leaves:,} | {leaves / os_s:,.0f} "
                f"| {r.seconds:.4f} | {r.nodes:,} | {r.nodes / r.seconds:,.0f} | {os_s / r.seconds:,.0f}x |"
            )
        deep.append((name, moves, ev_name, deeper, search(depth=deeper)))
        rates.append((name, moves, _mcts_rate(game, state)))
    print("\n| game | position | evaluator | depth | tablegym s | tablegym nodes | tablegym nodes/s |")
    print("|---|---|---|---|---|---|---|")
    for name, moves, ev_name, depth, r in deep:
        print(
            f"| {name} | {moves or 'start'} | {ev_name} | {depth} | {r.seconds:.3f} | {r.nodes:,} | {r.nodes / r.seconds:,.0f} |"
        )
    print("\n| game | position | OpenSpiel MCTS simulations/s (1 random rollout each) |")
    print("|---|---|---|")
    for name, moves, rate in rates:
        print(f"| {name} | {moves or 'start'} | {rate:,.0f} |")


if __name__ == "__main__":
    main()
