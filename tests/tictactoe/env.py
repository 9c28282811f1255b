"""Tic-tac-toe as a Gymnasium env (one seat against an opponent) and as a PettingZoo AEC env.

Both are the generic envs of envs/twoplayer.py and envs/aec.py over ``TicTacToeGame``; this
module only fixes the game and draws the board.
"""

from __future__ import annotations

import numpy as np
from pettingzoo import AECEnv

from tablegym.envs.aec import make_aec_env
from tablegym.envs.core import State
from tablegym.envs.twoplayer import OpponentSpec, TwoPlayerEnv
from tests.tictactoe.core import TicTacToeGame, TicTacToeState

CELL = 32
_COLOURS = np.array([[255, 255, 255], [200, 40, 40], [40, 80, 200]], dtype=np.uint8)


def tictactoe_rgb(state: State) -> np.ndarray:
    """The board as a 3*CELL square image: white, grey grid lines, X cells red, O cells blue."""
    assert isinstance(state, TicTacToeState)
    board = state.board
    img = np.repeat(np.repeat(_COLOURS[board], CELL, axis=0), CELL, axis=1)
    img[::CELL, :] = img[:, ::CELL] = 128
    return np.ascontiguousarray(img)


class TicTacToeEnv(TwoPlayerEnv):
    """Tic-tac-toe, the agent against an opponent.

    Action: ``Discrete(9)``, the cell (row-major from the top left); taken cells are illegal
    (``info["action_mask"]``). Observation: ``Box(0, 1, (3, 3, 3), float32)``: the agent's
    marks, the opponent's marks, all ones when the agent is to move. Reward +1/-1/0 at the end.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        *,
        first_player: int = 0,
        opponent: OpponentSpec = "random",
        agent_seat: int | str = 0,
        illegal_action: str = "raise",
        render_mode: str | None = None,
    ) -> None:
        super().__init__(
            game=TicTacToeGame(first_player),
            opponent=opponent,
            agent_seat=agent_seat,
            illegal_action=illegal_action,
            render_mode=render_mode,
            renderer=tictactoe_rgb,
        )


def tictactoe_aec_env(*, first_player: int = 0, render_mode: str | None = None, wrapped: bool = True) -> AECEnv:
    """Tic-tac-toe as a PettingZoo AEC env ("player_0" plays X, "player_1" O)."""
    return make_aec_env(
        TicTacToeGame(first_player), render_mode=render_mode, renderer=tictactoe_rgb, name="tictactoe_v0", wrapped=wrapped
    )
