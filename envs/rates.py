"""Rates over measured times, which can be zero.

Why: a clock advances in steps of its resolution, which on some virtual machines is several
milliseconds, so a short piece of work (a chunk of games, a searched position) can measure
0 s. Its rate is then unknown, which a log or a table shows as NaN, not a division by zero
that ends a training run."""

from __future__ import annotations


def per_second(count: float, seconds: float) -> float:
    """``count / seconds``, or NaN where no time was measured (``seconds`` <= 0)."""
    return count / seconds if seconds > 0 else float("nan")
