"""The argument parser every command line of the package uses: its errors are one line.

It lives here, below the command line (experiments/cli.py) and beside the trainers' flags
(training/runs.py ``parse_dataclass_args``), and imports nothing but argparse, so that starting
``tablegym`` loads no torch."""

from __future__ import annotations

import argparse


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (the problem and what is accepted), exit 2:
    the usage is one ``--help`` away rather than printed above every mistake."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")
