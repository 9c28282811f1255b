"""Where games run: in this process, in worker processes, or as Ray tasks on a local instance or
a cluster. ``RayPool`` is a drop-in for the ``multiprocessing.Pool`` that matches, round robins
and single-player runs use (``imap_unordered``); ``executor`` is what the trainers' self-play
uses (``map`` and ``map_shared``, the network's weights shared once per call).

Why a pool and not a new runner: every game is already a self-contained, seeded task (agents
and game are rebuilt in the worker from their specs), and the driver already keeps the journal
and the progress bar as results arrive. So the Ray backend only changes where tasks run; the
records, the tables and what a killed driver loses (the games in flight) are the same. Ray
retries a task whose worker died (``max_retries``): a game is replayed from its seed, so the
record is the one it would have been.

At most ``workers`` games are in flight at once (the window): on a cluster, set it to the CPUs
you want busy. Ray is an optional extra: ``pip install "tablegym[distributed]"``.

Every task runs under the caller's decision on model files that carry code and the caller's file
budgets (tablegym.models.trust, ``as_caller``), whatever the worker's own environment says.

Self-play: the learner stays in the driver; each iteration, ``map_shared`` puts the current
weights in Ray's object store once (``ray.put``) and every chunk of games reads them from there,
rather than each task carrying its own copy.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Literal

from tablegym.models.trust import as_caller, caller, run_as_caller

BACKENDS = ("process", "ray")
INSTALL = 'pip install "tablegym[distributed]"'


PRELOAD = ("tablegym.models.agents",)
"""What every worker process needs before its first task: the agents, and with them torch, numba
and the game records."""


def process_context(*modules: str) -> Any:
    """The one start method of tablegym's worker processes: ``forkserver`` with ``PRELOAD`` (and
    ``modules``) imported once in the server, so each worker forks with them already loaded.

    Why: a worker that imports torch and the package itself spends about 2.5 s of CPU before its
    first game, and the test suite and every ``--workers`` run start pools again and again; the
    server lives as long as this process, so only the first pool pays. Never ``fork``: the parent
    may hold torch/OpenMP threads or a Ray connection. The preload also hands the server this
    process's ``sys.path``, so functions from any importable module unpickle in the workers.
    Where there is no forkserver (Windows, macOS defaults), ``spawn``.

    The preload list is read when the server starts: the first call in a process sets it.
    """
    import multiprocessing as mp

    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload([*PRELOAD, *modules])
    return ctx


def ignore_interrupts() -> None:
    """A worker's initializer: Ctrl-C is the parent's to handle (a trainer finishes its iteration
    and saves; a match stops and keeps its journal). A worker that took it would die mid-task and
    leave its parent waiting for a result that never comes."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


class BackendError(ValueError):
    """A backend that cannot run here (Ray missing, an unknown backend name)."""


def require_ray() -> Any:
    """The ``ray`` module, or one clear line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise BackendError(f"the Ray backend needs Ray, which is not installed: {INSTALL}") from None
    return ray


def check_backend(backend: str, address: str | None = None) -> None:
    """Refuse, in one line, an unknown backend, an ``address`` without the Ray backend, the Ray
    backend without Ray, or a cluster at ``address`` that cannot be joined (what every command
    line and entry point checks up front, before a progress bar or a game)."""
    if backend not in BACKENDS:
        raise BackendError(f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
    if address and backend != "ray":
        raise BackendError("--address is for --backend ray")
    if backend == "ray":
        require_ray()
        if address:
            connect(1, address)  # joined once; the pool that plays the games reuses the connection


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


class ProcessPool:
    """``multiprocessing.Pool`` of ``process_context`` whose tasks run under the caller's decision
    on model files that carry code and its file budgets, as RayPool's do."""

    def __init__(self, workers: int, *modules: str) -> None:
        self.pool = process_context(*modules).Pool(workers, initializer=ignore_interrupts)

    def __enter__(self) -> ProcessPool:
        return self

    def __exit__(self, *exc: Any) -> Literal[False]:
        self.pool.terminate()
        return False

    def imap_unordered(self, fn: Callable[[Any], Any], tasks: Iterable, chunksize: int = 1) -> Iterator[Any]:
        return self.pool.imap_unordered(as_caller(fn), tasks, chunksize)


def run_bounded(
    pool: Any,
    fn: Callable[[Any], Any],
    tasks: Iterable,
    in_flight: int,
    keep: Callable[[Any], None],
    *,
    until: Callable[[], bool] | None = None,
) -> None:
    """Hand ``pool`` the ``tasks`` (any iterable, a generator of any length) at most ``in_flight``
    ahead of the results, and call ``keep(result)`` on each as it comes; once ``until()`` is true
    no new task starts (those started are finished). Nothing waits in the pool's queue, so a run
    of any length holds only the tasks in play, and stopping leaves none behind."""
    slots = threading.Semaphore(in_flight)
    stop = threading.Event()

    def feed() -> Iterator[Any]:
        # Runs in the pool's task-handler thread, which would otherwise queue every task at once.
        for task in tasks:
            slots.acquire()
            if stop.is_set() or (until is not None and until()):
                return
            yield task

    try:
        for result in pool.imap_unordered(fn, feed(), chunksize=1):
            slots.release()
            keep(result)
    finally:  # before the pool ends: a feeder left waiting would keep it from shutting down
        stop.set()
        slots.release()


