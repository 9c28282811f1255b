"""Friday as a single-player Gymnasium env: the agent decides, the env's rng draws every card."""

from __future__ import annotations

from typing import Any, Unpack

import numpy as np
from gymnasium import spaces

from tablegym.envs.core import IllegalActionError
from tablegym.envs.friday.cards import NUM_AGING_TYPES, NUM_HAZARD_TYPES, NUM_PIRATES, NUM_TYPES
from tablegym.envs.friday.core import FridayGame, FridayOptions, FridayState, sample_chance
from tablegym.envs.friday.layout import MAX_SLOTS, NUM_ACTIONS
from tablegym.envs.friday.observation import OBS_SIZE
from tablegym.envs.single import SinglePlayerEnv

REWARDS = ("win", "score")
DEFAULT_MAX_STEPS = 2000
"""Decisions before truncation: exchange and below-the-pile abilities can go round in circles."""


def _observation_bounds() -> tuple[np.ndarray, np.ndarray]:
    """Bounds of each entry of ``FridayState.observation()`` (layout in core.py, above ``k_observe``).

    The loose ones: the fighting total lies in [-36, 101] (every negative card face up, the
    four lowest doubled by the two repeat cards and two mimicry copies of them; every positive
    card face up, the four highest doubled, +1 per card against the 10/52 pirate), the
    hazard value up to 198 ("fight all remaining hazards": the red values of all 30 hazards),
    the free cards of that pirate up to 70, every other count as printed in cards.py.
    """
    parts: list[tuple[int, float, float]] = [
        (1, 0.0, 1.0),  # life / 22
        (4 + 10, 0.0, 1.0),  # step, phase one-hot
        (1, -36 / 20, 101 / 20),  # fighting total / 20
        (1, 0.0, 198 / 20),  # hazard value / 20
        (2, 0.0, 70 / 5),  # free cards allowed, drawn / 5
        (1, 0.0, 1.0),  # free draws ended
        (1, 0.0, 2.0),  # cost of a paid draw
        (1, 0.0, 1.0),  # aging cards entered / 11
        (2 * NUM_PIRATES + 2 + 2 + 3 * NUM_HAZARD_TYPES + 17, 0.0, 1.0),  # pirates, beaten, fought, hazards, ability
        (5 * NUM_TYPES, 0.0, 2.0),  # counts / 4 per card type (8 "weak" cards at most)
        (2 * NUM_HAZARD_TYPES, 0.0, 1.0),  # hazard stack and discard / 2
        (NUM_AGING_TYPES, 0.0, 2.0),  # aging stack counts
    ]
    slot = [(2, 0.0, 1.0), (1, -5 / 4, 1.0), (3, 0.0, 1.0), (1, -1.0, 1.0), (1, 0.0, 1.0)]
    parts += slot * MAX_SLOTS  # present, left; value / 4; destroyed, doubled, used; rating / 3; aging
    parts.append((3 * NUM_TYPES, 0.0, 1.0))  # the cards of "sort 3 cards"
    low = np.concatenate([np.full(n, lo, dtype=np.float32) for n, lo, _ in parts])
    high = np.concatenate([np.full(n, hi, dtype=np.float32) for n, _, hi in parts])
    assert low.shape == (OBS_SIZE,), "the observation layout of core.py changed"
    return low, high


def friday_rgb(state: FridayState) -> np.ndarray:
    """The position as an image (drawn by the lazily imported envs.friday.render)."""
    from tablegym.envs.friday.render import state_image

    return state_image(state)


