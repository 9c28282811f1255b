"""The Gymnasium and PettingZoo envs: API checkers, seeding, illegal moves, seats, opponents,
rendering, and short Stable-Baselines3 runs."""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env

with warnings.catch_warnings():  # pettingzoo.test imports envs through its deprecated module API
    warnings.simplefilter("ignore", DeprecationWarning)
    from pettingzoo.test import api_test

import tablegym.envs
from tablegym.envs.core import IllegalActionError, State
from tablegym.envs.sim.env import SimEnv, sim_aec_env
from tablegym.envs.trilobite.env import TrilobiteEnv, trilobite_aec_env
from tests.smoke import maskable_ppo

ENV_IDS = list(tablegym.envs.ENV_IDS)
# PettingZoo's api_test warns about any dict observation outside its own list of classic envs.
PZ_DICT_OBS = [
    "ignore:Observation is not a NumPy array",
    "ignore:Observation space for each agent probably should be",
]


def first_legal(state: State, rng: np.random.Generator) -> int:
    """An opponent that plays the first legal action in the game's own order."""
    return state.legal_actions()[0]


def always(column: int):
    """An opponent that plays ``column`` whenever it can."""

    def policy(state: State, rng: np.random.Generator) -> int:
        legal = state.legal_actions()
        return column if column in legal else legal[0]

    return policy


def play_random(env: gymnasium.Env, seed: int, episodes: int = 3) -> list[tuple]:
    """Seeded random legal play; returns every transition's (obs bytes, reward, done, mask)."""
    rng = np.random.default_rng(seed)
    trace = []
    obs, info = env.reset(seed=seed)
    for _ in range(episodes):
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            obs, reward, done, _, info = env.step(action)
            trace.append((obs.tobytes(), reward, done, info["action_mask"].tobytes(), info["seat"]))
        obs, info = env.reset()
    return trace


# -- registration ---------------------------------------------------------------------------


def test_import_is_cheap():
    """``import tablegym.envs`` registers ids without importing any game (or numba)."""
    code = "import sys, tablegym.envs, gymnasium; assert 'tablegym/Sim-v0' in gymnasium.registry; print(sorted(m for m in sys.modules if m.startswith(('tablegym.envs.', 'numba'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_make_with_module_prefix_and_kwargs():
    env = gymnasium.make("tablegym.envs:tablegym/Trilobite-v0")
    assert env.observation_space.shape == (3, 7, 8) and env.action_space.n == 8
    env = gymnasium.make("tablegym/Trilobite-v0", width=5, height=4, win_length=3, first_player=1, agent_seat=1)
    obs, info = env.reset(seed=0)
    assert obs.shape == (3, 4, 5) and info["opponent_actions"] == []  # seat 1 moves first here
    assert gymnasium.make("tablegym/TrilobiteTiny-v0").observation_space.shape == (3, 3, 3)
    assert gymnasium.make("tablegym/Sim-v0", n=5).action_space.n == 10


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_pettingzoo_registry_has_the_same_ids(env_id):
    aec = pettingzoo.make("aec", env_id).unwrapped
    assert aec.game.spec == gymnasium.make(env_id).unwrapped.game.spec
    assert pettingzoo.make("aec", "tablegym/Sim-v0", n=5).unwrapped.game.spec.num_actions == 10


@pytest.mark.filterwarnings("error")  # a checker warning is a failure
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gymnasium_check_env(env_id):
    # check_env steps with unmasked action_space.sample(), which the ids' default
    # illegal_action="penalty" takes (test_trap_env pins the raise behaviour)
    check_env(gymnasium.make(env_id).unwrapped)  # also makes and checks every render mode


@pytest.mark.filterwarnings("error")
def test_check_env_second_seat_first_player():
    check_env(gymnasium.make("tablegym/Trilobite-v0", agent_seat=1, first_player=1, render_mode="rgb_array").unwrapped)


@pytest.mark.filterwarnings(*PZ_DICT_OBS)
@pytest.mark.parametrize(
    "make",
    [
        trilobite_aec_env,
        lambda: trilobite_aec_env(width=3, height=3, win_length=3, first_player=1, render_mode="ansi"),
        lambda: trilobite_aec_env(wrapped=False),
        sim_aec_env,
        lambda: sim_aec_env(n=4, render_mode="rgb_array", wrapped=False),
    ],
    ids=["trilobite", "tiny-first1", "trilobite-raw", "sim", "sim4-raw"],
)
def test_pettingzoo_api_test(make):
    api_test(make(), num_cycles=200)


# -- seeding -------------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_seeded_runs_repeat(env_id):
    a = play_random(gymnasium.make(env_id, agent_seat="alternate"), seed=7)
    b = play_random(gymnasium.make(env_id, agent_seat="alternate"), seed=7)
    c = play_random(gymnasium.make(env_id, agent_seat="alternate"), seed=8)
    assert a == b
    assert a != c


