"""The ``tablegym`` command line: play, solve, eval, bench, starship and train.

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

Bad arguments end in an argparse error naming the problem (exit status 2); a feature whose
module is not installed ends in a one-line error (exit status 1); never in a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import importlib
import inspect
import math
import os
import sys
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from tablegym.envs import load, plugin, plugins
from tablegym.envs.core import CHANCE, Game, KernelState, State
from tablegym.envs.limits import LimitError
from tablegym.experiments.game_runs import MAX_WORKERS
from tablegym.experiments.games import GAMES, make_game
from tablegym.experiments.stats import MAX_GAMES
from tablegym.training.flags import OneLineParser, bounded_int, check_writable

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


def _make_agent(game: Game, spec: str) -> Any:
    make_agent = require("tablegym.models.agents", "make_agent", "building agents from specs")
    from tablegym.models.checkpoint import UnsafeModelError

    try:
        return make_agent(game, spec)
    except UnsafeModelError as err:  # not a usage error: the spec is fine, the file is not
        raise InputError(f"agent {spec!r}: {err}") from None


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                      line: str | None = None) -> str:
    return f"{PROG}: warning: {message}\n"


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


def _game_from_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[Game, dict[str, Any]]:
    """Build the game from its name, ``--option key=value`` and the dedicated flags."""
    options: dict[str, Any] = key_values(parser, args.option, "--option")
    for key in _GAME_FLAGS:
        value = getattr(args, key)
        if value is None:
            continue
        if key in options:
            parser.error(f"game option {key!r} given twice (--option and --{key.replace('_', '-')})")
        options[key] = value
    try:
        return make_game(args.game, **options), options
    except ValueError as err:
        parser.error(str(err))


def _game_options_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("game options")
    g.add_argument("game", help=f"one of: {', '.join(GAMES)}")
    g.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a game option (repeatable), e.g. --option win_length=5")
    g.add_argument("--n", type=int, help="sim: number of points; trap: board side")
    g.add_argument("--width", type=int, help="trilobite: board width")
    g.add_argument("--height", type=int, help="trilobite: board height")
    g.add_argument("--win-length", dest="win_length", type=int, help="trilobite: chips in a row to win")
    g.add_argument("--first-player", dest="first_player", type=int, choices=(0, 1), help="player who moves first")
    g.add_argument("--level", type=int, help="friday: difficulty level 1-4")
    p.add_argument("--trust-model-code", action="store_true",
                   help="load Stable-Baselines3 zips with SB3's own loader, which runs code the file carries: "
                        "only for files you trust (default: read as data, refuse what carries code)")
    p.add_argument("--max-model-mb", type=bounded_int(1), metavar="MB",
                   help="the most memory a model file may ask for once inflated (default: 1024); a larger one is "
                        "refused before it is read")
    return p


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text!r}")
    return value


# --------------------------------------------------------------------------------------------
# play
# --------------------------------------------------------------------------------------------


class _Announced:
    """Wraps the machine's agent so a person sees which move it chose (and, when watching a
    single-player game, each position before it)."""

    def __init__(self, agent: Any, print_fn: Callable[..., None], *, show_position: bool = False) -> None:
        self._agent = agent
        self._print = print_fn
        self._show_position = show_position
        self.name = getattr(agent, "name", "agent")

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        action = self._agent(state, rng)
        if self._show_position:
            self._print(state.to_text())
            who = self.name
        else:
            who = f"{self.name} (player {state.current_player()})"
        self._print(f"{who} plays {state.action_to_string(action)}")
        return action


def _human(game_name: str, **extra: Any):
    """A person at the terminal, told how to type a move by the game's registry record."""
    from tablegym.experiments.human import HumanAgent

    return HumanAgent(keys=plugin(game_name).move_hint or "", **extra)


