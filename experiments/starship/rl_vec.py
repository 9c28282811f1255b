"""Steps/s of tablegym/Starship-v0 under SB3's two vector envs, random masked actions, same run.

    python -m tablegym.experiments.starship.rl_vec [--seconds 20]

DummyVecEnv steps its envs one after another in this process; SubprocVecEnv (forkserver) steps
each in a process of its own, so on 2 cores two envs run side by side. Actions are drawn among the
allowed ones ("build" masks), as a MaskablePPO rollout would; the policy's cost is left out.
"""

from __future__ import annotations

import argparse
import functools
import time

import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

from tablegym.experiments.starship.rl import make_env

KWARGS = {"representation": "narrow", "start": "partial", "size": 32, "masks": "build", "reward": "gated", "max_steps": 1024}


def steps_per_s(venv, seconds: float, rng: np.random.Generator) -> float:
    venv.reset()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        masks = np.stack(venv.env_method("action_masks"))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        venv.step(actions)
        steps += len(actions)
    return steps / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=20.0, help="timed length of each row")
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    print("| vector env | envs | steps/s | ratio to DummyVecEnv(same envs) |")
    print("|---|---|---|---|")
    for n in (2, 8):
        envs = [functools.partial(make_env, KWARGS) for _ in range(n)]
        dummy = steps_per_s(DummyVecEnv(envs), args.seconds, rng)
        sub = SubprocVecEnv(envs, start_method="forkserver")
        subproc = steps_per_s(sub, args.seconds, rng)
        sub.close()
        print(f"| DummyVecEnv | {n} | {dummy:,.0f} | 1.00 |")
        print(f"| SubprocVecEnv | {n} | {subproc:,.0f} | {subproc / dummy:.2f} |", flush=True)


if __name__ == "__main__":
    main()
