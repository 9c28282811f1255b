"""Sim as a Gymnasium env (one seat against an opponent) and as a PettingZoo AEC env."""

from __future__ import annotations

from typing import Unpack

import numpy as np
from pettingzoo import AECEnv

from tablegym.envs.aec import make_aec_env
from tablegym.envs.core import State
from tablegym.envs.sim.core import SimGame, SimState
from tablegym.envs.twoplayer import OpponentSpec, SeatOptions, TwoPlayerEnv


def sim_rgb(state: State) -> np.ndarray:
    """K_n drawn on a circle, the last edge thicker (drawn by the lazily imported envs.render)."""
    from tablegym.envs.render import draw_sim

    assert isinstance(state, SimState)
    game = state.game
    return draw_sim(game.n, game.edges, state.colours, last_edge=state.last_edge)


class SimEnv(TwoPlayerEnv):
    """Sim: colour the edges of K_n in turn; whoever closes a triangle in their own colour loses.

    ## Description

    The game behind "Cassis" (rules/sim.md): two players colour the uncoloured edges of the
    complete graph on ``n`` points, one edge a move. Completing a triangle all in your own
    colour loses at once; on K6 (the default) that cannot be avoided for ever (R(3,3) = 6),
    and with perfect play the second player wins. On K3..K5 a full board without a
    one-colour triangle is a draw. The agent plays one seat, ``opponent`` the other.

    ## Action Space

    ``Discrete(n * (n - 1) / 2)``: the edge to colour, numbered lexicographically over the
    point pairs i < j (K6: (0,1)=0, (0,2)=1, ..., (4,5)=14). A coloured edge is illegal;
    ``info["action_mask"]`` and ``action_masks()`` give the free edges.

    ## Observation Space

    ``Box(0, 1, (3, n * (n - 1) / 2), float32)``, from the agent's point of view:

    | Plane | Meaning                                           |
    |-------|---------------------------------------------------|
    | 0     | 1 for each edge in the agent's colour             |
    | 1     | 1 for each edge in the opponent's colour          |
    | 2     | all ones if the agent is to move (else all zeros) |

    ## Rewards

    +1 when the opponent closes a triangle in its colour, -1 when the agent does, 0 for a
    draw (K3..K5 only) and on every non-final step. With ``illegal_action="penalty"`` an
    illegal edge gives -1 and ends the episode.

    ## Starting State

    No edge coloured; player 0 moves first. With ``agent_seat=1`` the opponent's first edge is
    already coloured when ``reset`` returns.

    ## Episode End

    Terminates when a player closes a triangle in their own colour or every edge is coloured
    (at most ``n * (n - 1) / 2`` moves); never truncated.

    ## Arguments

    ```python
    gymnasium.make("tablegym/Sim-v0")                         # K6
    gymnasium.make("tablegym/Sim-v0", n=5, opponent="random", agent_seat="alternate",
                   illegal_action="raise", render_mode="rgb_array")
    ```

    - ``n``: number of points, 3..8.
    - ``opponent``, ``agent_seat``, ``illegal_action``, ``render_mode``: see ``TwoPlayerEnv``
      ("ansi" is the core's adjacency matrix, "rgb_array" the points on a circle with red
      (player 0) and blue (player 1) edges and free edges thin grey).

    ## Version History

    - v0: initial release.
    - v0, unchanged rules: made by its id, an illegal action ends the episode (``TwoPlayerEnv``).
    """

    def __init__(
        self,
        *,
        n: int = 6,
        opponent: OpponentSpec = "random",
        illegal_action: str = "raise",
        **seat: Unpack[SeatOptions],
    ) -> None:
        game = SimGame(n)
        super().__init__(game=game, opponent=opponent, illegal_action=illegal_action, renderer=sim_rgb, **seat)


def sim_aec_env(*, n: int = 6, render_mode: str | None = None, wrapped: bool = True) -> AECEnv:
    """Sim as a PettingZoo AEC env ("player_0" colours first).

    ``wrapped=False`` gives the raw ``GameAECEnv`` (the same object as ``env.unwrapped``).
    """
    return make_aec_env(SimGame(n), render_mode=render_mode, renderer=sim_rgb, name="sim_v0", wrapped=wrapped)
