"""Self-play games/s of one TD iteration's chunks (Trilobite 8x7, depth 7, the shipped network's
architecture untrained) in this process, on 2 worker processes and on 2 Ray tasks.

    python -m tablegym.experiments.ray_selfplay

(the self-play table of results/ray_scaling/README.md). Needs the ``distributed`` extra (Ray).
The executors are created once and warmed up, as a training run keeps them for all iterations;
each row is the best of 3 iterations of 100 games.
"""

import argparse
import time

import torch

from tablegym.models.value_net import NetConfig, ValueMLP
from tablegym.training.parallel import executor
from tablegym.training.selfplay import chunks
from tablegym.training.td import _selfplay_chunk

GAMES = 100


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    torch.manual_seed(0)
    shared = ("trilobite", {}, ValueMLP(NetConfig(112, (128, 64))).export())
    print("| where | workers | seconds per 100 games | games/s | ratio to one process |")
    print("|---|---|---|---|---|")
    base = None
    for backend, workers in (("process", 1), ("process", 2), ("ray", 2)):
        runner = executor(backend, workers)
        jobs = [dict(games=k, depth=7, epsilon=0.1, seed=i) for i, k in enumerate(chunks(GAMES, workers))]
        runner.map_shared(_selfplay_chunk, shared, jobs)  # start and warm the workers
        best = min(_timed(runner, shared, jobs) for _ in range(3))
        base = base or best
        where = "this process" if workers == 1 else f"{backend} pool"
        print(f"| {where} | {workers} | {best:.2f} | {GAMES / best:.1f} | {base / best:.2f} |")
        runner.shutdown()


def _timed(runner, shared, jobs) -> float:
    start = time.perf_counter()
    runner.map_shared(_selfplay_chunk, shared, jobs)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
