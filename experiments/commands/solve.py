"""``tablegym solve``: a small two-player game solved exactly from its first position, within a
bounded table."""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from tablegym.envs import make_game, plugin
from tablegym.envs.core import Game, KernelState
from tablegym.experiments.commands.shared import InputError, game_from_args, positive_float, require
from tablegym.training.flags import bounded_int


def _value_in_words(value: float) -> str:
    """A solved value for the player to move at the start, in words."""
    if value > 0:
        return "first player wins"
    if value < 0:
        return "second player wins"
    return "draw"


def _fmt_int(x: Any) -> str:
    return f"{x:,}" if isinstance(x, (int, np.integer)) else str(x)


_HOPELESS = 1000
"""``tablegym solve`` refuses, unless given a limit, a game whose estimated tree holds this many
times the positions its table may hold (the tree counts a position once per way to reach it,
and the solver stops at a node's first winning move, so it stores far fewer)."""


def _report_solve(game: Game, run: Any, progress: Any) -> None:
    """Solve once (loading the compiled kernels, reporting ``progress``), then print the result
    and, for a solve under a second, the median of 5 more."""
    from tablegym.search.solver import limits

    with limits(progress=progress, progress_seconds=2.0):
        first = run()
    times = [run().seconds for _ in range(5)] if first.seconds < 1.0 else []
    root = game.new_initial_state()
    print(f"{game!r}: {_value_in_words(first.value)} (value {first.value:+g} for the first player)")
    best = getattr(first, "best_action", None)
    if best is not None and best >= 0:
        print(f"  best first move: {root.action_to_string(best)}")
    print(f"  positions stored: {_fmt_int(first.positions_stored)}   nodes: {_fmt_int(first.nodes)}")
    if times:
        print(
            f"  time: {statistics.median(times) * 1000:.2f} ms median of 5 solves after warm-up "
            f"(first solve, with JIT loading: {first.seconds * 1000:.1f} ms)"
        )
    else:
        print(f"  time: {first.seconds:.1f} s (one solve)")


def _solve_progress(game: Game) -> Callable[[Any], None]:
    """A ``Solver`` progress callback that prints one line to stderr."""

    def report(p: Any) -> None:
        print(
            f"  solving {game!r}: {p.positions_stored:,} positions stored, {p.nodes:,} nodes, "
            f"{p.nodes_per_second / 1e6:.2f}M nodes/s, {p.seconds:.0f} s",
            file=sys.stderr,
            flush=True,
        )

    return report


def _memory_words(max_bytes: int, given: bool) -> str:
    mb = f"{max_bytes / 2**20:,.0f} MB"
    return f"--max-memory {mb}" if given else f"{mb} (half the free memory; --max-memory)"


def _cmd_solve(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from tablegym.search.solver import SolveLimitError, capacity, default_max_bytes, estimate_tree_size, limits

    game, options = game_from_args(parser, args)
    record = plugin(args.game)
    max_bytes = int(args.max_memory * 2**20) if args.max_memory is not None else default_max_bytes()
    explicit = args.max_entries is not None or args.max_memory is not None
    # Without options, a game's record may name the cases worth solving (Sim: K3-K6, the
    # published facts: K3-K5 draws, K6 a second-player win).
    games = [make_game(args.game, **case) for case in record.solve_cases] if not options and record.solve_cases else [game]
    for g in games:
        if record.solver:
            module, _, attr = record.solver.partition(":")
            solver = require(module, attr, f"the {args.game} solver")
            run = functools.partial(solver, g)
        else:
            root = g.new_initial_state()
            if g.spec.chance or g.spec.num_players != 2 or not isinstance(root, KernelState):
                why = (
                    "has chance nodes"
                    if g.spec.chance
                    else ("is not a two-player game" if g.spec.num_players != 2 else "has no compiled kernels")
                )
                parser.error(f"the exact solver is for two-player games without chance with compiled kernels; {args.game} {why}")
            tree = estimate_tree_size(root) if not explicit else 0.0
            fits = capacity(max_bytes)
            if tree > _HOPELESS * fits:
                raise InputError(
                    f"{g!r} is out of reach: its game tree has about {tree:.1e} positions (estimated from "
                    f"random games), a table in {_memory_words(max_bytes, False)} holds {fits:,}; "
                    f"to try anyway give --max-memory MB or --max-entries N (the solve stops there)"
                )
            solve = require("tablegym.search.solver", "solve", "the exact solver")
            run = functools.partial(solve, root)
        try:
            with limits(max_entries=args.max_entries, max_bytes=max_bytes):
                _report_solve(g, run, None if args.no_progress else _solve_progress(g))
        except SolveLimitError as err:
            limit = (
                _memory_words(max_bytes, args.max_memory is not None) if err.by_memory else f"--max-entries {err.max_entries:,}"
            )
            raise InputError(
                f"solving {g!r} stopped at the table limit, {limit}: {err.positions_stored:,} positions "
                f"stored, {err.nodes:,} nodes searched; give a larger "
                f"{'--max-memory MB' if err.by_memory else '--max-entries N'} to go on"
            ) from None
    return 0


def add_command(sub: Any, game_opts: argparse.ArgumentParser) -> None:
    """Add ``solve`` to the subcommands ``sub``."""
    p = sub.add_parser(
        "solve",
        parents=[game_opts],
        help="solve a small game exactly",
        description="Solve a two-player game exactly from its first position. The table of solved "
        "positions is bounded (default: half the free memory); a solve that reaches the "
        "bound stops with exit status 2, and a game whose tree is far too big for it is "
        "refused unless a limit is given.",
    )
    p.add_argument(
        "--max-entries",
        type=bounded_int(1),
        metavar="N",
        help="store at most N positions; also lets a game whose estimate is over the bound try",
    )
    p.add_argument(
        "--max-memory",
        type=positive_float,
        metavar="MB",
        help="keep the table within MB megabytes (default: half the free memory)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    p.set_defaults(run=_cmd_solve, parser=p)
