"""Lazy package exports (PEP 562), shared by ``tablegym.search``, ``tablegym.models`` and
``tablegym.training``: a package lists its public names and the modules defining them, and each
name loads its module on first use, so importing the package stays cheap and compiles nothing."""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any, Callable


class _Package(types.ModuleType):
    """A package whose public name may equal one of its modules' (``search.expectimax`` the
    function, defined in ``search/expectimax.py``): importing that module does not rebind the
    name to the module, so ``from tablegym.search import expectimax`` is the function whichever
    module was imported first. The price: ``import tablegym.search.expectimax as m`` binds the
    function too (that form reads the package's attribute); ``from tablegym.search.expectimax
    import ...`` reaches the module's other names."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and name in self.__dict__.get("_function_names", ()):
            return
        super().__setattr__(name, value)


def lazy_exports(package: str, namespace: dict[str, Any], *, elsewhere: dict[str, list[str]] | None = None,
                 **modules: list[str]) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``(__all__, __getattr__, __dir__)`` for ``package`` whose public names are listed by the
    module (relative to the package) that defines them: ``agents=["Agent", ...]``; ``elsewhere``
    lists names the package offers from a module of a lower layer, by its full name (the search
    package's ``Evaluator``, defined beside the games' heuristics in ``tablegym.envs.evaluator``)."""
    exports = {name: f"{package}.{module}" for module, names in modules.items() for name in names}
    exports.update({name: module for module, names in (elsewhere or {}).items() for name in names})
    names = sorted(exports)
    namespace["_function_names"] = frozenset(name for name in exports if name in modules)
    sys.modules[package].__class__ = _Package
    for name in namespace["_function_names"]:  # a module of that name imported already: the name again
        if isinstance(namespace.get(name), types.ModuleType):
            del namespace[name]

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return names

    return names, __getattr__, __dir__
