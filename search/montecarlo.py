"""Flat Monte-Carlo planning over any game on the common contract whose record names a rollout.

Every candidate action is valued by the mean of a leaf evaluator over ``rollouts`` playouts
from it, each played by the game's own compiled rollout policy (``Rollout.kernel``) to the end,
or cut after ``horizon`` turns and valued there. All actions share the same ``rollouts`` random
streams (common random numbers), so the comparison between actions is not drowned by the luck
of the draws. Why a game's own policy rather than random moves: in Friday, random playouts die
in the first step whatever the first action was; a fast rule player's playouts tell actions apart
(envs/friday/rollout.py).

A position can come back within a turn in some games (two Friday "below the pile" cards on
the left), and a planner whose choice depends on the position alone would go round forever:
``CycleGuard`` gives a position met again an action not yet tried there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit, types

from tablegym.envs.core import EVAL_T, PUSH_T, STATE_T, State, kernel_state

ROLLOUT_T = types.FunctionType(types.none(STATE_T, types.int64[::1], types.int64))
"""``rollout(s, rng_state, horizon)``: play ``s`` on in place with the splitmix64 stream ``rng_state``."""


@dataclass(frozen=True)
class Rollout:
    """How a game's Monte-Carlo planning plays on from a position (its record's ``rollout``)."""

    kernel: Any
    """Compiled ``rollout(s, rng_state, horizon)``: play to the end, or stop as turn ``horizon`` + 1
    begins (``horizon`` 0: to the end)."""
    turn_starts: Callable[[State], bool] = field(default=lambda state: True)
    """Whether ``state`` starts a turn: no position of the turn before can come back after it."""
    learned_horizon: int = 0
    """The horizon when a network values the playouts and none is given (a network at horizon 0
    would only ever see finished games)."""


_SIGNATURE = types.none(
    STATE_T,
    types.int64[::1],
    types.int64,
    types.int64,
    types.int64,
    types.int64,
    PUSH_T,
    ROLLOUT_T,
    EVAL_T,
    types.int64,
    types.float64[::1],
    types.float64[::1],
)
"""An explicit signature over the kernels' function types: compiled and cached once for every
game and evaluator (envs/core.py says why dispatcher arguments break numba's cache)."""


@njit(_SIGNATURE, cache=True, nogil=True)
def mc_values(s, actions, n, rollouts, seed, horizon, push, rollout, evaluate, player, params, out):
    """out[i] = the mean of ``evaluate(state, player, params)`` over ``rollouts`` playouts after
    ``actions[i]``; playout k of every action uses the stream seeded ``seed + 1,000,003 k``."""
    rng_state = np.empty(1, dtype=np.int64)
    for i in range(n):
        total = 0.0
        for k in range(rollouts):
            rng_state[0] = seed + 1_000_003 * k
            x = s.copy()
            push(x, actions[i])
            rollout(x, rng_state, horizon)
            total += evaluate(x, player, params)
        out[i] = total / rollouts


class CycleGuard:
    """Remembers the actions played at every position of the current turn, so that a position
    met again gets an action not yet tried there. A turn has finitely many positions with
    finitely many actions each, so with the guard every turn ends; ``turn_starts`` says where
    the positions of the turn before are forgotten."""

    def __init__(self, turn_starts: Callable[[State], bool] = lambda state: True) -> None:
        self.turn_starts = turn_starts
        self._tried: dict[int, set[int]] = {}

    def candidates(self, state: State, legal: list[int]) -> list[int]:
        """The legal actions not yet played at this position (all of them if every one was)."""
        if self.turn_starts(state):
            self._tried.clear()
        tried = self._tried.get(state.key(), ())
        return [a for a in legal if a not in tried] or list(legal)

    def played(self, state: State, action: int) -> int:
        self._tried.setdefault(state.key(), set()).add(action)
        return action


class MonteCarloAgent:
    """Plays the legal action of best mean playout value (module docstring), ``rollouts`` playouts
    an action cut after ``horizon`` turns (0: to the end). ``polled`` counts playouts, the budget
    it spends: ``rollouts`` per candidate action at every decision with a choice."""

    def __init__(self, evaluator, rollout: Rollout, *, rollouts: int = 256, horizon: int = 0, name: str | None = None) -> None:
        if rollouts < 1:
            raise ValueError(f"the rollout budget must be at least 1, got {rollouts}")
        if horizon < 0:
            raise ValueError(f"the horizon must be 0 (play to the end) or a number of turns, got {horizon}")
        if not evaluator.compiled:
            raise ValueError(f"Monte-Carlo planning needs a compiled evaluator; {evaluator.name!r} has no kernel")
        self.evaluator = evaluator
        self.rollout = rollout
        self.rollouts = rollouts
        self.horizon = horizon
        self.name = name or f"mc:rollouts={rollouts}" + (f",horizon={horizon}" if horizon else "")
        self.polled = 0
        self.values = np.empty(0)
        """The last decision's value of each candidate action."""
        self.guard = CycleGuard(rollout.turn_starts)

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        from tablegym.envs.evaluator import check_game

        check_game(self.evaluator, state)
        legal = np.array(self.guard.candidates(state, state.legal_actions()), dtype=np.int64)
        if len(legal) == 1:
            return self.guard.played(state, int(legal[0]))
        self.values = np.empty(len(legal))
        root = kernel_state(state)
        mc_values(
            root._s,
            legal,
            len(legal),
            self.rollouts,
            int(rng.integers(2**40)),
            self.horizon,
            root.kernels.push,
            self.rollout.kernel,
            self.evaluator.kernel,
            state.current_player(),
            self.evaluator.params,
            self.values,
        )
        self.polled += len(legal) * self.rollouts
        return self.guard.played(state, int(legal[int(np.argmax(self.values))]))