def test_seed_drives_the_opponent():
    """Only the seed, through ``env.np_random``, decides the random opponent's moves."""
    env = SimEnv(agent_seat=1)
    firsts = {env.reset(seed=s)[1]["opponent_actions"][0] for s in range(20)}
    assert len(firsts) > 3
    assert env.reset(seed=3)[1]["opponent_actions"] == env.reset(seed=3)[1]["opponent_actions"]


# -- illegal actions --------------------------------------------------------------------------


def test_illegal_action_raises_value_error_naming_action_and_legal_set():
    env = SimEnv(opponent=first_legal)  # the opponent answers edge 0 with edge 1
    env.reset(seed=0)
    env.step(0)
    with pytest.raises(
        ValueError, match=r"illegal action 0 .*legal actions are \[2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14\]"
    ) as err:
        env.step(0)
    assert isinstance(err.value, IllegalActionError) and err.value.action == 0
    for bad in (15, -1, 1.5, "3", None):
        with pytest.raises(IllegalActionError, match=r"legal actions are"):
            env.step(bad)
    obs, *_ = env.step(np.int64(2))  # the episode goes on after a refused action
    assert obs[0].sum() == 2


def test_full_column_is_illegal():
    # . . .      the agent (X) and a column-0 opponent (O) fill column 0
    # X . .
    # O . .
    # X . .
    env = TrilobiteEnv(width=3, height=4, win_length=3, opponent=always(0))
    env.reset(seed=0)
    env.step(0)
    env.step(0)  # column 0 now X O X O: full
    assert env.action_masks().tolist() == [False, True, True]
    with pytest.raises(ValueError, match=r"illegal action 0 .*legal actions are \[1, 2\]"):
        env.step(0)


def test_illegal_action_penalty_ends_the_episode():
    env = SimEnv(opponent=first_legal, illegal_action="penalty")
    env.reset(seed=0)
    env.step(0)
    obs, reward, terminated, truncated, info = env.step(0)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    assert not info["action_mask"].any() and not env.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(2)


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="agent_seat"):
        SimEnv(agent_seat=2)
    with pytest.raises(ValueError, match="illegal_action"):
        SimEnv(illegal_action="ignore")
    with pytest.raises(ValueError, match="render_mode"):
        SimEnv(render_mode="human")
    with pytest.raises(ValueError, match="unknown agent"):
        SimEnv(opponent="no-such-agent")
    for bad in (-1, 1.5, "2", True):
        with pytest.raises(ValueError, match="opening_plies must be an integer >= 0"):
            SimEnv(opening_plies=bad)


# -- rewards, seats, opponents ---------------------------------------------------------------------


def test_win_loss_and_draw_rewards():
    # Tiny board, agent X in column 0, opponent O in column 1: X wins down column 0.
    env = gymnasium.make("tablegym/TrilobiteTiny-v0", opponent=always(1))
    env.reset(seed=0)
    assert env.step(0)[1:3] == (0.0, False)
    assert env.step(0)[1:3] == (0.0, False)
    obs, reward, terminated, _, info = env.step(0)
    assert (reward, terminated) == (1.0, True) and not info["action_mask"].any()
    # Seat 1: the opponent (first) fills column 1 and wins.
    env.reset(seed=0, options={"seat": 1})
    env.step(0)
    _, reward, terminated, _, _ = env.step(0)
    assert (reward, terminated) == (-1.0, True)
    # K3: three edges, no one-colour triangle possible -> draw.
    env = SimEnv(n=3, opponent=first_legal)
    env.reset(seed=0)
    env.step(0)
    _, reward, terminated, _, _ = env.step(2)
    assert (reward, terminated) == (0.0, True)


def test_alternate_seats_and_seat_option():
    env = TrilobiteEnv(agent_seat="alternate")
    seats, chips = [], []
    obs, info = env.reset(seed=1)
    for _ in range(4):
        seats.append(info["seat"])
        chips.append(int(obs[:2].sum()))
        assert obs[2].all()  # the agent is always to move after reset
        obs, info = env.reset()
    assert seats == [0, 1, 0, 1] and chips == [0, 1, 0, 1]
    assert env.reset(seed=1)[1]["seat"] == 0  # seeding restarts the alternation
    assert env.reset(options={"seat": 0})[1]["seat"] == 0
    assert env.seat == 0
    with pytest.raises(ValueError, match="seat"):
        env.reset(options={"seat": 2})


def test_opening_plies_are_random_moves_of_both_seats_then_the_agent_moves():
    """Three opening plies on an 8x7 board: three chips, the agent (seat 0) to move after an odd
    count only if the opponent (a fixed column) has replied; the openings vary with the seed and
    repeat under it."""
    env = TrilobiteEnv(opening_plies=3, opponent=first_legal)
    boards = []
    for seed in range(6):
        obs, info = env.reset(seed=seed)
        assert obs[2].all() and info["seat"] == 0  # the agent to move
        assert int(obs[:2].sum()) == 4  # three random plies, then the opponent's reply
        assert int(obs[0].sum()) == 2 and int(obs[1].sum()) == 2
        boards.append(env.game_state.board.tobytes())
        assert env.reset(seed=seed)[0].tobytes() == obs.tobytes()
    assert len(set(boards)) > 1
    assert int(TrilobiteEnv(opening_plies=0).reset(seed=0)[0][:2].sum()) == 0