class _ChanceNews:
    """Tells a person what chance did between two decisions (where a Trap trap landed).

    ``play_game`` samples chance outcomes itself, so every agent is wrapped (``wrap``): before
    an agent decides, the outcome that leads from the position after the previous decision
    to the one now on the board is printed with its probability. ``report`` on the final
    position tells the last one, when a chance event ended the game.
    """

    def __init__(self, print_fn: Callable[..., None]) -> None:
        self._print = print_fn
        self._after: State | None = None

    def report(self, state: State) -> None:
        """Print the chance outcome between the last decision and ``state``, if there was one."""
        after, self._after = self._after, None
        if after is None or after.current_player() != CHANCE:
            return
        for outcome, prob in after.chance_outcomes():
            if after.child(outcome) == state:
                self._print(f"chance: {after.action_to_string(outcome)} (probability {prob:.3g})")
                return

    def wrap(self, agent: Any) -> "_Reported":
        return _Reported(agent, self)

    def decided(self, state: State, action: int) -> None:
        try:
            self._after = state.child(action)
        except ValueError:  # an illegal move: play_game reports it, naming the agent
            self._after = None


class _Reported:
    """An agent that first has ``news`` tell the chance events since the last decision."""

    def __init__(self, agent: Any, news: _ChanceNews) -> None:
        self._agent = agent
        self._news = news
        self.name = getattr(agent, "name", "agent")

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        self._news.report(state)
        action = self._agent(state, rng)
        self._news.decided(state, action)
        return action


def _final_state(game: Game, actions: Sequence[int]) -> State:
    state = game.new_initial_state()
    for a in actions:
        state = state.child(a)
    return state


def _play_single(parser: argparse.ArgumentParser, args: argparse.Namespace, game: Game) -> int:
    """A single-player game: a person plays (no --agent, or --agent human), or an agent is watched.

    Chance events (Threes' deal, insertion line and next card; Friday's card draws) are sampled
    from one generator seeded with ``--seed``, so the same seed deals the same cards to the same
    moves. The final line gives the game's score (Friday: its score, not the +1/-1 result).
    """
    from tablegym.experiments.human import HumanQuit
    from tablegym.experiments.match import play_game

    if args.seat != 0:
        parser.error(f"{args.game} is a single-player game: --seat must be 0")
    human = args.agent in (None, "human")
    if human and (args.eval, args.depth, args.time) != (None, None, None):
        parser.error("--eval/--depth/--time set up an agent: give --agent too (e.g. --agent expectimax --depth 2)")
    if human and args.quiet:
        parser.error("--quiet is for watching an agent play: give --agent too")
    if human:
        player: Any = _human(args.game, numbered=plugin(args.game).numbered_moves)
        print(f"{game!r}: you play")
    else:
        spec = compose_spec(args.agent, eval=args.eval, depth=args.depth, time=args.time)
        try:
            machine = _make_agent(game, spec)
        except ValueError as err:
            parser.error(str(err))
        player = machine if args.quiet else _Announced(machine, print, show_position=True)
        print(f"{game!r}: watching {getattr(machine, 'name', spec)!r}")
    try:
        record = play_game(game, (player,), np.random.default_rng(args.seed))
    except HumanQuit:
        print("game abandoned")
        return 0
    final = _final_state(game, record.actions)
    print(final.to_text())
    print(f"final score {getattr(final, 'score', record.returns[0]):g} after {record.move_counts[0]} moves")
    return 0


