"""Steps a second of one compiled Starship vector env in one thread: random legal actions, 300
warm-up steps, the median of 7 slices of 0.5 s. Run in alternating processes to compare two
checkouts: `python -m tablegym.experiments.vector_benches.starship_step [ENV_ID] [BOARDS]`."""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium
import numpy as np

import tablegym.envs  # noqa: F401 (registers the ids)
from tablegym.experiments.vector_bench import random_legal


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("env_id", nargs="?", default="tablegym/Starship-v0")
    parser.add_argument("boards", nargs="?", type=int, default=1024)
    args = parser.parse_args(argv)
    env_id, n = args.env_id, args.boards
    env = gymnasium.make_vec(env_id, num_envs=n, threads=1)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = np.empty(n, np.int64)
    masks = env.unwrapped._masks
    for _ in range(300):
        random_legal(masks, rng.random(n), actions)
        env.step(actions)
    slices = []
    for _ in range(7):
        start, k = time.perf_counter(), 0
        while time.perf_counter() - start < 0.5:
            random_legal(masks, rng.random(n), actions)
            env.step(actions)
            k += 1
        slices.append(k * n / (time.perf_counter() - start))
    print(f"{env_id} x {n}: {statistics.median(slices):,.0f} steps/s")


if __name__ == "__main__":
    main()
