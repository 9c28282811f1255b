"""Every registered env id as a plain Gymnasium or Stable-Baselines3 user meets it, with default
arguments: Gymnasium's ``check_env`` passes, and SB3's PPO and DQN, which sample any action of
the space (no mask), train on it as the README sets them up. Made by its id an env ends the
episode on an illegal action with its penalty (``illegal_action="penalty"``), and only there."""

from __future__ import annotations

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3 import DQN, PPO

import tablegym.envs  # noqa: F401  (registers the ids)

ENV_IDS = [env_id for env_id in gymnasium.registry if env_id.startswith("tablegym/")]
"""Every id tablegym registers (Friday-v0 is not among them: making it raises DeprecatedEnv)."""

ILLEGAL_REWARD = {"tablegym/Threes-v0": 0.0, "tablegym/Starship-v0": None, "tablegym/StarshipTargets-v0": None}
"""The reward of an illegal action where it is not -1 (Threes: the score not made is the
penalty); None where every action of the space is legal (the starship designer)."""


class Steps(gymnasium.Wrapper):
    """Records each step's action legality (by the mask before it) and what the env gave back."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.steps: list[tuple[bool, bool, float, bool, bool]] = []
        """(legal by the mask, info["illegal_action"], reward, terminated, truncated) a step."""

    def step(self, action):
        legal = bool(self.env.unwrapped.action_masks()[int(action)])
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.steps.append((legal, bool(info.get("illegal_action", False)), float(reward), terminated, truncated))
        return obs, reward, terminated, truncated, info


def check_illegal_steps(env_id: str, steps: list[tuple[bool, bool, float, bool, bool]]) -> int:
    """Assert that exactly the steps with an illegal action were flagged, each ending its episode
    with the id's penalty; return how many there were."""
    illegal = [s for s in steps if not s[0]]
    assert all(flagged != legal for legal, flagged, *_ in steps)
    assert all(s[2:] == (ILLEGAL_REWARD.get(env_id, -1.0), True, False) for s in illegal)
    return len(illegal)


@pytest.mark.filterwarnings("error")  # a checker warning is a failure
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_check_env_passes_with_default_arguments(env_id):
    # The render check stays on: it makes the env in each of its render modes (ansi, rgb_array)
    # and draws one frame, well under a second an id.
    check_env(gymnasium.make(env_id).unwrapped)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_plain_ppo_trains_on_the_id_as_made(env_id):
    env = Steps(gymnasium.make(env_id))
    policy = "MultiInputPolicy" if isinstance(env.observation_space, gymnasium.spaces.Dict) else "MlpPolicy"
    model = PPO(policy, env, n_steps=64, batch_size=64, n_epochs=2, policy_kwargs={"net_arch": [16]}, seed=0, device="cpu")
    model.learn(total_timesteps=256)
    assert model.num_timesteps == len(env.steps) == 256
    illegal = check_illegal_steps(env_id, env.steps)
    if ILLEGAL_REWARD.get(env_id, -1.0) is None:
        assert illegal == 0
    elif env_id != "tablegym/Trilobite-v0":  # an untrained policy fills none of its 8 columns of 7 in 256 steps
        assert illegal > 0


def test_plain_dqn_trains_on_trap_as_made():
    # DQN explores with action_space.sample(): in Trap most of the 57 actions are illegal at any time
    env = Steps(gymnasium.make("tablegym/Trap-v0"))
    model = DQN(
        "MlpPolicy",
        env,
        learning_starts=64,
        buffer_size=1_000,
        batch_size=32,
        train_freq=4,
        policy_kwargs={"net_arch": [16]},
        seed=0,
        device="cpu",
    )
    model.learn(total_timesteps=256)
    assert model.num_timesteps == len(env.steps) == 256
    assert check_illegal_steps("tablegym/Trap-v0", env.steps) > 128
    obs, _ = env.reset(seed=0)
    action, _ = model.predict(obs, deterministic=True)
    assert env.action_space.contains(int(action))
