"""Trilobite as a Gymnasium env (one seat against an opponent) and as a PettingZoo AEC env."""

from __future__ import annotations

from typing import Unpack

import numpy as np
from pettingzoo import AECEnv

from tablegym.envs.aec import make_aec_env
from tablegym.envs.core import State
from tablegym.envs.trilobite.core import TrilobiteGame, TrilobiteState
from tablegym.envs.twoplayer import OpponentSpec, SeatOptions, TwoPlayerEnv


def trilobite_rgb(state: State) -> np.ndarray:
    """The board as an image, last chip marked (drawn by the lazily imported envs.render)."""
    from tablegym.envs.render import draw_trilobite

    assert isinstance(state, TrilobiteState)
    return draw_trilobite(state.board, last_cell=state.last_cell)


class TrilobiteEnv(TwoPlayerEnv):
    """Trilobite: gravity N-in-a-row on a W x H board, the agent against an opponent.

    ## Description

    The game of the "11th Hour" puzzle (rules/trilobite.md): players drop chips into columns;
    a chip falls to the lowest empty cell; the first player with a contiguous line of
    ``win_length`` own chips (row, column or diagonal) through the chip just placed wins; a
    full board without a line is a draw. The agent plays one seat, ``opponent`` the other.

    ## Action Space

    ``Discrete(width)``: the column to drop a chip into, 0 = leftmost. A full column is illegal;
    ``info["action_mask"]`` and ``action_masks()`` give the legal columns.

    ## Observation Space

    ``Box(0, 1, (3, height, width), float32)``, from the agent's point of view, row 0 at the top:

    | Plane | Meaning                                           |
    |-------|---------------------------------------------------|
    | 0     | 1 where the agent has a chip                      |
    | 1     | 1 where the opponent has a chip                   |
    | 2     | all ones if the agent is to move (else all zeros) |

    ## Rewards

    +1 when the agent wins, -1 when it loses, 0 for a draw and on every non-final step. With
    ``illegal_action="penalty"`` an illegal column gives -1 and ends the episode.

    ## Starting State

    An empty board. If the opponent's seat moves first (``first_player`` is not the agent's
    seat), the opponent's first chip is already in when ``reset`` returns.

    ## Episode End

    Terminates on a win, a loss or a full board (at most ``width * height`` chips); never
    truncated. ``info["action_mask"]`` is all zeros at the end.

    ## Arguments

    ```python
    gymnasium.make("tablegym/Trilobite-v0")                  # 8 x 7, four in a row
    gymnasium.make("tablegym/TrilobiteTiny-v0")              # 3 x 3, three in a row
    gymnasium.make("tablegym/Trilobite-v0", width=7, height=6, win_length=4,
                   first_player=0, opponent="random", agent_seat=0,
                   illegal_action="raise", render_mode="rgb_array")
    ```

    - ``width``, ``height``, ``win_length``: board size and line length (1..16 cells a side).
    - ``first_player``: which seat (0 or 1) drops the first chip.
    - ``opponent``, ``agent_seat``, ``illegal_action``, ``render_mode``: see ``TwoPlayerEnv``
      ("ansi" is the core's text board, "rgb_array" a drawn board with the last chip marked).

    ## Version History

    - v0: initial release.
    - v0, unchanged rules: made by its id, an illegal action ends the episode (``TwoPlayerEnv``).
    """

    def __init__(
        self,
        *,
        width: int = 8,
        height: int = 7,
        win_length: int = 4,
        first_player: int = 0,
        opponent: OpponentSpec = "random",
        illegal_action: str = "raise",
        **seat: Unpack[SeatOptions],
    ) -> None:
        game = TrilobiteGame(width, height, win_length, first_player)
        super().__init__(game=game, opponent=opponent, illegal_action=illegal_action, renderer=trilobite_rgb, **seat)


def trilobite_aec_env(
    *,
    width: int = 8,
    height: int = 7,
    win_length: int = 4,
    first_player: int = 0,
    render_mode: str | None = None,
    wrapped: bool = True,
) -> AECEnv:
    """Trilobite as a PettingZoo AEC env ("player_0" drops chip X, "player_1" chip O).

    ``wrapped=False`` gives the raw ``GameAECEnv`` (the same object as ``env.unwrapped``).
    """
    game = TrilobiteGame(width, height, win_length, first_player)
    return make_aec_env(game, render_mode=render_mode, renderer=trilobite_rgb, name="trilobite_v0", wrapped=wrapped)
