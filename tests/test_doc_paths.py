"""Every file a docstring or comment of the package or its tests names exists: a reader who
follows ``envs/trap/core.py`` or ``results/trap/README.md`` finds it (paths are from the
repository root; ``models/sb3_files.restore`` names a function of ``models/sb3_files.py``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("envs", "search", "models", "training", "experiments", "interop", "tests")
PATH = re.compile(r"(?<![\w./-])((?:envs|search|models|training|experiments|interop|tests|results)/[\w./-]*\w)")


def _texts(path: Path) -> list[str]:
    """The docstrings and comments of a Python file."""
    source = path.read_text()
    docs = [
        ast.get_docstring(node, clean=False)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    return [d for d in docs if d] + [line.split("#", 1)[1] for line in source.splitlines() if "#" in line]


def _exists(ref: str) -> bool:
    if "*" in ref or "<" in ref or (ROOT / ref).exists():
        return True
    module, _, _ = ref.rpartition(".")  # a name inside a module: models/sb3_files.restore
    return bool(module) and (ROOT / f"{module}.py").exists()


def test_every_path_named_in_a_docstring_or_comment_exists():
    missing = [
        f"{path.relative_to(ROOT)}: {ref}"
        for folder in FOLDERS
        for path in sorted((ROOT / folder).rglob("*.py"))
        for text in _texts(path)
        for ref in PATH.findall(text)
        if not _exists(ref.rstrip("."))
    ]
    assert missing == []


def test_the_check_finds_a_missing_path(tmp_path):
    assert _exists("envs/trap/core.py") and _exists("models/sb3_files.restore")
    assert not _exists("envs/trap/sb3.py") and not _exists("models/learned_friday.py")
