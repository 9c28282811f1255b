"""numba's disk cache in a folder named after the sources the package's kernels can reach.

numba checks only the source file of a cached function itself. A kernel that calls a kernel of
another module keeps the callee's machine code in its own cache file, so after an edit of the
callee it would go on running code that no longer exists (a test then checks the old code).
Here every cached kernel of the package lives in one folder named after a digest of the
sources: every module that imports numba, and every package module one of them imports (numba
freezes the values it reads there, such as arrays and constants, into machine code). An edit
of any of them opens a new, empty folder, and the kernels compile afresh as they are used; an
edit of anything else (a trainer, the command line) keeps the compiled kernels.

The folder, ``NAME-DIGEST``, lies under the first of these that can be written:

- ``$NUMBA_CACHE_DIR`` (numba's own setting), where the user gave one;
- ``__pycache__`` in the package's folder (beside ``envs/``, ``search/``, ...);
- numba's user-wide cache folder, where the package cannot be written (an install in a
  read-only site-packages).

Where none can, numba's own choice stands. The folders of other digests there are removed
when a new one opens, but for the ``KEEP`` used last (switching back to a branch finds its
kernels compiled). numba keeps one cache folder for a process, so other libraries' cached
functions compiled after this package is imported go into the folder too.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

PACKAGES = ("envs", "search", "models", "training", "experiments", "interop")
"""tablegym's subpackages, each a folder of the root ``tablegym.envs`` hands in (``tablegym.envs`` is
ROOT/envs): in a checkout the repository, in an install the tablegym folder."""
KEEP = 3
"""Folders of other digests kept beside the one in use, the most recently used first."""
USED = "last-used"
"""The file in a cache folder whose time says when a process last took the folder."""

_IMPORTS_NUMBA = re.compile(rb"^[ \t]*(?:from[ \t]+numba[ \t.]|import[ \t]+numba\b)", re.MULTILINE)
_FROM_IMPORT = re.compile(rb"^from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.MULTILINE)
_IMPORT = re.compile(rb"^import[ \t]+([\w.]+)", re.MULTILINE)
"""Imports at the top level only: one inside a function binds no global that a kernel reads."""


def _reached(root: Path, packages: Iterable[str], name: str) -> dict[Path, bytes]:
    files = {}  # module name -> (path, text)
    for package in packages:
        for path in (root / package).rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            module = ".".join((name, *(parts[:-1] if parts[-1] == "__init__" else parts)))
            files[module] = (path, path.read_bytes())
    reached = {}
    for path, text in files.values():
        if b"numba" not in text or not _IMPORTS_NUMBA.search(text):
            continue
        reached[path] = text
        modules = [m.group(1).decode() for m in _IMPORT.finditer(text)]
        for m in _FROM_IMPORT.finditer(text):
            module = m.group(1).decode()
            names = re.findall(r"\w+", m.group(2).decode().split("#")[0])
            modules += [module] + [f"{module}.{n}" for n in names]
        for module in modules:
            if module in files:
                reached.setdefault(*files[module])
    return reached


def kernel_sources(root: Path, packages: Iterable[str], name: str) -> list[Path]:
    """The source files a cached kernel of the namespace ``name`` (its subpackages ``packages``,
    each a folder of ``root``) can reach: every module that imports numba, and each module of
    the namespace it imports at its top level, sorted."""
    return sorted(_reached(root, packages, name))


def sources_digest(root: Path, packages: Iterable[str], name: str) -> str:
    """16 hex digits of a digest of ``kernel_sources``' paths (relative to ``root``) and texts."""
    digest = hashlib.sha256()
    for path, text in sorted(_reached(root, packages, name).items()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + text + b"\0")
    return digest.hexdigest()[:16]


def cache_bases(root: Path, name: str = "tablegym") -> Iterator[Path]:
    """Where the cache folder of a package in ``root`` may lie, in order of preference:
    ``$NUMBA_CACHE_DIR`` where set, ``root/__pycache__``, numba's user-wide cache folder. A
    ``$NUMBA_CACHE_DIR`` that is already a folder of ``name`` was set by this module in a parent
    process (workers inherit it): its base is the parent's, so both take one folder. Lazily: the
    last needs numba imported, which importing the package does not."""
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        base = Path(user)
        yield base.parent if re.fullmatch(re.escape(name) + r"-[0-9a-f]{16}", base.name) else base
    yield root / "__pycache__"
    try:
        from numba.misc.appdirs import AppDirs
    except ImportError:  # moved in another numba: the two places above
        return
    yield Path(AppDirs(appname="numba", appauthor=False).user_cache_dir)


def _prune(base: Path, name: str, keep: Path) -> None:
    """Remove the folders of other digests under ``base`` but the ``KEEP`` used last. Another
    process still loading from one recompiles what it misses (numba recreates a folder)."""
    pattern = re.compile(re.escape(name) + r"-[0-9a-f]{16}")
    try:
        others = [f for f in base.iterdir() if f != keep and f.is_dir() and pattern.fullmatch(f.name)]
    except OSError:
        return

    def last_used(folder: Path) -> float:
        try:
            return (folder / USED).stat().st_mtime
        except OSError:
            return 0.0

    for folder in sorted(others, key=last_used, reverse=True)[KEEP:]:
        shutil.rmtree(folder, ignore_errors=True)


def use_source_keyed_cache(root: Path, packages: Sequence[str] = PACKAGES, name: str = "tablegym") -> Path | None:
    """Point numba's cache (``$NUMBA_CACHE_DIR``, and ``numba.config.CACHE_DIR`` where numba is
    imported) at the folder of the digest of what the kernels of ``name`` can reach, so that an edit of a callee recompiles its callers; the
    folder, or None where no candidate can be written (numba's own choice then stands). Call
    it before any of those kernels is defined: numba picks a function's folder then."""
    try:
        digest = sources_digest(root, packages, name)
    except OSError:  # a source file went away while it was read: numba's own choice for this process
        return None
    for base in cache_bases(root, name):
        folder = base / f"{name}-{digest}"
        try:
            new = not folder.is_dir()
            folder.mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=folder).close()  # numba's own test that a cache folder can be written
            (folder / USED).touch()
        except OSError:
            continue
        if new:
            _prune(base, name, folder)
        # numba reads the variable when it is imported (importing the package does not import
        # numba), and processes started from this one inherit it; a numba already imported is told
        os.environ["NUMBA_CACHE_DIR"] = os.fspath(folder)
        if "numba.core.config" in sys.modules:
            config = sys.modules["numba.core.config"]
            config.CACHE_DIR = os.fspath(folder)  # type: ignore[attr-defined]  # numba makes its config names at import
        return folder
    return None
