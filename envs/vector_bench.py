"""``tablegym bench vec``: env steps per second of the compiled vector envs against
``SyncVectorEnv`` of the same single env, in one process, at several batch sizes.

Both sides run the same loop: a uniformly random legal action on every board, drawn with one
numpy expression from ``info["action_mask"]`` (a board waiting for its auto-reset shows no legal
action and gets action 0, which both envs ignore), then ``step``. A rate counts every board's
step (``num_envs`` a call) over the loop's wall time. Each (env id, batch) is measured in
``repeats`` slices of ``seconds``, alternating the two envs, and the medians are reported with
their ratio. ``SyncVectorEnv`` is measured at ``min(batch, sync_max)`` boards (its rate per board
does not grow with the batch, and thousands of single envs take long to build); its column says
which.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import gymnasium
import numpy as np

from tablegym.envs import plugins


def random_steps(env: Any, seconds: float, rng: np.random.Generator) -> float:
    """Board steps per second of random legal actions on vector env ``env`` for ``seconds``."""
    _, info = env.reset(seed=int(rng.integers(2**31)))
    steps = 0
    start = time.perf_counter()
    end = start + seconds
    while True:
        masks = info["action_mask"]
        _, _, _, _, info = env.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
        steps += 1
        now = time.perf_counter()
        if now >= end:
            return steps * env.num_envs / (now - start)


def bench_vec(seconds: float = 0.3, repeats: int = 3, batches: str = "1,64,1024,8192", ids: str | None = None,
              sync_max: int = 1024) -> dict[str, dict[str, Any]]:
    """Rows "<id> x <batch>": compiled and SyncVectorEnv steps/s (medians) and their ratio.

    ``batches`` and ``ids`` are comma-separated (``ids``: every id with a vector entry point when
    not given; a short name such as ``Trilobite`` matches ``tablegym/Trilobite-v0``)."""
    sizes = [int(b) for b in str(batches).split(",")]
    if not sizes or min(sizes) < 1:
        raise ValueError(f"batches must be comma-separated integers >= 1, got {batches!r}")
    if seconds <= 0 or repeats < 1 or sync_max < 1:
        raise ValueError(f"seconds must be > 0 and repeats, sync_max >= 1; got {seconds!r}, {repeats!r}, {sync_max!r}")
    known = [i for p in plugins() for i in p.vector]
    chosen = known if ids is None else [i for i in known if any(w in i for w in str(ids).split(","))]
    if not chosen:
        raise ValueError(f"ids {ids!r} match no env id with a vector entry point; those are {known}")
    rng = np.random.default_rng(0)
    rows: dict[str, dict[str, Any]] = {}
    for env_id in chosen:
        for n in sizes:
            compiled = gymnasium.make_vec(env_id, num_envs=n)
            sync = gymnasium.make_vec(env_id, num_envs=min(n, sync_max), vectorization_mode="sync")
            random_steps(compiled, 0.05, rng)  # compile and warm up outside the timing
            random_steps(sync, 0.05, rng)
            fast, slow = [], []
            for _ in range(repeats):
                fast.append(random_steps(compiled, seconds, rng))
                slow.append(random_steps(sync, seconds, rng))
            compiled.close()
            sync.close()
            f, s = statistics.median(fast), statistics.median(slow)
            rows[f"{env_id.removeprefix('tablegym/')} x {n}"] = {
                "compiled steps/s": f, "sync steps/s": s, "sync boards": min(n, sync_max), "ratio": f / s}
    return rows
