"""What each game's Stable-Baselines3 baseline (experiments/sb3_baseline.py) does differently, as
data: the env and its wrappers, the algorithms and networks offered, the hyper-parameters that
differ from training/sb3.py's ``HYPER``, and how the trained policy is evaluated. Beside the
table, the few pieces that are knowledge of one game: Threes' log reward, Friday's observation
bounds and reward scale, Friday's record of a game stopped at the env's step limit, Trap's CNN.

Why these choices, per game:

- Threes: MaskablePPO trains with ``illegal_action="raise"`` and samples among the legal swipes;
  DQN cannot mask, so it trains with ``"penalty"`` (an illegal swipe ends the episode: the lost
  future score is the penalty). The observation is divided by the Box's high (every entry in
  [0, 1]) and the reward is ``log2(1 + r)`` for a score increase ``r``: Threes' score grows
  geometrically (a card of 3 * 2^k scores 3^(k+1)), so raw rewards span 0 to hundreds of
  thousands, and the log keeps the value and Q losses well conditioned while still ranking
  bigger merges above smaller ones. ``Monitor`` sits inside the wrappers, so TensorBoard's
  ``rollout/ep_rew_mean`` is the true score.
- Friday: one MaskablePPO on all four levels, env i playing level 1 + i % 4 (the observation does
  not name the level; the policy infers it). The win/loss reward carries no signal (no agent has
  won a game), so the env pays each step's change of the score, divided by 10 (returns of a few
  units). The observation is divided by the Box's high, which keeps 0 meaning "absent"; the Box
  has negative lows, so the declared bounds are [low / high, 1]. The env truncates after
  ``max_steps`` decisions, and so does the evaluating agent (a deterministic policy can cycle).
- Trap: the 7 x 7 game against one opponent spec or a league (``random,easy,medium,hard``: one
  drawn per episode), the agent's seat alternating per episode; sparse +-1 reward. PPO takes
  64-sample minibatches over 10 epochs; DQN a 100,000-step buffer, 5,000 random steps, a target
  copied every 2,000 steps and epsilon down to 0.01 over the first 10% (an illegal action loses
  at once with ``"penalty"``, and over 90% of random moves are illegal in the move phase, so a
  larger final epsilon would end most games on an exploration step). ``--net cnn`` swaps the MLP
  for a small CNN over the five planes (results/trap/NOTES.md: slower, and no stronger).
- Trilobite: four envs, each against its own opponent (random, then the hand-made ``advanced``
  evaluator searched 1, 2 and 3 plies deep), both seats; separate [128, 128] ReLU policy and
  value networks over 512-step rollouts. The critic ``V(obs)`` then serves as alpha-beta's leaf
  evaluator (``eval=learned:RUN/model.zip``, read as data by tablegym.models.sb3_files).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium
import numpy as np
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from tablegym.experiments.friday import records as friday_records
from tablegym.experiments.threes import records as threes_records
from tablegym.training.sb3 import MLP, SB3Agent, ScaleObservation, Truncated

__all__ = ["GAMES", "SB3Game", "Variant", "LogReward", "ScaleFridayObservation", "ScaleReward", "TrapCNN"]

FRIDAY_MAX_STEPS = 2000
"""Friday's env truncation (tablegym.envs.friday.env's default ``max_steps``; a test checks)."""
FRIDAY_REWARD_SCALE = 10.0


# -- the pieces of one game -------------------------------------------------------------------------


class LogReward(gymnasium.RewardWrapper):
    """Threes: reward log2(1 + r) for a score increase r >= 0."""

    def reward(self, reward: float) -> float:
        return float(np.log2(1.0 + reward))


class ScaleFridayObservation(ScaleObservation):
    """Friday: the division by the Box's high, declaring the true bounds [low / high, 1]."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        low = (env.observation_space.low / self.high).astype(np.float32)
        self.observation_space = gymnasium.spaces.Box(low, np.ones_like(low), env.observation_space.shape, np.float32)


class ScaleReward(gymnasium.RewardWrapper):
    """Friday: reward / ``FRIDAY_REWARD_SCALE`` (score changes of a few points, returns of a few units)."""

    def reward(self, reward: float) -> float:
        return float(reward) / FRIDAY_REWARD_SCALE


