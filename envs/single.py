"""What the single-player game envs (Threes, Friday) share: the current state and its mask."""

from __future__ import annotations

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
