"""``tablegym eval``: a match (two specs) or a round robin (more) between agents, resumable through
a journal; a single-player game's agents over many deals."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tablegym.envs.core import Game
from tablegym.experiments.commands.shared import CommandError, InputError, game_from_args, make_agent_checked
from tablegym.experiments.game_runs import MAX_WORKERS
from tablegym.experiments.stats import MAX_GAMES
from tablegym.training.flags import bounded_int, check_writable


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
    from tablegym.experiments.journal import JournalError
    from tablegym.experiments.match import elo_markdown, elo_ratings, markdown_table, play_match, round_robin, write_csv
    from tablegym.training.parallel import BackendError, check_backend

    game, options = game_from_args(parser, args)
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
            make_agent_checked(game, spec)
        except ValueError as err:
            parser.error(f"agent {spec!r}: {err}")
    _warn_repeated_openings(game, args.games, args.opening_plies)
    common = dict(
        opening_plies=args.opening_plies,
        seed=args.seed,
        workers=args.workers,
        progress=not args.no_progress,
        game_options=options,
        journal=args.journal,
        time_limit_s=None if args.stop_after is None else 60.0 * args.stop_after,
        backend=args.backend,
        address=args.address,
    )
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


def _warn_repeated_openings(game: Game, games: int, plies: int) -> None:
    """One line when the match's games outnumber the different games its openings allow: each
    opening is played in both seats, so deterministic agents replay the rest move for move (the
    intervals count each game once; more opening plies give more evidence)."""
    from tablegym.search.play import count_openings

    openings = count_openings(game, plies, most=(games + 1) // 2)
    if 2 * openings < games:
        print(
            f"note: --opening-plies {plies} allows {openings} openings, {2 * openings} different games with both "
            f"seats, fewer than --games {games}: deterministic agents replay the rest (scores count each game "
            f"once); --opening-plies {plies + 1} or more gives more",
            file=sys.stderr,
        )


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
            make_agent_checked(game, spec)
        except ValueError as err:
            parser.error(f"agent {spec!r}: {err}")
    try:
        runs = {
            spec: solo.run(
                args.game,
                spec,
                games=args.games,
                options=options,
                seed=args.seed,
                workers=args.workers,
                out=args.journal,
                progress=not args.no_progress,
                backend=args.backend,
                address=args.address,
            )
            for spec in args.specs
        }
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


def add_command(sub: Any, game_opts: argparse.ArgumentParser) -> None:
    """Add ``eval`` to the subcommands ``sub``."""
    p = sub.add_parser("eval", parents=[game_opts], help="match (two specs) or round robin (more); friday: win rates")
    p.add_argument("specs", nargs="+", metavar="SPEC", help="agent specs, e.g. random 'alphabeta:depth=3,eval=advanced'")
    p.add_argument(
        "--games",
        type=bounded_int(1, MAX_GAMES, "2**53, the most a float counts exactly"),
        default=100,
        help="games per pairing (default 100); made as they are played, so a large number costs nothing "
        "until its games are played",
    )
    p.add_argument("--opening-plies", type=bounded_int(0), default=2, help="random opening moves (default 2)")
    p.add_argument(
        "--workers",
        type=bounded_int(1, MAX_WORKERS),
        default=1,
        help=f"worker processes, or games in flight on Ray (default 1, at most {MAX_WORKERS})",
    )
    p.add_argument(
        "--backend",
        choices=("process", "ray"),
        default="process",
        help='where games run: processes here, or Ray tasks (pip install "tablegym[distributed]"); the same records either way',
    )
    p.add_argument(
        "--address",
        metavar="ADDR",
        help="with --backend ray: the cluster to join (auto, or HOST:PORT of `ray start --head`); "
        "default: a local Ray instance with --workers CPUs",
    )
    p.add_argument("--seed", type=bounded_int(0), default=0, help="seed of the whole match (an integer >= 0; default 0)")
    p.add_argument("--csv", help="also write the results to this CSV file")
    p.add_argument("--elo", action="store_true", help="show Elo differences (and fitted ratings for 3+ agents)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--journal",
        metavar="FILE",
        help="JSON-lines file of finished games: each game is appended as it ends, and games already "
        "in it are not played again, so an interrupted or stopped run goes on where it ended; "
        "the tables count every game of this run found there",
    )
    p.add_argument(
        "--stop-after",
        type=_minutes,
        metavar="MINUTES",
        help="start no new game after this many minutes; the tables then count the finished games "
        "and say that the result is partial (0 with --journal: play nothing, just print the tables)",
    )
    p.set_defaults(run=_cmd_eval, parser=p)
