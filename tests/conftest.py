"""Test-wide settings."""

from __future__ import annotations

import sys

import pytest


@pytest.fixture(autouse=True, scope="session")
def _sb3_log_folder(tmp_path_factory: pytest.TempPathFactory):
    """SB3 makes a new empty log folder in the temp directory at every ``learn`` of a model built
    without one (the tests build many, as users do): the tests' go in one folder of pytest's own,
    which pytest clears with its old runs."""
    patch = pytest.MonkeyPatch()
    patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3")))
    yield
    patch.undo()


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """torch in one thread in every test, as the trainers set it (``--threads 1``): two threads
    waiting on each other on a busy 2-core machine, with a second test worker beside them, made a
    forward pass of a small network 3-30 times slower (the shipped starship generator drew a ship
    in 27 s of wall and 63 s of CPU rather than 8 and 18). Without it a test ran in one or two
    threads by whether a trainer had run before it in the same worker."""
    torch = sys.modules.get("torch")  # imported by the test module or an earlier test; else the test's own default
    if torch is not None:
        torch.set_num_threads(1)
