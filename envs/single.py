"""The single-player game envs' shared shape: ``SinglePlayerEnv`` (Threes, Friday) plays a
rules core's ``State`` with the agent making every decision and the env's ``np_random`` every
chance node; ``check_env_args`` also serves the starship designer, which edits a ship rather
than playing a ``State``."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from tablegym.envs.core import Game, IllegalActionError, State
from tablegym.envs.twoplayer import as_action


class StateMaskMixin:
    """Keeps ``_state`` and its int8 legal-action mask ``_mask`` in step (all zeros once over).

    The env sets ``_no_actions`` (zeros over the action space) before the first ``_set``.
    """

    _state: State
    _mask: np.ndarray
    _no_actions: np.ndarray

    @property
    def game_state(self) -> State:
        """The current position (an immutable State: safe to keep, search or print)."""
        return self._state

    def action_masks(self) -> np.ndarray:
        """Legal actions as a bool vector (sb3-contrib MaskablePPO's hook); all False when over."""
        return self._mask.astype(bool)

    def _set(self, state: State) -> None:
        self._state = state
        self._mask = self._no_actions if state.is_terminal() else state.legal_action_mask()


def check_env_args(env: Any, *, illegal_action: str, limit: tuple[str, int | None], render_mode: str | None) -> None:
    """Refuse, naming what is accepted, an unknown ``illegal_action``, an episode limit below 1
    (``limit`` is its keyword and value) or a render mode the env's metadata does not list."""
    if illegal_action not in ("raise", "penalty"):
        raise ValueError(f"illegal_action must be 'raise' or 'penalty', got {illegal_action!r}")
    name, value = limit
    if value is not None and value < 1:
        raise ValueError(f"{name} must be None or >= 1, got {value!r}")
    modes = env.metadata["render_modes"]
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode must be one of {modes} or None, got {render_mode!r}")


class SinglePlayerEnv(StateMaskMixin, gymnasium.Env[np.ndarray, np.int64]):
    """A single-player game with chance as a Gymnasium env. The agent sees decisions only: after
    reset and after every step the env samples chance nodes with its ``np_random``, so seeded
    episodes repeat exactly. An illegal action raises (``illegal_action="raise"``, the class's
    default) or ends the episode with ``illegal_reward`` (``"penalty"``, the registered id's
    default, for learners that ignore the mask); an episode truncates after ``limit`` steps
    when one is given.

    A game's env calls ``_setup`` from its ``__init__`` and gives what differs between games:
    ``_deal`` (the opening), ``_sample`` (resolve chance nodes), ``_reward``, ``_info``,
    ``_illegal`` (the error naming the legal actions) and ``_rgb`` (its picture).
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    illegal_reward: float = 0.0
    """The reward of an illegal action under ``illegal_action="penalty"``."""

    def _setup(
        self,
        game: Game,
        observation_space: spaces.Space,
        *,
        illegal_action: str,
        limit: tuple[str, int | None],
        render_mode: str | None,
    ) -> None:
        """Check the common arguments (``limit`` is the episode limit's keyword and value) and
        start with no episode: ``step`` before ``reset`` is refused."""
        check_env_args(self, illegal_action=illegal_action, limit=limit, render_mode=render_mode)
        self.game = game
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self._limit = limit[1]
        self.observation_space = observation_space
        self.action_space = spaces.Discrete(game.spec.num_actions)
        self._no_actions = np.zeros(game.spec.num_actions, dtype=np.int8)
        self._state = game.new_initial_state()
        self._mask = self._no_actions
        self._steps = 0
        self._done = True

    # -- what each game gives ------------------------------------------------------------

    def _deal(self, rng: np.random.Generator) -> State:
        """The opening position, chance resolved."""
        raise NotImplementedError

    def _sample(self, state: State, rng: np.random.Generator) -> State:
        """``state`` with its chance nodes resolved (the next decision, or the end)."""
        raise NotImplementedError

    def _started(self) -> None:
        """Hook after reset has dealt (a reward that counts from the opening resets here)."""

    def _reward(self, state: State) -> float:
        """The reward of the step that reached ``state``."""
        raise NotImplementedError

    def _info(self) -> dict[str, Any]:
        raise NotImplementedError

    def _illegal(self, action: Any, a: int) -> IllegalActionError:
        """The error for an illegal action, naming it and the legal ones."""
        return IllegalActionError(action, self._state.legal_actions())

    def _rgb(self) -> np.ndarray:
        raise NotImplementedError

    # -- Gymnasium API -------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._set(self._deal(self.np_random))
        self._steps = 0
        self._started()
        self._done = self._state.is_terminal()
        return self._state.observation(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("the episode is over (or reset() was never called); call reset() first")
        a = as_action(action)
        if not (0 <= a < len(self._mask) and self._mask[a]):
            if self.illegal_action == "raise":
                raise self._illegal(action, a)
            self._done = True
            self._mask = self._no_actions
            info = self._info()
            info["illegal_action"] = True
            return self._state.observation(), self.illegal_reward, True, False, info
        self._set(self._sample(self._state.child(a), self.np_random))
        self._steps += 1
        reward = self._reward(self._state)
        terminated = self._state.is_terminal()
        truncated = not terminated and self._limit is not None and self._steps >= self._limit
        self._done = terminated or truncated
        return self._state.observation(), reward, terminated, truncated, self._info()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "ansi":
            return self._state.to_text()
        if self.render_mode == "rgb_array":
            return self._rgb()
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.game!r}>"
