"""Steps/s of every compiled vector env at one batch size, one thread against several, the two
measured in turn in one process (``repeats`` slices each, medians and their ratio).

    python -m tablegym.experiments.vector_benches.threads [BATCH] [THREADS] [SECONDS] [REPEATS]
"""

from __future__ import annotations

import argparse
import statistics

import gymnasium
import numpy as np

from tablegym.envs import plugins
from tablegym.experiments.vector_bench import random_steps


def compare(batch: int = 1024, threads: int = 2, seconds: float = 0.5, repeats: int = 5) -> None:
    """Print a markdown table: each env id's steps/s at ``batch`` boards on one thread and on ``threads``."""
    rng = np.random.default_rng(0)
    print(f"| env id x {batch} | 1 thread steps/s | {threads} threads steps/s | ratio |\n|---|---|---|---|")
    rows = [(i, {}) for p in plugins() for i in p.vector] + [("tablegym/Trilobite-v0", {"opponent": None})]
    for env_id, kwargs in rows:
        envs = {t: gymnasium.make_vec(env_id, num_envs=batch, threads=t, **kwargs) for t in (1, threads)}
        for env in envs.values():
            random_steps(env, 0.05, rng)  # compiled and warm
        rates: dict[int, list[float]] = {t: [] for t in envs}
        for _ in range(repeats):
            for t, env in envs.items():
                rates[t].append(random_steps(env, seconds, rng))
        one, many = (statistics.median(rates[t]) for t in (1, threads))
        name = env_id.removeprefix("tablegym/") + (" self-play" if kwargs else "")
        print(f"| {name} | {one:,.0f} | {many:,.0f} | {many / one:.2f} |", flush=True)
        for env in envs.values():
            env.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("batch", nargs="?", type=int, default=1024, help="boards in each vector env")
    parser.add_argument("threads", nargs="?", type=int, default=2, help="threads measured against one")
    parser.add_argument("seconds", nargs="?", type=float, default=0.5, help="length of each timed slice")
    parser.add_argument("repeats", nargs="?", type=int, default=5, help="slices of each")
    args = parser.parse_args(argv)
    compare(args.batch, args.threads, args.seconds, args.repeats)


if __name__ == "__main__":
    main()
