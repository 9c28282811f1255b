"""One PettingZoo AEC env for every game of the contract (agents "player_0", "player_1", ...).

The env follows PettingZoo's classic games (connect_four_v3, tictactoe_v3): each observation is
``{"observation": state.observation(i), "action_mask": int8 mask}`` (the mask is all zeros for an
agent that is not to move), rewards come once, at the end, from ``state.returns()``, and
terminated agents leave through ``step(None)``. One difference, on purpose: an illegal action
raises ``IllegalActionError`` (a ``ValueError`` naming the action and the legal set) instead of
silently ending the game, so a bug in a policy is seen at once (DESIGN.md, Environments).

``step`` is the hot path of multi-agent training: it checks the action against the cached mask
once and applies it through the game's compiled kernels (``PlayCursor`` in envs/twoplayer.py).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from tablegym.envs.core import CHANCE, TERMINAL, Game, State
from tablegym.envs.twoplayer import PlayCursor, Renderer, as_action


class GameAECEnv(AECEnv):
    """A ``Game`` as a PettingZoo AEC env; chance nodes (if any) are sampled from ``np_random``.

    Arguments:
        game: the rule set.
        render_mode: None, "ansi" (``state.to_text()``) or "rgb_array" (needs ``renderer``).
        renderer: ``State -> HxWx3 uint8`` image, supplied by the per-game factories.
        name: the env's name in ``metadata`` (``str(env)``), e.g. "trilobite_v0".
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "name": "game_v0", "is_parallelizable": False, "render_fps": 2}

    def __init__(
        self, game: Game, *, render_mode: str | None = None, renderer: Renderer | None = None, name: str | None = None
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if render_mode == "rgb_array" and renderer is None:
            raise ValueError(f"render_mode 'rgb_array' needs a renderer for {game!r}")
        spec = game.spec
        self.game = game
        self.render_mode = render_mode
        self.renderer = renderer
        self.metadata = {**type(self).metadata, "name": name or f"{spec.name}_v0"}
        self.possible_agents = [f"player_{i}" for i in range(spec.num_players)]
        self.agents = self.possible_agents[:]
        self._index = {agent: i for i, agent in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, shape=spec.observation_shape, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(spec.num_actions,), dtype=np.int8),
            }
        )
        act_space = spaces.Discrete(spec.num_actions)
        self.observation_spaces = {agent: obs_space for agent in self.possible_agents}
        self.action_spaces = {agent: act_space for agent in self.possible_agents}
        self._no_actions = np.zeros(spec.num_actions, dtype=np.int8)
        self._cursor = PlayCursor(game.new_initial_state())
        self.np_random, _ = seeding.np_random(None)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[0]
        self._skip_agent_selection = None

    @property
    def game_state(self) -> State:
        """The current position (an immutable State: safe to keep, search or print)."""
        return self._cursor.state

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        cursor = self._cursor
        mask = cursor.mask.copy() if agent == self.agent_selection else self._no_actions.copy()
        return {"observation": cursor.state.observation(self._index[agent]), "action_mask": mask}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self._skip_agent_selection = None
        cursor = self._cursor
        cursor.set(self.game.new_initial_state())
        cursor.resolve_chance(self.np_random)
        self.agent_selection = self.possible_agents[cursor.state.current_player()]

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        cursor = self._cursor
        a = as_action(action)
        if not cursor.is_legal(a):
            raise cursor.illegal(action, agent)
        self._cumulative_rewards[agent] = 0.0
        player = cursor.play(a).current_player()
        if player == CHANCE:
            cursor.resolve_chance(self.np_random)
            player = cursor.state.current_player()
        if player != TERMINAL:
            self.agent_selection = self.possible_agents[player]
            return
        returns = cursor.state.returns()
        for i, name in enumerate(self.possible_agents):
            self.rewards[name] = r = float(returns[i])
            self._cumulative_rewards[name] += r
        self.terminations = dict.fromkeys(self.agents, True)
        agents = self.possible_agents
        self.agent_selection = agents[(self._index[agent] + 1) % len(agents)]

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self.render_mode == "ansi":
            return self._cursor.state.to_text()
        return self.renderer(self._cursor.state)

    def close(self) -> None:
        """Nothing to release: images are plain arrays."""


def make_aec_env(
    game: Game, *, render_mode: str | None = None, renderer: Renderer | None = None, name: str | None = None, wrapped: bool = True
) -> AECEnv:
    """A ``GameAECEnv``, by default in PettingZoo's ``OrderEnforcingWrapper`` (errors on use before reset).

    The classic envs' other wrappers are not needed: ``step`` itself rejects out-of-range and
    illegal actions with a clear error. ``env.unwrapped`` is the raw ``GameAECEnv``.
    """
    env = GameAECEnv(game, render_mode=render_mode, renderer=renderer, name=name)
    return OrderEnforcingWrapper(env) if wrapped else env
