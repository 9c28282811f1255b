"""The package's shape, checked from the source: the generic folders reach a game only through
its registry record, and imports point one way, lazy ones inside functions included (rules <-
search <- models <- training <- experiments; interop sits beside models, whose agent front door
lists its searchers). A lower layer reaches a higher one only through a declared registry
lookup (``tablegym.envs.above``, a record's entry points), never by an import statement."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tablegym.envs import BUILTIN

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("envs", "search", "models", "training", "experiments")
RANK = {**{name: i for i, name in enumerate(LAYERS)}, "interop": LAYERS.index("models")}
GENERIC = LAYERS[1:]
TOUR = {"experiments/demo.py"}  # the README's first command: a guided tour of named games

EXPERIMENT_NAMES = (
    "train",
    "sb3",
    "rl",
    "evaluate",
    "records",
    "bench",
    "regress",
    "agreement",
    "audit",
    "two_sample",
    "targets_eval",
    "imitate",
    "command",
    "compare",
    "sweep",
)
"""Words that name an experiment, a baseline or a trainer: no module of a game's rules folder
is named for one (they live in experiments/<game>/ and training/<game>/)."""


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


def _upward(path: Path, layer: str) -> set[str]:
    """The higher layers ``path`` (of ``layer``) imports, anywhere in it."""
    return {
        m.split(".")[1]
        for m in _imports(path, module_level=False)
        if m.split(".")[1] in RANK and RANK[m.split(".")[1]] > RANK[layer]
    }


def test_the_builtin_game_folders_exist():
    assert {p.name for p in (ROOT / "envs").iterdir() if (p / "game.toml").exists()} == set(BUILTIN)


def _game_folder(path: Path) -> bool:
    """A folder named for a game inside a layer (training/trap/, experiments/starship/)."""
    parts = path.relative_to(ROOT).parts
    return len(parts) > 2 and parts[1] in BUILTIN


@pytest.mark.parametrize("layer", GENERIC)
def test_generic_folders_import_no_game(layer):
    """Outside the folders named for a game, a layer reaches a game only through its record."""
    games = tuple(f"tablegym.envs.{g}" for g in BUILTIN)
    bad = [
        f"{path.relative_to(ROOT)}: {m}"
        for path in _files(layer)
        if str(path.relative_to(ROOT)) not in TOUR and not _game_folder(path)
        for m in _imports(path, module_level=False)
        if m.startswith(games) and m.split(".")[2] in BUILTIN
    ]
    assert bad == []


def test_the_rules_package_imports_no_training_or_experiments():
    """Game folders included, and imports inside functions: ``tablegym.envs`` stands on its own."""
    bad = [
        f"{path.relative_to(ROOT)}: {m}"
        for path in _files("envs")
        for m in _imports(path, module_level=False)
        if m.split(".")[1] in ("training", "experiments")
    ]
    assert bad == []


@pytest.mark.parametrize("layer", [*LAYERS, "interop"])
def test_imports_point_downwards_even_inside_functions(layer):
    bad = []
    for path in _files(layer):
        name = str(path.relative_to(ROOT))
        bad += [f"{name}: imports tablegym.{target}" for target in sorted(_upward(path, layer))]
    assert bad == []


def test_no_module_of_a_game_folder_is_named_for_an_experiment_or_a_trainer():
    bad = [
        str(p.relative_to(ROOT))
        for game in BUILTIN
        for p in (ROOT / "envs" / game).glob("*.py")
        if any(p.stem == w or p.stem.startswith(f"{w}_") for w in EXPERIMENT_NAMES)
    ]
    assert bad == []


def test_public_names_are_functions_even_after_their_modules_were_imported():
    """``search.expectimax`` is a function, defined in ``search/expectimax_search.py``: importing
    the module (which every agent does) leaves the package's public name the function. Run in a
    fresh interpreter, where the modules are imported first."""
    import subprocess
    import sys

    code = (
        "import types, tablegym.search.expectimax_search, tablegym.search.alphabeta_search\n"
        "import tablegym.search.expectiminimax_search, tablegym.search.solver\n"
        "from tablegym.search import alphabeta, expectimax, expectiminimax\n"
        "import tablegym.search as S\n"
        "assert all(isinstance(f, types.FunctionType) for f in (alphabeta, expectimax, expectiminimax, S.expectimax))\n"
        "assert expectimax.__module__ == 'tablegym.search.expectimax_search'\n"
        "import tablegym.search.alphabeta_search as m\n"
        "assert isinstance(m, types.ModuleType) and m.alphabeta is alphabeta\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("package", ["search", "models", "training", "envs", "experiments"])
def test_no_public_name_of_a_package_is_also_one_of_its_modules(package):
    """A name that is both would be the function or the module depending on what was imported
    first (``import tablegym.search.alphabeta as m`` once gave the function)."""
    import importlib
    import pkgutil

    module = importlib.import_module(f"tablegym.{package}")
    modules = {m.name for m in pkgutil.iter_modules(module.__path__)}
    assert sorted(set(getattr(module, "__all__", ())) & modules) == []
