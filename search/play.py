"""The game loop: agents, and chance, play one game from the initial position to the end.

One loop for every game, whatever its number of players (1..N) and its chance nodes: match
runners, the command line and trainers that learn from finished games all play through
``play_game``, so a seed gives the same game wherever it is played.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tablegym.envs.core import CHANCE, Game, State, sample_outcome

__all__ = ["GameRecord", "play_game", "random_opening", "sample_outcome"]


@dataclass(frozen=True)
class GameRecord:
    """One finished game: every action in order and who won.

    ``actions`` holds the opening plies first (the first ``opening_plies`` entries), then the
    agents' moves and any chance outcomes. ``move_counts[p]`` and ``move_seconds[p]`` are the
    number of moves and the total thinking time of the agent playing player ``p``.
    """

    actions: tuple[int, ...]
    opening_plies: int
    winner: int | None
    returns: tuple[float, ...]
    move_counts: tuple[int, ...]
    move_seconds: tuple[float, ...]
    final: State | None = field(default=None, repr=False, compare=False)
    """The finished position (not journalled: a record replays to it from its actions)."""


def random_opening(game: Game, plies: int, rng: np.random.Generator) -> list[int]:
    """``plies`` uniformly random legal actions from the initial position.

    Moves that would end the game are avoided while another move exists: an opening is meant
    to diversify positions, not to decide games that no agent played.
    """
    if plies < 0:
        raise ValueError(f"opening plies must be >= 0, got {plies!r}")
    state = game.new_initial_state()
    actions: list[int] = []
    for _ in range(plies):
        if state.is_terminal():
            break
        if state.current_player() == CHANCE:
            action = sample_outcome(state, rng)
        else:
            legal = state.legal_actions()
            quiet = [a for a in legal if not state.child(a).is_terminal()]
            pool = quiet or legal
            action = int(pool[rng.integers(len(pool))])
        actions.append(action)
        state = state.child(action)
    return actions


def count_openings(game: Game, plies: int, *, most: int) -> int:
    """How many different openings of ``plies`` moves ``random_opening`` can draw (quiet moves
    only where there are some, as it plays), counted up to ``most``: ``most`` means at least
    that many. A match of deterministic agents plays at most twice this many different games."""

    def count(state: State, left: int, budget: int) -> int:
        if left == 0 or state.is_terminal():
            return 1
        if state.current_player() == CHANCE:
            moves = [a for a, _ in state.chance_outcomes()]
        else:
            legal = state.legal_actions()
            moves = [a for a in legal if not state.child(a).is_terminal()] or list(legal)
        total = 0
        for a in moves:
            total += count(state.child(a), left - 1, budget - total)
            if total >= budget:
                return budget
        return total

    return count(game.new_initial_state(), plies, most)


def winner_of(returns: Any) -> int | None:
    """The one player with the highest return, None for a tie: how a game's record names its winner."""
    returns = np.asarray(returns)
    best = int(np.argmax(returns))
    return best if np.sum(returns == returns[best]) == 1 else None


def play_game(
    game: Game,
    agents: Sequence[Any],
    rng: np.random.Generator,
    opening_plies: int = 0,
    *,
    opening: Sequence[int] | None = None,
    start: State | None = None,
    chance: Callable[[State, np.random.Generator], State] | None = None,
    max_decisions: int | None = None,
) -> GameRecord:
    """Play one game, ``agents[p]`` moving for player ``p``, and return its record.

    The game starts at ``start`` (default: the initial position), then ``opening`` if given,
    else ``opening_plies`` random moves drawn from ``rng``; the agents then receive ``rng`` too,
    so one seed fixes the whole game. Chance nodes draw one outcome each from ``rng``, or are
    resolved by ``chance(state, rng) -> state`` when a game has a faster sampler of its own
    (its outcomes are then not in the record's actions). With ``max_decisions`` the game stops
    after that many agent moves, unfinished (its record's ``final`` is not terminal). An illegal agent move raises
    ``IllegalActionError`` with a note naming the agent.
    """
    n = game.spec.num_players
    if len(agents) != n:
        raise ValueError(f"{game!r} needs {n} agents, got {len(agents)}")
    if opening is None:
        opening = random_opening(game, opening_plies, rng)
    state = game.new_initial_state() if start is None else start
    actions: list[int] = []
    for a in opening:
        state = state.child(int(a))
        actions.append(int(a))
    counts = [0] * n
    seconds = [0.0] * n
    while not state.is_terminal() and (max_decisions is None or sum(counts) < max_decisions):
        player = state.current_player()
        if player == CHANCE and chance is not None:
            state = chance(state, rng)
            continue
        if player == CHANCE:
            action = sample_outcome(state, rng)
        else:
            agent = agents[player]
            t0 = time.perf_counter()
            action = agent(state, rng)
            seconds[player] += time.perf_counter() - t0
            counts[player] += 1
        try:
            state = state.child(action)
        except ValueError as err:
            if player != CHANCE:
                err.add_note(f"played by agent {getattr(agents[player], 'name', agents[player])!r} as player {player}")
            raise
        actions.append(int(action))
    returns = np.asarray(state.returns(), dtype=float)
    return GameRecord(
        tuple(actions), len(opening), winner_of(returns), tuple(returns.tolist()), tuple(counts), tuple(seconds), state
    )
