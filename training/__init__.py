"""Training value networks: the shared run skeleton, compiled self-play with TD-leaf targets,
and the Stable-Baselines3 helpers; each trainer (``td``, ``trap_td``, ``ntuple_td``,
``friday_value``) is a script run by ``tablegym train GAME``.

Everything listed in ``__all__`` is importable from here; each name loads its module on first
use (PEP 562), so ``import tablegym.training`` stays cheap and compiles nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Run": "tablegym.training.runs",
    "ReplayBuffer": "tablegym.training.runs",
    "parse_dataclass_args": "tablegym.training.runs",
    "start_or_resume": "tablegym.training.runs",
    "metadata": "tablegym.training.runs",
    "field_help": "tablegym.training.runs",
    "play_selfplay": "tablegym.training.selfplay",
    "td_leaf_targets": "tablegym.training.selfplay",
    "td_update": "tablegym.training.selfplay",
    "SelfPlayBatch": "tablegym.training.selfplay",
    "feature_symmetries": "tablegym.training.symmetry",
}
"""Public name -> the module that defines it."""

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
