"""Nodes per second of a search over an exported critic (a torch MLP on the mover's observation),
three packings of the same weights in one process: the whole network at every leaf, the first
layer kept per player to move (0/1 observations: only the changed rows), and that plus the value
cache (what ``from_torch`` and ``eval=learned:PATH`` give a two-player game's critic).

    python -m tablegym.experiments.observation_critic_nodes [--rounds 3]

Trap: the expectiminimax at depth 4 on ``tablegym bench trap``'s two positions; Trilobite and
Sim: alpha-beta at depth 9 and 7 from positions of seeded random games. Median of the rounds;
the same move, value and node count in every packing (checked).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from tablegym.envs import make_game
from tablegym.experiments.trap.bench import bench_positions
from tablegym.models.export import from_torch
from tablegym.models.netkernel import evaluated_whole, without_value_cache
from tablegym.search.alphabeta_search import alphabeta
from tablegym.search.expectiminimax_search import expectiminimax


def critic(size: int, hidden: tuple[int, ...], act: type[torch.nn.Module]) -> torch.nn.Sequential:
    torch.manual_seed(0)
    layers, width = [], size
    for h in hidden:
        layers += [torch.nn.Linear(width, h), act()]
        width = h
    return torch.nn.Sequential(*layers, torch.nn.Linear(width, 1), torch.nn.Tanh())


def positions(name: str) -> dict:
    if name == "trap":
        return bench_positions()
    game, rng, out = make_game(name), np.random.default_rng(0), {}
    for plies in (4, 10) if name == "trilobite" else (2, 6):
        s = game.new_initial_state()
        for _ in range(plies):
            s = s.child(int(rng.choice(s.legal_actions())))
        out[f"{plies} plies in"] = s
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    cases = [
        ("trap", (256, 32), torch.nn.ReLU, expectiminimax, 4),
        ("trilobite", (256, 32), torch.nn.ReLU, alphabeta, 9),
        ("trilobite", (64, 64), torch.nn.ReLU, alphabeta, 9),
        ("trilobite", (64, 64), torch.nn.Tanh, alphabeta, 9),
        ("sim", (64, 64), torch.nn.ReLU, alphabeta, 7),
    ]
    print("| game | critic | position | depth | nodes | whole network | first layer kept | kept + value cache | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, hidden, act, search, depth in cases:
        game = make_game(name)
        ev = from_torch(critic(int(np.prod(game.spec.observation_shape)), hidden, act), game)
        packings = (evaluated_whole(ev.params), without_value_cache(ev.params), ev.params)
        label = "-".join(map(str, hidden)) + " " + act.__name__
        for where, s in positions(name).items():
            rates, seen = [[] for _ in packings], set()
            for _ in range(args.rounds):
                for i, params in enumerate(packings):
                    ev.params = params.copy()  # a cold value cache every round
                    search(s, ev, depth=1)  # compiled
                    start = time.perf_counter()
                    r = search(s, ev, depth=depth)
                    rates[i].append(r.nodes / (time.perf_counter() - start))
                    seen.add((r.action, r.value, r.nodes))
            assert len(seen) == 1, seen
            med = [float(np.median(x)) for x in rates]
            print(
                f"| {name} | {label} | {where} | {depth} | {r.nodes:,} | {med[0] / 1e3:,.0f}k | {med[1] / 1e3:,.0f}k "
                f"| {med[2] / 1e3:,.0f}k | {med[2] / med[0]:.2f}x |",
                flush=True,
            )


if __name__ == "__main__":
    main()