class TrapCNN(BaseFeaturesExtractor):
    """Trap: two padded 3 x 3 convolutions (32, 64 channels) over the planes, then 256 ReLU units."""

    def __init__(self, observation_space: gymnasium.spaces.Box, features_dim: int = 256) -> None:
        super().__init__(observation_space, features_dim)
        channels, rows, cols = observation_space.shape
        self.net = torch.nn.Sequential(
            torch.nn.Conv2d(channels, 32, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.Conv2d(32, 64, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.Flatten(),
            torch.nn.Linear(64 * rows * cols, features_dim),
            torch.nn.ReLU(),
        )

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.net(observations)


def play_threes(agent: SB3Agent, hint: str, seed: int, index: int) -> dict:
    """Threes game ``index``: experiments/threes/records.py's record."""
    return threes_records.play_game(agent, agent.name, hint, seed, index)


def play_friday(agent: SB3Agent, level: int, seed: int, index: int) -> dict:
    """Friday game ``index`` at ``level``: experiments/friday/records.py's record, saying whether
    the agent's step limit stopped it (then the record is the position reached, not won)."""
    from tablegym.envs import make_game

    start = time.perf_counter()
    try:
        rec = friday_records.play_game(agent, level, seed, index)
    except Truncated as stop:
        s = stop.state
        rec = {
            "game": index,
            "agent": agent.name,
            "level": level,
            "seed": seed,
            "options": make_game("friday", level=level).spec.options,
            "won": False,
            "score": s.score,
            "life": s.life,
            "step": s.step,
            "pirates_beaten": s.pirates_beaten,
            "decisions": agent.decisions,
            "seconds": time.perf_counter() - start,
            "polled": 0,
            "truncated": True,
        }
    else:
        rec["truncated"] = False
    return rec


def threes_row(name: str, hint: str, records: list[dict]) -> str:
    """The results table's row of one hint rule (experiments/threes/records.py's)."""
    return threes_records.markdown_row(name, threes_records.summarise(records), hint)


def friday_row(name: str, level: int, records: list[dict]) -> str:
    """The results table's row of one level (experiments/friday/records.py's), with the games truncated."""
    truncated = sum(r["truncated"] for r in records)
    row = friday_records.markdown_row(
        name, level, friday_records.summarise(records), friday_records.options_text(records[0]["options"])
    )
    return row + (f" {truncated} truncated" if truncated else "")


# -- the table --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    """The rule option a single-player evaluation holds fixed for one table row (Threes' hint,
    Friday's level), and its flag."""

    name: str
    """The env keyword and the records' field."""
    flag: str
    """The command line's flag: one value (``--hint +``) or, with ``many``, several (``--levels 1 2``)."""
    choices: tuple
    default: tuple
    """The values evaluated when the flag is not given."""
    many: bool = False
    trains: bool = False
    """Whether the training envs take the flag's value too (Threes' hint), rather than cycling."""


@dataclass(frozen=True)
class SB3Game:
    """One game's SB3 baseline: only what differs between games (the module doc says why)."""

    env_id: str
    algos: tuple[str, ...] = ("maskableppo", "dqn")
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    """Keywords of every training env (the illegal-action mode follows the algorithm)."""
    per_env: tuple[str, tuple] | None = None
    """``(keyword, values)``: env i of the vector env gets ``values[i % len(values)]``."""
    wrappers: tuple[Callable[[gymnasium.Env], gymnasium.Env], ...] = ()
    """Around ``Monitor``, innermost first; their observation transforms are the evaluating agent's too."""
    hyper: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per algorithm, what differs from training/sb3.py's ``HYPER``."""
    nets: dict[str, dict[str, Any]] = field(default_factory=lambda: {"mlp": MLP})
    """``--net`` choices: SB3 ``policy_kwargs`` each, the first the default."""
    n_envs: dict[str, int] = field(default_factory=lambda: {"maskableppo": 8, "dqn": 1})
    """Default training envs per algorithm: PPO batches its rollouts over them; DQN learns from a buffer."""
    timesteps: int = 200_000
    eval_games: int = 200
    meta: dict[str, Any] = field(default_factory=dict)
    """What train.json records beyond the run's own settings."""
    # single-player games: seeded games on the rules core, JSON-lines records, one row per variant
    variant: Variant | None = None
    play: Callable[[SB3Agent, Any, int, int], dict] | None = None
    """``play(agent, variant value, seed, index) -> record``."""
    row: Callable[[str, Any, list[dict]], str] | None = None
    """``row(agent name, variant value, records)``: a line of the markdown table under ``header``."""
    header: str = ""
    # two-player games: a match against one agent spec, both seats
    opponent: str | None = None
    """The default training opponent (a spec or a comma-separated league); None: ``per_env``'s."""
    eval_opponent: str = "random"

    @property
    def two_player(self) -> bool:
        return self.variant is None


GAMES: dict[str, SB3Game] = {
    "threes": SB3Game(
        "tablegym/Threes-v0",
        wrappers=(ScaleObservation, LogReward),
        timesteps=500_000,
        variant=Variant("hint", "--hint", ("+", "candidates"), ("+",), trains=True),
        play=play_threes,
        row=threes_row,
        header=threes_records.HEADER,
    ),
    "friday": SB3Game(
        "tablegym/Friday-v1",
        algos=("maskableppo",),
        env_kwargs=dict(reward="score", max_steps=FRIDAY_MAX_STEPS),
        per_env=("level", (1, 2, 3, 4)),
        wrappers=(ScaleFridayObservation, ScaleReward),
        eval_games=500,
        meta=dict(reward_scale=FRIDAY_REWARD_SCALE),
        variant=Variant("level", "--levels", (1, 2, 3, 4), (1, 2, 3, 4), many=True),
        play=play_friday,
        row=friday_row,
        header=friday_records.HEADER,
    ),
    "trap": SB3Game(
        "tablegym/Trap-v0",
        env_kwargs=dict(agent_seat="alternate"),
        hyper={
            "maskableppo": dict(batch_size=64, n_epochs=10),
            "dqn": dict(buffer_size=100_000, learning_starts=5_000, target_update_interval=2_000, exploration_fraction=0.1),
        },
        nets={
            "mlp": MLP,
            "cnn": dict(features_extractor_class=TrapCNN, net_arch=[], activation_fn=torch.nn.ReLU, normalize_images=False),
        },
        eval_games=400,
        opponent="medium",
        eval_opponent="medium",
    ),
    "trilobite": SB3Game(
        "tablegym/Trilobite-v0",
        algos=("maskableppo",),
        env_kwargs=dict(agent_seat="alternate"),
        per_env=(
            "opponent",
            ("random", "alphabeta:eval=advanced,depth=1", "alphabeta:eval=advanced,depth=2", "alphabeta:eval=advanced,depth=3"),
        ),
        hyper={"maskableppo": dict(n_steps=512)},
        nets={"mlp": dict(net_arch=dict(pi=[128, 128], vf=[128, 128]), activation_fn=torch.nn.ReLU)},
        n_envs={"maskableppo": 4},
        timesteps=600_000,
        eval_opponent="alphabeta:eval=advanced,depth=1",
    ),
}
"""The games with an SB3 baseline, by registry name."""