def task_pool(backend: str, workers: int, address: str | None = None, *modules: str) -> ProcessPool | RayPool:
    """The pool matches and single-player runs play their games in: ``workers`` processes here
    (``modules`` preloaded in them), or Ray tasks."""
    return RayPool(workers, address) if backend == "ray" else ProcessPool(workers, *modules)


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

    def __enter__(self) -> RayPool:
        self.ray = connect(self.workers, self.address)
        return self

    def __exit__(self, *exc: Any) -> Literal[False]:
        return False  # the Ray instance stays up for the next run in this process

    def imap_unordered(self, fn: Callable[[Any], Any], tasks: Iterable, chunksize: int = 1) -> Iterator[Any]:
        """Results of ``fn(task)`` as they finish. Tasks are drawn from ``tasks`` only when a
        slot in the window is free, and only after the previous result was handed over (a
        caller's generator may wait on that result, as ``run_bounded``'s does)."""
        ray = self.ray
        remote = ray.remote(max_retries=self.max_retries, num_cpus=1)(run_as_caller)
        settings = caller()
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
                    pending.append(remote.remote(settings, fn, task))

        top_up()
        while pending:
            ready, _ = ray.wait(pending, num_returns=1)
            pending.remove(ready[0])
            yield ray.get(ready[0])
            top_up()


_END = object()


class InProcessExecutor:
    """Runs the chunks here, one after the other (``workers=1``: easy to debug, deterministic)."""

    def map(self, fn: Callable[[Any], Any], items: Iterable) -> list:
        return [fn(item) for item in items]

    def map_shared(self, fn: Callable[[Any, Any], Any], shared: Any, items: Sequence) -> list:
        return [fn(shared, item) for item in items]

    def shutdown(self) -> None:
        pass


class ProcessExecutor(InProcessExecutor):
    """Worker processes of this machine (``concurrent.futures``); ``shared`` travels with each chunk."""

    def __init__(self, workers: int) -> None:
        from concurrent.futures import ProcessPoolExecutor

        self.pool = ProcessPoolExecutor(workers, mp_context=process_context())

    def map(self, fn: Callable[[Any], Any], items: Iterable) -> list:
        return list(self.pool.map(as_caller(fn), items))

    def map_shared(self, fn: Callable[[Any, Any], Any], shared: Any, items: Sequence) -> list:
        return list(self.pool.map(as_caller(fn), [shared] * len(items), items))

    def shutdown(self) -> None:
        self.pool.shutdown()


class RayExecutor(InProcessExecutor):
    """Ray tasks; ``shared`` goes to the object store once per ``map_shared`` call."""

    def __init__(self, workers: int, address: str | None = None, max_retries: int = 3) -> None:
        self.ray = connect(workers, address)
        self.max_retries = max_retries

    def map(self, fn: Callable[[Any], Any], items: Iterable) -> list:
        remote = self.ray.remote(max_retries=self.max_retries, num_cpus=1)(run_as_caller)
        settings = caller()
        return self.ray.get([remote.remote(settings, fn, item) for item in items])

    def map_shared(self, fn: Callable[[Any, Any], Any], shared: Any, items: Sequence) -> list:
        remote = self.ray.remote(max_retries=self.max_retries, num_cpus=1)(run_as_caller)
        ref = self.ray.put(shared)  # a top-level argument: each task receives the object itself
        settings = caller()
        return self.ray.get([remote.remote(settings, _call_shared, fn, ref, item) for item in items])


def _writable(obj: Any) -> Any:
    """``obj`` with its numpy arrays writable: the object store hands out read-only views, and a
    network's parameter vector is also its scratch space (netkernel)."""
    import numpy as np

    if isinstance(obj, np.ndarray):
        return obj if obj.flags.writeable else obj.copy()
    if isinstance(obj, tuple):
        return tuple(_writable(x) for x in obj)
    if isinstance(obj, list):
        return [_writable(x) for x in obj]
    return obj


def _call_shared(fn: Callable[[Any, Any], Any], shared: Any, item: Any) -> Any:
    return fn(_writable(shared), item)


def executor(backend: str = "process", workers: int = 1, address: str | None = None) -> InProcessExecutor:
    """Where a trainer's chunks of self-play run: ``process`` (here when ``workers`` is 1, else
    worker processes) or ``ray``; results come back in the order of the items either way."""
    check_backend(backend)
    if workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    if backend == "ray":
        return RayExecutor(workers, address)
    return ProcessExecutor(workers) if workers > 1 else InProcessExecutor()
