"""``tablegym bench vec``: env steps per second of the compiled vector envs against
``SyncVectorEnv`` of the same single env, in one process, at several batch sizes.

Both sides run the same loop: a uniformly random legal action on every board, drawn from
``info["action_mask"]`` by one small compiled function and one NumPy double a board
(``random_legal``; a board waiting for its auto-reset shows no legal action and gets action 0,
which both envs ignore), then ``step``. A rate counts every board's
step (``num_envs`` a call) over the loop's wall time. Each (env id, batch) is measured in
``repeats`` slices of ``seconds``, alternating the two envs, and the medians are reported with
their ratio. ``SyncVectorEnv`` is measured at ``min(batch, sync_max)`` boards (its rate per board
does not grow with the batch, and thousands of single envs take long to build); its column says
which.

The reference for speed is pgx (JAX): where it is importable (the optional ``bench`` extra), the
rows of Trilobite-v0 and Threes-v0 also measure its peer game (connect_four, 2048) at the same
batch in the same slices, stepped as pgx's documentation shows: ``jax.jit`` of the ``jax.vmap``-ed
``auto_reset(env.step, env.init)``, here with a uniformly random legal action drawn inside the
same jitted call (one call a step from Python, as for the other envs), and the ratio to it.
Where pgx is not importable those cells say so and nothing fails.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import gymnasium
import numpy as np
from numba import njit

from tablegym.envs import plugins
from tablegym.envs.vector import TwoPlayerVectorEnv

PGX_PEERS = {"tablegym/Trilobite-v0": "connect_four", "tablegym/Threes-v0": "2048"}
"""Env id -> the pgx game measured beside it (the same kind of board, random legal moves)."""
PGX_MISSING = "pgx not installed"


@njit(cache=True)
def random_legal(masks: np.ndarray, u: np.ndarray, out: np.ndarray) -> None:
    """``out[i]``: the legal action of board ``i`` that the uniform double ``u[i]`` falls on (each
    with probability 1 / its number of legal actions), 0 where none is legal. Compiled: drawn with
    NumPy over the whole mask (``argmax(random(masks.shape) * masks)``) the draw cost more than
    a step of a game with many actions (Friday's 150: 0.88 us a board against 1.9 us)."""
    for i in range(masks.shape[0]):
        n = 0
        for a in range(masks.shape[1]):
            n += masks[i, a] != 0
        out[i] = 0
        k = int(u[i] * n)
        for a in range(masks.shape[1]):
            if masks[i, a] != 0:
                if k == 0:
                    out[i] = a
                    break
                k -= 1


def random_steps(env: Any, seconds: float, rng: np.random.Generator, until_chosen: bool = False) -> float:
    """Board steps per second of random legal actions on vector env ``env`` for ``seconds``; with
    ``until_chosen`` also until its automatic thread count is chosen (its first steps are timed
    trials: they run here one after another, with no reset between them, as in a training loop;
    a reset seeds 1024 streams in Python, 20 ms, and resets in a trial's steps made two threads
    look 20-40 ms a step and kept one)."""
    _, info = env.reset(seed=int(rng.integers(2**31)))
    actions = np.zeros(env.num_envs, dtype=np.int64)
    steps = 0
    start = time.perf_counter()
    end = start + seconds
    while True:
        random_legal(info["action_mask"], rng.random(env.num_envs), actions)
        _, _, _, _, info = env.step(actions)
        steps += 1
        now = time.perf_counter()
        if now >= end and not (until_chosen and getattr(env.unwrapped, "choosing_threads", False)):
            return steps * env.num_envs / (now - start)


class PgxRandom:
    """``batch`` boards of pgx game ``name`` stepped with random legal actions and auto-reset,
    one jitted call a step (what ``random_steps`` measures for a Gymnasium vector env)."""

    def __init__(self, name: str, batch: int) -> None:
        import jax
        import pgx
        from pgx.experimental import auto_reset

        self.jax, self.num_envs = jax, batch
        env = pgx.make(name)
        self._init = jax.jit(jax.vmap(env.init))
        step = jax.vmap(auto_reset(env.step, env.init))

        def random_step(state: Any, key: Any) -> tuple[Any, Any]:
            key, pick, chance = jax.random.split(key, 3)
            logits = jax.numpy.log(state.legal_action_mask.astype(jax.numpy.float32))
            action = jax.random.categorical(pick, logits, axis=-1)
            return step(state, action, jax.random.split(chance, batch)), key

        self._step = jax.jit(random_step)

    def steps_per_second(self, seconds: float, rng: np.random.Generator) -> float:
        """Board steps per second over ``seconds`` (the last step waited for)."""
        jax = self.jax
        key = jax.random.PRNGKey(int(rng.integers(2**31)))
        key, sub = jax.random.split(key)
        state = jax.block_until_ready(self._init(jax.random.split(sub, self.num_envs)))
        steps = 0
        start = time.perf_counter()
        end = start + seconds
        while time.perf_counter() < end:
            state, key = self._step(state, key)
            steps += 1
        jax.block_until_ready(state)
        return steps * self.num_envs / (time.perf_counter() - start)


def pgx_available() -> bool:
    """Whether pgx and JAX import here (the optional ``bench`` extra)."""
    try:
        import jax  # noqa: F401
        import pgx  # noqa: F401
    except ImportError:
        return False
    return True


def _pgx_cells(peer: str | None, ref: float | None, rate: float) -> dict[str, Any]:
    """The pgx columns of a row: its game, its steps/s (``ref``) and ``rate`` against it."""
    return {
        "pgx game": peer,
        "pgx steps/s": PGX_MISSING if ref is None else ref,
        "vs pgx": PGX_MISSING if ref is None else rate / ref,
    }


def bench_vec(
    seconds: float = 0.3,
    repeats: int = 3,
    batches: str = "1,64,1024,8192",
    ids: str | None = None,
    sync_max: int = 1024,
    pgx: bool = True,
    copy: bool = True,
    self_play: bool = True,
    threads: int | str = "auto",
) -> dict[str, dict[str, Any]]:
    """Rows "<id> x <batch>": compiled and SyncVectorEnv steps/s (medians) and their ratio; the
    ids with a pgx peer (``PGX_PEERS``) add its steps/s and the compiled env's ratio to it
    ("pgx not installed" where pgx does not import; ``pgx=False`` leaves the peers out).

    A two-player id with a pgx peer also gets a row "<id> self-play x <batch>" (``self_play``):
    the compiled env with ``opponent=None``, one move a step for the player to move, which is
    what pgx's step is (the default row's step also plays the random opponent's reply). The
    single env has no self-play, so that row has no SyncVectorEnv cells.

    ``batches`` and ``ids`` are comma-separated (``ids``: every id with a vector entry point when
    not given; a short name such as ``Trilobite`` matches ``tablegym/Trilobite-v0``). ``copy``:
    both envs' ``copy`` option (False: each returns its own observation buffer, no copy of the
    batch a step; pgx returns new arrays either way). ``threads``: the compiled envs' ``threads``
    ("auto" here, as a benchmark runs alone: the faster of one thread and one per 128 boards up to
    one a core, timed; the envs' own default is 1; the column "threads" says how many stepped each
    row's boards)."""
    for key, value in (("copy", copy), ("self_play", self_play)):
        if not isinstance(value, bool):
            raise ValueError(f"{key} must be true or false, got {value!r}")
    try:
        sizes = [int(b) for b in str(batches).split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise ValueError(f"batches must be comma-separated integers >= 1, got {batches!r}")
    if seconds <= 0 or repeats < 1 or sync_max < 1:
        raise ValueError(f"seconds must be > 0 and repeats, sync_max >= 1; got {seconds!r}, {repeats!r}, {sync_max!r}")
    known = [i for p in plugins() for i in p.vector]
    chosen = known if ids is None else [i for i in known if any(w in i for w in str(ids).split(","))]
    if not chosen:
        raise ValueError(f"ids {ids!r} match no env id with a vector entry point; those are {known}")
    have_pgx = pgx and pgx_available()
    rng = np.random.default_rng(0)
    rows: dict[str, dict[str, Any]] = {}
    for env_id in chosen:
        peer = PGX_PEERS.get(env_id) if pgx else None
        for n in sizes:
            compiled = gymnasium.make_vec(env_id, num_envs=n, copy=copy, threads=threads)
            sync = gymnasium.make_vec(env_id, num_envs=min(n, sync_max), vectorization_mode="sync", vector_kwargs={"copy": copy})
            sides: dict[str, Any] = {
                "compiled": lambda s, env=compiled: random_steps(env, s, rng),
                "sync": lambda s, env=sync: random_steps(env, s, rng),
            }
            envs = [compiled, sync]
            if peer and self_play and isinstance(compiled.unwrapped, TwoPlayerVectorEnv):
                alone = gymnasium.make_vec(env_id, num_envs=n, copy=copy, opponent=None, threads=threads)
                sides["self-play"] = lambda s, env=alone: random_steps(env, s, rng)
                envs.append(alone)
            for env in envs:  # compile and warm up outside the timing, and an automatic thread count
                random_steps(env, 0.05, rng, until_chosen=True)  # chosen before pgx is built and runs:
                # JAX's threads stay busy a while after its compile and steps, and a trial beside them
                # kept one thread
            if peer and have_pgx:
                reference = PgxRandom(peer, n)
                sides["pgx"] = lambda s, ref=reference: ref.steps_per_second(s, rng)
            for measure in sides.values():
                measure(0.05)
            rates: dict[str, list[float]] = {side: [] for side in sides}
            for _ in range(repeats):  # the sides in turn, so that a slower spell of the machine hits each
                for side, measure in sides.items():
                    rates[side].append(measure(seconds))
            for env in envs:
                env.close()
            med = {side: statistics.median(r) for side, r in rates.items()}
            ref = med.get("pgx")
            f, s = med["compiled"], med["sync"]
            name = env_id.removeprefix("tablegym/")
            row: dict[str, Any] = {
                "threads": compiled.unwrapped.threads,
                "compiled steps/s": f,
                "sync steps/s": s,
                "sync boards": min(n, sync_max),
                "ratio": f / s,
            }
            rows[f"{name} x {n}"] = {**row, **_pgx_cells(peer, ref, f)} if peer else row
            if "self-play" in med:
                alone = med["self-play"]
                rows[f"{name} self-play x {n}"] = {
                    "threads": row["threads"],
                    "compiled steps/s": alone,
                    "sync steps/s": "",
                    "sync boards": "",
                    "ratio": "",
                    **_pgx_cells(peer, ref, alone),
                }
    return rows