def _cmd_play(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from tablegym.experiments.human import HumanQuit
    from tablegym.experiments.match import play_game

    game, _ = _game_from_args(parser, args)
    if game.spec.num_players == 1:
        return _play_single(parser, args, game)
    if args.quiet:
        parser.error("--quiet is for watching an agent play a single-player game")
    agent = args.agent
    if agent is None:
        searcher = GAMES[game.spec.name].searcher if game.spec.name in GAMES else "alphabeta"
        agent = searcher if (args.eval, args.depth, args.time) != (None, None, None) else "random"
    spec = compose_spec(agent, eval=args.eval, depth=args.depth, time=args.time)
    try:
        machine = _make_agent(game, spec)
    except ValueError as err:
        parser.error(str(err))
    human = _human(args.game)
    agents: list[Any] = [_Announced(machine, print), _Announced(machine, print)]
    agents[args.seat] = human
    news = _ChanceNews(print) if game.spec.chance else None
    if news is not None:
        agents = [news.wrap(a) for a in agents]
    print(f"{game!r}: you are player {args.seat}, against {spec!r}")
    try:
        record = play_game(game, tuple(agents), np.random.default_rng(args.seed))
    except HumanQuit:
        print("game abandoned")
        return 0
    final = _final_state(game, record.actions)
    if news is not None:
        news.report(final)
    print(final.to_text())
    if record.winner is None:
        print("draw")
    else:
        print("you win" if record.winner == args.seat else "you lose")
    return 0


# --------------------------------------------------------------------------------------------
# solve
# --------------------------------------------------------------------------------------------


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
        print(f"  time: {statistics.median(times) * 1000:.2f} ms median of 5 solves after warm-up "
              f"(first solve, with JIT loading: {first.seconds * 1000:.1f} ms)")
    else:
        print(f"  time: {first.seconds:.1f} s (one solve)")


def _solve_progress(game: Game) -> Callable[[Any], None]:
    """A ``Solver`` progress callback that prints one line to stderr."""
    def report(p: Any) -> None:
        print(f"  solving {game!r}: {p.positions_stored:,} positions stored, {p.nodes:,} nodes, "
              f"{p.nodes_per_second / 1e6:.2f}M nodes/s, {p.seconds:.0f} s", file=sys.stderr, flush=True)

    return report


def _memory_words(max_bytes: int, given: bool) -> str:
    mb = f"{max_bytes / 2**20:,.0f} MB"
    return f"--max-memory {mb}" if given else f"{mb} (half the free memory; --max-memory)"


def _cmd_solve(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from tablegym.search.solver import SolveLimitError, capacity, default_max_bytes, estimate_tree_size, limits

    game, options = _game_from_args(parser, args)
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
            run = lambda g=g: solver(g)
        else:
            root = g.new_initial_state()
            if g.spec.chance or g.spec.num_players != 2 or not isinstance(root, KernelState):
                why = "has chance nodes" if g.spec.chance else ("is not a two-player game" if g.spec.num_players != 2
                                                                 else "has no compiled kernels")
                parser.error(f"the exact solver is for two-player games without chance with compiled kernels; "
                             f"{args.game} {why}")
            tree = estimate_tree_size(root) if not explicit else 0.0
            fits = capacity(max_bytes)
            if tree > _HOPELESS * fits:
                raise InputError(f"{g!r} is out of reach: its game tree has about {tree:.1e} positions (estimated from "
                                 f"random games), a table in {_memory_words(max_bytes, False)} holds {fits:,}; "
                                 f"to try anyway give --max-memory MB or --max-entries N (the solve stops there)")
            solve = require("tablegym.search.solver", "solve", "the exact solver")
            run = lambda root=root: solve(root)
        try:
            with limits(max_entries=args.max_entries, max_bytes=max_bytes):
                _report_solve(g, run, None if args.no_progress else _solve_progress(g))
        except SolveLimitError as err:
            limit = (_memory_words(max_bytes, args.max_memory is not None) if err.by_memory
                     else f"--max-entries {err.max_entries:,}")
            raise InputError(f"solving {g!r} stopped at the table limit, {limit}: {err.positions_stored:,} positions "
                             f"stored, {err.nodes:,} nodes searched; give a larger "
                             f"{'--max-memory MB' if err.by_memory else '--max-entries N'} to go on") from None
    return 0


# --------------------------------------------------------------------------------------------
# eval
# --------------------------------------------------------------------------------------------


def _minutes(text: str) -> float:
    """``--stop-after``: a number of minutes, 0 included (play nothing, report the journal)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of minutes, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text!r}")
    return value


def _cmd_eval(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from tablegym.experiments.match import (JournalError, elo_markdown, elo_ratings, markdown_table, play_match,
                                            round_robin, write_csv)

    from tablegym.training.parallel import BackendError, check_backend

    game, options = _game_from_args(parser, args)
    try:
        check_backend(args.backend, args.address)
    except BackendError as err:  # no Ray, or the cluster named by --address is not there
        raise InputError(str(err)) from None
    for flag, path in (("--csv", args.csv), ("--journal", args.journal)):
        if path:
            check_writable(parser, flag, path)
    if game.spec.num_players == 1:
        return _eval_single(parser, args, game, options)
    if len(args.specs) < 2:
        parser.error(f"eval needs at least two agent specs, got {len(args.specs)}")
    if len(args.specs) > 2 and len(set(args.specs)) != len(args.specs):
        parser.error(f"round-robin agent specs must be distinct, got {args.specs}")
    for spec in args.specs:  # fail here, with a usage message, rather than inside a worker
        try:
            _make_agent(game, spec)
        except ValueError as err:
            parser.error(f"agent {spec!r}: {err}")
    common = dict(opening_plies=args.opening_plies, seed=args.seed, workers=args.workers,
                  progress=not args.no_progress, game_options=options, journal=args.journal,
                  time_limit_s=None if args.stop_after is None else 60.0 * args.stop_after,
                  backend=args.backend, address=args.address)
    try:
        if len(args.specs) == 2:
            results = [play_match(args.game, args.specs[0], args.specs[1], games=args.games, **common)]
        else:
            results = round_robin(args.game, args.specs, games_per_pair=args.games, **common)
    except JournalError as err:
        raise CommandError(str(err)) from None
    except BackendError as err:  # the cluster named by --address is not there
        raise InputError(str(err)) from None
    except OSError as err:
        if args.journal is None or err.filename != args.journal:
            raise
        raise CommandError(f"journal {args.journal}: {err.strerror or err}") from None
    results = [r for r in results if r.games]  # a match stopped before its first game
    pairings = len(args.specs) * (len(args.specs) - 1) // 2
    played, planned = sum(r.games for r in results), pairings * args.games
    if played < planned:
        more = "; run the same command again to go on" if args.journal else ""
        print(f"partial: {played} of {planned} games ({len(results)} of {pairings} pairings have games){more}")
        print()
    print(markdown_table(results, elo=args.elo))
    if args.elo and len(args.specs) > 2 and results:
        print()
        print(elo_markdown(elo_ratings(results)))
    if args.csv:
        write_csv(results, args.csv)
        print(f"wrote {args.csv}")
    return 0


def _eval_single(parser: argparse.ArgumentParser, args: argparse.Namespace, game: Game, options: dict) -> int:
    """A single-player game: each agent plays ``--games`` games on the same seeded deals; its
    table (score or return, wins), and with two or more agents the paired differences against
    the first."""
    from tablegym.experiments import solo
    from tablegym.experiments.game_runs import RecordsError
    from tablegym.training.parallel import BackendError

    if args.stop_after is not None:
        parser.error("--stop-after is for matches and round robins; a single-player run resumes from --journal")
    if len(set(args.specs)) != len(args.specs):
        parser.error(f"agent specs must be distinct, got {args.specs}")
    for spec in args.specs:
        try:
            _make_agent(game, spec)
        except ValueError as err:
            parser.error(f"agent {spec!r}: {err}")
    try:
        runs = {spec: solo.run(args.game, spec, games=args.games, options=options, seed=args.seed,
                               workers=args.workers, out=args.journal, progress=not args.no_progress,
                               backend=args.backend, address=args.address)
                for spec in args.specs}
    except RecordsError as err:
        raise CommandError(str(err)) from None
    except BackendError as err:
        raise InputError(str(err)) from None
    except OSError as err:
        if args.journal is None or err.filename != args.journal:
            raise
        raise CommandError(f"journal {args.journal}: {err.strerror or err}") from None
    print(solo.table(runs))
    if len(runs) > 1:
        print()
        print(solo.paired_table(runs))
    if args.csv:
        solo.write_csv(runs, args.csv, options)
        print(f"wrote {args.csv}")
    return 0


# --------------------------------------------------------------------------------------------
# bench
# --------------------------------------------------------------------------------------------


def _fmt_cell(x: Any) -> str:
    if isinstance(x, bool) or x is None:
        return str(x)
    if isinstance(x, (int, np.integer)):
        return f"{x:,}"
    if isinstance(x, (float, np.floating)):
        if math.isnan(x) or math.isinf(x):
            return str(x)
        return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"
    return str(x)


def format_table(data: dict[str, Any]) -> str:
    """A benchmark's dict as a markdown table: one row per sub-dict, else key | value rows.

    >>> print(format_table({"nodes": 1200, "seconds": 0.5}))
    | key | value |
    |---|---|
    | nodes | 1,200 |
    | seconds | 0.5 |
    """
    if data and all(isinstance(v, dict) for v in data.values()):
        cols: list[str] = []
        for v in data.values():
            cols += [k for k in v if k not in cols]
        lines = ["| name | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 1)]
        for name, row in data.items():
            lines.append(f"| {name} | " + " | ".join(_fmt_cell(row.get(c, "")) for c in cols) + " |")
        return "\n".join(lines)
    flat: dict[str, Any] = {}

    def walk(prefix: str, d: dict[str, Any]) -> None:
        for k, v in d.items():
            if isinstance(v, dict):
                walk(f"{prefix}{k}.", v)
            else:
                flat[f"{prefix}{k}"] = v

    walk("", data)
    return "\n".join(["| key | value |", "|---|---|"] + [f"| {k} | {_fmt_cell(v)} |" for k, v in flat.items()])


def _benches() -> dict[str, str]:
    """``tablegym bench`` names -> benchmark functions: "vec" (every game's vector env, beside
    its SyncVectorEnv), "rl" (PPO training steps/s beside sb3-contrib's), then those of every
    game's record."""
    out = {"vec": "tablegym.experiments.vector_bench:bench_vec", "rl": "tablegym.experiments.rl_bench:bench_rl"}
    for p in plugins():
        if p.bench:
            out[p.bench_name or p.name] = p.bench
        out.update(p.benches)
    return out


def _cmd_bench(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    params = {k: parse_value(v) for k, v in key_values(parser, args.param, "--param").items()}
    module, _, name = _benches()[args.which].partition(":")
    fn = require(module, name, f"the {args.which} benchmark")
    for key in ("seconds", "n", "repeats"):  # the flags some benchmarks take
        if getattr(args, key) is not None:
            params[key] = getattr(args, key)
    taken = inspect.signature(fn).parameters
    if not any(p.kind == p.VAR_KEYWORD for p in taken.values()):
        unknown = sorted(set(params) - set(taken))
        if unknown:
            parser.error(f"bench {args.which} takes no {', '.join(map(repr, unknown))}; its parameters: "
                         f"{', '.join(taken) or 'none'}")
    try:
        result = fn(**params)
    except TypeError as err:
        if params and "argument" in str(err):
            parser.error(f"bench {args.which}: {err}")
        raise
    except ValueError as err:  # a benchmark refusing its parameters (sizes, a game it does not know)
        parser.error(f"bench {args.which}: {err}")
    print(format_table(result))
    return 0


# --------------------------------------------------------------------------------------------
# train and main
# --------------------------------------------------------------------------------------------


def _train(argv: list[str]) -> int:
    """``tablegym train [GAME] ...``: the trainer named by the game's registry record, given the
    arguments as typed (the game first, or the default trainer's ``--game``); with neither, its usage."""
    if argv in (["--help"], ["-h"]):
        print(_train_help())
        return 0
    name = argv[0] if argv and not argv[0].startswith("-") else None
    trainable = ", ".join(p.name for p in plugins() if p.trainer)
    if name is None and not any(a == "--game" or a.startswith("--game=") for a in argv):
        return _usage_error(f"train: name a game ({PROG} train GAME [ARGUMENTS]); games with a trainer: {trainable}")
    algo = _algo(argv)
    if algo not in (None, "ppo", "dqn", "imitate"):
        return _usage_error(f"train: --algo must be ppo or dqn (masked PPO or DQN over the vector envs), imitate (PPO's "
                            f"network fitted to a teacher's games) or left out for the game's own trainer; got {algo!r}")
    if algo is not None:
        return importlib.import_module(f"tablegym.training.{algo}").cli_main(argv)
    trainer = _DEFAULT_TRAINER
    if name is not None:
        try:
            trainer = plugin(name).trainer
        except ValueError as err:
            return _usage_error(f"train: {err}")
        if trainer is None:
            return _usage_error(f"train: game {name!r} has no trainer; games with one: {trainable}")
    module, _, function = trainer.partition(":")
    status = require(module, function, "training")(argv)
    return 0 if status is None else status


def _algo(argv: list[str]) -> str | None:
    """The value of ``--algo`` in the arguments (None when not given)."""
    for i, item in enumerate(argv):
        if item == "--algo":
            return argv[i + 1] if i + 1 < len(argv) else ""
        if item.startswith("--algo="):
            return item.partition("=")[2]
    return None


def _train_help() -> str:
    """``tablegym train --help``: every game with a trainer, and what that trainer learns (the
    first line of its module's docstring)."""
    lines = [f"usage: {PROG} train GAME [ARGUMENTS]   ({PROG} train GAME --help: that trainer's arguments)",
             f"       {PROG} train GAME --algo ppo|dqn [ARGUMENTS]   (masked PPO or DQN over the game's vector env, "
             "any game with one)",
             f"       {PROG} train GAME --algo imitate --teacher SPEC [ARGUMENTS]   (PPO's network fitted to the "
             "moves of any agent, a start for --algo ppo)", "",
             "games and what their trainer learns:"]
    width = max(len(p.name) for p in plugins())
    for record in plugins():
        if record.trainer:
            module = record.trainer.partition(":")[0]
            try:
                doc = (importlib.import_module(module).__doc__ or "").strip().splitlines()[0]
            except (ImportError, IndexError):
                doc = "(its module is not installed)"
            lines.append(f"  {record.name:<{width}}  {doc}  [{module}]")
    untrained = [p.name for p in plugins() if not p.trainer]
    if untrained:
        lines.append(f"  (no trainer: {', '.join(untrained)})")
    return "\n".join(lines)


_DEFAULT_TRAINER = "tablegym.training.td:cli_main"
"""``tablegym train --game G ...``: self-play TD through alpha-beta (it reads the game itself)."""


def _usage_error(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand except ``train`` (which forwards its arguments)."""
    parser = OneLineParser(prog=PROG, description="Tabletop games: play, solve, evaluate, benchmark, train.")
    commands = ["play", "solve", "eval", "bench", *(p.name for p in plugins() if p.command), "train"]
    sub = parser.add_subparsers(dest="command", metavar="{" + ",".join(commands) + "}", required=True)
    game_opts = _game_options_parser()

    p = sub.add_parser("play", parents=[game_opts], help="play against an agent (or a single-player game) in the terminal",
                       description="Two-player games: you against --agent. Single-player games (threes, friday): you play, "
                                   "or with --agent you watch that agent play a game.")
    p.add_argument("--agent", default=None,
                   help="agent spec or searcher name (two-player default: alphabeta (trap: search) when --eval/--depth/--time is "
                        "given, else random; single-player default: human, i.e. you play; threes: random, greedy, "
                        "threesus, expectimax:depth=2)")
    p.add_argument("--eval", help="leaf evaluator for a searcher, e.g. advanced, learned, learned:path.pt")
    p.add_argument("--depth", type=bounded_int(1), help="search depth")
    p.add_argument("--time", type=_positive_float, help="search time per move in seconds")
    p.add_argument("--seat", type=int, choices=(0, 1), default=0, help="your player index (default 0)")
    p.add_argument("--seed", type=bounded_int(0), default=None,
                   help="seed for the agent's randomness and the game's chance events (an integer >= 0)")
    p.add_argument("--quiet", action="store_true", help="single-player games with --agent: show only the final position")
    p.set_defaults(run=_cmd_play, parser=p)

    p = sub.add_parser("solve", parents=[game_opts], help="solve a small game exactly",
                       description="Solve a two-player game exactly from its first position. The table of solved "
                                   "positions is bounded (default: half the free memory); a solve that reaches the "
                                   "bound stops with exit status 2, and a game whose tree is far too big for it is "
                                   "refused unless a limit is given.")
    p.add_argument("--max-entries", type=bounded_int(1), metavar="N",
                   help="store at most N positions; also lets a game whose estimate is over the bound try")
    p.add_argument("--max-memory", type=_positive_float, metavar="MB",
                   help="keep the table within MB megabytes (default: half the free memory)")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    p.set_defaults(run=_cmd_solve, parser=p)

    p = sub.add_parser("eval", parents=[game_opts], help="match (two specs) or round robin (more); friday: win rates")
    p.add_argument("specs", nargs="+", metavar="SPEC", help="agent specs, e.g. random 'alphabeta:depth=3,eval=advanced'")
    p.add_argument("--games", type=bounded_int(1, MAX_GAMES, "2**53, the most a float counts exactly"), default=100,
                   help="games per pairing (default 100); made as they are played, so a large number costs nothing "
                        "until its games are played")
    p.add_argument("--opening-plies", type=bounded_int(0), default=2, help="random opening moves (default 2)")
    p.add_argument("--workers", type=bounded_int(1, MAX_WORKERS), default=1,
                   help=f"worker processes, or games in flight on Ray (default 1, at most {MAX_WORKERS})")
    p.add_argument("--backend", choices=("process", "ray"), default="process",
                   help="where games run: processes here, or Ray tasks (pip install \"tablegym[distributed]\"); "
                        "the same records either way")
    p.add_argument("--address", metavar="ADDR",
                   help="with --backend ray: the cluster to join (auto, or HOST:PORT of `ray start --head`); "
                        "default: a local Ray instance with --workers CPUs")
    p.add_argument("--seed", type=bounded_int(0), default=0, help="seed of the whole match (an integer >= 0; default 0)")
    p.add_argument("--csv", help="also write the results to this CSV file")
    p.add_argument("--elo", action="store_true", help="show Elo differences (and fitted ratings for 3+ agents)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--journal", metavar="FILE",
                   help="JSON-lines file of finished games: each game is appended as it ends, and games already "
                        "in it are not played again, so an interrupted or stopped run goes on where it ended; "
                        "the tables count every game of this run found there")
    p.add_argument("--stop-after", type=_minutes, metavar="MINUTES",
                   help="start no new game after this many minutes; the tables then count the finished games "
                        "and say that the result is partial (0 with --journal: play nothing, just print the tables)")
    p.set_defaults(run=_cmd_eval, parser=p)

    p = sub.add_parser("bench", help="speed benchmarks")
    p.add_argument("which", choices=tuple(_benches()))
    p.add_argument("--seconds", type=_positive_float, help="envs: seconds per env; vec: seconds per measurement")
    p.add_argument("--n", type=bounded_int(3), help="sim-solve: number of points")
    p.add_argument("--repeats", type=bounded_int(1), help="sim-solve, vec: repetitions")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="extra keyword argument for the benchmark function (repeatable)")
    p.set_defaults(run=_cmd_bench, parser=p)

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
            return _train(argv[1:])
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
        return _usage_error(str(err))
    except LimitError as err:  # a file over a budget (a journal line, a config): refused like bad input
        return _usage_error(str(err))
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (``| head``): stop quietly, as other command-line tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":  # python -m: run the package's module, whose error classes the subcommands raise
    from tablegym.experiments.cli import main as package_main

    sys.exit(package_main())
