"""Sim (the game behind the "Cassis" app): rules core, canonical form, Cassis opponents, solve.

Every name below is loaded on first use, so importing the package (as the game registry does
for ``tablegym.envs.sim.plugin``) compiles nothing; ``solve_sim`` lives in
heuristics.py because it needs tablegym.search.
"""

import importlib
from typing import Any

_LAZY = {
    **dict.fromkeys(("canonical_form", "canonical_key", "decode_key", "k_canonical"), "canonical"),
    **dict.fromkeys(("SimGame", "SimState"), "core"),
    **dict.fromkeys(("solve_sim", "solve_game", "AGENTS", "EVALUATORS", "SAFE_MOVES",
                     "DumbAgent", "EasyAgent", "MediumAgent", "ExpertAgent"), "heuristics"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"tablegym.envs.sim.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = list(_LAZY)
