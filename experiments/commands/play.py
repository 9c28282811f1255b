"""``tablegym play``: you against an agent in the terminal, or an agent playing a single-player
game while you watch."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tablegym.envs import plugin
from tablegym.envs.core import CHANCE, Game, State
from tablegym.experiments.commands.shared import compose_spec, game_from_args, make_agent_checked, positive_float
from tablegym.experiments.games import GAMES
from tablegym.training.flags import bounded_int


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

    def wrap(self, agent: Any) -> _Reported:
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
    from tablegym.search.play import play_game

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
            machine = make_agent_checked(game, spec)
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
    from tablegym.search.play import play_game

    game, _ = game_from_args(parser, args)
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
        machine = make_agent_checked(game, spec)
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


def add_command(sub: Any, game_opts: argparse.ArgumentParser) -> None:
    """Add ``play`` to the subcommands ``sub``."""
    p = sub.add_parser(
        "play",
        parents=[game_opts],
        help="play against an agent (or a single-player game) in the terminal",
        description="Two-player games: you against --agent. Single-player games (threes, friday): you play, "
        "or with --agent you watch that agent play a game.",
    )
    p.add_argument(
        "--agent",
        default=None,
        help="agent spec or searcher name (two-player default: alphabeta (trap: search) when --eval/--depth/--time is "
        "given, else random; single-player default: human, i.e. you play; threes: random, greedy, "
        "threesus, expectimax:depth=2)",
    )
    p.add_argument("--eval", help="leaf evaluator for a searcher, e.g. advanced, learned, learned:path.pt")
    p.add_argument("--depth", type=bounded_int(1), help="search depth")
    p.add_argument("--time", type=positive_float, help="search time per move in seconds")
    p.add_argument("--seat", type=int, choices=(0, 1), default=0, help="your player index (default 0)")
    p.add_argument(
        "--seed",
        type=bounded_int(0),
        default=None,
        help="seed for the agent's randomness and the game's chance events (an integer >= 0)",
    )
    p.add_argument("--quiet", action="store_true", help="single-player games with --agent: show only the final position")
    p.set_defaults(run=_cmd_play, parser=p)
