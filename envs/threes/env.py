"""Threes! as a single-player Gymnasium env: the agent swipes, the env's rng plays every chance node."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from tablegym.envs.core import IllegalActionError
from tablegym.envs.single import SinglePlayerEnv
from tablegym.envs.threes.board import DIRECTION_NAMES
from tablegym.envs.threes.core import HINT_MODES, OBS_SIZE, ThreesGame, ThreesState, play_random_setup, sample_chance

# Upper bounds of the observation entries: a cell rank (12288 is rank 15), a one-hot hint flag,
# a deck count (a deck holds four cards of each kind).
_OBS_HIGH = np.array([15.0] * 16 + [1.0] * 4 + [4.0] * 3 + [15.0] * 2, dtype=np.float32)
assert _OBS_HIGH.shape == (OBS_SIZE,)


def threes_rgb(state: ThreesState) -> np.ndarray:
    """The board, the next-card hint and the score as an image (drawn by the lazily imported envs.render)."""
    from tablegym.envs.render import draw_threes

    return draw_threes(state.values, state.hint, score=state.score)


class ThreesEnv(SinglePlayerEnv):
    """Threes!: slide numbered cards on a 4x4 board, merging 1 + 2 and equal cards >= 3.

    ## Description

    The sliding-card puzzle of Sirvo (2014), with the rules of rules/threes.md. A swipe moves
    every line that can move one cell towards a wall, merging at most one pair per line; a new
    card then enters at the far end of one moved line. The next card is announced by a hint
    (1, 2, 3, or a bonus card once the highest card is >= 48). The game ends when no swipe moves
    anything. Every random event (deal, insertion line, next card) is a chance node of the rules
    core, sampled with the env's ``np_random``, so seeded episodes repeat exactly.

    ## Action Space

    ``Discrete(4)``::

        0 left    1 right    2 up    3 down

    A swipe that moves no line is illegal; ``info["action_mask"]`` (int8) and
    ``action_masks()`` (bool, sb3-contrib MaskablePPO's hook) give the legal swipes.

    ## Observation Space

    ``Box(0, high, (25,), float32)``, the core's ``ThreesState.observation()``:

    | Index  | Meaning                                                             | Range  |
    |--------|---------------------------------------------------------------------|--------|
    | 0-15   | card rank per cell, row-major from the top-left (0 empty, 1 -> 1,   | 0..15  |
    |        | 2 -> 2, r >= 3 -> 3 x 2^(r-3): 3 -> 3, 4 -> 6, ..., 15 -> 12288)     |        |
    | 16-19  | the next-card hint, one-hot: 1, 2, 3, bonus ("+" or candidates)     | 0 or 1 |
    | 20-22  | cards 1, 2, 3 left in the current deck (card counting is allowed)   | 0..4   |
    | 23-24  | hint="candidates" and a bonus hint: ranks of the lowest and highest | 0..15  |
    |        | candidate value shown; 0 otherwise                                  |        |

    ## Rewards

    The increase of the board score (3 -> 3, 6 -> 9, 12 -> 27, ...: 3^(log2(v/3)+1) per card
    >= 3) caused by the step. The first step also counts the score of the dealt cards, so the
    return of an episode equals its final score (``info["score"]``). The score never falls, so
    every reward is >= 0. With ``illegal_action="penalty"`` an illegal swipe gives 0 and ends
    the episode: the lost future score is the penalty, and the return still equals the score.

    ## Starting State

    Nine cards of a fresh deck of twelve (four each of 1, 2, 3) on uniformly random cells, and
    the hint of the first card drawn.

    ## Episode End

    Terminates when no swipe is legal (``info["action_mask"]`` is then all zeros), or at an
    illegal swipe with ``illegal_action="penalty"`` (``info["illegal_action"] = True``).
    Truncates after ``max_moves`` swipes if it is given; never otherwise.

    ## Arguments

    ```python
    gymnasium.make("tablegym/Threes-v0")
    gymnasium.make("tablegym/Threes-v0", hint="candidates", illegal_action="raise",
                   max_moves=None, render_mode="rgb_array")
    ```

    - ``hint``: "+" (default; a bonus card's hint is "+") or "candidates" (the later app's
      hint of up to three candidate values). Observations show a bonus hint the same way in
      both; the rule set changes which card may come.
    - ``illegal_action``: "penalty" (the id's default): see Rewards; for learners that ignore
      the mask, such as PPO and DQN. "raise" (the class's default, ``ThreesEnv()``): an
      illegal swipe raises ``IllegalActionError`` (a ``ValueError``) naming it and the legal
      swipes.
    - ``max_moves``: truncate after this many swipes (None: play to the end).
    - ``render_mode``: None, "ansi" (the core's text board with hint, score and deck counts)
      or "rgb_array" (a drawn board with the hint above it).

    ``info`` holds "score", "highest" (the highest card), "moves" (swipes made) and
    "action_mask".

    ## Version History

    - v0: initial release.
    - v0, unchanged rules: made by its id (``gymnasium.make``, ``gymnasium.make_vec``), an illegal
      action ends the episode (``illegal_action="penalty"``) instead of raising; an episode
      without one plays as before.
    """

    def __init__(
        self,
        *,
        hint: str = "+",
        illegal_action: str = "raise",
        max_moves: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        if hint not in HINT_MODES:
            raise ValueError(f"hint must be one of {HINT_MODES}, got {hint!r}")
        space = spaces.Box(np.zeros(OBS_SIZE, dtype=np.float32), _OBS_HIGH, dtype=np.float32)
        self._setup(
            ThreesGame(hint), space, illegal_action=illegal_action, limit=("max_moves", max_moves), render_mode=render_mode
        )
        self.max_moves = max_moves
        self._last_score = 0

    _state: ThreesState

    def _deal(self, rng: np.random.Generator) -> ThreesState:
        return play_random_setup(self.game, rng)

    def _sample(self, state: ThreesState, rng: np.random.Generator) -> ThreesState:
        return sample_chance(state, rng)

    def _started(self) -> None:
        self._last_score = 0  # the first step's reward counts the dealt cards (see Rewards)

    def _reward(self, state: ThreesState) -> float:
        reward = float(state.score - self._last_score)
        self._last_score = state.score
        return reward

    def _info(self) -> dict[str, Any]:
        state = self._state
        return {"score": state.score, "highest": state.highest, "moves": state.moves, "action_mask": self._mask.copy()}

    def _illegal(self, action: Any, a: int) -> IllegalActionError:
        """The error for an illegal swipe: it names the swipe and the legal ones, in words too."""
        legal = self._state.legal_actions()
        names = ", ".join(f"{i} {DIRECTION_NAMES[i]}" for i in legal)
        what = f"{DIRECTION_NAMES[a]}: no card can move that way" if 0 <= a < 4 else "swipes are 0 left, 1 right, 2 up, 3 down"
        return IllegalActionError(action, legal, f"({what}; legal swipes: {names})")

    def _rgb(self) -> np.ndarray:
        return threes_rgb(self._state)