class FridayEnv(SinglePlayerEnv):
    """Friday: Robinson fights hazards with a deck he improves, ages, and faces two pirates.

    ## Description

    The deck-building solitaire of Friedemann Friese (2011), with the rules of rules/friday.md.
    Each turn Robinson draws two hazards, fights one with free and paid draws from his
    fighting deck (paid ones cost life), uses the abilities of the cards on the table, and
    wins the hazard as a new knowledge card or loses life and may destroy cards. Three passes
    through the hazard stack (green, yellow, red steps) are followed by two pirate fights;
    beating both wins. Every shuffle and draw is a chance node of the rules core, sampled with
    the env's ``np_random`` after reset and after every step, so the agent sees decisions
    only and seeded episodes repeat exactly.

    ## Action Space

    ``Discrete(150)``, the core's action ids (``FridayState.action_to_string`` names them):

    | Id        | Action                                                                 |
    |-----------|------------------------------------------------------------------------|
    | 0         | fight the first drawn hazard (or the only one left)                    |
    | 1         | fight the second drawn hazard (the first goes to the hazard discard)   |
    | 2         | skip the only hazard left (it is discarded; ends the step)             |
    | 3         | draw a free card onto the left                                         |
    | 4         | draw a paid card onto the right (1 life; 2 against the 7/16 pirate)    |
    | 5         | end the fight: compare and resolve (a deliberate loss when behind)     |
    | 6         | done: stop a multi-part ability early, or finish destroying            |
    | 7         | stop the free draws (only with ``abilities="after_free"``)             |
    | 8         | draw one more card: "+2 cards"' second, "sort 3 cards"' next, the free |
    |           | replacement after "below the pile" (DONE, 6, declines)                 |
    | 9         | concede a pirate fight (the game is lost)                              |
    | 10, 11    | fight the first / second pirate first                                  |
    | 12 + i    | use the ability of table slot i (i < 40)                               |
    | 52 + i    | target table slot i with the ability in use                            |
    | 92 + i    | destroy table slot i after a lost fight (slots in increasing order)    |
    | 132 + k   | "sort 3 cards": arrangement k of ``core.SORT_OPTIONS`` (k < 18)        |

    Few actions are legal at a time; ``info["action_mask"]`` (int8) and ``action_masks()``
    (bool, sb3-contrib MaskablePPO's hook) give them.

    ## Observation Space

    ``Box(low, high, (816,), float32)``, the core's ``FridayState.observation()``:

    | Index   | Meaning                                                               | Range       |
    |---------|-----------------------------------------------------------------------|-------------|
    | 0       | life / 22                                                             | 0..1        |
    | 1-4     | step one-hot: green, yellow, red, pirates                             | 0 or 1      |
    | 5-14    | phase one-hot (the decision asked for, ``core.PHASE_NAMES``)          | 0 or 1      |
    | 15      | fighting total / 20 (0 outside fights)                                | -1.8..5.05  |
    | 16      | hazard value of the fight / 20                                        | 0..9.9      |
    | 17-18   | free cards allowed, free cards drawn / 5                              | 0..14       |
    | 19-21   | free draws ended; life cost of a paid draw; aging cards entered / 11  | 0..2        |
    | 22-41   | the two revealed pirates, one-hot each                                | 0 or 1      |
    | 42-45   | pirates beaten (2); the pirate fought, one-hot (2)                    | 0 or 1      |
    | 46-117  | hazard fought, first drawn, second drawn, one-hot each (3 x 24)       | 0 or 1      |
    | 118-134 | ability in use, one-hot (``cards.ABILITY_NAMES``)                     | 0 or 1      |
    | 135-324 | cards / 4 per card type (5 x 38): unknown part of the fighting stack, | 0..2        |
    |         | known top, known bottom, discard pile, all owned                      |             |
    | 325-372 | hazard stack, hazard discard pile: cards / 2 per hazard type (2 x 24) | 0..1        |
    | 373-381 | aging stack: cards per aging type                                     | 0..2        |
    | 382-701 | 40 table slots x 8: present, left, value / 4, destroyed, doubled,     | -1.25..1    |
    |         | used, ability rating / 3, is aging                                    |             |
    | 702-815 | the cards drawn by "sort 3 cards", one-hot per card (3 x 38)          | 0 or 1      |

    ## Rewards

    - ``reward="win"`` (default): +1 on the step that wins the game, -1 on the step that
      loses it, 0 on every other step (and at truncation). The return is the game's result.
    - ``reward="score"``: the change of the game's score (rules/friday.md, "Score": card
      values owned, -5 per aging card, +15 per pirate beaten, +5 per life left on a win, -3
      per undefeated hazard) caused by the step, plus the ±1 of "win" on the final step. The
      return is ``final score - starting score ± 1`` (the starting score, ``info["score"]``
      after reset, is -90 at level 1: 30 undefeated hazards; -95 at levels 2-4, with an
      aging card in the deck).

    With ``illegal_action="penalty"`` an illegal action gives -1 and ends the episode as a loss.

    ## Starting State

    Two pirates revealed, the fighting stack of 18 shuffled starting cards (level 2+: plus the
    top aging card), 20 life (level 4: 18), the green step, and the first two hazards drawn:
    the first decision is which one to fight.

    ## Episode End

    Terminates when the game is won (both pirates beaten) or lost (Robinson must pay life he
    does not have, concedes a pirate fight, or, with ``empty_aging="lose"``, needs an aging
    card when none is left); ``info["action_mask"]`` is then all zeros. Also terminates at an
    illegal action with ``illegal_action="penalty"`` (``info["illegal_action"] = True``).
    Truncates after ``max_steps`` decisions (default 2000).

    ## Arguments

    ```python
    gymnasium.make("tablegym/Friday-v1")
    gymnasium.make("tablegym/Friday-v1", level=1, abilities="any_time", aging_life="at_resolution",
                   empty_aging="lose", below_replacement="optional", sort_draws="one_at_a_time",
                   max_life_level4=22, reward="win", illegal_action="raise", max_steps=2000,
                   render_mode="rgb_array")
    ```

    - ``level``: difficulty 1-4 (rules/friday.md, "Setup by level").
    - ``abilities``, ``aging_life``, ``empty_aging``, ``below_replacement``, ``sort_draws``,
      ``max_life_level4``: the rule options of ``FridayGame`` (default first): abilities
      "any_time" or "after_free" (only after the free draws, as in the Fridai engine); "-1/-2
      life" aging cards charge "at_resolution" or "when_drawn"; a reshuffle with no aging card
      left "lose"s (the official rules change) or does "reshuffle"; the free replacement after
      "below the pile" is "optional" or "forced"; "sort 3 cards" draws "one_at_a_time" (may
      stop) or "all_at_once"; maximum life 22 or 20 at level 4.
    - ``reward``: "win" or "score" (see Rewards).
    - ``illegal_action``: "penalty" (the id's default): see Rewards; for learners that ignore
      the mask, such as PPO and DQN. "raise" (the class's default, ``FridayEnv()``): an
      illegal action raises ``IllegalActionError`` (a ``ValueError``) naming it and the legal
      actions, in words too.
    - ``max_steps``: truncate after this many decisions (None: play to the end, which an
      agent cycling through exchange abilities may never reach).
    - ``render_mode``: None, "ansi" (the core's text: life, step, stacks, pirates, the table)
      or "rgb_array" (life, step, hazard, pirates and the table cards drawn).

    ``info`` holds "score", "life", "step" (0 green, 1 yellow, 2 red, 3 pirates), "won",
    "decisions" (steps taken this episode) and "action_mask".

    ## Version History

    - v1: the official rules by default: ``empty_aging="lose"``; the free replacement after
      "below the pile" is optional and "sort 3 cards" draws one card at a time, so a decision
      "draw another card or stop" (DONE / EXTRA_DRAW) can follow either. v0's rules are
      ``empty_aging="reshuffle", below_replacement="forced", sort_draws="all_at_once"``.
    - v1, unchanged rules: made by its id (``gymnasium.make``, ``gymnasium.make_vec``), an illegal
      action ends the episode (``illegal_action="penalty"``) instead of raising; an episode
      without one plays as before.
    - v0: initial release.
    """

    def __init__(
        self,
        *,
        reward: str = "win",
        illegal_action: str = "raise",
        max_steps: int | None = DEFAULT_MAX_STEPS,
        render_mode: str | None = None,
        **rules: Unpack[FridayOptions],
    ) -> None:
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
        game = FridayGame(**rules)
        self._setup(
            game,
            spaces.Box(*_observation_bounds(), dtype=np.float32),
            illegal_action=illegal_action,
            limit=("max_steps", max_steps),
            render_mode=render_mode,
        )
        self.reward = reward
        self.max_steps = max_steps
        self._last_score = 0

    _state: FridayState
    illegal_reward = -1.0  # an illegal action loses the game (see Rewards)

    def _deal(self, rng: np.random.Generator) -> FridayState:
        return sample_chance(self.game.new_initial_state(), rng)

    def _sample(self, state: FridayState, rng: np.random.Generator) -> FridayState:
        return sample_chance(state, rng)

    def _started(self) -> None:
        self._last_score = self._state.score

    def _reward(self, state: FridayState) -> float:
        reward = float(state.returns()[0]) if state.is_terminal() else 0.0
        if self.reward == "score":
            reward += float(state.score - self._last_score)
            self._last_score = state.score
        return reward

    def _info(self) -> dict[str, Any]:
        state = self._state
        return {
            "score": state.score,
            "life": state.life,
            "step": state.step,
            "won": state.won,
            "decisions": self._steps,
            "action_mask": self._mask.copy(),
        }

    def _illegal(self, action: Any, a: int) -> IllegalActionError:
        """The error for an illegal action: it names the action and the legal ones, in words too."""
        state = self._state
        legal = state.legal_actions()
        names = ", ".join(f"{i} {state.action_to_string(i)}" for i in legal)
        if 0 <= a < NUM_ACTIONS:
            what = f"{state.action_to_string(a)} is not legal while: {state.phase_name}"
        else:
            what = f"no such action: ids are 0-{NUM_ACTIONS - 1}"
        return IllegalActionError(action, legal, f"({what}; legal: {names})")

    def _rgb(self) -> np.ndarray:
        return friday_rgb(self._state)
