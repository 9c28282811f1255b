"""Whether a model file may be loaded by a loader that runs the code it carries.

Only Stable-Baselines3's own ``load`` does (it unpickles what its zip holds); every other loader of
tablegym reads data. The decision has three states, unset, yes and no, and comes from the nearest
of, in order:

1. ``trust_code=`` of the call (``make_agent``, ``load_sb3_evaluator``, ``learned_evaluator``);
2. the innermost ``with trusting(...)`` block (the command line's ``--trust-model-code`` is one,
   around the command it runs, and so is every task a worker runs for a caller: the caller's
   decision travels with the task, ``as_caller``, with the caller's file budgets);
3. the environment variable ``TABLEGYM_TRUST_MODEL_CODE``: ``1`` trusts, ``0`` does not.

Unset everywhere is no. An explicit no at a nearer level always wins over a yes further out, and
nothing here writes ``os.environ``: trust given to one call never reaches the next one, nor a
child process. A worker decides from the task it was given, never from its own environment.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import os
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tablegym.envs.limits import Limits, raised_limits
from tablegym.envs.limits import current as current_limits

__all__ = [
    "TRUST_ENV",
    "Caller",
    "Trust",
    "TrustedCodeWarning",
    "as_caller",
    "caller",
    "run_as_caller",
    "trust_decision",
    "trust_model_code",
    "trusting",
    "warn_trusted",
]

TRUST_ENV = "TABLEGYM_TRUST_MODEL_CODE"


class TrustedCodeWarning(UserWarning):
    """A model file is being loaded with a loader that runs the code it carries."""


@dataclass(frozen=True)
class Trust:
    """A decision and where it came from (shown in the warning when a file is trusted)."""

    trusted: bool
    source: str


_UNSET = Trust(False, "the default")
_TRUST: contextvars.ContextVar[Trust | None] = contextvars.ContextVar("tablegym_trust_model_code", default=None)


def trust_decision(trust_code: bool | None = None) -> Trust:
    """The decision in force for one load (see the module docstring for the order)."""
    if trust_code is not None:
        return Trust(bool(trust_code), f"trust_code={bool(trust_code)}")
    block = _TRUST.get()
    if block is not None:
        return block
    value = os.environ.get(TRUST_ENV)
    if value is None or value == "":
        return _UNSET
    if value not in ("0", "1"):
        raise ValueError(f"{TRUST_ENV}={value!r} in the environment: accepted are 1 (trust) and 0 (do not)")
    return Trust(value == "1", f"{TRUST_ENV}={value} in the environment")


def trust_model_code(trust_code: bool | None = None) -> bool:
    """Whether SB3's own (code-running) loader may be used for one load."""
    return trust_decision(trust_code).trusted


@contextlib.contextmanager
def trusting(trust_code: bool = True, source: str | None = None) -> Iterator[Trust]:
    """Within the block, model files load as ``trust_code`` says, unless a call inside says
    otherwise with its own ``trust_code=`` (e.g. around ``make_agent``, whose specs reach loaders
    several calls down)."""
    decision = Trust(bool(trust_code), source or f"trusting({bool(trust_code)})")
    token = _TRUST.set(decision)
    try:
        yield decision
    finally:
        _TRUST.reset(token)


def warn_trusted(path: str | os.PathLike, trust_code: bool | None = None) -> None:
    """Say that ``path`` is loaded by a loader that runs code, and who decided so."""
    source = trust_decision(trust_code).source
    warnings.warn(
        f"loading {str(path)!r} with Stable-Baselines3's own loader, which runs any code the file carries (trusted by {source})",
        TrustedCodeWarning,
        stacklevel=3,
    )


@dataclass(frozen=True)
class Caller:
    """What a worker takes over from the caller of a task: the trust decision and the budgets of
    tablegym.envs.limits in force where the task was made."""

    trust: Trust
    limits: Limits


def caller() -> Caller:
    """This caller's settings, to travel with a task."""
    return Caller(trust_decision(), current_limits())


def run_as_caller(settings: Caller, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` under ``settings`` (what a worker runs for a caller)."""
    with trusting(settings.trust.trusted, settings.trust.source), raised_limits(**dataclasses.asdict(settings.limits)):
        return fn(*args)


def as_caller(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` bound to this caller's settings, for a worker (a process pool's) to run under them
    whatever its own environment says; picklable when ``fn`` is a module-level function."""
    return functools.partial(run_as_caller, caller(), fn)
