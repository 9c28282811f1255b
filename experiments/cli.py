"""The ``tablegym`` command line: play, solve, eval, bench, starship and train (one module each in
experiments/commands/, a game's own subcommand through its record).

::

    tablegym play trilobite --agent alphabeta --eval learned --depth 5
    tablegym play threes --option hint=candidates      (you play; --agent threesus watches an agent)
    tablegym play friday --level 2                      (you play Friday, level 1-4)
    tablegym solve sim --n 6
    tablegym eval trilobite random "alphabeta:depth=3,eval=advanced" --games 200 --workers 4 --elo
    tablegym eval friday rules "bestfirst:nodes=10000" --level 1 --games 500 --workers 2
    tablegym bench sim-solve
    tablegym train --help            (everything after 'train' goes to tablegym.training.td)
    tablegym train threes --help     (the Threes n-tuple network: tablegym.training.threes.train)
    tablegym train friday --help     (the Friday value network: tablegym.training.friday.train)
    tablegym starship --seed 7 --out ship.png             (one generated ship, its validity and quality)
    tablegym starship --seed 7 --stages --out stages.png  (the ship after each of the 14 stages)
    tablegym --version

Bad arguments end in an argparse error naming the problem (exit status 2); a feature whose
module is not installed ends in a one-line error (exit status 1); never in a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Sequence

from tablegym import __version__
from tablegym.envs import load, plugins
from tablegym.envs.limits import LimitError
from tablegym.experiments.commands import bench, evaluate, play, solve
from tablegym.experiments.commands.shared import PROG, CommandError, InputError, game_options_parser, usage_error
from tablegym.experiments.commands.train import train
from tablegym.training.flags import OneLineParser


def _one_line_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, line: str | None = None
) -> str:
    return f"{PROG}: warning: {message}\n"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand except ``train`` (which forwards its arguments)."""
    parser = OneLineParser(prog=PROG, description="Tabletop games: play, solve, evaluate, benchmark, train.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = ["play", "solve", "eval", "bench", *(p.name for p in plugins() if p.command), "train"]
    sub = parser.add_subparsers(dest="command", metavar="{" + ",".join(commands) + "}", required=True)
    game_opts = game_options_parser()
    for command in (play, solve, evaluate, bench):
        command.add_command(sub, game_opts)

    for record in plugins():  # the games' own subcommands (the starship generator's)
        if record.command:
            load(record.command)(sub)

    sub.add_parser("train", help="train a game's value network (tablegym train --help lists the games)", add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (argument errors exit with status 2)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "train":
            return train(argv[1:])
        args = build_parser().parse_args(argv)
        warnings.formatwarning = _one_line_warning
        with contextlib.ExitStack() as scope:  # this command only: nothing leaks into the next call or os.environ
            if getattr(args, "trust_model_code", False):  # its workers get the decision with each task
                from tablegym.models.trust import trusting

                scope.enter_context(trusting(True, "--trust-model-code"))
            if getattr(args, "max_model_mb", None):
                from tablegym.envs.limits import raised_limits

                scope.enter_context(raised_limits(model_bytes=args.max_model_mb << 20))
            return args.run(args.parser, args)
    except CommandError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 1
    except InputError as err:
        return usage_error(str(err))
    except LimitError as err:  # a file over a budget (a journal line, a config): refused like bad input
        return usage_error(str(err))
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (``| head``): stop quietly, as other command-line tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":  # python -m: run the package's module, whose error classes the subcommands raise
    from tablegym.experiments.cli import main as package_main

    sys.exit(package_main())
