"""The Trap envs: Gymnasium and PettingZoo checkers, phase masks, illegal actions, scripted
wins, losses and the turn-cap draw, seeding, rendering, MaskablePPO, and ``tablegym play trap``."""

from __future__ import annotations

import itertools
import sys
import types
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
from tablegym.envs.core import TERMINAL, IllegalActionError, State
from tablegym.envs.trap.core import NUM_DIRS, TrapGame
from tablegym.envs.trap.env import TrapEnv, trap_aec_env
from tablegym.experiments.cli import main
from tests.smoke import maskable_ppo, scripted_input
from tests.test_envs import play_random

ENV_ID = "tablegym/Trap-v0"
PZ_DICT_OBS = [
    "ignore:Observation is not a NumPy array",
    "ignore:Observation space for each agent probably should be",
]


def near(state: State, rng: np.random.Generator | None = None) -> int:
    """A deterministic opponent: the first free king step, then a throw at the first cell one
    orthogonal step away from itself (distance 1 always hits, so landings need no luck)."""
    legal = state.legal_actions()
    if state.phase == "move":
        return legal[0]
    n = state.n
    r, c = state.position(state.mover)
    return next(a for a in legal if a >= NUM_DIRS and abs((a - NUM_DIRS) // n - r) + abs((a - NUM_DIRS) % n - c) == 1)


def throws(n: int, *cells: str) -> list[int]:
    """Actions for throws at cells written like "d4"."""
    return [NUM_DIRS + (int(cell[1:]) - 1) * n + ord(cell[0]) - ord("a") for cell in cells]


# -- registration and the checkers ----------------------------------------------------------


def test_make_by_id_with_and_without_module_prefix():
    assert ENV_ID in tablegym.envs.ENV_IDS and ENV_ID in tablegym.envs.AEC_ENV_IDS
    for env_id in (ENV_ID, "tablegym.envs:tablegym/Trap-v0"):
        env = gymnasium.make(env_id)
        assert env.observation_space.shape == (5, 7, 7) and env.action_space.n == 8 + 49
        assert env.unwrapped.game.spec.options == {"n": 7, "turn_cap": 200, "first_player": 0}
    env = gymnasium.make(ENV_ID, n=5, turn_cap=30, first_player=1, agent_seat=1)
    obs, info = env.reset(seed=0)
    assert obs.shape == (5, 5, 5) and env.action_space.n == 33
    assert info["opponent_actions"] == []  # seat 1 moves first here
    aec = pettingzoo.make("aec", ENV_ID, n=5).unwrapped
    assert aec.game.spec == TrapEnv(n=5).game.spec


@pytest.mark.filterwarnings("error")  # a checker warning is a failure
@pytest.mark.parametrize(
    "kwargs", [{}, {"agent_seat": 1, "first_player": 1, "render_mode": "rgb_array"}, {"n": 4, "render_mode": "ansi"}]
)
def test_gymnasium_check_env(kwargs):
    # check_env steps with unmasked action_space.sample() draws (5 of 57 are legal at the
    # start): the id's default illegal_action="penalty" ends the episode on the others
    check_env(gymnasium.make(ENV_ID, **kwargs).unwrapped)


def test_check_env_with_raise_fails_only_on_the_unmasked_sample():
    assert gymnasium.make(ENV_ID).unwrapped.illegal_action == "penalty" and TrapEnv().illegal_action == "raise"
    with pytest.raises(IllegalActionError, match="by the agent"):
        check_env(gymnasium.make(ENV_ID, illegal_action="raise").unwrapped)


@pytest.mark.filterwarnings(*PZ_DICT_OBS)
@pytest.mark.parametrize(
    "make",
    [
        trap_aec_env,
        lambda: trap_aec_env(n=4, first_player=1, render_mode="ansi"),
        lambda: trap_aec_env(n=3, turn_cap=6, render_mode="rgb_array", wrapped=False),
    ],
    ids=["trap", "trap4-first1", "trap3-cap6-raw"],
)
def test_pettingzoo_api_test(make):
    api_test(make(), num_cycles=200)


# -- phases and masks -------------------------------------------------------------------------


def test_masks_open_one_phase_at_a_time():
    #    a b c d e f g        the agent (1) may step E, SE, S, SW or W, nothing else
    #  1 . . . 1 . . .
    #  ...
    #  7 . . . 2 . . .
    env = TrapEnv(opponent=near)
    obs, info = env.reset(seed=0)
    assert np.flatnonzero(info["action_mask"]).tolist() == [2, 3, 4, 5, 6]
    assert np.array_equal(env.action_masks(), info["action_mask"].astype(bool))
    assert not obs[3].any() and obs[4].all()  # move phase, the agent to decide
    obs, reward, terminated, _, info = env.step(4)  # S to d2: now the throw
    mask = info["action_mask"]
    assert (reward, terminated, info["opponent_actions"]) == (0.0, False, [])
    assert not mask[:NUM_DIRS].any() and obs[3].all()
    players = {NUM_DIRS + 1 * 7 + 3, NUM_DIRS + 6 * 7 + 3}  # d2 and d7
    assert set(np.flatnonzero(mask).tolist()) == set(range(NUM_DIRS, NUM_DIRS + 49)) - players
    obs, reward, terminated, _, info = env.step(throws(7, "a1")[0])
    assert not obs[3].any() and info["action_mask"][:NUM_DIRS].any() and not info["action_mask"][NUM_DIRS:].any()
    assert len(info["opponent_actions"]) == 2  # the opponent's whole turn: a move and a throw


def test_phase_invariants_over_random_episodes():
    """Every decision the agent sees: the mask opens exactly the phase that plane 3 shows, the
    landing and the opponent's turn are never left pending, rewards come only at the end."""
    env = TrapEnv(n=5, agent_seat="alternate")
    rng = np.random.default_rng(1)
    obs, info = env.reset(seed=1)
    for _ in range(6):
        done = False
        while not done:
            mask = info["action_mask"]
            throwing = bool(obs[3].all())
            assert obs[3].all() or not obs[3].any()
            assert mask[NUM_DIRS:].any() == throwing and mask[:NUM_DIRS].any() == (not throwing)
            assert env.game_state.current_player() == env.seat
            obs, reward, done, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            assert not truncated
            if not done:
                assert reward == 0.0
        state = env.game_state
        assert state.current_player() == TERMINAL and not info["action_mask"].any() and not obs[4].any()
        assert reward == state.returns()[env.seat]
        obs, info = env.reset()


# -- illegal actions ----------------------------------------------------------------------------


def test_illegal_action_raises_value_error_naming_it():
    env = TrapEnv(opponent=near)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"illegal action 0 by the agent \(seat 0\); legal actions are \[2, 3, 4, 5, 6\]") as err:
        env.step(0)  # N from the top row
    assert isinstance(err.value, IllegalActionError) and err.value.action == 0
    with pytest.raises(IllegalActionError, match=r"illegal action 20 "):
        env.step(20)  # a throw in the move phase
    env.step(4)
    opponent_cell = NUM_DIRS + 6 * 7 + 3
    for bad in (3, opponent_cell, 57, -1, 1.5, "d4", None):  # a step, a player's cell, out of range, not ints
        with pytest.raises(IllegalActionError, match=f"illegal action {bad!r}"):
            env.step(bad)
    _, _, _, _, info = env.step(np.int64(NUM_DIRS))  # the episode goes on after a refused action
    assert len(info["opponent_actions"]) == 2


def test_illegal_action_penalty_loses_at_once():
    env = TrapEnv(illegal_action="penalty")
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(0)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    assert not info["action_mask"].any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(2)


# -- rewards ----------------------------------------------------------------------------------


def test_scripted_win():
    # 3 x 3, the opponent plays `near`. The agent (1) steps SE and traps b2; the opponent (2)
    # steps E and traps b3; the agent steps N and traps c2: 2 has no empty neighbour.
    #    a b c        a b c        a b c
    #  1 . 1 .      1 . . .      1 . . 1
    #  2 . . .  ->  2 . # 1  ->  2 . # #
    #  3 . 2 .      3 . # 2      3 . # 2
    env = TrapEnv(n=3, opponent=near)
    env.reset(seed=0)
    for action in (3, *throws(3, "b2"), 0):
        assert env.step(action)[1:3] == (0.0, False)
    obs, reward, terminated, _, info = env.step(throws(3, "c2")[0])
    assert (reward, terminated, info["opponent_actions"]) == (1.0, True, [])
    assert obs[2].sum() == 3 and env.game_state.winner() == 0


def test_scripted_loss_inside_the_opponents_turn():
    # The agent steps E and traps c2; the opponent steps N to b2 and traps b1: 1 is enclosed.
    #    a b c        a b c
    #  1 . . 1      1 . # 1
    #  2 . . #  ->  2 . 2 #
    #  3 . 2 .      3 . . .
    env = TrapEnv(n=3, opponent=near)
    env.reset(seed=0)
    env.step(2)
    obs, reward, terminated, _, info = env.step(throws(3, "c2")[0])
    assert (reward, terminated) == (-1.0, True)
    assert info["opponent_actions"] == [0, *throws(3, "b1")]
    assert env.game_state.winner() == 1 and not obs[4].any()


def test_turn_cap_is_a_terminal_draw():
    # turn_cap=2: the agent's turn and the opponent's; nobody can be enclosed on 7 x 7 by then.
    env = TrapEnv(turn_cap=2, opponent=near)
    env.reset(seed=0)
    env.step(4)
    obs, reward, terminated, truncated, info = env.step(throws(7, "d3")[0])
    assert (reward, terminated, truncated) == (0.0, True, False)
    state = env.game_state
    assert state.is_terminal() and state.winner() is None and state.turns == 2
    assert "draw (turn cap 2)" in state.to_text()


def test_seat_one_starts_after_the_opponents_whole_turn():
    env = TrapEnv(opponent=near, agent_seat=1)
    obs, info = env.reset(seed=0)
    assert info["seat"] == 1 and len(info["opponent_actions"]) == 2
    assert obs[2].sum() == 1 and not obs[3].any() and obs[4].all()  # one trap, agent to move
    assert obs[0, 6, 3] == 1  # the agent's own cell is plane 0 from its point of view


# -- seeding ------------------------------------------------------------------------------------


def test_seeded_episodes_repeat_exactly():
    """The random opponent and every landing draw from ``env.np_random`` only."""
    a = play_random(TrapEnv(agent_seat="alternate"), seed=7)
    b = play_random(gymnasium.make(ENV_ID, agent_seat="alternate", opponent="random"), seed=7)
    c = play_random(TrapEnv(agent_seat="alternate"), seed=8)
    assert a == b and a != c


def test_landings_come_from_the_env_rng():
    """Same agent actions, same opponent: the boards differ only through the seed's landings."""
    boards = set()
    for seed in range(12):
        env = TrapEnv(opponent=near)
        env.reset(seed=seed)
        env.step(4)
        obs, *_ = env.step(throws(7, "g7")[0])  # distance 3 + 5 = 8 from d2: p = 0.65
        boards.add(obs[2].tobytes())
    assert len(boards) > 1


def test_opponent_league_draws_one_member_per_episode_with_the_env_rng():
    """``opponent=[...]``: each episode one member, drawn uniformly and reproducibly."""

    class Member:
        def __init__(self, name: str) -> None:
            self.name, self.calls = name, 0

        def __call__(self, state, rng):
            self.calls += 1
            return near(state, rng)

    def draws(seed: int, episodes: int = 40) -> list[str]:
        members = [Member("a"), Member("b"), Member("c")]
        env = gymnasium.make(ENV_ID, opponent=members, agent_seat="alternate")
        names = []
        for episode in range(episodes):
            obs, info = env.reset(seed=seed if episode == 0 else None)
            before = [m.calls for m in members]
            env.step(4 if info["seat"] == 0 else 0)  # a legal step in either seat, then a throw
            env.step(next(a for a in np.flatnonzero(env.unwrapped.action_masks())))
            played = [m.name for m, b in zip(members, before) if m.calls > b]
            assert played == [info["opponent"]]  # the named member, and only it, played
            names.append(info["opponent"])
        return names

    first = draws(seed=3)
    assert set(first) == {"a", "b", "c"} and min(first.count(x) for x in "abc") >= 6
    assert draws(seed=3) == first and draws(seed=4) != first
    env = TrapEnv(opponent=("random", "medium"))
    assert env.league.names == ["random", "medium"] and env.league.name == "league(random,medium)"
    assert "opponent" not in TrapEnv(opponent="random").reset(seed=0)[1]  # one opponent: no league
    with pytest.raises(ValueError, match="at least one member"):
        TrapEnv(opponent=[])


# -- rendering ----------------------------------------------------------------------------------


def test_rgb_array_shows_players_traps_and_the_throw_phase():
    env = gymnasium.make(ENV_ID, render_mode="rgb_array", opponent=near)
    env.reset(seed=0)
    move = env.render()
    assert move.shape == (16 + 7 * 32, 7 * 32, 3) and move.dtype == np.uint8
    assert move[0, 0].tolist() == [214, 39, 40]  # the strip: player 0 (red) to decide
    env.step(4)
    throw = env.render()
    assert throw.shape == move.shape and not np.array_equal(move, throw)
    env.step(throws(7, "a1")[0])
    assert not np.array_equal(throw, env.render())
    small = gymnasium.make(ENV_ID, n=4, render_mode="rgb_array")
    small.reset(seed=0)
    assert small.render().shape == (16 + 4 * 32, 4 * 32, 3)


def test_ansi_is_the_core_text():
    env = gymnasium.make(ENV_ID, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert text == env.unwrapped.game_state.to_text()
    assert text.splitlines()[1] == " 1 . . . 1 . . ." and "to move, turn 1" in text


def test_text_names_the_players_as_the_aec_agents_are_named():
    # Regression: the text said "player 1 (0) wins" for the agent named player_0.
    env = trap_aec_env(n=3, render_mode="ansi")
    winners = set()
    for seed in range(6):
        env.reset(seed=seed)
        assert "1 (player 0) to move, turn 1" in env.render()
        rng = np.random.default_rng(seed)
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, _ = env.last()
            if terminated or truncated:
                if reward == 1:
                    winners.add(agent)
                    seat = int(agent.removeprefix("player_"))
                    assert f"{seat + 1} (player {seat}) wins" in env.render()  # its mark, then its name
                env.step(None)
            else:
                env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert winners == {"player_0", "player_1"}
    assert "1 2 players 0 and 1" in env.render()


def test_aec_turns_are_move_then_throw_and_render():
    env = trap_aec_env(n=5, render_mode="rgb_array")
    env.reset(seed=0)
    seen = []
    for _ in range(8):
        agent = env.agent_selection
        mask = env.observe(agent)["action_mask"]
        other = "player_1" if agent == "player_0" else "player_0"
        assert not env.observe(other)["action_mask"].any()
        seen.append((agent, bool(mask[NUM_DIRS:].any())))
        env.step(int(np.flatnonzero(mask)[-1]))
        if any(env.terminations.values()):
            break
    assert seen[:4] == [("player_0", False), ("player_0", True), ("player_1", False), ("player_1", True)]
    assert env.render().shape == (16 + 5 * 32, 5 * 32, 3)
    with pytest.raises(ValueError, match=r"illegal action 99 by player_"):
        env.step(99)


# -- Stable-Baselines3 ------------------------------------------------------------------------


def test_maskable_ppo_trains():
    model = maskable_ppo(gymnasium.make(ENV_ID, agent_seat="alternate"), n_steps=128, total_timesteps=256)
    env = gymnasium.make(ENV_ID)
    obs, info = env.reset(seed=0)
    for _ in range(2):  # a move, then a throw: the masked policy respects each phase
        action, _ = model.predict(obs, action_masks=env.unwrapped.action_masks(), deterministic=True)
        assert info["action_mask"][int(action)] == 1
        obs, _, _, _, info = env.step(int(action))


# -- tablegym play trap -----------------------------------------------------------------------


@pytest.fixture
def machine(monkeypatch):
    """``make_agent`` stood in by one that returns ``near`` whatever the spec, so the CLI's
    wiring is tested while the Trap agents are written elsewhere."""
    specs = []

    class Near:
        name = "near"

        def __call__(self, state, rng):
            return near(state, rng)

    def make_agent(game, spec):
        specs.append(spec)
        return Near()

    mod = types.ModuleType("tablegym.models.agents")
    mod.make_agent = make_agent
    monkeypatch.setitem(sys.modules, "tablegym.models.agents", mod)
    return specs


def test_play_trap_scripted_loss(monkeypatch, capsys, machine):
    # The scripted loss above, typed: "ne" is refused (off the board), then E, a bad cell, c2.
    scripted_input(monkeypatch, ["ne", "e", "z9", "c2"])
    assert main(["play", "trap", "--n", "3", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert machine == ["random"]
    assert "you are player 0" in out and "legal moves: E, SE, S, SW, W" in out
    assert "illegal action 'ne' (the cell is taken or off the board)" in out
    assert "illegal action 'z9' (give a cell like d4)" in out
    assert "a cell such as d4" in out  # how to type a throw
    assert "chance: lands c2 (probability 1)" in out  # the agent's trap, then the machine's turn
    assert "near (player 1) plays N" in out and "near (player 1) plays b1" in out
    assert "chance: lands b1 (probability 1)" in out  # the landing that ended the game
    assert out.index("lands c2") < out.index("plays N") < out.index("lands b1")
    assert out.strip().splitlines()[-1] == "you lose"


def test_play_trap_whole_game_as_second_player(monkeypatch, capsys, machine):
    # Every direction, then every cell: in each phase the first legal word is taken.
    words = ["n", "ne", "e", "se", "s", "sw", "w", "nw"] + [f"{c}{r}" for r in range(1, 6) for c in "abcde"]
    scripted_input(monkeypatch, itertools.cycle(words))
    argv = ["play", "trap", "--n", "5", "--option", "turn_cap=40", "--seat", "1", "--seed", "3"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "you are player 1" in out and "near (player 0) plays" in out and "chance: lands" in out
    assert out.strip().splitlines()[-1] in ("you win", "you lose", "draw")


def test_play_trap_quit(monkeypatch, capsys, machine):
    scripted_input(monkeypatch, ["s", "q"])
    assert main(["play", "trap", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "to throw, turn 1" in out and out.strip().splitlines()[-1] == "game abandoned"


def test_game_registry_builds_trap():
    from tablegym.envs import make_game

    game = make_game("trap", n="5", turn_cap="30", first_player="1")
    assert isinstance(game, TrapGame) and game.spec.options == {"n": 5, "turn_cap": 30, "first_player": 1}
    with pytest.raises(ValueError, match="unknown option 'width' for game 'trap'"):
        make_game("trap", width=5)
