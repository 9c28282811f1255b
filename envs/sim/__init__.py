"""Sim (the game behind the "Cassis" app): rules core, canonical form, Cassis opponents, solve.

``solve_sim`` and ``bench_sim_solve`` live in heuristics.py (they need tablegym.search); they
are loaded on first use so that importing the rules core stays light.
"""

from typing import Any

from tablegym.envs.sim.canonical import canonical_form, canonical_key, decode_key, k_canonical
from tablegym.envs.sim.core import SimGame, SimState

_LAZY = ("solve_sim", "bench_sim_solve", "AGENTS", "EVALUATORS", "SAFE_MOVES",
         "DumbAgent", "EasyAgent", "MediumAgent", "ExpertAgent")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from tablegym.envs.sim import heuristics

        return getattr(heuristics, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SimGame", "SimState", "canonical_form", "canonical_key", "decode_key", "k_canonical", *_LAZY]
