"""Games as Ray tasks: a drop-in for the ``multiprocessing.Pool`` that matches, round robins and
single-player runs use (``imap_unordered``), on a local Ray instance or a cluster.

Why a pool and not a new runner: every game is already a self-contained, seeded task (agents
and game are rebuilt in the worker from their specs), and the driver already keeps the journal
and the progress bar as results arrive. So the Ray backend only changes where tasks run; the
records, the tables and what a killed driver loses (the games in flight) are the same. Ray
retries a task whose worker died (``max_retries``): a game is replayed from its seed, so the
record is the one it would have been.

At most ``workers`` games are in flight at once (the window): on a cluster, set it to the CPUs
you want busy. Ray is an optional extra: ``pip install "tablegym[distributed]"``.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

BACKENDS = ("process", "ray")
INSTALL = 'pip install "tablegym[distributed]"'


class BackendError(ValueError):
    """A backend that cannot run here (Ray missing, an unknown backend name)."""


def require_ray() -> Any:
    """The ``ray`` module, or one clear line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise BackendError(f"the Ray backend needs Ray, which is not installed: {INSTALL}") from None
    return ray


def check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise BackendError(f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
    if backend == "ray":
        require_ray()


def connect(workers: int, address: str | None = None) -> Any:
    """Join the Ray cluster at ``address`` (``auto``: the one ``ray start`` made here), or start a
    local instance with ``workers`` CPUs; an instance already running in this process is reused."""
    ray = require_ray()
    if not ray.is_initialized():
        options: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
        try:
            if address:
                ray.init(address=address, **options)
            else:
                ray.init(num_cpus=workers, **options)
        except (ConnectionError, RuntimeError, ValueError) as err:
            where = f"the Ray cluster at {address!r}" if address else "a local Ray instance"
            raise BackendError(f"cannot start or join {where}: {str(err).splitlines()[0] if str(err) else err}") from None
    return ray


class RayPool:
    """``with RayPool(workers, address) as pool: pool.imap_unordered(fn, tasks)``, as with
    ``multiprocessing.Pool``; ``fn`` must be a module-level function (Ray pickles it by name)."""

    def __init__(self, workers: int, address: str | None = None, max_retries: int = 3) -> None:
        if workers < 1:
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        self.workers = workers
        self.address = address
        self.max_retries = max_retries
        self.ray: Any = None

    def __enter__(self) -> "RayPool":
        self.ray = connect(self.workers, self.address)
        return self

    def __exit__(self, *exc: Any) -> bool:
        return False  # the Ray instance stays up for the next run in this process

    def imap_unordered(self, fn: Callable[[Any], Any], tasks: Iterable, chunksize: int = 1) -> Iterator[Any]:
        """Results of ``fn(task)`` as they finish. Tasks are drawn from ``tasks`` only when a
        slot in the window is free, and only after the previous result was handed over (a
        caller's generator may wait on that result, as ``match._run_until`` does)."""
        ray = self.ray
        remote = ray.remote(max_retries=self.max_retries, num_cpus=1)(fn)
        source = iter(tasks)
        pending: list[Any] = []
        exhausted = False

        def top_up() -> None:
            nonlocal exhausted
            while not exhausted and len(pending) < self.workers:
                task = next(source, _END)
                if task is _END:
                    exhausted = True
                else:
                    pending.append(remote.remote(task))

        top_up()
        while pending:
            ready, _ = ray.wait(pending, num_returns=1)
            pending.remove(ready[0])
            yield ray.get(ready[0])
            top_up()


_END = object()
