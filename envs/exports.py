"""Lazy package exports (PEP 562), shared by ``tablegym.search``, ``tablegym.models`` and
``tablegym.training``: a package lists its public names and the modules defining them, and each
name loads its module on first use, so importing the package stays cheap and compiles nothing."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, namespace: dict[str, Any], *, elsewhere: dict[str, list[str]] | None = None, **modules: list[str]
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``(__all__, __getattr__, __dir__)`` for ``package`` whose public names are listed by the
    module (relative to the package) that defines them: ``agents=["Agent", ...]``; ``elsewhere``
    lists names the package offers from a module of a lower layer, by its full name (the search
    package's ``Evaluator``, defined beside the games' heuristics in ``tablegym.envs.evaluator``)."""
    exports = {name: f"{package}.{module}" for module, names in modules.items() for name in names}
    exports.update({name: module for module, names in (elsewhere or {}).items() for name in names})
    names = sorted(exports)
    clash = sorted(set(exports) & set(modules))
    if clash:  # importing the module would rebind the package's public name to it
        raise ValueError(f"{package}: public names {clash} are also module names; name the modules apart")

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return names

    return names, __getattr__, __dir__
