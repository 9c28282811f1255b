"""Steps a compiled vector env of this checkout and of another git revision in one process, in
turn, and prints their steps a second and the ratio per round.

Why one process: on the development machine, separate processes of the same code ran 77k-108k
Starship steps a second (a shared virtual machine), more than the changes measured. Here both envs
meet the same moments. The time is the process's CPU time: this machine's `time.perf_counter()`
advances in steps of 4-52 ms, `time.process_time()` in microseconds. One thread, random legal
actions (`vector_bench.random_legal`), the same seeds for both, 300 warm-up steps, then ROUNDS
rounds of STEPS steps each, the order of the two swapped every round.

The other revision's package is written to a temporary folder under another name (its imports
renamed), so both compile side by side. The env is built from its game's record (the class its
``vector`` entry names) with ``threads=1`` and the given keywords (values read as Python
literals where they parse, e.g. ``opponent=None``). Run inside the git checkout that holds REV:
`python -m tablegym.experiments.vector_benches.vector_ab REV ENV_ID [BOARDS] [ROUNDS] [KEY=VALUE ...]`, e.g.
`python -m tablegym.experiments.vector_benches.vector_ab a7adb7e tablegym/Trilobite-v0 1024 16 opponent=None`."""

from __future__ import annotations

import argparse
import ast
import importlib
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

from tablegym.envs import plugins
from tablegym.experiments.vector_bench import random_legal

STEPS = 60


def fail(message: str) -> None:
    """Bad input: one line on stderr, exit status 2 (as the command line's)."""
    print(f"vector_ab: {message}", file=sys.stderr)
    raise SystemExit(2)


def repository_root() -> pathlib.Path:
    """The top folder of the git checkout the command runs in."""
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if top.returncode != 0:
        fail(f"run inside the git checkout that holds the revision: {top.stderr.strip()}")
    return pathlib.Path(top.stdout.strip())


def export(rev: str, folder: pathlib.Path, name: str) -> None:
    """The package's Python and data files at ``rev`` under ``folder/name``, ``tablegym`` renamed."""
    root = repository_root()
    listing = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev], cwd=root, capture_output=True, text=True)
    if listing.returncode != 0:
        fail(f"no git revision {rev!r} here: {listing.stderr.strip()}")
    files = listing.stdout.split()
    for path in files:
        outside = path.startswith(("results/", "tests/"))  # not part of the package
        if outside or not path.endswith((".py", ".toml", ".json")):
            continue
        text = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=root, check=True, capture_output=True, text=True).stdout
        if path.endswith(".py"):
            text = re.sub(r"\btablegym\b(?=[. ])", name, text)
        out = folder / name / path.removeprefix("tablegym/")  # the top package's own files (package-dir)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)


def vector_class(env_id: str, package: str) -> Any:
    """The vector env class of ``env_id`` (its game record's ``vector`` entry) in ``package``."""
    for record in plugins():
        if env_id in record.vector:
            module, name = record.vector[env_id].split(":")
            return getattr(importlib.import_module(re.sub(r"^tablegym\b", package, module)), name)
    fail(f"no compiled vector env for {env_id!r}")


def literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def compare(rev: str, env_id: str, n: int = 1024, rounds: int = 16, **kwargs: Any) -> None:
    """Print the medians of both sides' steps a second and of new/base per round."""
    folder = pathlib.Path(tempfile.mkdtemp())
    export(rev, folder, "tablegym_base")
    sys.path.insert(0, str(folder))
    envs = {
        side: vector_class(env_id, package)(num_envs=n, threads=1, **kwargs)
        for side, package in (("base", "tablegym_base"), ("new", "tablegym"))
    }
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
    options = "".join(f", {k}={v!r}" for k, v in kwargs.items())
    print(
        f"{env_id} x {n}{options}, base {rev}: base {statistics.median(rates['base']):,.0f}, new "
        f"{statistics.median(rates['new']):,.0f} steps/s (medians); new/base per round: median "
        f"{statistics.median(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f} ({rounds} rounds of {STEPS} "
        f"steps)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rev", help="the git revision to compare this checkout with")
    parser.add_argument("env_id", help="a registered id with a compiled vector env, e.g. tablegym/Trilobite-v0")
    parser.add_argument("boards", nargs="?", type=int, default=1024)
    parser.add_argument("rounds", nargs="?", type=int, default=16)
    parser.add_argument("options", nargs="*", metavar="KEY=VALUE", help="keywords of the vector env")
    args = parser.parse_args(argv)
    if any("=" not in arg for arg in args.options):
        parser.error(f"keywords are KEY=VALUE, got {' '.join(args.options)}")
    kwargs = dict(arg.split("=", 1) for arg in args.options)
    compare(args.rev, args.env_id, args.boards, args.rounds, **{k: literal(v) for k, v in kwargs.items()})


if __name__ == "__main__":
    main()
