"""Trap as a Gymnasium env (one seat against an opponent) and as a PettingZoo AEC env."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

import numpy as np
from pettingzoo import AECEnv

from tablegym.envs.aec import make_aec_env
from tablegym.envs.core import Game, State
from tablegym.envs.trap.core import DEFAULT_TURN_CAP, TrapGame, TrapState
from tablegym.envs.twoplayer import OpponentSpec, SeatOptions, TwoPlayerEnv, resolve_opponent


def trap_rgb(state: State) -> np.ndarray:
    """The board as an image: traps, both players, the throw phase (drawn by the lazily
    imported envs.trap.render)."""
    from tablegym.envs.trap.render import draw_trap

    assert isinstance(state, TrapState)
    winner = state.winner()
    if state.is_terminal():
        status, throwing = winner, False
    else:
        status, throwing = state.mover, state.phase != "move"
    return draw_trap(state.traps, [state.position(0), state.position(1)], status=status, throwing=throwing, target=state.target)


class League:
    """A league of opponents: one member plays each episode, drawn uniformly with the env's rng.

    The draw happens at the episode's first opponent decision (with the ``rng`` the env passes,
    its ``np_random``), or at the end of ``reset`` when the agent moves first; so seeded episodes
    repeat exactly. ``names[index]`` is the current member.
    """

    def __init__(self, game: Game, specs: Sequence[OpponentSpec]) -> None:
        if not specs:
            raise ValueError("an opponent league needs at least one member")
        self.members = [resolve_opponent(game, spec) for spec in specs]
        self.names = [spec if isinstance(spec, str) else getattr(spec, "name", repr(spec)) for spec in specs]
        self.name = "league(" + ",".join(self.names) + ")"
        self.index: int | None = None

    def draw(self, rng: np.random.Generator) -> int:
        """This episode's member (drawn now if not yet drawn)."""
        if self.index is None:
            self.index = int(rng.integers(len(self.members)))
        return self.index

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        return self.members[self.draw(rng)](state, rng)


