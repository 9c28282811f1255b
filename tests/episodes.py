"""Seeded random play that several test files replay: an env episode as comparable bytes, and
Threes positions reached by random swipes (the same positions for the same seed everywhere)."""

from __future__ import annotations

import gymnasium
import numpy as np

from tablegym.envs.threes.core import ThreesGame, play_random_setup, sample_chance


def random_episode(env: gymnasium.Env, seed: int, *, policy_seed: int = 0) -> list[tuple]:
    """One seeded episode of random legal actions; every transition as comparable bytes/numbers."""
    rng = np.random.default_rng(policy_seed)
    obs, info = env.reset(seed=seed)
    trace = [(obs.tobytes(), info["action_mask"].tobytes(), info.get("score"))]
    done = False
    while not done:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        trace.append((action, obs.tobytes(), reward, terminated, truncated, info["score"], info["action_mask"].tobytes()))
    return trace


def threes_positions(seed: int, count: int, moves: tuple[int, int] = (0, 40)) -> list:
    """``count`` unfinished Threes positions, each a dealt board plus a random number of random
    swipes drawn from ``moves`` (low inclusive, high exclusive)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        s = play_random_setup(ThreesGame(), rng)
        for _ in range(rng.integers(*moves)):
            if s.is_terminal():
                break
            s = sample_chance(s.child(int(rng.choice(s.legal_actions()))), rng)
        if not s.is_terminal():
            out.append(s)
    return out
