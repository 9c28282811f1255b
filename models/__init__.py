"""Networks and their checkpoints, and the front doors that turn names into players: learned
evaluators (``load_evaluator``) and agents from specs (``make_agent``).

Everything listed in ``__all__`` is importable from here; each name loads its module on first
use (PEP 562), so ``import tablegym.models`` stays cheap and compiles nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "make_agent": "tablegym.models.agents",
    "make_evaluator": "tablegym.models.agents",
    "game_evaluators": "tablegym.models.agents",
    "load_evaluator": "tablegym.models.learned",
    "LearnedEvaluator": "tablegym.models.learned",
    "load_model": "tablegym.models.learned",
    "default_checkpoint": "tablegym.models.learned",
    "save_checkpoint": "tablegym.models.checkpoint",
    "load_checkpoint": "tablegym.models.checkpoint",
    "CheckpointError": "tablegym.models.checkpoint",
    "ValueMLP": "tablegym.models.value_net",
    "NetConfig": "tablegym.models.value_net",
    "NTupleNet": "tablegym.models.ntuple",
    "NTupleConfig": "tablegym.models.ntuple",
    "NTupleEvaluator": "tablegym.models.ntuple",
    "load_ntuple": "tablegym.models.ntuple",
    "save_ntuple": "tablegym.models.ntuple",
    "FridayEvaluator": "tablegym.models.learned_friday",
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
