"""One version: ``tablegym.__version__`` is the installed distribution's, and ``tablegym --version``
prints it."""

from __future__ import annotations

import importlib.metadata

import pytest

import tablegym
from tablegym.experiments.cli import main


def test_version_is_the_installed_distribution_s():
    installed = importlib.metadata.version("tablegym")
    assert tablegym.__version__ == installed, (
        f"tablegym/__init__.py says {tablegym.__version__!r}, the installed distribution {installed!r}: "
        "reinstall (pip install -e .) after changing the version"
    )


def test_cli_version_prints_it(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"tablegym {tablegym.__version__}\n"
