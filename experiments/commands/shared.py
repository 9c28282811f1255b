"""What the subcommands of ``tablegym`` share: their errors (one line, never a traceback), the
game options every game-taking command reads, spec composition and ``key=value`` parsing."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from tablegym.envs.core import Game
from tablegym.experiments.games import GAMES, cached_game
from tablegym.training.flags import bounded_int

PROG = "tablegym"


class CommandError(Exception):
    """A command that cannot run as asked, for a reason other than its arguments."""


def require(module: str, attr: str, what: str) -> Callable[..., Any]:
    """Import ``module.attr``, or say plainly that ``what`` is not available in this install."""
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name and module.startswith(err.name):
            raise CommandError(f"{what} is not available: module {module} is not installed") from None
        raise
    try:
        return getattr(mod, attr)
    except AttributeError:
        raise CommandError(f"{what} is not available: {module} has no {attr}") from None


class InputError(Exception):
    """Input refused for a reason argparse cannot see (a model file that would run code, a Ray
    cluster that is not there): one line, exit status 2, like an argument error."""


def make_agent_checked(game: Game, spec: str) -> Any:
    make_agent = require("tablegym.models.agents", "make_agent", "building agents from specs")
    from tablegym.models.checkpoint import UnsafeModelError

    try:
        return make_agent(game, spec)
    except UnsafeModelError as err:  # not a usage error: the spec is fine, the file is not
        raise InputError(f"agent {spec!r}: {err}") from None


def compose_spec(agent: str, *, eval: str | None = None, depth: int | None = None, time: float | None = None) -> str:
    """Join ``--agent/--eval/--depth/--time`` into one spec string.

    >>> compose_spec("alphabeta", eval="learned", depth=5)
    'alphabeta:eval=learned,depth=5'
    >>> compose_spec("random")
    'random'
    """
    params = [f"{k}={v}" for k, v in (("eval", eval), ("depth", depth), ("time", time)) if v is not None]
    if not params:
        return agent
    return agent + ("," if ":" in agent else ":") + ",".join(params)


def parse_value(text: str) -> Any:
    """A command-line value as int, float, bool or str, in that order of preference."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def key_values(parser: argparse.ArgumentParser, items: Sequence[str], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            parser.error(f"{flag} needs key=value, got {item!r}")
        out[key.strip().replace("-", "_")] = value.strip()
    return out


_GAME_FLAGS = ("n", "width", "height", "win_length", "first_player", "level")


def game_from_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[Game, dict[str, Any]]:
    """Build the game from its name, ``--option key=value`` and the dedicated flags (once a process:
    the match or run the command starts asks for the same game)."""
    options: dict[str, Any] = key_values(parser, args.option, "--option")
    for key in _GAME_FLAGS:
        value = getattr(args, key)
        if value is None:
            continue
        if key in options:
            parser.error(f"game option {key!r} given twice (--option and --{key.replace('_', '-')})")
        options[key] = value
    try:
        return cached_game(args.game, tuple(sorted(options.items()))), options
    except ValueError as err:
        parser.error(str(err))


def game_options_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("game options")
    g.add_argument("game", help=f"one of: {', '.join(GAMES)}")
    g.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a game option (repeatable), e.g. --option win_length=5",
    )
    g.add_argument("--n", type=int, help="sim: number of points; trap: board side")
    g.add_argument("--width", type=int, help="trilobite: board width")
    g.add_argument("--height", type=int, help="trilobite: board height")
    g.add_argument("--win-length", dest="win_length", type=int, help="trilobite: chips in a row to win")
    g.add_argument("--first-player", dest="first_player", type=int, choices=(0, 1), help="player who moves first")
    g.add_argument("--level", type=int, help="friday: difficulty level 1-4")
    p.add_argument(
        "--trust-model-code",
        action="store_true",
        help="load Stable-Baselines3 zips with SB3's own loader, which runs code the file carries: "
        "only for files you trust (default: read as data, refuse what carries code)",
    )
    p.add_argument(
        "--max-model-mb",
        type=bounded_int(1),
        metavar="MB",
        help="the most memory a model file may ask for once inflated (default: 1024); a larger one is refused before it is read",
    )
    return p


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text!r}")
    return value


def usage_error(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2
