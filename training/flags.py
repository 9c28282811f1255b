"""The argument parser every command line of the package uses: its errors are one line; and the
check of an output file's flag (``--out``, ``--csv``) before any work.

It lives here, below the command line (experiments/cli.py) and beside the trainers' flags
(training/runs.py ``parse_dataclass_args``), and imports nothing but argparse and os, so that
starting ``tablegym`` loads no torch."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import NoReturn


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (the problem and what is accepted), exit 2:
    the usage is one ``--help`` away rather than printed above every mistake."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def bounded_int(low: int, high: int | None = None, why: str = "") -> Callable[[str], int]:
    """An argparse type: an integer in ``low..high`` (no upper bound when ``high`` is None); the
    one-line error names the bound and, when given, ``why`` it is there."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {value}")
        if high is not None and value > high:
            because = f" ({why})" if why else ""
            raise argparse.ArgumentTypeError(f"must be at most {high:,}{because}, got {value:,}")
        return value

    return parse


def unwritable(flag: str, path: str) -> str | None:
    """Why the output file ``path`` of ``flag`` could not be written (one line), or None: a
    folder there, or a folder to hold it that is missing or read-only (nothing is made for it)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path) or not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        what = "is a folder" if os.path.isdir(path) else f"cannot be written (folder {folder!r} missing or read-only)"
        return f"{flag} {path!r} {what}; give a file in a folder that exists"
    return None


def check_writable(parser: argparse.ArgumentParser, flag: str, path: str) -> None:
    """Refuse an output file that could not be written (``unwritable``), before any work: a usage
    error, one line, exit 2."""
    problem = unwritable(flag, path)
    if problem:
        parser.error(problem)


def check_appendable(parser: argparse.ArgumentParser, flag: str, path: str) -> None:
    """Refuse a file of records to append to (``--out`` of JSON lines) that could not be written
    (``check_writable``) or that is a symbolic link, which would be appended through."""
    check_writable(parser, flag, path)
    if os.path.islink(path):
        parser.error(f"{flag} {path!r} is a symbolic link (to {os.readlink(path)!r}); records are appended to a plain file only")
