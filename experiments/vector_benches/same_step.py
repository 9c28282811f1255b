"""Steps/s of the compiled vector envs, next-step against same-step auto-reset, measured in turn in one
process (medians of five 1 s slices, one thread, random legal actions), as markdown table rows:
`python -m tablegym.experiments.vector_benches.same_step 1024`."""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium
import numpy as np

import tablegym.envs  # noqa: F401 (registers the ids)
from tablegym.experiments.vector_bench import random_legal

IDS = ["tablegym/Trilobite-v0", "tablegym/Threes-v0", "tablegym/Friday-v1", "tablegym/Starship-v0"]


def rate(env, seconds: float, rng: np.random.Generator) -> float:
    """Board steps per second over ``seconds`` of random legal actions."""
    n = env.num_envs
    a = np.empty(n, np.int64)
    masks = env.unwrapped.action_masks().astype(np.int8)
    start, steps = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        random_legal(masks, rng.random(n), a)
        env.step(a)
        steps += 1
        masks = env.unwrapped.action_masks().astype(np.int8)
    return steps * n / (time.perf_counter() - start)


def compare(n: int) -> None:
    """Print one row per env id: next-step and same-step steps/s at ``n`` boards, and their ratio."""
    for env_id in IDS:
        envs = {m: gymnasium.make_vec(env_id, num_envs=n, autoreset_mode=m) for m in ("next_step", "same_step")}
        rng = np.random.default_rng(0)
        for e in envs.values():
            e.reset(seed=0)
            rate(e, 0.3, rng)
        got: dict[str, list[float]] = {m: [] for m in envs}
        for r in range(5):
            for m, e in envs.items() if r % 2 == 0 else reversed(list(envs.items())):
                got[m].append(rate(e, 1.0, rng))
        med = {m: statistics.median(v) for m, v in got.items()}
        print(
            f"| {env_id.removeprefix('tablegym/')} x {n} | {med['next_step']:,.0f} | {med['same_step']:,.0f} | "
            f"{med['same_step'] / med['next_step']:.2f} |",
            flush=True,
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("boards", nargs="?", type=int, default=1024, help="boards in each vector env")
    args = parser.parse_args(argv)
    compare(args.boards)


if __name__ == "__main__":
    main()
