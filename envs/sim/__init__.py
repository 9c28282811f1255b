"""Sim (the game behind the "Cassis" app): rules core, canonical form, the hand-made evaluator.
The app's opponents and the exact solve play by the search, so they live a layer up, in
tablegym.models.sim.agents.

Every name below is loaded on first use, so importing the package (as the game registry does
for ``tablegym.envs.sim.plugin``) compiles nothing.
"""

import importlib
from typing import Any

_LAZY = {
    **dict.fromkeys(("canonical_form", "canonical_key", "decode_key", "k_canonical"), "canonical"),
    **dict.fromkeys(("SimGame", "SimState"), "core"),
    **dict.fromkeys(("EVALUATORS", "SAFE_MOVES"), "heuristics"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"tablegym.envs.sim.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = list(_LAZY)
