"""How many of numba's threads step a batch's boards (``threads=N`` or "auto"): a contiguous slice
of the boards each, so the results do not depend on the number of threads; "auto" times several
threads against one and keeps the faster, again from time to time."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

BOARDS_A_THREAD = 128
"""The fewest boards a thread steps when the number of threads is automatic. Measured on 2 idle
cores (experiments/vector_benches/threads.py), two threads against one: every env id faster from 256
boards (1.10x Friday to 1.89x Starship), 1.38-2.26x at 1024; at 128 boards Trilobite 1.11x."""
TRIAL_CALLS = 8
"""The fewest steps timed with several threads, then with one, before an automatic count chooses."""
TRIAL_SECONDS = 0.25
"""The least time by the clock that each count's timed steps take (more steps are timed until it
has passed). A step of 1024 boards takes 0.3-1 ms and some clocks advance in steps of 20-50 ms
(the development machine's wall clocks): timed one step at a time, both counts' steps read 0 s
and one thread won every tie."""
WAKE_CALLS = 2
"""The first steps of each count left out of its time: numba's threads, asleep after a while
without work, wake up in them (Trap x 1024: 2-18 ms against 1.3 ms once they are awake)."""
RETRIAL_CALLS = 1000
"""Steps, counted from the start of the last trial, after which an automatic count is timed and
chosen again (once ``RETRIAL_SECONDS`` have passed too)."""
RETRIAL_SECONDS = 20.0
"""The least time between two trials, so that trials (``2 * TRIAL_SECONDS``, half of it in the
slower count) take a few percent of the steps' time however short a step is."""


def available_cores() -> int:
    """The cores this process may run on (``os.sched_getaffinity`` where the system has it)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _check_threads(threads: Any, num_envs: int, shared_tables: bool) -> tuple[int, bool]:
    """``threads`` as (the most threads, whether to choose by timing): 1 (or None, the default),
    an integer, or "auto", which tries one thread per ``BOARDS_A_THREAD`` boards, at most one per
    core, against one thread (one thread where the other seat keeps tables the boards share)."""
    if threads is None:
        return 1, False
    if isinstance(threads, str) and threads == "auto":
        most = 1 if shared_tables else max(1, min(available_cores(), num_envs // BOARDS_A_THREAD))
        return most, most > 1
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"threads must be an integer >= 1 (default 1) or 'auto', got {threads!r}")
    if threads > 1 and shared_tables:
        raise ValueError(
            f"threads must be 1 with a search or reference player as the other seat "
            f"(its tables serve every board), got threads={threads!r}"
        )
    return int(min(threads, num_envs)), False


_SLICES_LOCK = threading.Lock()
"""Held around every step in slices: numba's own thread pool may not take two such calls from two
Python threads at once (its ``workqueue`` layer, where OpenMP is missing, ends the process)."""


class BoardThreads:
    """How many of numba's threads step a batch's boards, each a contiguous slice of them (a
    ``*_slices`` entry point given ``bounds``), or one (the entry point itself, in this thread).

    Threads pay only on idle cores: on 2 cores at 1024 boards two threads stepped 1.3-2.2x
    faster than one, but with a second such process beside it 4-40x slower (OpenMP's threads spin
    while they wait, and each step waits for its slowest slice). So an automatic count is timed:
    at least ``TRIAL_CALLS`` steps with ``most`` threads, then with one, by ``clock`` (each count's
    steps in a row: steps alternating with one thread's found the other threads asleep every
    time), and the faster is kept, then timed again once ``RETRIAL_CALLS`` steps and
    ``RETRIAL_SECONDS`` have passed, as other work on the machine comes and goes.

    A count's time a step is the median over stretches of steps that each end when the clock's
    reading changes (a step each where the clock is fine, tens of steps where it advances in
    steps of milliseconds); the steps before the first change are left out, since the clock's
    reading then began at an unknown point of its step. A stretch so read is off by at most one
    step's time, however coarse the clock."""

    def __init__(self, num_envs: int, most: int, choose: bool = False, clock: Callable[[], float] = time.perf_counter) -> None:
        self.bounds = np.linspace(0, num_envs, most + 1).round().astype(np.int64)
        """The slices' first boards, then ``num_envs``."""
        self.most = most
        self.threads = 1 if choose else most
        """The threads stepping the boards now."""
        self._choose = choose
        self._clock = clock
        self._counts = (most, 1)
        self._phase: int | None = 0 if choose else None
        """The index in ``_counts`` of the count being timed; None once one is chosen."""
        self._calls = 0
        """Steps in this phase, or since the choice."""
        self._chosen_at = 0.0
        self._stretch: tuple[float, int] | None = None
        """The clock's reading and the phase's steps at the start of the stretch being timed."""
        self._aligned = False
        self._times: dict[int, list[float]] = {1: [], most: []}

    def run(self, call: Callable[[np.ndarray | None], None]) -> None:
        """``call(None)`` (every board in this thread) or ``call(bounds)`` (in slices, at once)."""
        if self._phase is None:
            self._run(call, self.threads)
            self._calls += 1
            if (
                self._choose
                and self._calls >= RETRIAL_CALLS - 2 * TRIAL_CALLS
                and self._clock() - self._chosen_at >= RETRIAL_SECONDS
            ):
                self._phase, self._calls = 0, 0
            return
        threads = self._counts[self._phase]
        self._run(call, threads)
        self._calls += 1
        if self._calls < WAKE_CALLS:
            return
        now = self._clock()
        if self._stretch is None:
            self._stretch = (now, self._calls)
            return
        start, calls = self._stretch
        if now == start:
            return
        if self._aligned:
            self._times[threads].append((now - start) / (self._calls - calls))
        self._aligned = True
        self._stretch = (now, self._calls)
        if self._calls >= TRIAL_CALLS and len(self._times[threads]) >= TRIAL_CALLS - WAKE_CALLS - 1:
            self._next_phase()

    def _next_phase(self) -> None:
        self._calls, self._stretch, self._aligned = 0, None, False
        if self._phase == 0:
            self._phase = 1
            return
        times = {n: float(np.median(t)) for n, t in self._times.items()}
        self.threads = min(times, key=lambda n: (times[n], n))
        self._times = {1: [], self.most: []}
        self._phase = None
        self._chosen_at = self._clock()

    @property
    def choosing(self) -> bool:
        """Whether the next steps are timed to choose the number of threads."""
        return self._phase is not None

    def _run(self, call: Callable[[np.ndarray | None], None], threads: int) -> None:
        if threads == 1:
            call(None)
        else:
            with _SLICES_LOCK:
                call(self.bounds)
