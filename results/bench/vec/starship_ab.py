"""Steps a Starship vector env of this checkout and of another git revision in one process, in
turn, and prints their steps a second and the ratio per round.

Why one process: on the development machine, separate processes of the same code ran 77k-108k
steps a second (a shared virtual machine), more than the changes measured. Here both envs meet the
same moments. The time is the process's CPU time: this machine's `time.perf_counter()` advances
in steps of 4-52 ms, `time.process_time()` in microseconds. One thread, random legal actions
(`vector_bench.random_legal`), the same seeds for both, 300 warm-up steps, then ROUNDS rounds of
60 steps each, the order of the two swapped every round.

The other revision's package is written to a temporary folder under another name (its imports
renamed), so both compile side by side:
`python results/bench/vec/starship_ab.py REV [StarshipVectorEnv|StarshipTargetsVectorEnv] [BOARDS] [ROUNDS]`."""

from __future__ import annotations

import importlib
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from tablegym.envs.starship import vector as new_vector
from tablegym.envs.vector_bench import random_legal

ROOT = pathlib.Path(__file__).resolve().parents[3]
STEPS = 60


def export(rev: str, folder: pathlib.Path, name: str) -> None:
    """The package's Python and data files at ``rev`` under ``folder/name``, ``tablegym`` renamed."""
    files = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev], cwd=ROOT, check=True, capture_output=True,
                           text=True).stdout.split()
    for path in files:
        if path.startswith(("results/", "tests/")) or not path.endswith((".py", ".toml", ".json")):
            continue
        text = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True,
                              text=True).stdout
        if path.endswith(".py"):
            text = re.sub(r"\btablegym\b(?=[. ])", name, text)
        out = folder / name / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)


def main() -> None:
    rev = sys.argv[1]
    cls = sys.argv[2] if len(sys.argv) > 2 else "StarshipVectorEnv"
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 16
    folder = pathlib.Path(tempfile.mkdtemp())
    export(rev, folder, "tablegym_base")
    sys.path.insert(0, str(folder))
    base_vector = importlib.import_module("tablegym_base.envs.starship.vector")
    envs = {side: getattr(module, cls)(num_envs=n, threads=1, representation="narrow")
            for side, module in (("base", base_vector), ("new", new_vector))}
    rngs = {side: np.random.default_rng(0) for side in envs}
    actions = np.empty(n, np.int64)

    def run(side: str, steps: int) -> None:
        env, rng = envs[side], rngs[side]
        for _ in range(steps):
            random_legal(env._masks, rng.random(n), actions)
            env.step(actions)

    for side, env in envs.items():
        env.reset(seed=0)
        run(side, 300)
    rates: dict[str, list[float]] = {side: [] for side in envs}
    for r in range(rounds):
        for side in ("base", "new") if r % 2 == 0 else ("new", "base"):
            start = time.process_time()
            run(side, STEPS)
            rates[side].append(STEPS * n / (time.process_time() - start))
    ratios = [new / base for new, base in zip(rates["new"], rates["base"])]
    print(f"{cls} x {n}, base {rev}: base {statistics.median(rates['base']):,.0f}, new "
          f"{statistics.median(rates['new']):,.0f} steps/s (medians); new/base per round: median "
          f"{statistics.median(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f} ({rounds} rounds of {STEPS} "
          f"steps)")


if __name__ == "__main__":
    main()
