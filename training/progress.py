"""Progress that reads well where it is written: a tqdm bar on a terminal, and in a log file or a
CI job (stderr not a terminal) a plain line now and then, since a bar's carriage returns turn a
log into one unreadable line per redraw.

``progress_bar`` is what the trainers and the match harness use; both kinds take the calls
tqdm's bar takes there (``update``, ``set_postfix``, ``write``, ``close``, ``n``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from tqdm.auto import tqdm

LINE_SECONDS = 30.0
"""Seconds between two plain progress lines."""


class PlainProgress:
    """The plain-line stand-in for a tqdm bar: ``desc: n/total unit (rate unit/s, postfix)`` every
    ``every`` seconds of ``clock`` and once at ``close``; ``write`` prints a line as it comes."""

    def __init__(
        self,
        *,
        total: float | None = None,
        initial: float = 0,
        unit: str = "it",
        desc: str | None = None,
        file: TextIO | None = None,
        every: float = LINE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total, self.n, self.unit, self.desc = total, initial, unit, desc
        self.file = file if file is not None else sys.stderr
        self.every, self.clock = every, clock
        self.start = self.last = clock()
        self.start_n = initial
        self.postfix = ""
        self.closed = False

    def update(self, n: float = 1) -> None:
        self.n += n
        if self.clock() - self.last >= self.every:
            self._line()

    def set_postfix(self, ordered_dict: dict | None = None, refresh: bool = True, **kwargs: Any) -> None:
        items = {**(ordered_dict or {}), **kwargs}
        self.postfix = ", ".join(f"{k}={v}" for k, v in items.items())

    def write(self, text: str) -> None:
        print(text, file=self.file, flush=True)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._line()

    def _line(self) -> None:
        self.last = now = self.clock()
        done = f"{self.n:,.0f}" + (f"/{self.total:,.0f}" if self.total else "")
        rate = (self.n - self.start_n) / (now - self.start) if now > self.start else 0.0
        extra = ", ".join(part for part in (f"{rate:,.1f} {self.unit}/s", self.postfix) if part)
        self.write(f"{self.desc + ': ' if self.desc else ''}{done} {self.unit} ({extra})")

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def progress_bar(
    *,
    total: float | None = None,
    initial: float = 0,
    unit: str = "it",
    desc: str | None = None,
    enabled: bool = True,
    leave: bool = True,
    file: TextIO | None = None,
) -> Any:
    """A tqdm bar when ``file`` (stderr) is a terminal, else a ``PlainProgress``; with
    ``enabled`` false a bar that shows nothing."""
    file = file if file is not None else sys.stderr
    interactive = getattr(file, "isatty", lambda: False)()
    if interactive or not enabled:
        return tqdm(total=total, initial=initial, unit=unit, desc=desc, disable=not enabled, leave=leave, file=file)
    return PlainProgress(total=total, initial=initial, unit=unit, desc=desc, file=file)
