"""Game-independent searches over the rules-core contract: alpha-beta, expectiminimax with
chance nodes, expectimax, best-first, the exact solver, the agents that play with them and
the one game loop.

Everything listed in ``__all__`` is importable from here; each name loads its module on first
use (PEP 562), so ``import tablegym.search`` stays cheap and compiles nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Agent": "tablegym.search.agents",
    "RandomAgent": "tablegym.search.agents",
    "FunctionAgent": "tablegym.search.agents",
    "AlphaBetaAgent": "tablegym.search.agents",
    "parse_spec": "tablegym.search.agents",
    "check_options": "tablegym.search.agents",
    "is_learned": "tablegym.search.agents",
    "learned_path": "tablegym.search.agents",
    "alphabeta": "tablegym.search.alphabeta",
    "SearchResult": "tablegym.search.alphabeta",
    "AlphaBetaTables": "tablegym.search.alphabeta",
    "root_search": "tablegym.search.alphabeta",
    "TABLE_TYPES": "tablegym.search.alphabeta",
    "expectiminimax": "tablegym.search.expectiminimax",
    "ExpectiminimaxResult": "tablegym.search.expectiminimax",
    "SearchTables": "tablegym.search.expectiminimax",
    "reference_expectiminimax": "tablegym.search.expectiminimax",
    "expectimax": "tablegym.search.expectimax",
    "ExpectimaxResult": "tablegym.search.expectimax",
    "best_first": "tablegym.search.bestfirst",
    "solve": "tablegym.search.solver",
    "solved_values": "tablegym.search.solver",
    "Solver": "tablegym.search.solver",
    "SolveResult": "tablegym.search.solver",
    "Evaluator": "tablegym.search.evaluator",
    "KernelEvaluator": "tablegym.search.evaluator",
    "play_game": "tablegym.search.play",
    "GameRecord": "tablegym.search.play",
    "random_opening": "tablegym.search.play",
    "sample_chance": "tablegym.search.play",
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
