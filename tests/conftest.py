"""Test-wide settings."""

from __future__ import annotations

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
