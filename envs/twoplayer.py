"""One Gymnasium env for every two-player game of the contract: the agent plays one seat.

``TwoPlayerEnv`` is generic over ``Game`` (envs/core.py). It never knows a rule: legality,
moves, terminal tests, rewards and observations all come from the ``State``. Per-game modules
(envs/trilobite/env.py, envs/sim/env.py) subclass it only to fix the game, document it in
Gymnasium's style and draw it.

``PlayCursor`` is the shared fast path of this env and of the PettingZoo env (envs/aec.py): the
current State with its legal mask computed once, and moves that are checked once against that
mask and then applied through the game's compiled kernels when the State has them.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, TypedDict

import gymnasium
import numpy as np
from gymnasium import spaces
from numba import njit

from tablegym.envs.core import CHANCE, TERMINAL, Game, IllegalActionError, KernelState, State, sample_outcome

Opponent = Callable[[State, np.random.Generator], int]
"""An opponent policy: ``(state, rng) -> action`` (the ``Agent`` protocol of tablegym.search)."""

OpponentSpec = str | Opponent
Renderer = Callable[[State], np.ndarray]
"""Draws a State as an H x W x 3 uint8 image (the "rgb_array" render mode)."""


@njit(cache=True)
def _mask_from_moves(moves, n, mask):
    """Set ``mask[moves[:n]] = 1`` (a third of numpy's fancy-index cost at this size)."""
    for i in range(n):
        mask[moves[i]] = 1


def as_action(action: Any) -> int:
    """The int behind ``action`` (int, numpy integer, 0-d integer array), or -1 if there is none.

    -1 is never legal, so a float, a string or None fall through to the illegal-action path
    and get the same clear error as an occupied square.
    """
    if type(action) is int:
        return action
    try:
        return operator.index(action)
    except TypeError:
        return -1


class PlayCursor:
    """The current ``State`` and its int8 legal mask, computed once per position.

    ``play`` assumes the action was already checked against ``mask`` (one lookup) and so skips
    ``State.child``'s second validation: for a ``KernelState`` it copies the compact array and
    calls ``kernels.push`` directly, the same code path ``child`` ends in.
    """

    __slots__ = ("state", "mask", "_game", "_cls", "_push", "_moves", "_buf", "_n")

    def __init__(self, state: State) -> None:
        self._game = state.game
        self._n = state.game.spec.num_actions
        if isinstance(state, KernelState):
            self._cls = type(state)
            self._push = state.kernels.push
            self._moves = state.kernels.moves
            self._buf = np.empty(self._n, dtype=np.int64)
        else:
            self._cls = self._push = self._moves = self._buf = None
        self.state = state
        self.mask = self._mask_of(state)

    def set(self, state: State) -> None:
        """Jump to ``state`` (a reset, or a chance outcome)."""
        self.state = state
        self.mask = self._mask_of(state)

    def _mask_of(self, state: State) -> np.ndarray:
        if self._moves is None:
            return state.legal_action_mask()
        return self._mask_of_array(state.array)

    def _mask_of_array(self, arr: np.ndarray) -> np.ndarray:
        mask = np.zeros(self._n, dtype=np.int8)
        _mask_from_moves(self._buf, self._moves(arr, self._buf), mask)
        return mask

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` (an int from ``as_action``) is legal here."""
        return 0 <= action < self._n and self.mask[action] == 1

    def play(self, action: int) -> State:
        """Apply a legal ``action``; returns the new State."""
        if self._push is None:
            state = self.state.child(action)
            self.mask = state.legal_action_mask()
        else:
            arr = self.state.array
            self._push(arr, action)
            self.mask = self._mask_of_array(arr)
            state = self._cls(self._game, arr)
        self.state = state
        return state

    def resolve_chance(self, rng: np.random.Generator) -> None:
        """Sample chance nodes with ``rng`` until a player (or the end) is to move."""
        while self.state.current_player() == CHANCE:
            self.set(self.state.child(sample_outcome(self.state, rng)))

    def illegal(self, action: Any, who: str) -> IllegalActionError:
        """The error for an illegal ``action`` by ``who``: it names the action and the legal set."""
        return IllegalActionError(action, self.state.legal_actions(), f"by {who}")


def resolve_opponent(game: Game, opponent: OpponentSpec) -> Opponent:
    """Turn an opponent spec into a policy ``(state, rng) -> action``.

    "random" is built in; any other string goes to the agent front door
    (``tablegym.models.agents.make_agent``), loaded only then through ``tablegym.envs.above``:
    agents are built from searches and networks, which sit above the rules, so an env reaches
    them only when asked to by name.
    """
    if isinstance(opponent, str):
        from tablegym.envs import above

        if opponent == "random":
            return above("random_agent")()
        return above("make_agent")(game, opponent)
    if callable(opponent):
        return opponent
    raise TypeError(f"opponent must be 'random', an agent spec string or a callable (state, rng) -> action, got {opponent!r}")


class SeatOptions(TypedDict, total=False):
    """``TwoPlayerEnv``'s keyword arguments that a game's env passes on as they are (see its
    Arguments): ``agent_seat``, ``render_mode`` and ``opening_plies``."""

    agent_seat: int | str
    render_mode: str | None
    opening_plies: int


class TwoPlayerEnv(gymnasium.Env[np.ndarray, np.int64]):
    """A two-player ``Game`` as a single-agent Gymnasium env: the agent plays one seat.

    The other seat is played by ``opponent`` inside ``reset`` (when it moves first) and
    ``step``. The observation is ``state.observation(agent_seat)``; the reward is the agent's
    entry of ``state.returns()`` once the game ends (+1 win, -1 loss, 0 draw), else 0.

    Arguments (keyword-only):
        game: the rule set.
        opponent: "random" (default), an agent spec string for
            ``tablegym.models.agents.make_agent`` (e.g. a search with a hand-made
            evaluator), or any callable ``(state, rng) -> action``. It gets ``self.np_random``,
            so seeded episodes repeat exactly.
        agent_seat: 0, 1, or "alternate" (seat 0 on the first episode after seeding, then
            switching at every reset). ``reset(options={"seat": s})`` overrides it for one episode.
        illegal_action: "raise" (this class's default): an illegal action raises
            ``IllegalActionError`` (a ``ValueError``) naming the action and the legal set.
            "penalty" (the default of every registered id, ``gymnasium.make(id)``): the
            episode ends at once with reward -1 and ``info["illegal_action"] = True``, as an
            invalid move loses in PettingZoo's classic games; what learners that ignore the
            action mask need (SB3's PPO and DQN, ``action_space.sample()``, ``check_env``).
        render_mode: None, "ansi" (``state.to_text()``) or "rgb_array" (needs ``renderer``).
        renderer: ``State -> HxWx3 uint8`` image, supplied by per-game subclasses.
        opening_plies: moves played at random for both seats at every reset (default 0), drawn
            from ``self.np_random`` as the random opponent draws them, before the agent's seat
            comes to move: a deterministic opponent (a search) then meets varied positions, as
            in matches with random openings (``--opening-plies``).

    ``info`` holds "action_mask" (int8, all zeros once the game is over), "seat" and
    "opponent_actions" (the opponent's moves since the agent's last action).

    An env made by its id (``gymnasium.make``, ``gymnasium.make_vec``) ends the episode at an
    illegal action (``illegal_action="penalty"``) instead of raising; an episode without one
    plays as it does with ``"raise"``.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        *,
        game: Game,
        opponent: OpponentSpec = "random",
        agent_seat: int | str = 0,
        illegal_action: str = "raise",
        render_mode: str | None = None,
        renderer: Renderer | None = None,
        opening_plies: int = 0,
    ) -> None:
        spec = game.spec
        if spec.num_players != 2:
            raise ValueError(f"TwoPlayerEnv needs a two-player game, {game!r} has {spec.num_players} players")
        if agent_seat not in (0, 1, "alternate"):
            raise ValueError(f"agent_seat must be 0, 1 or 'alternate', got {agent_seat!r}")
        if illegal_action not in ("raise", "penalty"):
            raise ValueError(f"illegal_action must be 'raise' or 'penalty', got {illegal_action!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if render_mode == "rgb_array" and renderer is None:
            raise ValueError(f"render_mode 'rgb_array' needs a renderer for {game!r}")
        if isinstance(opening_plies, bool) or not isinstance(opening_plies, (int, np.integer)) or opening_plies < 0:
            raise ValueError(f"opening_plies must be an integer >= 0, got {opening_plies!r}")
        self.opening_plies = int(opening_plies)
        self.game = game
        self.opponent = resolve_opponent(game, opponent)
        self.agent_seat = agent_seat
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self.renderer = renderer
        self.observation_space = spaces.Box(0.0, 1.0, shape=spec.observation_shape, dtype=np.float32)
        self.action_space = spaces.Discrete(spec.num_actions)
        self._no_actions = np.zeros(spec.num_actions, dtype=np.int8)
        self._cursor = PlayCursor(game.new_initial_state())
        self._seat = 0
        self._episodes = 0
        self._done = True

    # -- the game ------------------------------------------------------------------------

    @property
    def game_state(self) -> State:
        """The current position (an immutable State: safe to keep, search or print)."""
        return self._cursor.state

    @property
    def seat(self) -> int:
        """The seat the agent plays in the current episode."""
        return self._seat

    def action_masks(self) -> np.ndarray:
        """Legal actions as a bool vector (sb3-contrib MaskablePPO's hook); all False when over."""
        if self._done:
            return self._no_actions.astype(bool)
        return self._cursor.mask.astype(bool)

    def _advance_opponent(self) -> list[int]:
        """Let chance and the opponent move until the agent is to move or the game is over."""
        cursor, rng, seat = self._cursor, self.np_random, self._seat
        moves: list[int] = []
        cursor.resolve_chance(rng)
        player = cursor.state.current_player()
        while player != seat and player != TERMINAL:
            action = as_action(self.opponent(cursor.state, rng))
            if not cursor.is_legal(action):
                raise cursor.illegal(action, f"the opponent {getattr(self.opponent, 'name', self.opponent)!r}")
            cursor.play(action)
            moves.append(action)
            cursor.resolve_chance(rng)
            player = cursor.state.current_player()
        return moves

    def _play_opening(self) -> None:
        """``opening_plies`` uniformly random legal moves, chance resolved before each."""
        cursor, rng = self._cursor, self.np_random
        cursor.resolve_chance(rng)
        for _ in range(self.opening_plies):
            if cursor.state.current_player() == TERMINAL:
                break
            legal = cursor.state.legal_actions()
            cursor.play(int(legal[rng.integers(len(legal))]))
            cursor.resolve_chance(rng)

    def _info(self, opponent_actions: list[int]) -> dict[str, Any]:
        mask = self._no_actions if self._done else self._cursor.mask
        return {"action_mask": mask.copy(), "seat": self._seat, "opponent_actions": opponent_actions}

    # -- Gymnasium API ----------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._episodes = 0  # a seeded reset replays the same sequence of seats too
        seat = (options or {}).get("seat")
        if seat is None:
            seat = self._episodes % 2 if self.agent_seat == "alternate" else self.agent_seat
        elif seat not in (0, 1):
            raise ValueError(f"options['seat'] must be 0 or 1, got {seat!r}")
        self._episodes += 1
        self._seat = int(seat)
        self._cursor.set(self.game.new_initial_state())
        self._done = False
        self._play_opening()
        opponent_actions = self._advance_opponent()
        self._done = self._cursor.state.current_player() == TERMINAL
        return self._cursor.state.observation(self._seat), self._info(opponent_actions)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("the episode is over (or reset() was never called); call reset() first")
        cursor = self._cursor
        a = as_action(action)
        if not cursor.is_legal(a):
            if self.illegal_action == "raise":
                raise cursor.illegal(action, f"the agent (seat {self._seat})")
            self._done = True
            info = self._info([])
            info["illegal_action"] = True
            return cursor.state.observation(self._seat), -1.0, True, False, info
        cursor.play(a)
        opponent_actions = self._advance_opponent()
        state = cursor.state
        if state.current_player() == TERMINAL:
            self._done = True
            reward = float(state.returns()[self._seat])
        else:
            reward = 0.0
        return state.observation(self._seat), reward, self._done, False, self._info(opponent_actions)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "ansi":
            return self._cursor.state.to_text()
        if self.render_mode == "rgb_array":
            return self.renderer(self._cursor.state)
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.game!r} seat={self.agent_seat!r}>"