def test_opponent_callable_gets_state_and_env_rng():
    calls = []

    def opponent(state, rng):
        calls.append((state, rng))
        return first_legal(state, rng)

    env = SimEnv(opponent=opponent)
    env.reset(seed=0)
    _, _, _, _, info = env.step(3)
    state, rng = calls[-1]
    assert rng is env.np_random and state.legal_actions()[0] == 0
    assert info["opponent_actions"] == [0]
    assert env.unwrapped.game_state.colours[[0, 3]].tolist() == [2, 1]


def test_opponent_spec_string_resolves_through_make_agent():
    env = SimEnv(opponent="dumb", agent_seat=1)  # Cassis "Dumb": first free edge
    assert env.reset(seed=0)[1]["opponent_actions"] == [0]


def test_illegal_opponent_is_reported():
    env = SimEnv(opponent=lambda state, rng: 0)
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="opponent"):
        env.step(0)


def test_action_masks_follow_the_state():
    env = TrilobiteEnv()
    obs, info = env.reset(seed=0)
    assert info["action_mask"].dtype == np.int8
    assert env.action_masks().dtype == bool
    assert np.array_equal(env.action_masks(), env.unwrapped.game_state.legal_action_mask().astype(bool))
    info["action_mask"][:] = 0  # a caller's copy: the env's own mask is untouched
    assert env.action_masks().all()


# -- rendering ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env_id", "shape"),
    [("tablegym/Trilobite-v0", (224, 256, 3)), ("tablegym/TrilobiteTiny-v0", (96, 96, 3)), ("tablegym/Sim-v0", (256, 256, 3))],
)
def test_render_modes(env_id, shape):
    env = gymnasium.make(env_id, render_mode="rgb_array")
    env.reset(seed=0)
    before = env.render()
    assert before.shape == shape and before.dtype == np.uint8
    env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    after = env.render()
    assert after.shape == shape and not np.array_equal(before, after)
    env = gymnasium.make(env_id, render_mode="ansi")
    env.reset(seed=0)
    assert env.render() == env.unwrapped.game_state.to_text()


def test_aec_render():
    env = sim_aec_env(render_mode="rgb_array")
    env.reset(seed=0)
    before = env.render()
    env.step(0)
    assert before.shape == (256, 256, 3) and not np.array_equal(before, env.render())
    env = trilobite_aec_env(render_mode="ansi")
    env.reset()
    env.step(3)
    assert env.render().splitlines()[6] == ". . . X . . . ."


# -- the AEC env -----------------------------------------------------------------------------


def test_aec_game_rewards_masks_and_illegal_moves():
    env = trilobite_aec_env(width=3, height=3, win_length=3)
    with pytest.raises(Exception, match="reset"):
        env.step(0)
    env.reset(seed=0)
    assert env.agent_selection == "player_0"
    assert env.observe("player_1")["action_mask"].tolist() == [0, 0, 0]  # not its turn
    for action in (0, 1, 0, 1):
        env.step(action)
    with pytest.raises(ValueError, match=r"illegal action 7 by player_0; legal actions are"):
        env.step(7)
    env.step(0)  # X completes column 0
    assert env.terminations == {"player_0": True, "player_1": True}
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}
    obs, reward, terminated, _, _ = env.last()
    assert env.agent_selection == "player_1" and reward == -1.0 and terminated
    env.step(None)
    env.step(None)
    assert env.agents == []


def test_aec_first_player_option():
    env = trilobite_aec_env(first_player=1)
    env.reset()
    assert env.agent_selection == "player_1"
    obs = env.observe("player_1")
    assert obs["observation"].dtype == np.float32 and obs["observation"][2].all()


# -- Stable-Baselines3 smoke runs ----------------------------------------------------------------


@pytest.mark.parametrize("env_id", ["tablegym/TrilobiteTiny-v0", "tablegym/Sim-v0"])
def test_maskable_ppo_trains(env_id):
    model = maskable_ppo(gymnasium.make(env_id, agent_seat="alternate"), n_steps=64, total_timesteps=128)
    env = gymnasium.make(env_id)
    obs, info = env.reset(seed=0)
    action, _ = model.predict(obs, action_masks=env.unwrapped.action_masks(), deterministic=True)
    assert info["action_mask"][int(action)] == 1


@pytest.mark.parametrize("env_id", ["tablegym/TrilobiteTiny-v0", "tablegym/Sim-v0"])
def test_dqn_trains_with_illegal_action_penalty(env_id):
    from stable_baselines3 import DQN

    model = DQN("MlpPolicy", gymnasium.make(env_id, illegal_action="penalty"), learning_starts=32, seed=0, device="cpu")
    model.learn(total_timesteps=128)
    assert model.num_timesteps >= 128
