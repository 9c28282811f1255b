"""Steps/s of every compiled vector env at one batch size, one thread against several, the two
measured in turn in one process (``repeats`` slices each, medians and their ratio).

    python results/bench/vec/threads.py [BATCH] [THREADS] [SECONDS] [REPEATS]
"""

from __future__ import annotations

import statistics
import sys

import gymnasium
import numpy as np

from tablegym.envs import plugins
from tablegym.experiments.vector_bench import random_steps


def main(batch: int = 1024, threads: int = 2, seconds: float = 0.5, repeats: int = 5) -> None:
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


if __name__ == "__main__":
    main(*[int(a) if i != 2 else float(a) for i, a in enumerate(sys.argv[1:])])
