"""What the single-player game envs (Threes, Friday, the starship designer) share: the
checks of their common arguments, the current state and its mask."""

from __future__ import annotations

from typing import Any

import numpy as np

from tablegym.envs.core import State


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


def check_env_args(env: Any, *, illegal_action: str, limit: tuple[str, int | None],
                   render_mode: str | None) -> None:
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
