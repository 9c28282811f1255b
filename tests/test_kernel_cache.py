"""numba's disk cache keyed by the sources the kernels reach (tablegym/kernel_cache.py), on a tiny
namespace package laid out as tablegym is (a folder per subpackage), in a temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from numba.core import config

from tablegym.kernel_cache import USED, kernel_sources, use_source_keyed_cache

CALLEE = """from numba import njit


@njit(cache=True)
def value():
    return {value}
"""
CALLER = """from numba import njit

from {name}.rules.callee import value


@njit(cache=True)
def twice():
    return 2 * value()
"""
HELPER = """from {name}.rules.data import SCALE  # a value the kernel of caller.py never reads
"""
RUN = """
from plain.rules.caller import twice as plain  # numba's own cache: __pycache__ beside each file
from pathlib import Path
from tablegym.kernel_cache import use_source_keyed_cache
print(use_source_keyed_cache(Path.cwd() / "keyed", ("rules",), "keyed"))
from keyed.rules.caller import twice as keyed
print(plain(), keyed())
"""


def tiny_package(folder: Path, name: str, value: int = 1) -> Path:
    """``name``/rules: callee.py's kernel returns ``value``, caller.py's returns twice that."""
    rules = folder / name / "rules"
    rules.mkdir(parents=True, exist_ok=True)
    (rules / "__init__.py").write_text("")
    (rules / "callee.py").write_text(CALLEE.format(value=value))
    (rules / "caller.py").write_text(CALLER.format(name=name))
    return folder / name


def run(folder: Path) -> list[str]:
    """RUN in a fresh interpreter in ``folder``: the keyed cache folder, then both results."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = os.pathsep.join([str(folder), *filter(None, [os.environ.get("PYTHONPATH")])])
    done = subprocess.run([sys.executable, "-c", RUN], cwd=folder, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")[-3:-1]


def test_an_edited_callee_recompiles_its_caller(tmp_path):
    # numba checks a cached function against its own file only: the plain caller keeps the machine
    # code of the callee it was compiled with, the keyed one is compiled again.
    for name in ("plain", "keyed"):
        tiny_package(tmp_path, name, value=1)
    first, results = run(tmp_path)
    assert results == "2 2"
    for name in ("plain", "keyed"):
        tiny_package(tmp_path, name, value=5)  # caller.py unchanged
    second, results = run(tmp_path)
    assert results == "2 10"
    assert list(Path(first).glob("*/caller.twice-*.nbi"))  # the first run cached its caller there
    assert Path(second).parent == Path(first).parent == tmp_path / "keyed" / "__pycache__"
    assert second != first and Path(first).is_dir()  # the old folder kept for a switch back


def test_the_digest_covers_numba_modules_and_what_they_import(tmp_path):
    root = tiny_package(tmp_path, "keyed")
    rules = root / "rules"
    (rules / "data.py").write_text("SCALE = 3\n")  # no numba, but imported by a kernel's module
    (rules / "helper.py").write_text(HELPER.format(name="keyed"))  # neither numba nor imported by one
    (rules / "caller.py").write_text(CALLER.format(name="keyed") + "from keyed.rules.data import SCALE\n")
    assert kernel_sources(root, ["rules"], "keyed") == [rules / n for n in ("callee.py", "caller.py", "data.py")]


@pytest.fixture
def numba_settings(monkeypatch):
    """numba's cache setting as it was, after the test (the package's own folder)."""
    monkeypatch.setattr(config, "CACHE_DIR", config.CACHE_DIR)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    return monkeypatch


def test_a_user_s_cache_dir_holds_the_folder(tmp_path, numba_settings):
    root = tiny_package(tmp_path, "keyed")
    numba_settings.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    folder = use_source_keyed_cache(root, ["rules"], "keyed")
    assert folder.parent == tmp_path / "mine" and folder.name.startswith("keyed-")
    assert config.CACHE_DIR == str(folder)


def test_a_read_only_package_caches_in_numba_s_user_wide_folder(tmp_path, numba_settings):
    root = tiny_package(tmp_path, "keyed")
    (root / "__pycache__").write_text("")  # no folder can be made there, as in a read-only install
    numba_settings.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    folder = use_source_keyed_cache(root, ["rules"], "keyed")
    assert folder.parent == tmp_path / "home-cache" / "numba"


def test_old_folders_are_pruned_but_the_last_used(tmp_path, numba_settings):
    root = tiny_package(tmp_path, "keyed")
    base = root / "__pycache__"
    old = [base / f"keyed-{i:016x}" for i in range(5)]
    for i, folder in enumerate(old):
        folder.mkdir(parents=True)
        (folder / USED).touch()
        os.utime(folder / USED, (time.time() - 1000 + i, time.time() - 1000 + i))
    (base / "other-0000000000000000").mkdir()  # not a folder of this package
    current = use_source_keyed_cache(root, ["rules"], "keyed")
    assert sorted(base.iterdir()) == sorted([current, *old[2:], base / "other-0000000000000000"])
