"""The package's shape, checked from the source: the generic folders reach a game only through
its registry record, and module-level imports point one way (rules <- search <- models <-
training <- experiments). A lazy import inside a function may look upwards (the envs' opponent
specs resolve through ``tablegym.models.agents`` on first use); a module-level one may not."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tablegym.envs import BUILTIN

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("envs", "search", "models", "training", "experiments")
GENERIC = LAYERS[1:]
TOUR = {"experiments/demo.py"}  # the README's first command: a guided tour of named games


def _imports(path: Path, *, module_level: bool) -> list[str]:
    """The ``tablegym.*`` modules ``path`` imports (at module level only, or anywhere)."""
    tree = ast.parse(path.read_text())
    nodes = tree.body if module_level else list(ast.walk(tree))
    if module_level:  # imports under a module-level if/try still run at import time
        nodes = [n for top in tree.body for n in ast.walk(top) if not isinstance(top, (ast.FunctionDef, ast.ClassDef))]
    out = []
    for node in nodes:
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return [m for m in out if m.startswith("tablegym.")]


def _files(layer: str) -> list[Path]:
    return sorted((ROOT / layer).rglob("*.py"))


def test_the_builtin_game_folders_exist():
    assert {p.name for p in (ROOT / "envs").iterdir() if (p / "game.toml").exists()} == set(BUILTIN)


@pytest.mark.parametrize("layer", GENERIC)
def test_generic_folders_import_no_game(layer):
    games = tuple(f"tablegym.envs.{g}" for g in BUILTIN)
    bad = [f"{path.relative_to(ROOT)}: {m}" for path in _files(layer) if str(path.relative_to(ROOT)) not in TOUR
           for m in _imports(path, module_level=False) if m.startswith(games) and m.split(".")[2] in BUILTIN]
    assert bad == []


@pytest.mark.parametrize("layer", LAYERS)
def test_module_level_imports_point_downwards(layer):
    rank = {name: i for i, name in enumerate(LAYERS)}
    bad = []
    for path in _files(layer):
        if layer == "envs" and path.relative_to(ROOT / "envs").parts[0] in BUILTIN:
            continue  # a game's folder holds modules of every layer (its train.py is training code)
        for m in _imports(path, module_level=True):
            target = m.split(".")[1]
            if target in rank and rank[target] > rank[layer]:
                bad.append(f"{path.relative_to(ROOT)}: {m}")
    assert bad == []


def test_public_names_are_functions_even_after_their_modules_were_imported():
    """``search.expectimax`` is both a function and the module defining it: importing the module
    (which every agent does) must not turn the package's public name into the module. Run in a
    fresh interpreter, where the modules are imported first."""
    import subprocess
    import sys

    code = ("import types, tablegym.search.expectimax, tablegym.search.alphabeta, tablegym.search.expectiminimax\n"
            "import tablegym.search.solver\n"
            "from tablegym.search import alphabeta, expectimax, expectiminimax\n"
            "import tablegym.search as S\n"
            "assert all(isinstance(f, types.FunctionType) for f in (alphabeta, expectimax, expectiminimax, S.expectimax))\n"
            "assert expectimax.__module__ == 'tablegym.search.expectimax'\n")
    subprocess.run([sys.executable, "-c", code], check=True)