class TrapEnv(TwoPlayerEnv):
    """Trap: step like a king, then throw a trap that may miss; enclose the opponent to win.

    ## Description

    The game of the 2021 "AI Squid Game: Trap!" course challenge (rules/trap.md) on an
    ``n`` x ``n`` grid. A turn is a king step to an empty cell, then a throw at any cell not
    holding a player; the trap lands on the target with probability
    ``p = 1 - 0.05 (a - 1)`` (``a`` = Manhattan distance from the thrower's new cell), else on
    one of the target's in-board, non-player neighbours, each equally likely. A player wins
    as soon as, after its move or after its trap lands, the opponent has no empty neighbour.
    The agent plays one seat, ``opponent`` the other.

    A turn is two agent steps: the move, then the throw. The landing of the agent's trap
    (sampled from ``self.np_random``) and the opponent's whole turn, with its own landing,
    happen inside the throw's ``step``; ``info["opponent_actions"]`` lists the opponent's
    move and throw (the landing cells are chance outcomes, not actions: read the board).

    ## Action Space

    One masked ``Discrete(8 + n * n)`` for both decisions; the phase is plane 3 of the
    observation, and ``info["action_mask"]`` (int8) / ``action_masks()`` open exactly one
    phase's part at a time: the free king steps in the move phase, every cell not holding a
    player in the throw phase. Cells are numbered row-major from the top-left,
    ``cell = row * n + col``; people write them as a column letter and a row number ("d4").

    | Action   | Phase | Meaning                                                      |
    |----------|-------|--------------------------------------------------------------|
    | 0 .. 7   | move  | king step N, NE, E, SE, S, SW, W, NW (clockwise from north)  |
    | 8 + cell | throw | trap at ``cell = row * n + col`` (a trapped cell is useless) |

    ## Observation Space

    ``Box(0, 1, (5, n, n), float32)``, from the agent's point of view, row 0 at the top:

    | Plane | Meaning                                                        |
    |-------|----------------------------------------------------------------|
    | 0     | 1 on the agent's cell                                          |
    | 1     | 1 on the opponent's cell                                       |
    | 2     | 1 on every trapped cell                                        |
    | 3     | all ones in the throw phase, all zeros in the move phase       |
    | 4     | all ones if the agent is to decide (else all zeros: game over) |

    ## Rewards

    +1 when the agent wins, -1 when it loses, 0 for a draw at the turn cap and on every
    non-final step. With ``illegal_action="penalty"`` an illegal action gives -1 and ends the
    episode (the original game's rule: an invalid move or throw loses).

    ## Starting State

    No traps; player 0 on (0, n // 2), player 1 on (n - 1, n // 2); player 0 moves first
    (``first_player``). If the opponent's seat moves first, its whole first turn (and its
    landing) is played when ``reset`` returns, and the agent is in its move phase.

    ## Episode End

    Terminates when a player is enclosed (after a move, which then has no throw, or after a
    landing), or in a draw (reward 0) once ``turn_cap`` turns are completed: tablegym's
    addition, because two careful players can throw onto trapped cells for ever. The cap is a
    rule of the game, so it terminates (the position is terminal, with value 0) rather than
    truncates. Both players' turns count, so the agent takes at most ``turn_cap + 1`` steps.
    ``info["action_mask"]`` is all zeros at the end.

    ## Arguments

    ```python
    gymnasium.make("tablegym/Trap-v0")                         # 7 x 7, turn cap 200
    gymnasium.make("tablegym/Trap-v0", n=5, turn_cap=50, first_player=0, opponent="random",
                   agent_seat="alternate", illegal_action="raise", render_mode="rgb_array")
    ```

    - ``n``: board side, 3..8 (the course used 7).
    - ``turn_cap``: completed turns before the draw; a turn is one player's move and throw,
      and both players' turns count (200 by default: 100 each).
    - ``first_player``: which seat (0 or 1) moves first.
    - ``opponent``: an agent spec or callable (see ``TwoPlayerEnv``), or a list or tuple of
      them: a league (``League``), one member drawn uniformly for each episode with the env's
      rng; ``reset``'s ``info["opponent"]`` names it (its spec string, or a callable's ``name``).
    - ``agent_seat``, ``illegal_action``, ``render_mode``: see ``TwoPlayerEnv``
      ("ansi" is the core's text board with a legend; "rgb_array" a drawn board with traps
      dark, player 0 red, player 1 blue, a strip in the colour of the player to decide, and
      the throw phase marked by a ring around that player and a '+' in the strip).

    Made by its id, the env penalises an illegal action (``illegal_action="penalty"``, the
    course's rule): most of the 57 actions are illegal at any time (52 at the start), and
    Gymnasium's ``check_env`` and mask-blind learners step with any of them. ``TrapEnv()``
    raises (``"raise"``), for code that must never send one.

    ## Version History

    - v0: initial release.
    - v0, unchanged rules: the opponent specs ``"hard"`` and ``"medium"`` name the course's
      players exactly; the earlier players are ``"hard-sound"`` and ``"medium:ties=random"``.
      The default opponent (``"random"``) is as before.
    - v0, unchanged rules: made by its id, an illegal action ends the episode (``TwoPlayerEnv``).
    """

    def __init__(
        self,
        *,
        n: int = 7,
        turn_cap: int = DEFAULT_TURN_CAP,
        first_player: int = 0,
        opponent: OpponentSpec | Sequence[OpponentSpec] = "random",
        illegal_action: str = "raise",
        **seat: Unpack[SeatOptions],
    ) -> None:
        game = TrapGame(n, turn_cap, first_player)
        self.league = League(game, opponent) if isinstance(opponent, (list, tuple)) else None
        opponent = self.league if self.league is not None else opponent
        super().__init__(game=game, opponent=opponent, illegal_action=illegal_action, renderer=trap_rgb, **seat)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        if self.league is None:
            return super().reset(seed=seed, options=options)
        self.league.index = None  # a fresh draw for this episode
        obs, info = super().reset(seed=seed, options=options)
        info["opponent"] = self.league.names[self.league.draw(self.np_random)]
        return obs, info


def trap_aec_env(
    *, n: int = 7, turn_cap: int = DEFAULT_TURN_CAP, first_player: int = 0, render_mode: str | None = None, wrapped: bool = True
) -> AECEnv:
    """Trap as a PettingZoo AEC env ("player_0" starts on the top row, "player_1" on the bottom).

    Each agent acts twice a turn (move, then throw); the landing is sampled from the env's
    ``np_random`` right after the throw. ``wrapped=False`` gives the raw ``GameAECEnv``.
    """
    game = TrapGame(n, turn_cap, first_player)
    return make_aec_env(game, render_mode=render_mode, renderer=trap_rgb, name="trap_v0", wrapped=wrapped)
